package rl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/rollout"
)

// Decoding is how an evaluation picks its actions: greedily (Greedy), one
// episode a task, as every run evaluates and every sweep does first; or
// by sampling at Temperature, Trials episodes of each task, from the
// random streams of Seed, which measures the success a policy has when it
// samples (as in training, at the run's rollout.temperature) and gives
// pass@k and pass^k (SampledEval).
type Decoding struct {
	Temperature float64
	Trials      int
	Seed        int64
}

// Greedy is the decoding of every run's evaluations and a sweep's first.
var Greedy = Decoding{Trials: 1, Seed: 1}

// DecodingKeys name a Decoding's settings in error messages.
type DecodingKeys struct{ Temperature, Trials, Seed string }

// Flags are the names `agentrl eval` gives the settings.
var Flags = DecodingKeys{"--temperature", "--trials", "--seed"}

// Check says what is wrong with d, naming the command-line flags.
func (d Decoding) Check() error { return d.CheckAs(Flags) }

// CheckAs says what is wrong with d, naming its settings by keys. It
// refuses what the sampler would refuse at its first episode, after the
// model has loaded (or, in a sweep, after a run has trained).
func (d Decoding) CheckAs(keys DecodingKeys) error {
	t := d.Temperature
	switch {
	case math.IsNaN(t) || t < 0 || t > math.MaxFloat32:
		return fmt.Errorf("%s %g: 0 decodes greedily, a finite temperature above 0 samples", keys.Temperature, t)
	case t > 0 && t < llm.MinTemperature:
		return fmt.Errorf("%s %g: below %g, use 0 (greedy decoding)", keys.Temperature, t, llm.MinTemperature)
	case d.Trials < 1:
		return fmt.Errorf("%s %d: at least 1 episode a task", keys.Trials, d.Trials)
	case t == 0 && d.Trials > 1:
		return fmt.Errorf("%s %d: greedy decoding (%s 0) plays a task the same way every time; sample at a temperature above 0", keys.Trials, d.Trials, keys.Temperature)
	case d.Seed < 0:
		return fmt.Errorf("%s %d: an evaluation's seed is 0 or above, so that it can be played again", keys.Seed, d.Seed)
	}
	return nil
}

// Name is the evaluation's name in the run's eval/ directory, which
// reports compare as a split: the split itself when greedy, else
// SPLIT-tTEMPERATURE-xTRIALS (e.g. test-t1-x4), so that evaluations at
// other settings sit beside the greedy one instead of replacing it.
func (d Decoding) Name(split envs.Split) string {
	if d.Temperature == 0 {
		return string(split)
	}
	return fmt.Sprintf("%s-t%s-x%d", split, strconv.FormatFloat(d.Temperature, 'g', -1, 64), d.Trials)
}

// Evaluate plays episodes greedy episodes of split with the snapshot's
// policy (its sampling settings replaced by greedy decoding), on the first
// tasks of the split (seeds 0, 1, ...), so that every run and every method
// is evaluated on the same tasks, with the rollout settings of the run
// (step limit, action length). A long evaluation reports its progress
// through logf (nil: silent).
func Evaluate(ctx context.Context, c Collector, p Snapshot, rc RolloutConfig, split envs.Split, episodes int, logf func(string, ...any)) ([]rollout.Trajectory, error) {
	return EvaluateDecoding(ctx, c, p, rc, split, episodes, Greedy, logf)
}

