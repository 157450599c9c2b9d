package rl

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/rollout"
)

// Snapshot is the policy a collection plays: the base model, the LoRA
// adapters applied to it, as GGUF files (what a rollout worker on another
// machine would be sent), and the sampling settings.
type Snapshot struct {
	Model    string
	Adapters []AdapterFile
	Sampling llm.Sampling
}

// AdapterFile is a LoRA adapter applied with a scale.
type AdapterFile struct {
	Path  string
	Scale float32
}

// Episodes says which episodes a collection plays: Tasks tasks of Split
// from seed Seed0, each Group times, at most MaxSteps steps (0: the
// environment's limit), each environment call bounded by StepTimeout (0:
// none). Starts, when set, replaces Split, Seed0 and Tasks: one task per
// start, opened by its actions (rollout.Start). Progress, when set, hears
// of each finished episode (rollout.Config.Progress).
type Episodes struct {
	Split       envs.Split
	Seed0       int64
	Tasks       int
	Group       int
	MaxSteps    int
	StepTimeout time.Duration
	Starts      []rollout.Start
	Progress    func(done int)
}

// CollectStats describe a collection.
type CollectStats struct {
	GeneratedTokens int64
}

// Collector plays episodes with a policy snapshot and returns their
// trajectories, ordered by task seed and sample, with the prompt and
// action token ids training needs. The algorithms reach rollouts only
// through it, so that workers elsewhere can serve them.
type Collector interface {
	// Load makes the snapshot ready to play (its adapters loaded), so that
	// the next Collect starts at once; Collect loads what it lacks itself.
	Load(ctx context.Context, p Snapshot) error
	Collect(ctx context.Context, p Snapshot, e Episodes) ([]rollout.Trajectory, CollectStats, error)
	// Generate samples n completions of each prompt (token ids, e.g. an
	// expert's prefix rendered by the chat template) with the snapshot's
	// policy, each prompt evaluated once for its n samples. Each prompt
	// samples from its own random stream: the texts of different prompts
	// are independent draws, as a batch of critiques must be (with one
	// stream, prompts whose next-token distributions are alike make the
	// same choices, and a batch of futures all open with one outcome).
	Generate(ctx context.Context, p Snapshot, prompts [][]int32, n int) ([][]llm.Completion, error)
	// Score gives the log-probability of each continuation after its
	// prompt (token ids) under the snapshot's model and adapters.
	Score(ctx context.Context, p Snapshot, prompts, continuations [][]int32) ([]float64, error)
}

// LocalCollector plays episodes in this process on an inference engine of
// the snapshot's base model. It loads each adapter file once and keeps it
// while the file exists, so that snapshots of several adapters (an actor
// and a critic) can take turns; once a newer hand-over has replaced a file
// and removed it, the collector drops the adapter's cache entries and
// frees it.
type LocalCollector struct {
	Engine   *llm.Engine
	NewEnv   func() envs.Env
	Parallel int

	loaded map[string]*llm.Adapter // by path
}

// Load implements Collector.
func (c *LocalCollector) Load(ctx context.Context, p Snapshot) error {
	_, err := c.adapters(ctx, p)
	return err
}

// adapters returns the snapshot's adapters, loading the new ones and
// freeing those whose files are gone.
func (c *LocalCollector) adapters(ctx context.Context, p Snapshot) ([]llm.AdapterScale, error) {
	m := c.Engine.Model()
	if p.Model != m.Info().Path {
		return nil, fmt.Errorf("collector: the snapshot's base model is %s, the engine runs %s", p.Model, m.Info().Path)
	}
	if c.loaded == nil {
		c.loaded = map[string]*llm.Adapter{}
	}
	out := make([]llm.AdapterScale, len(p.Adapters))
	for i, af := range p.Adapters {
		a, ok := c.loaded[af.Path]
		if !ok {
			var err error
			if a, err = m.LoadAdapter(af.Path); err != nil {
				return nil, fmt.Errorf("collector: %w", err)
			}
			c.loaded[af.Path] = a
		}
		out[i] = llm.AdapterScale{Adapter: a, Scale: af.Scale}
	}
	for path, a := range c.loaded {
		if _, err := os.Stat(path); err == nil || slices.ContainsFunc(p.Adapters, func(af AdapterFile) bool { return af.Path == path }) {
			continue
		}
		if err := c.Engine.DropAdapter(ctx, a); err != nil {
			return nil, err
		}
		a.Close()
		delete(c.loaded, path)
	}
	return out, nil
}

// Collect implements Collector.
func (c *LocalCollector) Collect(ctx context.Context, p Snapshot, e Episodes) ([]rollout.Trajectory, CollectStats, error) {
	adapters, err := c.adapters(ctx, p)
	if err != nil {
		return nil, CollectStats{}, err
	}
	before := c.Engine.Stats()
	policy := &rollout.LLMPolicy{Engine: c.Engine, Sampling: p.Sampling, Adapters: adapters}
	defer policy.Close()
	tasks := e.Tasks
	if e.Starts != nil {
		tasks = len(e.Starts)
	}
	trajs, err := rollout.Run(ctx, rollout.Config{
		NewEnv: c.NewEnv, Parallel: c.Parallel, Episodes: tasks * max(e.Group, 1), Group: e.Group,
		Split: e.Split, Seed0: e.Seed0, MaxSteps: e.MaxSteps, StepTimeout: e.StepTimeout, Starts: e.Starts,
		Progress: e.Progress,
	}, policy)
	return trajs, CollectStats{GeneratedTokens: c.Engine.Stats().GeneratedTokens - before.GeneratedTokens}, err
}

// Generate implements Collector.
func (c *LocalCollector) Generate(ctx context.Context, p Snapshot, prompts [][]int32, n int) ([][]llm.Completion, error) {
	adapters, err := c.adapters(ctx, p)
	if err != nil {
		return nil, err
	}
	reqs := make([]llm.GenerateRequest, len(prompts))
	for i, t := range prompts {
		reqs[i] = llm.GenerateRequest{Tokens: t, N: n, Stream: uint64(i)}
	}
	return c.Engine.Generate(ctx, reqs, p.Sampling, llm.CallOptions{Adapters: adapters})
}

// Score implements Collector.
func (c *LocalCollector) Score(ctx context.Context, p Snapshot, prompts, continuations [][]int32) ([]float64, error) {
	if len(prompts) != len(continuations) {
		return nil, fmt.Errorf("score: %d prompts, %d continuations", len(prompts), len(continuations))
	}
	adapters, err := c.adapters(ctx, p)
	if err != nil {
		return nil, err
	}
	reqs := make([]llm.ScoreRequest, len(prompts))
	for i := range prompts {
		reqs[i] = llm.ScoreRequest{PromptTokens: prompts[i], ContinuationTokens: continuations[i]}
	}
	res, err := c.Engine.Score(ctx, reqs, llm.CallOptions{Adapters: adapters})
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(res))
	for i, r := range res {
		out[i] = r.Sum
	}
	return out, nil
}

// Close frees the adapters the collector loaded; the engine stays open.
func (c *LocalCollector) Close() {
	for path, a := range c.loaded {
		a.Close()
		delete(c.loaded, path)
	}
}

// removeFile deletes a hand-over file that is no longer needed.
func removeFile(path string) {
	if path != "" {
		os.Remove(path)
	}
}
