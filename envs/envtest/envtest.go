// Package envtest holds what the simulators' tests share: playing an
// episode with the expert, checking canonical actions, and the body of
// every BenchmarkSteps.
package envtest

import (
	"context"
	"maps"
	"slices"
	"strings"
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

// CheckCanonical checks env's Canonical (env has to be an
// envs.Canonicalizer) on hand-written cases: each key of same is a
// canonical form, which canonicalises to itself since it is an action in
// its own right, and the actions it maps to, written otherwise, canonicalise
// to it; the two actions of each differ pair are not Equivalent, since the
// environment treats them differently. same is a map so that a form cannot
// be listed twice; it is checked in sorted order, for stable failures.
func CheckCanonical(t testing.TB, env envs.Env, same map[string][]string, differ [][2]string) {
	t.Helper()
	c := canonicalizer(t, env)
	for _, want := range slices.Sorted(maps.Keys(same)) {
		for _, a := range same[want] {
			if got := c.Canonical(a); got != want {
				t.Errorf("Canonical(%q) = %q, want %q", a, got, want)
			}
		}
		if got := c.Canonical(want); got != want {
			t.Errorf("Canonical(%q) = %q, not itself", want, got)
		}
	}
	for _, d := range differ {
		if envs.Equivalent(env, d[0], d[1]) {
			t.Errorf("%q and %q are equivalent (%q)", d[0], d[1], c.Canonical(d[0]))
		}
	}
}

// CheckCanonicalRejected checks that actions env rejects canonicalise to
// themselves parsed (envs.ParseAction) and trimmed, as envs.Canonicalizer
// asks, so that two different invalid actions stay different.
func CheckCanonicalRejected(t testing.TB, env envs.Env, invalid ...string) {
	t.Helper()
	c := canonicalizer(t, env)
	for _, a := range invalid {
		if got, want := c.Canonical(a), strings.TrimSpace(envs.ParseAction(a)); got != want {
			t.Errorf("Canonical(%q) = %q, want it parsed and trimmed %q", a, got, want)
		}
	}
}

func canonicalizer(t testing.TB, env envs.Env) envs.Canonicalizer {
	t.Helper()
	c, ok := env.(envs.Canonicalizer)
	if !ok {
		t.Fatalf("%s has no canonical actions", env.Spec().Name)
	}
	return c
}
