package stepagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/rl"
	"github.com/agentrl/agentrl/rollout"
)

// Inspection is what `agentrl inspect` shows: one expert trajectory, step
// by step, with the run's agent's actions in the expert's states.
type Inspection struct {
	Source string
	Steps  []Step
	// Rewards are the discriminator's step rewards log D - log(1 - D) of
	// each sample, for runs with "irl" reflection (else nil).
	Rewards [][]float64
	// ExpertRewards are the discriminator's rewards of the expert's
	// actions.
	ExpertRewards []float64
	// Judge says which discriminator gave the rewards.
	Judge string
}

// InspectRun inspects the latest actor of the run in dir on the expert's
// trajectory of the task (split, seed): K actions sampled (the run's
// stepagent.samples, temperature and action length) and the greedy one at
// every step, and, where the run trained a discriminator, its step
// rewards. With untrained, the rewards are the untrained discriminator's,
// of any run: the base model's judgement with no adapter, which is what
// every IRL run's discriminator gives before its first update (its LoRA
// adapter starts at zero; a residual one's are then all 0). modelPath is
// the run's model resolved to a file.
func InspectRun(ctx context.Context, dir, modelPath string, newEnv func() envs.Env, split envs.Split, seed int64, untrained bool) (Inspection, error) {
	var in Inspection
	cfg, err := rl.LoadConfig(filepath.Join(dir, "config.yaml"), nil)
	if err != nil {
		return in, err
	}
	actorPath := filepath.Join(dir, "adapters", rl.ActorAdapter+".gguf")
	if _, err := os.Stat(actorPath); errors.Is(err, os.ErrNotExist) {
		return in, fmt.Errorf("%s has no actor adapter yet (%s)", dir, actorPath)
	}
	trajs, err := rollout.Run(ctx, rollout.Config{NewEnv: newEnv, Episodes: 1, Split: split, Seed0: seed, MaxSteps: cfg.Rollout.MaxSteps}, rollout.Expert())
	if err != nil {
		return in, err
	}
	if trajs[0].Error != "" {
		return in, fmt.Errorf("the expert's episode failed: %s", trajs[0].Error)
	}
	if !trajs[0].Success {
		// Training inspects only the expert's successes: an expert that
		// fails is no yardstick.
		return in, fmt.Errorf("the expert does not succeed on %s seed %d (score %g in %d steps): nothing to compare the agent with; choose another seed", split, seed, trajs[0].Score, trajs[0].NumSteps)
	}
	d := rollout.NewDemonstration(&trajs[0])
	t := Trajectory{Source: fmt.Sprintf("expert, %s seed %d", split, seed), Messages: d.Messages}
	for k, msg := range d.Messages {
		if msg.Role == "assistant" {
			t.Steps = append(t.Steps, k)
		}
	}
	in.Source = t.Source

	placement, err := cfg.LoadOptions()
	if err != nil {
		return in, err
	}
	m, err := llm.Load(modelPath, placement)
	if err != nil {
		return in, err
	}
	defer m.Close()
	c := cfg.StepAgent
	e, err := m.NewEngine(llm.EngineOptions{Parallel: max(c.Samples, 1), Context: cfg.Rollout.Context, Threads: cfg.Threads})
	if err != nil {
		return in, err
	}
	defer e.Close()
	prefixes, _, err := Prefixes(m, []Trajectory{t}, cfg.Rollout.Context, cfg.Rollout.MaxTokens)
	if err != nil {
		return in, err
	}
	collector := &rl.LocalCollector{Engine: e, NewEnv: newEnv, Parallel: 1}
	defer collector.Close()
	env := newEnv()
	defer envs.Close(env)
	policy := rl.Snapshot{Model: modelPath, Adapters: []rl.AdapterFile{{Path: actorPath, Scale: 1}}}
	if in.Steps, err = Inspect(ctx, collector, policy, env, prefixes, max(c.Samples, 1), cfg.Rollout.MaxTokens, c.Temperature, uint64(seed)); err != nil {
		return in, err
	}

	var judgeAdapters []llm.AdapterScale
	in.Judge = "the untrained discriminator (the base model's judgement, no adapter)"
	if !untrained {
		discPath := filepath.Join(dir, "adapters", discriminatorAdapter+".gguf")
		if _, err := os.Stat(discPath); err != nil {
			return in, nil
		}
		disc, err := m.LoadAdapter(discPath)
		if err != nil {
			return in, err
		}
		defer disc.Close()
		judgeAdapters = []llm.AdapterScale{{Adapter: disc, Scale: 1}}
		in.Judge = "the run's discriminator (" + discPath + ")"
	}
	if c.DiscriminatorResidual {
		in.Judge += ", less the base model's log-odds (discriminator_residual)"
	}
	var tokens [2]int32
	for i, text := range []string{c.JudgementToken, c.NegativeToken} {
		t, err := m.Tokenize(text, false, false)
		if err != nil || len(t) != 1 {
			return in, fmt.Errorf("judgement token %q is not one token of the model", text)
		}
		tokens[i] = t[0]
	}
	odds := func(state []int32, adapters []llm.AdapterScale) (float64, error) {
		res, err := e.Score(ctx, []llm.ScoreRequest{
			{PromptTokens: state, ContinuationTokens: tokens[:1]}, {PromptTokens: state, ContinuationTokens: tokens[1:]},
		}, llm.CallOptions{Adapters: adapters})
		if err != nil {
			return 0, err
		}
		return res[0].Sum - res[1].Sum, nil
	}
	// The step reward is the discriminator's log-odds of the judgement
	// tokens after the action, as in training: a residual one's less the
	// base model's.
	reward := func(prompt, action []int32) (float64, error) {
		state := append(append([]int32(nil), prompt...), action...)
		z, err := odds(state, judgeAdapters)
		if err != nil || !c.DiscriminatorResidual {
			return stepReward(z), err
		}
		base, err := odds(state, nil)
		return stepReward(z - base), err
	}
	for _, st := range in.Steps {
		er, err := reward(st.Prompt, st.ExpertTokens)
		if err != nil {
			return in, err
		}
		in.ExpertRewards = append(in.ExpertRewards, er)
		var rs []float64
		for _, s := range st.Samples {
			r, err := reward(st.Prompt, s.Tokens)
			if err != nil {
				return in, err
			}
			rs = append(rs, r)
		}
		in.Rewards = append(in.Rewards, rs)
	}
	return in, nil
}

