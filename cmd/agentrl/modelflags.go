package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/models"
)

// modelFlags are the flags of every command that runs a model; required
// says whether --model must be given.
func modelFlags(required bool) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: modelUsage, Required: required},
		&cli.StringSliceFlag{Name: "lora", Usage: "LoRA adapter `FILE[:SCALE]` (GGUF, repeatable; scale defaults to 1)"},
		&cli.IntFlag{Name: "ctx", Usage: "context length per sequence in tokens (0 = the model's, at most 2048)"},
		&cli.IntFlag{Name: "threads", Usage: "CPU threads (0 = one per core)"},
		&cli.IntFlag{Name: "gpu-layers", Value: -1, Usage: "layers to offload to a GPU when one is present (-1 = all)"},
		&cli.IntFlag{Name: "kv-cache-mib", Usage: "KV cache budget in MiB; beyond what the parallel sequences need it keeps conversations and shared prefixes between calls (0 = just the parallel sequences)"},
	}
}

// modelUsage describes what --model accepts.
const modelUsage = "`MODEL`: a GGUF file, a pulled model (" + models.DefaultModel + ", see `agentrl models`) or ollama:NAME[:TAG]"

// loadedModel is a model, its adapters and an engine, freed together.
type loadedModel struct {
	model    *llm.Model
	adapters []llm.AdapterScale
	engine   *llm.Engine
}

func (l *loadedModel) Close() {
	if l.engine != nil {
		l.engine.Close()
	}
	for _, a := range l.adapters {
		a.Adapter.Close()
	}
	l.model.Close()
}

// openModel loads --model and --lora and starts an engine with parallel
// sequence slots.
func openModel(c *cli.Context, parallel int) (*loadedModel, error) {
	if c.Int("ctx") < 0 {
		return nil, fmt.Errorf("--ctx %d must be >= 0", c.Int("ctx"))
	}
	if c.Int("threads") < 0 {
		return nil, fmt.Errorf("--threads %d must be >= 0", c.Int("threads"))
	}
	if c.Int("kv-cache-mib") < 0 {
		return nil, fmt.Errorf("--kv-cache-mib %d must be >= 0", c.Int("kv-cache-mib"))
	}
	specs := make([]adapterSpec, 0, len(c.StringSlice("lora")))
	for _, s := range c.StringSlice("lora") {
		spec, err := parseAdapterSpec(s)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	path, err := models.Resolve(c.String("model"))
	if err != nil {
		return nil, err
	}
	loadGPUBackends()
	m, err := llm.Load(path, llm.LoadOptions{GPULayers: c.Int("gpu-layers")})
	if err != nil {
		return nil, err
	}
	l := &loadedModel{model: m}
	for _, s := range specs {
		a, err := m.LoadAdapter(s.path)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.adapters = append(l.adapters, llm.AdapterScale{Adapter: a, Scale: s.scale})
	}
	l.engine, err = m.NewEngine(llm.EngineOptions{Parallel: parallel, Context: c.Int("ctx"), Threads: c.Int("threads"), CacheMiB: c.Int("kv-cache-mib")})
	if err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

type adapterSpec struct {
	path  string
	scale float32
}

// parseAdapterSpec reads FILE[:SCALE]; a colon followed by something that
// is not a number belongs to the file name.
func parseAdapterSpec(s string) (adapterSpec, error) {
	if s == "" {
		return adapterSpec{}, errors.New("--lora: empty adapter path")
	}
	if i := strings.LastIndexByte(s, ':'); i > 0 {
		if scale, err := strconv.ParseFloat(s[i+1:], 32); err == nil {
			if math.IsNaN(scale) || math.IsInf(scale, 0) {
				return adapterSpec{}, fmt.Errorf("--lora %s: the scale must be a finite number", s)
			}
			return adapterSpec{path: s[:i], scale: float32(scale)}, nil
		}
	}
	return adapterSpec{path: s, scale: 1}, nil
}
