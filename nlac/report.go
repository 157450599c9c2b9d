package nlac

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/rl"
	"github.com/agentrl/agentrl/rollout"
)

// Critique is what `agentrl critique` shows: one episode of a run's
// latest actor, and what the run's critic makes of each of its steps.
type Critique struct {
	Method  string
	Records []Record
	Counts  Counts
}

// CritiqueRun plays the latest actor of the NLAC run in dir greedily on
// the task (split, seed) and has the run's latest critic critique (and
// refine, or, for NLQL, compare candidates at) every step, with the
// run's settings. modelPath is the run's model resolved to a file.
func CritiqueRun(ctx context.Context, dir, modelPath string, newEnv func() envs.Env, split envs.Split, seed int64) (Critique, error) {
	var out Critique
	cfg, err := rl.LoadConfig(filepath.Join(dir, "config.yaml"), nil)
	if err != nil {
		return out, err
	}
	if cfg.Algorithm != "nlac" {
		return out, fmt.Errorf("%s is a %s run; critique shows NLAC runs", dir, cfg.Algorithm)
	}
	c := cfg.NLAC
	out.Method = c.Method
	actorPath := filepath.Join(dir, "adapters", rl.ActorAdapter+".gguf")
	criticPath := filepath.Join(dir, "adapters", criticAdapter+".gguf")
	if c.SharedAdapter {
		criticPath = actorPath
	}
	for _, p := range []string{actorPath, criticPath} {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return out, fmt.Errorf("%s has no adapter %s yet: the run has not finished an iteration", dir, p)
		}
	}
	prompts, err := LoadPrompts(c.Prompts)
	if err != nil {
		return out, err
	}
	placement, err := cfg.LoadOptions()
	if err != nil {
		return out, err
	}
	m, err := llm.Load(modelPath, placement)
	if err != nil {
		return out, err
	}
	defer m.Close()
	e, err := m.NewEngine(llm.EngineOptions{Parallel: max(c.Futures, c.Candidates, c.Rollouts), Context: cfg.Rollout.Context, Threads: cfg.Threads})
	if err != nil {
		return out, err
	}
	defer e.Close()
	collector := &rl.LocalCollector{Engine: e, NewEnv: newEnv, Parallel: c.Rollouts}
	defer collector.Close()
	actor := rl.Snapshot{Model: modelPath, Adapters: []rl.AdapterFile{{Path: actorPath, Scale: 1}}}
	greedy := actor
	greedy.Sampling = rollout.DefaultActionSampling()
	greedy.Sampling.MaxTokens, greedy.Sampling.Temperature = cfg.Rollout.MaxTokens, 0
	trajs, _, err := collector.Collect(ctx, greedy, rl.Episodes{Split: split, Seed0: seed, Tasks: 1, MaxSteps: cfg.Rollout.MaxSteps})
	if err != nil {
		return out, err
	}
	if trajs[0].Error != "" {
		return out, fmt.Errorf("the episode failed: %s", trajs[0].Error)
	}
	roles := newRoleModel(cfg, prompts, m, collector, newEnv)
	roles.actor, roles.critic = actor, withAdapter(actor, criticPath)
	roles.target = roles.critic
	for _, t := range transitionsOf(episodesOf(0, trajs)) {
		out.Records = append(out.Records, Record{T: t, Action: t.action()})
	}
	out.Counts.Transitions = len(out.Records)
	fixed := func(purpose uint64) uint64 { return uint64(seed)<<8 ^ purpose }
	err = roles.improve(ctx, out.Records, c.Method, fixed, &out.Counts)
	return out, err
}

// WriteText writes the critique as Markdown.
func (c Critique) WriteText(w io.Writer) error {
	if len(c.Records) == 0 {
		_, err := fmt.Fprintln(w, "the episode has no steps")
		return err
	}
	tr := &c.Records[0].T.Episode.Trajectory
	fmt.Fprintf(w, "# %s %s seed %d: %d steps, score %.2f, success %v (%s critic)\n", tr.Env, tr.Split, tr.Seed, len(tr.Steps), tr.Score, tr.Success, c.Method)
	for i := range c.Records {
		WriteRecord(w, &c.Records[i])
	}
	_, err := fmt.Fprintf(w, "\n%d steps: %.2f judged optimal, %d judgements given when asked, %d unparsed%s, %d refinements (%d invalid), %d actions changed.\n",
		c.Counts.Transitions, share(c.Counts.Optimal, c.Counts.Judgements), c.Counts.Asked, c.Counts.Unparsed, c.Counts.rankNote()+c.Counts.replacedNote(), c.Counts.Refinements, c.Counts.InvalidRefinements, c.Counts.Changed)
	return err
}
