package llm

import (
	"fmt"

	"github.com/agentrl/agentrl/cgo"
)

// Adapter is a LoRA adapter (a llama.cpp GGUF adapter file) loaded for one
// model. Activating it in an Engine call does not reload the base model.
type Adapter struct {
	c     *cgo.Adapter
	model *Model
	// path names the adapter in errors.
	path string
	// matrices the adapter changes (a pair of LoRA tensors each).
	matrices int
}

// LoadAdapter validates and loads a LoRA adapter for the model.
func (m *Model) LoadAdapter(path string) (*Adapter, error) {
	facts, err := inspect(path)
	if err != nil {
		return nil, fmt.Errorf("adapter: %w", err)
	}
	if facts.typ != "adapter" {
		return nil, fmt.Errorf("adapter %s: the file is a GGUF %s, not an adapter", path, facts.typ)
	}
	if facts.arch != m.info.Architecture {
		return nil, fmt.Errorf("adapter %s: made for architecture %s, the model is %s", path, facts.arch, m.info.Architecture)
	}
	matrices := facts.tensors / 2
	if room := m.adapterRoom(); matrices > room {
		return nil, fmt.Errorf("adapter %s changes %d matrices, and llama.cpp's compute graphs of this model have room for %d (they are sized from its %d tensors; beyond, ggml aborts): use an adapter of fewer matrices", path, matrices, room, m.tensors)
	}
	c, err := cgo.LoadAdapter(m.c, path)
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", path, err)
	}
	return &Adapter{c: c, model: m, path: path, matrices: matrices}, nil
}

// adapterRoom is how many adapted matrices the model's compute graphs take
// at once. A llama.cpp context sizes its scheduler for max(1024, 8 x the
// model's tensors) graph nodes, in a hash set the size of the next prime
// of ggml's table, and ggml aborts the process on a graph whose nodes and
// leaves outnumber that set. The base graph has about 5.25 nodes and
// leaves per tensor (measured on llama and qwen2 models of 74 to 272
// tensors; 6 counted here), and each adapted matrix adds 4 nodes (two
// products, a scale, an add) and 2 leaves (its A and B).
func (m *Model) adapterRoom() int {
	nodes := max(1024, 8*m.tensors)
	return max(0, (ggmlHashSize(nodes)-6*m.tensors-16)/6)
}

// ggmlHashSize is the size of the hash set ggml makes for n entries: the
// first of the primes just above the powers of two that is at least n.
func ggmlHashSize(n int) int {
	for pow := 1; ; pow *= 2 {
		p := pow + 1
		if pow == 1 {
			p = 2
		}
		for !isPrime(p) {
			p++
		}
		if p >= n {
			return p
		}
	}
}

func isPrime(n int) bool {
	if n < 2 {
		return false
	}
	for d := 2; d*d <= n; d++ {
		if n%d == 0 {
			return false
		}
	}
	return true
}

// Close frees the adapter. No engine call may be using it.
func (a *Adapter) Close() { a.c.Free() }
