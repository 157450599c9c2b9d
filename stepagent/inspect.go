package stepagent

import (
	"context"
	"fmt"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rl"
)

// Step is one inspected step: the expert's prefix h_t as the agent sees
// it, the expert's action a*_t, and the agent's actions sampled there.
type Step struct {
	Trajectory int // index in the inspected trajectories
	Step       int // the step's number in its trajectory, from 0
	// Prompt is h_t rendered by the chat template and tokenised, as the
	// inference engine reads it.
	Prompt []int32
	Expert string
	// ExpertTokens are the tokens of the expert's assistant turn, through
	// its end-of-turn token.
	ExpertTokens []int32
	// Samples are the K sampled actions, Greedy the greedy one; Equivalent
	// says for each sample whether it equals the expert's action in the
	// environment's canonical form.
	Samples          []llm.Completion
	Equivalent       []bool
	Greedy           llm.Completion
	GreedyEquivalent bool
}

// Prefix is an expert prefix ready for sampling.
type Prefix struct {
	Trajectory, Step int
	Prompt           []int32
	Expert           string
	ExpertTokens     []int32
}

// Prefixes renders every step of the trajectories as the agent would see
// it: the conversation before the step, with the assistant's turn opened.
// Steps whose prefix leaves no room in the context for an action of
// maxTokens tokens (or the expert's, if longer) and one token after it,
// where the discriminator reads its judgement, are skipped and counted.
func Prefixes(m *llm.Model, trajs []Trajectory, context, maxTokens int) ([]Prefix, int, error) {
	var out []Prefix
	skipped := 0
	for ti, t := range trajs {
		for si, at := range t.Steps {
			prompt, turn, err := train.AssistantTurn(m, t.Messages[:at+1])
			if err != nil {
				return nil, 0, fmt.Errorf("%s step %d: %w", t.Source, si+1, err)
			}
			if len(prompt)+max(maxTokens, len(turn))+1 > context {
				skipped++
				continue
			}
			out = append(out, Prefix{Trajectory: ti, Step: si, Prompt: prompt, Expert: t.Messages[at].Content, ExpertTokens: turn})
		}
	}
	return out, skipped, nil
}

// Inspect samples k actions (at temperature, at most maxTokens tokens
// each; none when k is 0) and the greedy action of the policy at every
// prefix, through the collector, and compares each with the expert's
// action in env's canonical form.
func Inspect(ctx context.Context, c rl.Collector, policy rl.Snapshot, env envs.Env, prefixes []Prefix, k, maxTokens int, temperature float64, seed uint64) ([]Step, error) {
	prompts := make([][]int32, len(prefixes))
	for i, p := range prefixes {
		prompts[i] = p.Prompt
	}
	s := llm.DefaultSampling()
	s.MaxTokens, s.Temperature, s.Seed = maxTokens, float32(temperature), int64(seed>>1)
	policy.Sampling = s
	sampled := make([][]llm.Completion, len(prompts))
	if k > 0 {
		var err error
		if sampled, err = c.Generate(ctx, policy, prompts, k); err != nil {
			return nil, fmt.Errorf("inspection: %w", err)
		}
	}
	policy.Sampling.Temperature = 0
	greedy, err := c.Generate(ctx, policy, prompts, 1)
	if err != nil {
		return nil, fmt.Errorf("inspection: %w", err)
	}
	out := make([]Step, len(prefixes))
	for i, p := range prefixes {
		st := Step{Trajectory: p.Trajectory, Step: p.Step, Prompt: p.Prompt, Expert: p.Expert, ExpertTokens: p.ExpertTokens,
			Samples: sampled[i], Greedy: greedy[i][0]}
		for _, c := range st.Samples {
			st.Equivalent = append(st.Equivalent, envs.Equivalent(env, c.Text, p.Expert))
		}
		st.GreedyEquivalent = envs.Equivalent(env, st.Greedy.Text, p.Expert)
		out[i] = st
	}
	return out, nil
}

// Agreement is the share of steps whose greedy action is equivalent to
// the expert's (the step agreement) and the share of sampled actions that
// are.
func Agreement(steps []Step) (greedy, sampled float64) {
	n, eq := 0, 0
	for _, st := range steps {
		if st.GreedyEquivalent {
			greedy++
		}
		for _, e := range st.Equivalent {
			n++
			if e {
				eq++
			}
		}
	}
	if len(steps) > 0 {
		greedy /= float64(len(steps))
	}
	if n > 0 {
		sampled = float64(eq) / float64(n)
	}
	return greedy, sampled
}

// expertSequence is h_t followed by the expert's action, the action's
// tokens weighted.
func expertSequence(st Step) train.Sequence {
	return train.ActionSequence(st.Prompt, st.ExpertTokens)
}
