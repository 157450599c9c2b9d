package llm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/agentrl/agentrl/cgo"
)

// InferBenchConfig describes one inference benchmark point.
type InferBenchConfig struct {
	Parallel     int // sequences decoded together
	PromptTokens int // tokens per prompt
	GenTokens    int // tokens generated per sequence
	// Repeats is how many times each side runs, interleaved; the best run
	// of each counts, which filters out noise from other processes
	// (default 10: a point takes milliseconds to seconds, and with fewer
	// repeats one slow decode on a shared core moves the ratio by 10-20%).
	Repeats int
	Engine  EngineOptions
	// Progress, when set, is called after each repeat with the seconds of
	// the plain loop and of the engine.
	Progress func(repeat int, plainS, engineS float64)
}

// InferBenchResult compares the engine with a plain loop that feeds the
// same batches straight to llama_decode, in the same process.
type InferBenchResult struct {
	Parallel     int `json:"parallel"`
	PromptTokens int `json:"prompt_tokens"`
	GenTokens    int `json:"gen_tokens"`
	// The ceiling: prompt processing and generation rates of the plain
	// loop, and its total time for the whole workload.
	CeilingPromptTPS float64 `json:"ceiling_prompt_tok_s"`
	CeilingGenTPS    float64 `json:"ceiling_gen_tok_s"`
	CeilingSeconds   float64 `json:"ceiling_s"`
	// The engine on the same workload (Generate with sampling).
	EngineSeconds float64 `json:"engine_s"`
	// EngineWorstSeconds is the slowest engine repeat: each repeat is a new
	// call on the same engine, so state one call leaves to the next (slot
	// order, cached cells) shows here, not in the best.
	EngineWorstSeconds float64 `json:"engine_worst_s"`
	EngineGenTPS       float64 `json:"engine_gen_tok_s"`
	// EngineVsCeiling is ceiling time / engine time (1 = no overhead), of
	// the best repeat of each.
	EngineVsCeiling float64 `json:"engine_vs_ceiling"`
	// EngineVsCeilingMedian is the median over repeats of the same ratio
	// within a repeat (the two sides run back to back, so a change in the
	// machine's load hits both).
	EngineVsCeilingMedian float64 `json:"engine_vs_ceiling_median"`
	// OrchestrationPct is the share of the engine's wall time spent
	// outside llama_decode (batching, sampling, bookkeeping, hand-offs).
	OrchestrationPct float64 `json:"orchestration_pct"`
	Repeats          int     `json:"repeats"`
}

