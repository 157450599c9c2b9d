package runner_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/registry"
	"github.com/agentrl/agentrl/envs/runner"
)

// benchParallel is the number of instances, as in `agentrl bench envs`.
const benchParallel = 64

// benchEnvs lists the guess game and every built-in simulator.
func benchEnvs() map[string]func() envs.Env {
	out := map[string]func() envs.Env{"guess": newGuess}
	for _, name := range registry.Names() {
		f, _ := registry.Lookup(name)
		out[name] = f
	}
	return out
}

var errEnough = errors.New("enough steps")

// BenchmarkRunner measures steps per second through the runner with the
// expert policy; b.N counts steps.
func BenchmarkRunner(b *testing.B) {
	for name, f := range benchEnvs() {
		b.Run(name, func(b *testing.B) {
			cfg := runner.Config{NewEnv: f, Parallel: benchParallel, Episodes: math.MaxInt32, Split: envs.Train}
			steps := 0
			b.ResetTimer()
			err := runner.Stream(context.Background(), cfg, runner.Expert(), func(t *runner.Trajectory) error {
				if t.Error != "" {
					return errors.New(t.Error)
				}
				steps += t.NumSteps
				if steps >= b.N {
					return errEnough
				}
				return nil
			})
			b.StopTimer()
			if !errors.Is(err, errEnough) {
				b.Fatal(err)
			}
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

// BenchmarkRaw measures steps per second of the same instances stepped
// directly by as many goroutines, the ceiling the runner is compared to.
func BenchmarkRaw(b *testing.B) {
	for name, f := range benchEnvs() {
		b.Run(name, func(b *testing.B) {
			perWorker := (b.N + benchParallel - 1) / benchParallel
			var wg sync.WaitGroup
			errs := make([]error, benchParallel)
			b.ResetTimer()
			for g := range benchParallel {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[g] = stepExpert(f(), int64(g), perWorker)
				}()
			}
			wg.Wait()
			b.StopTimer()
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(perWorker*benchParallel)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

// stepExpert takes n steps with env's expert, over as many episodes as
// needed, each cut at the step limit.
func stepExpert(env envs.Env, seed int64, n int) error {
	expert := env.(envs.Expert)
	maxSteps := env.Spec().MaxSteps
	done, episodeSteps := true, 0
	for range n {
		if done || episodeSteps == maxSteps {
			if _, err := env.Reset(envs.Train, seed); err != nil {
				return err
			}
			seed += benchParallel
			episodeSteps = 0
		}
		episodeSteps++
		action, err := expert.ExpertAction()
		if err != nil {
			return err
		}
		res, err := env.Step(action)
		if err != nil {
			return err
		}
		done = res.Done
	}
	return nil
}
