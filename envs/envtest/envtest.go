// Package envtest holds what the simulators' tests share: playing an
// episode with the expert, and the body of every BenchmarkSteps.
package envtest

import (
	"context"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/envbench"
)

// PlayExpert plays env, already reset, to the end of its episode with its
// expert, failing the test on an error or an expert action the environment
// calls invalid. It returns the actions and the observations that answered
// them, interleaved, and the last step.
func PlayExpert(t testing.TB, env envs.Env) ([]string, envs.StepResult) {
	t.Helper()
	expert, ok := env.(envs.Expert)
	if !ok {
		t.Fatalf("%s has no expert", env.Spec().Name)
	}
	var trace []string
	for {
		action, err := expert.ExpertAction()
		if err != nil {
			t.Fatal(err)
		}
		res, err := env.Step(action)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Info.ValidAction {
			t.Fatalf("expert action %q is invalid: %s", action, res.Observation)
		}
		trace = append(trace, action, res.Observation)
		if res.Done {
			return trace, res
		}
	}
}

// Benchmark is the body of a simulator's BenchmarkSteps: 64 instances in
// parallel goroutines driven by the expert for b.N steps in total,
// reported as steps/s.
func Benchmark(b *testing.B, newEnv func() envs.Env) {
	newEnv() // build shared static data (catalogs, knowledge bases) first
	b.ResetTimer()
	steps, seconds, err := envbench.ExpertSteps(context.Background(), newEnv, envs.Train, 64, envbench.Budget{Steps: b.N})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(steps)/seconds, "steps/s")
}
