package rl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/rollout"
)

// Evaluate plays episodes greedy episodes of split with the actor adapter
// (nil: the base model), on the first tasks of the split (seeds 0, 1, ...),
// so that every run and every method is evaluated on the same tasks, with
// the rollout settings of the run (step limit, action length).
func Evaluate(ctx context.Context, e *llm.Engine, actor *llm.Adapter, newEnv func() envs.Env, rc RolloutConfig, split envs.Split, episodes int) (rollout.Summary, error) {
	s := rollout.DefaultActionSampling()
	s.MaxTokens, s.Temperature, s.Seed = rc.MaxTokens, 0, 1
	p := &rollout.LLMPolicy{Engine: e, Sampling: s}
	if actor != nil {
		p.Adapters = []llm.AdapterScale{{Adapter: actor, Scale: 1}}
	}
	defer p.Close()
	trajs, err := rollout.Run(ctx, rollout.Config{
		NewEnv: newEnv, Parallel: rc.Parallel, Episodes: episodes, Split: split, MaxSteps: rc.MaxSteps,
	}, p)
	if err != nil {
		return rollout.Summary{}, err
	}
	return rollout.Summarize(trajs), nil
}

// EvaluateRun evaluates the latest actor adapter of the run in dir on
// split and writes eval/<split>.json; modelPath is the run's model
// resolved to a file. It returns the summary.
func EvaluateRun(ctx context.Context, dir, modelPath string, newEnv func() envs.Env, split envs.Split, episodes int) (rollout.Summary, error) {
	cfg, err := LoadConfig(filepath.Join(dir, "config.yaml"), nil)
	if err != nil {
		return rollout.Summary{}, err
	}
	if _, err := envs.ParseSplit(string(split)); err != nil {
		return rollout.Summary{}, err
	}
	if episodes <= 0 {
		return rollout.Summary{}, fmt.Errorf("episodes %d must be positive", episodes)
	}
	adapterPath := filepath.Join(dir, "adapters", actorAdapter+".gguf")
	if _, err := os.Stat(adapterPath); errors.Is(err, os.ErrNotExist) {
		return rollout.Summary{}, fmt.Errorf("%s has no actor adapter yet (%s): the run has not finished an iteration", dir, adapterPath)
	}
	m, err := llm.Load(modelPath, llm.LoadOptions{})
	if err != nil {
		return rollout.Summary{}, err
	}
	defer m.Close()
	e, err := m.NewEngine(llm.EngineOptions{Parallel: cfg.Rollout.Parallel, Context: cfg.Rollout.Context, Threads: cfg.Threads})
	if err != nil {
		return rollout.Summary{}, err
	}
	defer e.Close()
	a, err := m.LoadAdapter(adapterPath)
	if err != nil {
		return rollout.Summary{}, err
	}
	defer a.Close()
	sum, err := Evaluate(ctx, e, a, newEnv, cfg.Rollout, split, episodes)
	if err != nil {
		return sum, err
	}
	return sum, writeEval(dir, split, sum)
}
