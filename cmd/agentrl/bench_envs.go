package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/envbench"
	"github.com/agentrl/agentrl/envs/registry"
	"github.com/agentrl/agentrl/rollout"
)

// benchEnvsCommand measures how fast the simulators step: through the
// runner with the expert policy (batched requests, trajectories recorded)
// and raw (goroutines stepping instances directly), so that the runner's
// overhead shows.
func benchEnvsCommand() *cli.Command {
	return &cli.Command{
		Name:  "envs",
		Usage: "measure environment steps per second, through the runner and raw",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "parallel", Value: 64, Usage: "environment instances run at once"},
			&cli.IntFlag{Name: "steps", Value: 200_000, Usage: "steps per environment and measurement"},
			&cli.DurationFlag{Name: "duration", Usage: "measure for this long instead of --steps"},
			&cli.StringFlag{Name: "split", Value: string(envs.Train), Usage: "train, test or unseen"},
			&cli.StringSliceFlag{Name: "env", Usage: "environment to measure (repeatable; default all)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: runBenchEnvs,
	}
}

// envBench is one environment's measurements.
type envBench struct {
	Env               string  `json:"env"`
	Skipped           string  `json:"skipped,omitempty"`
	RunnerSteps       int     `json:"runner_steps"`
	RunnerSeconds     float64 `json:"runner_seconds"`
	RunnerStepsPerSec float64 `json:"runner_steps_per_sec"`
	RawSteps          int     `json:"raw_steps"`
	RawSeconds        float64 `json:"raw_seconds"`
	RawStepsPerSec    float64 `json:"raw_steps_per_sec"`
	// RunnerOverhead is the fraction of raw throughput the runner costs.
	RunnerOverhead float64 `json:"runner_overhead"`
}

func runBenchEnvs(c *cli.Context) error {
	parallel := c.Int("parallel")
	b := envbench.Budget{Steps: c.Int("steps"), Duration: c.Duration("duration")}
	switch {
	case parallel <= 0:
		return fmt.Errorf("--parallel %d must be > 0", parallel)
	case b.Duration < 0:
		return fmt.Errorf("--duration %v must be >= 0", b.Duration)
	case b.Duration == 0 && b.Steps <= 0:
		return fmt.Errorf("--steps %d must be > 0", b.Steps)
	}
	split, err := envs.ParseSplit(c.String("split"))
	if err != nil {
		return fmt.Errorf("--split: %w", err)
	}
	names := c.StringSlice("env")
	if len(names) == 0 {
		names = registry.Names()
	}
	var results []envBench
	var runnerSteps, rawSteps int
	var runnerSeconds, rawSeconds float64
	for _, name := range names {
		f, err := registry.Lookup(name)
		if err != nil {
			return err
		}
		r := envBench{Env: name}
		if _, ok := f().(envs.Expert); !ok {
			r.Skipped = "no expert"
			results = append(results, r)
			continue
		}
		if r.RunnerSteps, r.RunnerSeconds, err = benchRunner(c.Context, f, split, parallel, b); err != nil {
			return fmt.Errorf("%s through the runner: %w", name, err)
		}
		if r.RawSteps, r.RawSeconds, err = envbench.ExpertSteps(c.Context, f, split, parallel, b); err != nil {
			return fmt.Errorf("%s raw: %w", name, err)
		}
		r.RunnerStepsPerSec = float64(r.RunnerSteps) / r.RunnerSeconds
		r.RawStepsPerSec = float64(r.RawSteps) / r.RawSeconds
		r.RunnerOverhead = 1 - r.RunnerStepsPerSec/r.RawStepsPerSec
		runnerSteps += r.RunnerSteps
		runnerSeconds += r.RunnerSeconds
		rawSteps += r.RawSteps
		rawSeconds += r.RawSeconds
		results = append(results, r)
	}
	total := map[string]float64{}
	if runnerSeconds > 0 {
		total["runner_steps_per_sec"] = float64(runnerSteps) / runnerSeconds
		total["raw_steps_per_sec"] = float64(rawSteps) / rawSeconds
	}
	if !c.Bool("json") {
		w := c.App.Writer
		fmt.Fprintf(w, "%d instances, %s split, %d CPUs; steps/s\n%-10s %12s %12s\n", parallel, split, runtime.NumCPU(), "env", "runner", "raw")
		for _, r := range results {
			if r.Skipped != "" {
				fmt.Fprintf(w, "%-10s skipped: %s\n", r.Env, r.Skipped)
				continue
			}
			fmt.Fprintf(w, "%-10s %12.0f %12.0f\n", r.Env, r.RunnerStepsPerSec, r.RawStepsPerSec)
		}
		fmt.Fprintf(w, "%-10s %12.0f %12.0f\n", "total", total["runner_steps_per_sec"], total["raw_steps_per_sec"])
		return nil
	}
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{
		"parallel": parallel,
		"split":    split,
		"cpus":     runtime.NumCPU(),
		"envs":     results,
		"total":    total,
	})
}

// errBudgetSpent ends a measured run.
var errBudgetSpent = errors.New("budget spent")

// benchRunner runs the expert through the runner and counts the steps of
// the episodes that finish within the budget.
func benchRunner(ctx context.Context, f registry.Factory, split envs.Split, parallel int, b envbench.Budget) (int, float64, error) {
	if b.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.Duration)
		defer cancel()
	}
	cfg := rollout.Config{NewEnv: f, Parallel: parallel, Episodes: math.MaxInt32, Split: split}
	steps := 0
	start := time.Now()
	err := rollout.Stream(ctx, cfg, rollout.Expert(), func(t *rollout.Trajectory) error {
		if t.Error != "" {
			return fmt.Errorf("seed %d: %s", t.Seed, t.Error)
		}
		steps += t.NumSteps
		if b.Duration == 0 && steps >= b.Steps {
			return errBudgetSpent
		}
		return nil
	})
	seconds := time.Since(start).Seconds()
	if err != nil && !errors.Is(err, errBudgetSpent) && !(b.Duration > 0 && errors.Is(err, context.DeadlineExceeded)) {
		return 0, 0, err
	}
	return steps, seconds, nil
}