// EvaluateDecoding is Evaluate with the decoding d: sampled, it plays
// d.Trials episodes of each of the tasks (ordered by task, then trial).
func EvaluateDecoding(ctx context.Context, c Collector, p Snapshot, rc RolloutConfig, split envs.Split, tasks int, d Decoding, logf func(string, ...any)) ([]rollout.Trajectory, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	p.Sampling = rollout.DefaultActionSampling()
	p.Sampling.MaxTokens, p.Sampling.Temperature, p.Sampling.Seed = rc.MaxTokens, float32(d.Temperature), d.Seed
	trajs, _, err := c.Collect(ctx, p, Episodes{Split: split, Tasks: tasks, Group: d.Trials, MaxSteps: rc.MaxSteps, StepTimeout: rc.StepTimeoutDuration(),
		Progress: EpisodeProgress(logf, "eval "+d.Name(split), tasks*d.Trials)})
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

// SampledEval is what a sampled evaluation (Decoding) adds to its file:
// the decoding and, over the tasks, pass@k and pass^k for k = 1 up to
// the trials (fewer where an episode ended in an error: see
// rollout.PassAtKs), and pass@1's standard error over the tasks, whose
// trials are not independent draws of the policy's success. pass@1 is
// the mean of the tasks' success rates: the summary's success pools the
// episodes, and differs from it where errors leave tasks with unequal
// attempts.
type SampledEval struct {
	Temperature float64   `json:"temperature"`
	Trials      int       `json:"trials"`
	Seed        int64     `json:"seed"`
	Tasks       int       `json:"tasks"`
	PassAtK     []float64 `json:"pass_at_k"`
	PassHatK    []float64 `json:"pass_hat_k"`
	PassAt1SE   float64   `json:"pass_at_1_se"`
}

// sampledEval measures trajs, the episodes of a sampled evaluation. Where
// no episode finished without an error, no task counts (Tasks 0, no
// pass@k), and the evaluation is written all the same, as a greedy one
// is, with its errors in the summary.
func sampledEval(d Decoding, trajs []rollout.Trajectory) (*SampledEval, error) {
	s := &SampledEval{Temperature: d.Temperature, Trials: d.Trials, Seed: d.Seed}
	tasks := rollout.TaskTrials(trajs)
	if len(tasks) == 0 {
		return s, nil
	}
	var err error
	if s.PassAtK, err = rollout.PassAtKs(trajs); err != nil {
		return nil, err
	}
	if s.PassHatK, err = rollout.PassHatKs(trajs); err != nil {
		return nil, err
	}
	rates := make([]float64, len(tasks))
	for i, t := range tasks {
		rates[i] = float64(t.Successes) / float64(t.Attempts)
	}
	s.Tasks = len(tasks)
	if len(tasks) > 1 {
		s.PassAt1SE = stat.StdDev(rates, nil) / math.Sqrt(float64(len(tasks)))
	}
	return s, nil
}

// RunEval is the outcome of EvaluateRun.
type RunEval struct {
	Summary rollout.Summary
	Sampled *SampledEval // nil when greedy
	File    string       // the eval/<name>.json written
}

// EvaluateRun evaluates the latest actor adapter of the run in dir on the
// first tasks of split with decoding d, and writes eval/<name>.json
// (d.Name); modelPath is the run's model resolved to a file. Progress
// (nil: none) hears how a long evaluation goes.
func EvaluateRun(ctx context.Context, dir, modelPath string, newEnv func() envs.Env, split envs.Split, tasks int, d Decoding, progress io.Writer) (RunEval, error) {
	if err := d.Check(); err != nil {
		return RunEval{}, err
	}
	cfg, err := LoadConfig(filepath.Join(dir, "config.yaml"), nil)
	if err != nil {
		return RunEval{}, err
	}
	if _, err := envs.ParseSplit(string(split)); err != nil {
		return RunEval{}, err
	}
	if tasks <= 0 {
		return RunEval{}, fmt.Errorf("episodes %d must be positive", tasks)
	}
	adapterPath := filepath.Join(dir, "adapters", ActorAdapter+".gguf")
	st, _, err := readState(dir)
	if err != nil {
		return RunEval{}, err
	}
	if _, err := os.Stat(adapterPath); errors.Is(err, os.ErrNotExist) || st.Iteration == 0 {
		return RunEval{}, fmt.Errorf("%s has no actor adapter yet (%s): the run has not finished an iteration", dir, adapterPath)
	}
	placement, err := cfg.LoadOptions()
	if err != nil {
		return RunEval{}, err
	}
	m, err := llm.Load(modelPath, placement)
	if err != nil {
		return RunEval{}, err
	}
	defer m.Close()
	e, err := m.NewEngine(llm.EngineOptions{Parallel: cfg.Rollout.Parallel, Context: cfg.Rollout.Context, Threads: cfg.Threads})
	if err != nil {
		return RunEval{}, err
	}
	defer e.Close()
	c := &LocalCollector{Engine: e, NewEnv: newEnv, Parallel: cfg.Rollout.Parallel}
	defer c.Close()
	snap := Snapshot{Model: modelPath, Adapters: []AdapterFile{{Path: adapterPath, Scale: 1}}}
	trajs, err := EvaluateDecoding(ctx, c, snap, cfg.Rollout, split, tasks, d, WriterLogf(progress))
	if err != nil {
		return RunEval{}, err
	}
	out := RunEval{Summary: rollout.Summarize(trajs), File: EvalFile(dir, d.Name(split))}
	if d.Temperature > 0 {
		if out.Sampled, err = sampledEval(d, trajs); err != nil {
			return RunEval{}, err
		}
	}
	return out, writeEval(dir, split, d, st.Iteration, trajs, out.Summary, out.Sampled)
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
