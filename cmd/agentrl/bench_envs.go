package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/registry"
	"github.com/agentrl/agentrl/envs/runner"
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

// budget says when a measurement ends: after steps steps, or after
// duration when that is set.
type budget struct {
	steps    int
	duration time.Duration
}

func runBenchEnvs(c *cli.Context) error {
	parallel := c.Int("parallel")
	b := budget{steps: c.Int("steps"), duration: c.Duration("duration")}
	switch {
	case parallel <= 0:
		return fmt.Errorf("--parallel %d must be > 0", parallel)
	case b.duration < 0:
		return fmt.Errorf("--duration %v must be >= 0", b.duration)
	case b.duration == 0 && b.steps <= 0:
		return fmt.Errorf("--steps %d must be > 0", b.steps)
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
		if r.RawSteps, r.RawSeconds, err = benchRaw(c.Context, f, split, parallel, b); err != nil {
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
func benchRunner(ctx context.Context, f registry.Factory, split envs.Split, parallel int, b budget) (int, float64, error) {
	if b.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.duration)
		defer cancel()
	}
	cfg := runner.Config{NewEnv: f, Parallel: parallel, Episodes: math.MaxInt32, Split: split}
	steps := 0
	start := time.Now()
	err := runner.Stream(ctx, cfg, runner.Expert(), func(t *runner.Trajectory) error {
		if t.Error != "" {
			return fmt.Errorf("seed %d: %s", t.Seed, t.Error)
		}
		steps += t.NumSteps
		if b.duration == 0 && steps >= b.steps {
			return errBudgetSpent
		}
		return nil
	})
	seconds := time.Since(start).Seconds()
	if err != nil && !errors.Is(err, errBudgetSpent) && !(b.duration > 0 && errors.Is(err, context.DeadlineExceeded)) {
		return 0, 0, err
	}
	return steps, seconds, nil
}

// benchRaw steps parallel instances with their experts from as many
// goroutines, without the runner.
func benchRaw(ctx context.Context, f registry.Factory, split envs.Split, parallel int, b budget) (int, float64, error) {
	deadline := time.Now().Add(b.duration)
	perWorker := (b.steps + parallel - 1) / parallel
	counts := make([]int, parallel)
	errs := make([]error, parallel)
	var wg sync.WaitGroup
	start := time.Now()
	for g := range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[g], errs[g] = stepRaw(ctx, f(), split, int64(g), int64(parallel), func(n int) bool {
				if b.duration > 0 {
					return time.Now().After(deadline)
				}
				return n >= perWorker
			})
		}()
	}
	wg.Wait()
	seconds := time.Since(start).Seconds()
	total := 0
	for g := range parallel {
		if errs[g] != nil {
			return 0, 0, errs[g]
		}
		total += counts[g]
	}
	return total, seconds, nil
}

// stepRaw plays whole episodes (seeds seed, seed+stride, ...) with env's
// expert until done says so, checked between episodes, and returns the
// steps taken.
func stepRaw(ctx context.Context, env envs.Env, split envs.Split, seed, stride int64, done func(steps int) bool) (int, error) {
	expert := env.(envs.Expert)
	maxSteps := env.Spec().MaxSteps
	steps := 0
	for ; !done(steps) && ctx.Err() == nil; seed += stride {
		if _, err := env.Reset(split, seed); err != nil {
			return steps, fmt.Errorf("seed %d: reset: %w", seed, err)
		}
		for range maxSteps {
			action, err := expert.ExpertAction()
			if err != nil {
				return steps, fmt.Errorf("seed %d: expert: %w", seed, err)
			}
			res, err := env.Step(action)
			if err != nil {
				return steps, fmt.Errorf("seed %d: step: %w", seed, err)
			}
			steps++
			if res.Done {
				break
			}
		}
	}
	return steps, ctx.Err()
}
