package rl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/rollout"
)

// Evaluate plays episodes greedy episodes of split with the snapshot's
// policy (its sampling settings replaced by greedy decoding), on the first
// tasks of the split (seeds 0, 1, ...), so that every run and every method
// is evaluated on the same tasks, with the rollout settings of the run
// (step limit, action length). A long evaluation reports its progress
// through logf (nil: silent).
func Evaluate(ctx context.Context, c Collector, p Snapshot, rc RolloutConfig, split envs.Split, episodes int, logf func(string, ...any)) ([]rollout.Trajectory, error) {
	p.Sampling = rollout.DefaultActionSampling()
	p.Sampling.MaxTokens, p.Sampling.Temperature, p.Sampling.Seed = rc.MaxTokens, 0, 1
	trajs, _, err := c.Collect(ctx, p, Episodes{Split: split, Tasks: episodes, Group: 1, MaxSteps: rc.MaxSteps, StepTimeout: rc.StepTimeoutDuration(),
		Progress: EpisodeProgress(logf, "eval "+string(split), episodes)})
	return trajs, err
}

// EvalEpisode is one evaluation episode in brief, as eval/<split>.json
// lists it: what the policy did, without the pages it saw, so that a
// run's record shows why it scored what it did.
type EvalEpisode struct {
	Seed    int64        `json:"seed"`
	Success bool         `json:"success"`
	Score   float64      `json:"score"`
	Actions []EvalAction `json:"actions"`
	Error   string       `json:"error,omitempty"`
}

// EvalAction is one step of an EvalEpisode: the action the environment
// parsed, or the policy's text where it parsed none (at most
// evalActionChars characters).
type EvalAction struct {
	Action  string `json:"action"`
	Invalid bool   `json:"invalid,omitempty"`
}

const evalActionChars = 200

// briefEpisodes makes the EvalEpisodes of trajs.
func briefEpisodes(trajs []rollout.Trajectory) []EvalEpisode {
	out := make([]EvalEpisode, len(trajs))
	for i, t := range trajs {
		e := EvalEpisode{Seed: t.Seed, Success: t.Success, Score: t.Score, Error: t.Error, Actions: make([]EvalAction, len(t.Steps))}
		for k, st := range t.Steps {
			a := st.ParsedAction
			if a == "" {
				a = st.Action
			}
			if r := []rune(a); len(r) > evalActionChars {
				a = string(r[:evalActionChars]) + "…"
			}
			e.Actions[k] = EvalAction{Action: a, Invalid: !st.Info.ValidAction}
		}
		out[i] = e
	}
	return out
}

// EvaluateRun evaluates the latest actor adapter of the run in dir on
// split and writes eval/<split>.json; modelPath is the run's model
// resolved to a file. It returns the summary; progress (nil: none) hears
// how a long evaluation goes.
func EvaluateRun(ctx context.Context, dir, modelPath string, newEnv func() envs.Env, split envs.Split, episodes int, progress io.Writer) (rollout.Summary, error) {
	cfg, err := LoadConfig(filepath.Join(dir, "config.yaml"), nil)
	if err != nil {
		return rollout.Summary{}, err
	}
	if _, err := envs.ParseSplit(string(split)); err != nil {
		return rollout.Summary{}, err
	}
	if episodes <= 0 {
		return rollout.Summary{}, fmt.Errorf("episodes %d must be positive", episodes)
	}
	adapterPath := filepath.Join(dir, "adapters", ActorAdapter+".gguf")
	st, _, err := readState(dir)
	if err != nil {
		return rollout.Summary{}, err
	}
	if _, err := os.Stat(adapterPath); errors.Is(err, os.ErrNotExist) || st.Iteration == 0 {
		return rollout.Summary{}, fmt.Errorf("%s has no actor adapter yet (%s): the run has not finished an iteration", dir, adapterPath)
	}
	placement, err := cfg.LoadOptions()
	if err != nil {
		return rollout.Summary{}, err
	}
	m, err := llm.Load(modelPath, placement)
	if err != nil {
		return rollout.Summary{}, err
	}
	defer m.Close()
	e, err := m.NewEngine(llm.EngineOptions{Parallel: cfg.Rollout.Parallel, Context: cfg.Rollout.Context, Threads: cfg.Threads})
	if err != nil {
		return rollout.Summary{}, err
	}
	defer e.Close()
	c := &LocalCollector{Engine: e, NewEnv: newEnv, Parallel: cfg.Rollout.Parallel}
	defer c.Close()
	snap := Snapshot{Model: modelPath, Adapters: []AdapterFile{{Path: adapterPath, Scale: 1}}}
	trajs, err := Evaluate(ctx, c, snap, cfg.Rollout, split, episodes, WriterLogf(progress))
	if err != nil {
		return rollout.Summary{}, err
	}
	sum := rollout.Summarize(trajs)
	return sum, writeEval(dir, split, st.Iteration, trajs, sum)
}

// progressEvery is how often a long collection of episodes reports.
var progressEvery = 30 * time.Second

// EpisodeProgress is a collection's progress callback (Episodes.Progress)
// for total episodes: at most every progressEvery, a line through logf
// with what is collected, the episodes finished, the time so far and the
// time left at that pace. Nil where logf is.
func EpisodeProgress(logf func(string, ...any), what string, total int) func(int) {
	if logf == nil {
		return nil
	}
	start := time.Now()
	last := start
	return func(done int) {
		now := time.Now()
		if done >= total || now.Sub(last) < progressEvery {
			return
		}
		last = now
		secs := now.Sub(start).Seconds()
		logf("  %s: %d/%d episodes in %s, ETA %s", what, done, total, round(secs), round(secs/float64(done)*float64(total-done)))
	}
}

// WriterLogf writes lines to w; nil where w is.
func WriterLogf(w io.Writer) func(string, ...any) {
	if w == nil {
		return nil
	}
	return func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
}

// StepTimeoutDuration is StepTimeout as a duration (0: none).
func (rc RolloutConfig) StepTimeoutDuration() time.Duration {
	return time.Duration(rc.StepTimeout * float64(time.Second))
}