// WriteText writes the inspection for a terminal: per step the expert's
// action, the greedy and sampled actions of the agent, "=" where an action
// is equivalent to the expert's and "≠" where not, and the step rewards.
func (in Inspection) WriteText(w io.Writer) error {
	greedy, sampled := Agreement(in.Steps)
	fmt.Fprintf(w, "%s: %d steps, step agreement %.2f (greedy), %.2f of the samples\n", in.Source, len(in.Steps), greedy, sampled)
	if in.Rewards != nil {
		fmt.Fprintf(w, "step rewards: log-odds of %s\n", in.Judge)
	}
	mark := func(eq bool) string {
		if eq {
			return "="
		}
		return "≠"
	}
	for i, st := range in.Steps {
		fmt.Fprintf(w, "\nstep %d\n  expert   %s", st.Step+1, oneLine(st.Expert))
		if in.ExpertRewards != nil {
			fmt.Fprintf(w, "   [reward %+.2f]", in.ExpertRewards[i])
		}
		fmt.Fprintf(w, "\n  greedy %s %s\n", mark(st.GreedyEquivalent), oneLine(st.Greedy.Text))
		for k, s := range st.Samples {
			fmt.Fprintf(w, "  sample %s %s", mark(st.Equivalent[k]), oneLine(s.Text))
			if in.Rewards != nil {
				fmt.Fprintf(w, "   [reward %+.2f]", in.Rewards[i][k])
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

// oneLine shows an action on one line, at most 120 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:117]) + "..."
	}
	return s
}
