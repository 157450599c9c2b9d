package rollout_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/envtest"
	"github.com/agentrl/agentrl/envs/registry"
	"github.com/agentrl/agentrl/rollout"
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
			cfg := rollout.Config{NewEnv: f, Parallel: benchParallel, Episodes: math.MaxInt32, Split: envs.Train}
			steps := 0
			b.ResetTimer()
			err := rollout.Stream(context.Background(), cfg, rollout.Expert(), func(t *rollout.Trajectory) error {
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
		b.Run(name, func(b *testing.B) { envtest.Benchmark(b, f) })
	}
}
