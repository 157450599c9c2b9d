package rl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/rollout"
)

// Evaluate plays episodes greedy episodes of split with the snapshot's
// policy (its sampling settings replaced by greedy decoding), on the first
// tasks of the split (seeds 0, 1, ...), so that every run and every method
// is evaluated on the same tasks, with the rollout settings of the run
// (step limit, action length).
func Evaluate(ctx context.Context, c Collector, p Snapshot, rc RolloutConfig, split envs.Split, episodes int) (rollout.Summary, error) {
	p.Sampling = rollout.DefaultActionSampling()
	p.Sampling.MaxTokens, p.Sampling.Temperature, p.Sampling.Seed = rc.MaxTokens, 0, 1
	trajs, _, err := c.Collect(ctx, p, Episodes{Split: split, Tasks: episodes, Group: 1, MaxSteps: rc.MaxSteps, StepTimeout: rc.stepTimeout()})
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
	adapterPath := filepath.Join(dir, "adapters", ActorAdapter+".gguf")
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
	c := &LocalCollector{Engine: e, NewEnv: newEnv, Parallel: cfg.Rollout.Parallel}
	defer c.Close()
	snap := Snapshot{Model: modelPath, Adapters: []AdapterFile{{Path: adapterPath, Scale: 1}}}
	sum, err := Evaluate(ctx, c, snap, cfg.Rollout, split, episodes)
	if err != nil {
		return sum, err
	}
	return sum, writeEval(dir, split, sum)
}

func (rc RolloutConfig) stepTimeout() time.Duration {
	return time.Duration(rc.StepTimeout * float64(time.Second))
}
