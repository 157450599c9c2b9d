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
	path  string
}

// LoadAdapter validates and loads a LoRA adapter for the model.
func (m *Model) LoadAdapter(path string) (*Adapter, error) {
	typ, arch, err := inspect(path)
	if err != nil {
		return nil, fmt.Errorf("adapter: %w", err)
	}
	if typ != "adapter" {
		return nil, fmt.Errorf("adapter %s: the file is a GGUF %s, not an adapter", path, typ)
	}
	if arch != m.info.Architecture {
		return nil, fmt.Errorf("adapter %s: made for architecture %s, the model is %s", path, arch, m.info.Architecture)
	}
	c, err := cgo.LoadAdapter(m.c, path)
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", path, err)
	}
	return &Adapter{c: c, model: m, path: path}, nil
}

// Path is the file the adapter was loaded from.
func (a *Adapter) Path() string { return a.path }

// Close frees the adapter. No engine call may be using it.
func (a *Adapter) Close() { a.c.Free() }
