// Package envbench measures how fast simulators step: parallel instances,
// each driven by its expert from its own goroutine, with no runner and no
// policy in between. The `agentrl bench envs` command and every
// simulator's BenchmarkSteps (through envtest.Benchmark) use it.
package envbench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentrl/agentrl/envs"
)

// Budget says when a measurement ends: after Steps steps in total, or after
// Duration when that is set.
type Budget struct {
	Steps    int
	Duration time.Duration
}

// ExpertSteps runs parallel instances made by newEnv, each playing whole
// episodes of split with its expert (instance g plays seeds g, g+parallel,
// ...), until the budget is spent, and returns the steps taken and the
// seconds it took.
func ExpertSteps(ctx context.Context, newEnv func() envs.Env, split envs.Split, parallel int, b Budget) (int, float64, error) {
	deadline := time.Now().Add(b.Duration)
	perWorker := (b.Steps + parallel - 1) / parallel
	counts := make([]int, parallel)
	errs := make([]error, parallel)
	var wg sync.WaitGroup
	start := time.Now()
	for g := range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[g], errs[g] = playEpisodes(ctx, newEnv(), split, int64(g), int64(parallel), func(n int) bool {
				if b.Duration > 0 {
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

// playEpisodes plays whole episodes (seeds seed, seed+stride, ...) with
// env's expert until done says so, checked between episodes, and returns
// the steps taken.
func playEpisodes(ctx context.Context, env envs.Env, split envs.Split, seed, stride int64, done func(steps int) bool) (int, error) {
	expert, ok := env.(envs.Expert)
	if !ok {
		return 0, fmt.Errorf("%s has no expert", env.Spec().Name)
	}
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
