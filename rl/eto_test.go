package rl

import (
	"math"
	"slices"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rollout"
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
	cfg := etoTestConfig(1024)
	ms := trainedMetrics(t, cfg, tinyModel(t), func() envs.Env { return rollouttest.New() })
	for _, m := range ms {
		t.Logf("iter %d: reward %.3f, %v pairs (%v with the agent chosen, %v rendered, %v cut to the context, %v too long), dpo loss %.4f, accuracy %.2f, margin %.3f",
			m.Iteration, m.Reward, m.Metrics["pairs"], m.Metrics["agent_chosen"], m.Metrics["rendered_pairs"], m.Metrics["cut_pairs"], m.Metrics["long_pairs"], m.Losses["dpo"], m.Metrics["accuracy"], m.Metrics["margin"])
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

// etoTestConfig is a short ETO run on the guessing game with the made
// model at the given context per sequence.
func etoTestConfig(context int) Config {
	cfg := DefaultConfig()
	cfg.Algorithm, cfg.Env, cfg.Model, cfg.Iterations, cfg.Threads = "eto", rollouttest.Name, "tiny", 2, 1
	cfg.Rollout = RolloutConfig{Tasks: 4, MaxSteps: 4, MaxTokens: 8, Temperature: 1, Parallel: 8, Context: context}
	cfg.Eval = EvalConfig{Split: envs.Test}
	cfg.LoRA = LoRAConfig{Rank: 8, BatchTokens: 4096}
	cfg.WarmStart = SFTConfig{Demos: 4, Epochs: 1, LR: 1e-3, BatchTokens: 1024}
	cfg.ETO.LR, cfg.ETO.Epochs, cfg.ETO.Minibatches = 1e-3, 2, 2
	return cfg
}

// TestETOCutsLongPairsToTheContext runs ETO at a context shorter than the
// guessing game's episodes (at 160 tokens the warm start's demonstrations
// still fit): the pairs are cut to the turns that fit and trained on, not
// dropped.
func TestETOCutsLongPairsToTheContext(t *testing.T) {
	cfg := etoTestConfig(160)
	for _, m := range trainedMetrics(t, cfg, tinyModel(t), func() envs.Env { return rollouttest.New() }) {
		t.Logf("iter %d: %v pairs, %v cut to the context, %v too long, dpo loss %.4f", m.Iteration, m.Metrics["pairs"], m.Metrics["cut_pairs"], m.Metrics["long_pairs"], m.Losses["dpo"])
		if m.Metrics["pairs"] < 3 || m.Metrics["cut_pairs"] == 0 || m.Metrics["long_pairs"] != 0 {
			t.Errorf("iteration %d: %v pairs, %v cut, %v dropped; want at least 3 pairs, some cut and none dropped", m.Iteration, m.Metrics["pairs"], m.Metrics["cut_pairs"], m.Metrics["long_pairs"])
		}
		if m.Losses["dpo"] >= math.Ln2 {
			t.Errorf("iteration %d: DPO loss %.4f did not fall below ln 2 on the cut pairs", m.Iteration, m.Losses["dpo"])
		}
	}
}

// TestFitTurnsKeepsWholeTurnsWithinTheContext cuts a hand-made episode
// (each turn 10 prompt and 5 action tokens, one sequence) to the turns
// whose sequence fits: all of them, some, or none.
func TestFitTurnsKeepsWholeTurnsWithinTheContext(t *testing.T) {
	var ep rollout.Trajectory
	var prompt []int32
	for turn := range 4 {
		for k := range 10 {
			prompt = append(prompt, int32(100*turn+k))
		}
		action := []int32{int32(100*turn + 50), 1, 2, 3, 4}
		ep.Steps = append(ep.Steps, rollout.Step{PromptTokenIDs: slices.Clone(prompt), TokenIDs: action, LogProbs: make([]float32, len(action))})
		prompt = append(prompt, action...)
	}
	sequence := func(t *rollout.Trajectory) (train.Sequence, error) {
		seqs, err := EpisodeSequences(t)
		if err != nil {
			return train.Sequence{}, err
		}
		return seqs[0].Sequence, nil
	}
	for _, c := range []struct{ limit, turns int }{{60, 4}, {100, 4}, {59, 3}, {44, 2}, {15, 1}, {14, 0}} {
		s, turns, err := fitTurns(ep, c.limit, sequence)
		if err != nil {
			t.Fatal(err)
		}
		if turns != c.turns || len(s.Tokens) != 15*c.turns {
			t.Errorf("limit %d: %d turns, %d tokens; want %d turns, %d tokens", c.limit, turns, len(s.Tokens), c.turns, 15*c.turns)
		}
	}
	if len(ep.Steps) != 4 {
		t.Errorf("fitTurns cut the caller's episode to %d steps", len(ep.Steps))
	}
}
