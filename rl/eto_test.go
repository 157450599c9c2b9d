package rl

import (
	"math"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/rollout/rollouttest"
)

// TestETORun runs ETO on the guessing game, whose expert bisects: each
// iteration pairs the agent's episodes with the expert's on the same tasks
// (the agent, lightly warm-started, loses them all) and trains on the
// pairs by DPO against the policy at the iteration's start (two epochs
// of two minibatches), which must come to prefer the chosen trajectories:
// over the iteration's steps the implicit reward margin of chosen over
// rejected is positive and the loss below its starting ln 2.
func TestETORun(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Algorithm, cfg.Env, cfg.Model, cfg.Iterations, cfg.Threads = "eto", rollouttest.Name, "tiny", 2, 1
	cfg.Rollout = RolloutConfig{Tasks: 4, MaxSteps: 4, MaxTokens: 8, Temperature: 1, Parallel: 8, Context: 1024}
	cfg.Eval = EvalConfig{Split: envs.Test}
	cfg.LoRA = LoRAConfig{Rank: 8, BatchTokens: 4096}
	cfg.WarmStart = SFTConfig{Demos: 4, Epochs: 1, LR: 1e-3, BatchTokens: 1024}
	cfg.ETO.LR, cfg.ETO.Epochs, cfg.ETO.Minibatches = 1e-3, 2, 2
	ms := trainedMetrics(t, cfg, tinyModel(t), func() envs.Env { return rollouttest.New() })
	for _, m := range ms {
		t.Logf("iter %d: reward %.3f, %v pairs (%v with the agent chosen, %v rendered, %v too long), dpo loss %.4f, accuracy %.2f, margin %.3f",
			m.Iteration, m.Reward, m.Metrics["pairs"], m.Metrics["agent_chosen"], m.Metrics["rendered_pairs"], m.Metrics["long_pairs"], m.Losses["dpo"], m.Metrics["accuracy"], m.Metrics["margin"])
		// The made model's episodes mostly do not make one sequence (its
		// actions render as other tokens): they are paired as rendered
		// text, not dropped.
		if m.Metrics["pairs"] < 3 || m.Metrics["rendered_pairs"] == 0 {
			t.Fatalf("iteration %d: %v pairs, %v rendered; the test needs the agent to lose to the expert, and rendered episodes", m.Iteration, m.Metrics["pairs"], m.Metrics["rendered_pairs"])
		}
		// The first step starts at the reference (margin 0, loss ln 2); the
		// means over the steps show where the later ones went.
		if m.Metrics["margin"] <= 0 || m.Losses["dpo"] >= math.Ln2 {
			t.Errorf("iteration %d: DPO did not come to prefer the chosen trajectories: margin %.3f, loss %.4f (ln 2 = %.4f at the start)", m.Iteration, m.Metrics["margin"], m.Losses["dpo"], math.Ln2)
		}
	}
	if perIteration := cfg.ETO.Epochs * cfg.ETO.Minibatches; ms[1].GradSteps != int64(2*perIteration)+1 {
		t.Errorf("%d gradient steps, want the warm start's 1 and %d a iteration", ms[1].GradSteps, perIteration)
	}
}