// BenchInfer runs the workload of cfg (Parallel prompts of PromptTokens
// random tokens, GenTokens generated each) through a plain llama_decode
// loop and through the engine, on contexts with identical parameters.
func BenchInfer(ctx context.Context, m *Model, cfg InferBenchConfig) (InferBenchResult, error) {
	opts := cfg.Engine
	opts.Parallel = cfg.Parallel
	opts = opts.withDefaults(m.info)
	if err := opts.validate(m.info); err != nil {
		return InferBenchResult{}, err
	}
	if cfg.PromptTokens+cfg.GenTokens > opts.Context {
		return InferBenchResult{}, fmt.Errorf("bench: %d prompt + %d generated tokens exceed the context of %d", cfg.PromptTokens, cfg.GenTokens, opts.Context)
	}
	if cfg.Repeats <= 0 {
		cfg.Repeats = 10
	}
	res := InferBenchResult{Parallel: cfg.Parallel, PromptTokens: cfg.PromptTokens, GenTokens: cfg.GenTokens, Repeats: cfg.Repeats}

	e, err := m.NewEngine(opts)
	if err != nil {
		return res, err
	}
	defer e.Close()
	// Every repeat has new prompts, so that the engine's prefix cache has
	// nothing to reuse and both sides evaluate the same work.
	rng := rand.New(rand.NewPCG(1, 2))
	prompts := make([][]int32, cfg.Parallel)
	reqs := make([]GenerateRequest, cfg.Parallel)
	s := Sampling{Temperature: 1, TopP: 1, Seed: 1, MaxTokens: cfg.GenTokens, IgnoreEOS: true}
	best := func(old, new float64) float64 {
		if old == 0 || new < old {
			return new
		}
		return old
	}
	var bestPrompt, bestGen, bestEngine float64
	ratios := make([]float64, 0, cfg.Repeats)
	for r := 0; r < cfg.Repeats; r++ {
		for i := range prompts {
			prompts[i] = make([]int32, cfg.PromptTokens)
			for k := range prompts[i] {
				prompts[i][k] = int32(rng.IntN(m.info.VocabSize))
			}
			reqs[i] = GenerateRequest{Tokens: prompts[i]}
		}
		promptS, genS, err := plainLoop(m, opts, prompts, cfg.GenTokens)
		if err != nil {
			return res, err
		}
		bestPrompt, bestGen = best(bestPrompt, promptS), best(bestGen, genS)
		res.CeilingSeconds = best(res.CeilingSeconds, promptS+genS)

		e.ResetStats()
		start := time.Now()
		if _, err := e.Generate(ctx, reqs, s, CallOptions{}); err != nil {
			return res, err
		}
		wall := time.Since(start).Seconds()
		ratios = append(ratios, (promptS+genS)/wall)
		res.EngineWorstSeconds = max(res.EngineWorstSeconds, wall)
		if cfg.Progress != nil {
			cfg.Progress(r+1, promptS+genS, wall)
		}
		if bestEngine == 0 || wall < bestEngine {
			bestEngine = wall
			res.OrchestrationPct = 100 * (wall - e.Stats().DecodeTime.Seconds()) / wall
		}
	}
	res.CeilingPromptTPS = float64(cfg.Parallel*cfg.PromptTokens) / bestPrompt
	res.CeilingGenTPS = float64(cfg.Parallel*cfg.GenTokens) / bestGen
	res.EngineSeconds = bestEngine
	res.EngineGenTPS = float64(cfg.Parallel*cfg.GenTokens) / bestEngine
	res.EngineVsCeiling = res.CeilingSeconds / bestEngine
	slices.Sort(ratios)
	res.EngineVsCeilingMedian = ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		res.EngineVsCeilingMedian = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
	}
	return res, nil
}

// plainLoop evaluates the prompts (packed into batches of opts.Batch
// tokens) and then decodes genTokens steps of one token per sequence, with
// fixed tokens and no sampling: the throughput llama_decode alone allows.
func plainLoop(m *Model, opts EngineOptions, prompts [][]int32, genTokens int) (promptS, genS float64, err error) {
	c, err := cgo.NewContext(m.c, contextParams(opts, m.info))
	if err != nil {
		return 0, 0, err
	}
	defer c.Free()
	b := cgo.NewBatch(opts.Batch, 1)
	defer b.Free()
	decode := func() error {
		if b.Len() == 0 {
			return nil
		}
		err := c.Decode(b)
		b.Clear()
		return err
	}
	start := time.Now()
	for seq, p := range prompts {
		for pos, tok := range p {
			if b.Len() == b.Capacity() {
				if err := decode(); err != nil {
					return 0, 0, err
				}
			}
			b.Add(tok, pos, seq, pos == len(p)-1)
		}
	}
	if err := decode(); err != nil {
		return 0, 0, err
	}
	promptS = time.Since(start).Seconds()
	start = time.Now()
	for step := 0; step < genTokens; step++ {
		for seq, p := range prompts {
			b.Add(p[step%len(p)], len(p)+step, seq, true)
		}
		if err := decode(); err != nil {
			return 0, 0, err
		}
		for i := range prompts {
			_ = c.Logits(i)
		}
	}
	return promptS, time.Since(start).Seconds(), nil
}
