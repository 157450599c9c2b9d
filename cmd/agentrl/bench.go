package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/initmodel"
	"github.com/agentrl/agentrl/llm/models"
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "measure speed (JSON on stdout with --json)",
		Subcommands: []*cli.Command{
			benchInferCommand(),
			benchEnvsCommand(),
			benchTrainCommand(),
			benchReferenceCommand(),
			benchRolloutsCommand(),
			benchGRPOCommand(),
			benchAdaptersCommand(),
		},
	}
}

func benchInferCommand() *cli.Command {
	return &cli.Command{
		Name:  "infer",
		Usage: "inference throughput of the engine against a plain llama_decode loop",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "model", Usage: "GGUF model (repeatable); default: the built-in tiny and small presets, made in a temporary folder"},
			&cli.StringFlag{Name: "parallel", Value: "1,8,32,64", Usage: "comma-separated numbers of parallel sequences"},
			&cli.IntFlag{Name: "prompt-tokens", Value: 64, Usage: "tokens per prompt"},
			&cli.IntFlag{Name: "gen-tokens", Value: 64, Usage: "tokens generated per sequence"},
			&cli.IntFlag{Name: "threads", Usage: "CPU threads (0 = one per core)"},
			&cli.StringFlag{Name: "flash-attn", Value: "auto", Usage: "flash attention: auto, on or off"},
			&cli.BoolFlag{Name: "shared-kv", Usage: "one KV buffer shared by all sequences instead of a stream each"},
			&cli.IntFlag{Name: "ubatch", Usage: "llama.cpp micro-batch size (0 = default)"},
			&cli.IntFlag{Name: "repeats", Value: 10, Usage: "runs of each side per point, interleaved (the best of each counts; the median ratio is reported too)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: runBenchInfer,
	}
}

func parseInts(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--%s: %q is not a positive integer", flag, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchModels returns the models a benchmark measures: those given, or
// else the built-in tiny and small presets, written to a temporary folder
// that cleanup removes.
func benchModels(given []string) (paths []string, cleanup func(), err error) {
	if len(given) > 0 {
		for _, spec := range given {
			path, err := models.Resolve(spec)
			if err != nil {
				return nil, nil, err
			}
			paths = append(paths, path)
		}
		return paths, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "agentrl-bench")
	if err != nil {
		return nil, nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	for _, preset := range []string{"tiny", "small"} {
		p := filepath.Join(dir, preset+".gguf")
		if _, err := initmodel.Write(p, initmodel.Config{Preset: preset, Seed: 1}); err != nil {
			cleanup()
			return nil, nil, err
		}
		paths = append(paths, p)
	}
	return paths, cleanup, nil
}

type benchModelReport struct {
	Model   llm.Info               `json:"model"`
	Results []llm.InferBenchResult `json:"results"`
}

func runBenchInfer(c *cli.Context) error {
	parallel, err := parseInts("parallel", c.String("parallel"))
	if err != nil {
		return err
	}
	fa := llm.FlashAttn(c.String("flash-attn")) // the engine checks it
	if c.Int("prompt-tokens") <= 0 || c.Int("gen-tokens") <= 0 || c.Int("repeats") <= 0 {
		return fmt.Errorf("--prompt-tokens, --gen-tokens and --repeats must be > 0")
	}
	paths, cleanup, err := benchModels(c.StringSlice("model"))
	if err != nil {
		return err
	}
	defer cleanup()
	loadGPUBackends()
	var reports []benchModelReport
	for _, path := range paths {
		m, err := llm.Load(path, llm.LoadOptions{GPULayers: -1})
		if err != nil {
			return err
		}
		rep := benchModelReport{Model: m.Info()}
		for _, p := range parallel {
			// A point can take minutes on a slow device: each repeat is
			// reported as it ends.
			progress := func(repeat int, plainS, engineS float64) {
				fmt.Fprintf(c.App.ErrWriter, "bench infer: %s P=%d repeat %d/%d: plain loop %.2f s, engine %.2f s\n",
					filepath.Base(path), p, repeat, c.Int("repeats"), plainS, engineS)
			}
			r, err := llm.BenchInfer(c.Context, m, llm.InferBenchConfig{
				Parallel: p, PromptTokens: c.Int("prompt-tokens"), GenTokens: c.Int("gen-tokens"), Repeats: c.Int("repeats"),
				Engine: llm.EngineOptions{Threads: c.Int("threads"), FlashAttn: fa, SharedKV: c.Bool("shared-kv"), UBatch: c.Int("ubatch"),
					Context: c.Int("prompt-tokens") + c.Int("gen-tokens")},
				Progress: progress,
			})
			if err != nil {
				m.Close()
				return fmt.Errorf("bench %s at %d sequences: %w", path, p, err)
			}
			rep.Results = append(rep.Results, r)
			if !c.Bool("json") {
				fmt.Fprintf(c.App.ErrWriter, "%s  P=%-3d ceiling: prompt %7.0f tok/s, gen %7.0f tok/s | engine: gen %7.0f tok/s, %.3fx ceiling (median %.3fx, worst repeat %.3fx), orchestration %.1f%%\n",
					filepath.Base(path), p, r.CeilingPromptTPS, r.CeilingGenTPS, r.EngineGenTPS, r.EngineVsCeiling, r.EngineVsCeilingMedian, r.CeilingSeconds/r.EngineWorstSeconds, r.OrchestrationPct)
			}
		}
		m.Close()
		reports = append(reports, rep)
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"system_info": cgo.SystemInfo(), "models": reports})
	}
	return nil
}
