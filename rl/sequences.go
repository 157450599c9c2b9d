package rl

import (
	"fmt"
	"slices"

	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rollout"
)

// ActionSequence is a trainer sequence made from the steps of one episode
// of a language-model policy: the prompt tokens the policy saw and the
// action tokens it generated, with loss weight 1 on the action tokens and
// 0 on everything else.
type ActionSequence struct {
	train.Sequence
	// SampleLogProbs are the generated tokens' log-probabilities under the
	// sampling policy, indexed like Tokens (0 outside the actions).
	SampleLogProbs []float32
	// Actions locate the episode's actions in Tokens.
	Actions []ActionSpan
}

// ActionSpan says where the tokens of one step's action lie in a sequence:
// Tokens[Start:End] were generated at step Step of the episode.
type ActionSpan struct {
	Step       int
	Start, End int
}

// EpisodeSequences turns an episode into trainer sequences without
// tokenising anything: every action is scored in exactly the context the
// policy saw when it generated it. Consecutive steps share one sequence
// when the next prompt begins with everything before it (the usual case:
// the chat template re-renders the last action as the tokens generated),
// so an episode is usually one sequence; a prompt cut to fit the context,
// or an action whose text renders as other tokens, starts a new one.
//
// It fails on steps recorded without prompt or action tokens (from a
// policy that is not a language model, or from a trajectory file written
// before the ids were recorded).
func EpisodeSequences(t *rollout.Trajectory) ([]ActionSequence, error) {
	var out []ActionSequence
	var cur *ActionSequence
	for i, s := range t.Steps {
		if len(s.PromptTokenIDs) == 0 || len(s.TokenIDs) == 0 {
			return nil, fmt.Errorf("episode %s/%d step %d: no prompt or action token ids (trajectories for training must come from a language-model policy)", t.Env, t.Seed, i+1)
		}
		if len(s.LogProbs) != len(s.TokenIDs) {
			return nil, fmt.Errorf("episode %s/%d step %d: %d action tokens but %d log-probabilities", t.Env, t.Seed, i+1, len(s.TokenIDs), len(s.LogProbs))
		}
		if cur == nil || !continues(cur.Tokens, s.PromptTokenIDs) {
			out = append(out, ActionSequence{})
			cur = &out[len(out)-1]
		}
		cur.appendTokens(s.PromptTokenIDs[len(cur.Tokens):], nil)
		start := len(cur.Tokens)
		cur.appendTokens(s.TokenIDs, s.LogProbs)
		cur.Actions = append(cur.Actions, ActionSpan{Step: i, Start: start, End: len(cur.Tokens)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("episode %s/%d has no steps", t.Env, t.Seed)
	}
	return out, nil
}

// continues reports whether prompt begins with all of prev (and has more).
func continues(prev, prompt []int32) bool {
	return len(prompt) > len(prev) && slices.Equal(prompt[:len(prev)], prev)
}

// appendTokens adds context tokens (logp nil, weight 0) or action tokens
// (weight 1, with their sampling log-probabilities).
func (a *ActionSequence) appendTokens(tokens []int32, logp []float32) {
	for i, tok := range tokens {
		w, lp := float32(0), float32(0)
		if logp != nil && len(a.Tokens) > 0 {
			w, lp = 1, logp[i]
		}
		a.Tokens = append(a.Tokens, tok)
		a.Weights = append(a.Weights, w)
		a.SampleLogProbs = append(a.SampleLogProbs, lp)
	}
}

// StepValues spreads one value per step of the episode (an advantage, a
// step reward) over the tokens of each step's action: the per-token input
// of the PPO loss. Tokens outside the actions get 0.
func (a *ActionSequence) StepValues(perStep []float64) ([]float32, error) {
	out := make([]float32, len(a.Tokens))
	for _, sp := range a.Actions {
		if sp.Step < 0 || sp.Step >= len(perStep) {
			return nil, fmt.Errorf("action of step %d, but %d step values", sp.Step+1, len(perStep))
		}
		for i := sp.Start; i < sp.End; i++ {
			out[i] = float32(perStep[sp.Step])
		}
	}
	return out, nil
}
