package rl

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/internal/atomicfile"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rl/report"
	"github.com/agentrl/agentrl/rollout"
)

// State is where a run stands: state.json in the run directory (see
// docs/runs.md), written last in each iteration so that a run killed at
// any moment resumes from the last finished iteration.
type State struct {
	Iteration   int  `json:"iteration"`
	Iterations  int  `json:"iterations"`
	WarmStarted bool `json:"warm_started,omitempty"`
	// Prepared: the algorithm's one-off preparation before iteration 1
	// (NLAC's critic warm-up) is done and in iteration 0's checkpoint.
	Prepared      bool    `json:"prepared,omitempty"`
	DemosCounted  bool    `json:"demos_counted,omitempty"`
	EnvSteps      int64   `json:"env_steps"`
	GradSteps     int64   `json:"grad_steps"`
	TrainTokens   int64   `json:"train_tokens"`
	RolloutTokens int64   `json:"rollout_tokens"`
	WallSeconds   float64 `json:"wall_s"`
	Finished      bool    `json:"finished"`
}

// Metrics is one line of metrics.jsonl: the counters of State after the
// iteration, and what happened in it.
type Metrics struct {
	Iteration     int                `json:"iteration"`
	EnvSteps      int64              `json:"env_steps"`
	GradSteps     int64              `json:"grad_steps"`
	TrainTokens   int64              `json:"train_tokens"`
	RolloutTokens int64              `json:"rollout_tokens"`
	WallSeconds   float64            `json:"wall_s"`
	Episodes      int                `json:"episodes"`
	Reward        float64            `json:"reward"`
	Success       float64            `json:"success"`
	Score         float64            `json:"score"`
	Invalid       float64            `json:"invalid"`
	Failed        int                `json:"failed"`
	Loss          float64            `json:"loss"`
	Losses        map[string]float64 `json:"losses,omitempty"`
	Metrics       map[string]float64 `json:"metrics,omitempty"`
	PhaseSeconds  map[string]float64 `json:"phase_s"`
	// PeakRSSMiB is the process's peak resident memory so far.
	PeakRSSMiB float64      `json:"peak_rss_mib"`
	Eval       *EvalMetrics `json:"eval,omitempty"`
}

// EvalMetrics are an evaluation's headline figures.
type EvalMetrics struct {
	Split    envs.Split `json:"split"`
	Episodes int        `json:"episodes"`
	Success  float64    `json:"success"`
	Score    float64    `json:"score"`
	Steps    float64    `json:"steps"`
}

// Run is a training run in progress: its configuration and directory, the
// inference engine that plays the episodes, and the trainer that holds the
// base model once with every adapter of the algorithm. An algorithm drives
// it from its loop: Rollouts, Update, EndIteration.
type Run struct {
	Config Config
	Dir    string
	State  State
	// Trainer holds the adapters, the actor active between calls.
	Trainer *train.Trainer
	Engine  *llm.Engine
	NewEnv  func() envs.Env
	// Progress receives one line per phase (nil: silent).
	Progress io.Writer

	model     *llm.Model
	modelPath string
	collector *LocalCollector
	// actorFile is the actor's latest hand-over file, which the collector
	// plays.
	actorFile string
	adapters  []string // trainer adapters checkpointed each iteration
	metrics   Metrics  // of the iteration in progress
	// resumedAt is the iteration the run stood at when this process
	// opened it.
	resumedAt int
	// ctx is the run's context, for the long calls that take none.
	ctx     context.Context
	phase   time.Time
	started time.Time // of this process's part of the run
	wall0   float64   // wall seconds before this process
	// updateSteps counts the iteration's optimiser steps of each adapter
	// for the progress lines of long updates, the last of which was
	// written at updateLogged; fineTuning silences them while a
	// fine-tuning writes its own, with an ETA.
	updateSteps  map[string]int
	updateLogged time.Time
	fineTuning   bool
	// checkpointedAt is the trainer's count of micro-batches recomputed
	// to fit the memory budget when the iteration began.
	checkpointedAt int
}

// Options are what a run needs besides its Config.
type Options struct {
	// ModelPath is the resolved GGUF file of Config.Model.
	ModelPath string
	Dir       string
	NewEnv    func() envs.Env
	// Resume continues the run in Dir from its last finished iteration;
	// without it Dir must not hold a run.
	Resume   bool
	Progress io.Writer
}

// Open prepares a run: the run directory (config.yaml written, or read
// back when resuming), the engine and the trainer, the checkpoints of the
// last finished iteration loaded when resuming.
func Open(cfg Config, o Options) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.NewEnv == nil {
		return nil, errors.New("run: no environment")
	}
	r := &Run{Config: cfg, Dir: o.Dir, NewEnv: o.NewEnv, Progress: o.Progress, started: time.Now()}
	statePath := filepath.Join(o.Dir, "state.json")
	switch data, err := os.ReadFile(statePath); {
	case err == nil && !o.Resume:
		return nil, fmt.Errorf("%s already holds a run; continue it with --resume or choose another --out", o.Dir)
	case err == nil:
		if err := json.Unmarshal(data, &r.State); err != nil {
			return nil, fmt.Errorf("%s: %w", statePath, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	case o.Resume:
		// A run stopped before it finished anything has no state yet, only
		// its configuration and what its first phase keeps (a fine-tuning's
		// checkpoint, NLAC's warm-up examples): it goes on from those.
		if _, err := os.Stat(filepath.Join(o.Dir, "config.yaml")); err != nil {
			return nil, fmt.Errorf("--resume: %s holds no run (no state.json, no config.yaml)", o.Dir)
		}
	default:
		// A run stopped in its first phase, taken up again without
		// --resume (as a sweep does), goes on from what that phase kept.
		// A fine-tuning's checkpoint records the data and settings it
		// belongs to, and one of others starts over; NLAC's warm-up
		// examples do not, so they are taken up only with the settings
		// that made them.
		if keptWarmupExamples(o.Dir) {
			changed, err := changedSettings(o.Dir, cfg, r.State)
			if err != nil {
				return nil, err
			}
			if len(changed) > 0 {
				return nil, fmt.Errorf("%s holds a run stopped in its first iteration, whose warm-up examples were made with other settings (%s): continue it with its own settings (--resume), remove the directory to start over, or choose another --out",
					o.Dir, strings.Join(changed, "; "))
			}
		}
	}
	if o.Resume {
		if err := checkResumedConfig(o.Dir, cfg, r.State); err != nil {
			return nil, err
		}
	}
	if cfg.Iterations < r.State.Iteration {
		return nil, fmt.Errorf("%s has finished %d iterations, more than the %d asked for", o.Dir, r.State.Iteration, cfg.Iterations)
	}
	// A finished run resumed with more iterations goes on.
	r.State.Finished = r.State.Finished && r.State.Iteration == cfg.Iterations
	r.State.Iterations = cfg.Iterations
	r.wall0 = r.State.WallSeconds
	for _, sub := range []string{"adapters", "checkpoints", "trajectories", "eval", "plots"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	text, err := cfg.YAML()
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(o.Dir, "config.yaml"), text); err != nil {
		return nil, err
	}

	placement, err := cfg.LoadOptions()
	if err != nil {
		return nil, err
	}
	m, err := llm.Load(o.ModelPath, placement)
	if err != nil {
		return nil, err
	}
	r.model = m
	e, err := m.NewEngine(llm.EngineOptions{
		Parallel: cfg.Rollout.Parallel, Context: cfg.Rollout.Context, Threads: cfg.Threads, CacheMiB: cfg.Rollout.KVCacheMiB,
		Streams: cfg.kvStreams(m.Info(), physicalMemory()),
	})
	if err != nil {
		m.Close()
		return nil, err
	}
	r.Engine = e
	r.modelPath = o.ModelPath
	r.collector = &LocalCollector{Engine: e, NewEnv: o.NewEnv, Parallel: cfg.Rollout.Parallel}
	tr, err := train.New(o.ModelPath, cfg.trainerConfig(cfg.Rollout.Context))
	if err != nil {
		r.Close()
		return nil, err
	}
	r.Trainer = tr
	r.adapters = []string{ActorAdapter}
	r.logf("training on %s, matrix products by %s", tr.Backend(), tr.MatrixProducts())
	if advice := tr.SpeedAdvice(); advice != "" {
		r.logf("note: %s", advice)
	}
	return r, nil
}

// AddAdapter adds an adapter the algorithm trains besides the actor (a
// critic, a discriminator), checkpointed with it. Call it before Resume.
func (r *Run) AddAdapter(name string, opts train.AdapterOptions) error {
	if err := r.Trainer.AddAdapter(name, opts); err != nil {
		return err
	}
	r.adapters = append(r.adapters, name)
	return nil
}

// Resume loads the adapters' checkpoints of the last finished iteration
// (nothing on a new run) and hands the actor to the engine.
func (r *Run) Resume(ctx context.Context) error {
	r.ctx = ctx
	if r.State.Iteration > 0 || r.State.WarmStarted || r.State.Prepared {
		dir := r.CheckpointDir(r.State.Iteration)
		for _, name := range r.adapters {
			if err := r.Trainer.UseAdapter(name); err != nil {
				return err
			}
			if err := r.Trainer.LoadCheckpoint(filepath.Join(dir, name+".ckpt"), nil); err != nil {
				return fmt.Errorf("resume: %w", err)
			}
		}
		r.logf("resumed %s after iteration %d of %d", r.Dir, r.State.Iteration, r.Config.Iterations)
	}
	r.resumedAt = r.State.Iteration
	if err := r.Trainer.UseAdapter(ActorAdapter); err != nil {
		return err
	}
	return r.handOver(ctx)
}

// Close frees the engine, the model and the trainer.
func (r *Run) Close() {
	if r.collector != nil {
		r.collector.Close()
	}
	if r.Engine != nil {
		r.Engine.Close()
	}
	removeFile(r.actorFile)
	if r.model != nil {
		r.model.Close()
	}
	if r.Trainer != nil {
		r.Trainer.Close()
	}
}

// lossesText is an iteration's losses for its log line: the named ones
// where it logged any (a StepAgent cycle whose policy paused has no
// "policy", where the bare loss would read 0), else the loss.
func lossesText(m Metrics) string {
	if len(m.Losses) == 0 {
		return fmt.Sprintf("loss %.4f", m.Loss)
	}
	parts := make([]string, 0, len(m.Losses))
	for _, name := range slices.Sorted(maps.Keys(m.Losses)) {
		parts = append(parts, fmt.Sprintf("%s %.4f", name, m.Losses[name]))
	}
	return "losses " + strings.Join(parts, ", ")
}

// CheckpointDir is the directory of iteration it's checkpoints, where an
// algorithm keeps what else it must resume from (a target network, a
// replay buffer); commit removes the older ones once the state names it.
func (r *Run) CheckpointDir(it int) string {
	return filepath.Join(r.Dir, "checkpoints", fmt.Sprintf("iter-%06d", it))
}

// BeginIteration starts the metrics of iteration it.
func (r *Run) BeginIteration(it int) {
	r.metrics = Metrics{Iteration: it, PhaseSeconds: map[string]float64{}, Losses: map[string]float64{}, Metrics: map[string]float64{}}
	r.phase = time.Now()
	r.updateSteps, r.updateLogged = map[string]int{}, r.phase
	r.checkpointedAt = r.Trainer.Checkpointed()
}

// endPhase adds the time since the last phase ended to the named phase.
func (r *Run) endPhase(name string) float64 {
	now := time.Now()
	s := now.Sub(r.phase).Seconds()
	r.metrics.PhaseSeconds[name] += s
	r.phase = now
	return s
}

// Metrics is the iteration in progress, for the algorithm to fill in
// (Loss, Losses, Metrics).
func (r *Run) Metrics() *Metrics { return &r.metrics }

// IterSeed derives the seed of one purpose in one iteration, so that a
// resumed run draws exactly what an uninterrupted one would. Purposes
// below 16 are the run's own; algorithms use their own above.
func (r *Run) IterSeed(it int, purpose uint64) uint64 {
	x := rand.New(rand.NewPCG(r.Config.Seed, uint64(it)<<8|purpose))
	return x.Uint64() >> 1
}

// Seed purposes.
const (
	seedSampling = iota + 1
	seedShuffle
	seedTasks
)

// EndIteration finishes iteration it: the actor goes to the engine, the
// actor is evaluated when due, every adapter is checkpointed, and the
// metrics line and then the state are written (in that order, so that a
// run killed in between redoes the iteration, and its metrics line is
// replaced).
func (r *Run) EndIteration(ctx context.Context, it int) error {
	r.endPhase("train")
	if err := r.Trainer.UseAdapter(ActorAdapter); err != nil {
		return err
	}
	if err := r.handOver(ctx); err != nil {
		return err
	}
	r.endPhase("handover")
	last := it == r.Config.Iterations
	if e := r.Config.Eval; e.Episodes > 0 && (last || (e.Every > 0 && it%e.Every == 0)) {
		trajs, err := r.Evaluate(ctx, e.Split, e.Episodes)
		if err != nil {
			return fmt.Errorf("evaluation after iteration %d: %w", it, err)
		}
		sum := rollout.Summarize(trajs)
		r.metrics.Eval = &EvalMetrics{Split: e.Split, Episodes: sum.Episodes, Success: sum.SuccessRate, Score: sum.MeanScore, Steps: sum.MeanSteps}
		secs := r.endPhase("eval")
		r.logf("iter %d/%d eval on %s: success %.2f, score %.3f, steps %.1f (%d episodes, %s)", it, r.Config.Iterations,
			e.Split, sum.SuccessRate, sum.MeanScore, sum.MeanSteps, sum.Episodes, round(secs))
		if last {
			if err := writeEval(r.Dir, e.Split, Greedy, it, trajs, sum, nil); err != nil {
				return err
			}
		}
	}
	return r.commit(it, last)
}

// endShortened ends a run resumed with as many iterations as it has
// finished, having been started with more: the final evaluation its
// configuration asks for, and a state that says it finished. Its metrics
// and checkpoints stay as they are; its adapters are written again from
// the checkpoint, because a run killed while committing the next
// iteration may have left that iteration's adapters beside this state.
func (r *Run) endShortened(ctx context.Context) error {
	if err := r.saveAdapters(); err != nil {
		return err
	}
	if e := r.Config.Eval; e.Episodes > 0 {
		trajs, err := r.Evaluate(ctx, e.Split, e.Episodes)
		if err != nil {
			return fmt.Errorf("evaluation after iteration %d: %w", r.State.Iteration, err)
		}
		if err := writeEval(r.Dir, e.Split, Greedy, r.State.Iteration, trajs, rollout.Summarize(trajs), nil); err != nil {
			return err
		}
	}
	r.State.Finished = true
	r.State.WallSeconds = r.wall0 + time.Since(r.started).Seconds()
	if err := r.writeState(); err != nil {
		return err
	}
	// What the stopped iteration had begun is not needed any more.
	os.Remove(filepath.Join(r.Dir, fineTuneFile))
	r.logf("%s: the run ends after iteration %d, the %d now asked for", r.Dir, r.State.Iteration, r.Config.Iterations)
	return r.plot()
}

// writeState writes the run's state.json, atomically.
func (r *Run) writeState() error {
	data, err := json.Marshal(r.State)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(r.Dir, "state.json"), append(data, '\n'))
}

// commit checkpoints the adapters and writes the metrics and the state of
// a finished iteration (0: the warm start or the preparation before
// iteration 1).
func (r *Run) commit(it int, finished bool) error {
	dir := r.CheckpointDir(it)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range r.adapters {
		if err := r.Trainer.UseAdapter(name); err != nil {
			return err
		}
		if err := r.Trainer.SaveCheckpoint(filepath.Join(dir, name+".ckpt"), nil); err != nil {
			return err
		}
	}
	if err := r.saveAdapters(); err != nil {
		return err
	}
	r.State.WallSeconds = r.wall0 + time.Since(r.started).Seconds()
	if it > 0 {
		m := r.metrics
		m.EnvSteps, m.GradSteps, m.TrainTokens, m.RolloutTokens, m.WallSeconds =
			r.State.EnvSteps, r.State.GradSteps, r.State.TrainTokens, r.State.RolloutTokens, r.State.WallSeconds
		m.PeakRSSMiB = PeakRSSMiB()
		// Recomputed activations cost about a quarter more time: a user
		// with memory to spare raises the budget.
		if n := r.Trainer.Checkpointed() - r.checkpointedAt; n > 0 {
			m.Metrics["recomputed_micro_batches"] = float64(n)
			r.logf("iter %d: %d micro-batches recomputed their activations (gradient checkpointing, about 25%% slower) to stay within lora.memory_mib %d; raise it where memory allows",
				it, n, r.Config.LoRA.MemoryMiB)
		}
		if err := appendMetrics(filepath.Join(r.Dir, "metrics.jsonl"), m); err != nil {
			return err
		}
		r.State.Iteration = it
		done := r.State.WallSeconds - r.wall0
		per := done / float64(it-r.firstIteration()+1)
		r.logf("iter %d/%d done: %s; rollout %s, train %s, hand-over %s, eval %s; %d grad steps, %d env steps, %s so far, ETA %s",
			it, r.Config.Iterations, lossesText(m), round(m.PhaseSeconds["rollout"]), round(m.PhaseSeconds["train"]),
			round(m.PhaseSeconds["handover"]), round(m.PhaseSeconds["eval"]),
			r.State.GradSteps, r.State.EnvSteps, round(r.State.WallSeconds), round(per*float64(r.Config.Iterations-it)))
	}
	r.State.Finished = finished
	if err := r.writeState(); err != nil {
		return err
	}
	// Older checkpoints, and a fine-tuning's progress within the
	// iteration, are no longer needed once the state names this one.
	os.Remove(filepath.Join(r.Dir, fineTuneFile))
	olds, _ := filepath.Glob(filepath.Join(r.Dir, "checkpoints", "iter-*"))
	for _, old := range olds {
		if old != dir {
			os.RemoveAll(old)
		}
	}
	return r.plot()
}

// saveAdapters writes every adapter to adapters/NAME.gguf, leaving the
// actor in use.
func (r *Run) saveAdapters() error {
	for _, name := range r.adapters {
		if err := r.Trainer.UseAdapter(name); err != nil {
			return err
		}
		if err := r.Trainer.SaveAdapter(filepath.Join(r.Dir, "adapters", name+".gguf")); err != nil {
			return err
		}
	}
	return r.Trainer.UseAdapter(ActorAdapter)
}

// CommitPreparation checkpoints every adapter as iteration 0 and records
// that the algorithm's preparation before iteration 1 is done, so that a
// run stopped after it resumes without doing it again. The metrics of the
// iteration in progress are left as they are.
func (r *Run) CommitPreparation() error {
	r.State.Prepared = true
	return r.commit(0, false)
}

// plot redraws the run's plots from its files.
func (r *Run) plot() error {
	run, err := report.ReadRun(r.Dir)
	if err != nil {
		return err
	}
	return report.Plot(run, filepath.Join(r.Dir, "plots"))
}

// firstIteration is the first iteration this process ran.
func (r *Run) firstIteration() int { return r.resumedAt + 1 }

// writeEval writes the evaluation of the actor's adapter of iteration it
// on split with decoding d: eval/<name>.json (d.Name), the summary (sum,
// rollout.Summarize of trajs), what a sampled evaluation adds (nil for a
// greedy one) and every episode in brief, and its episodes whole in
// trajectories/eval-<name>.jsonl.gz. The iteration lets a sweep tell the
// final adapter's evaluation from one made while the run was short of
// its last iteration.
func writeEval(dir string, split envs.Split, d Decoding, it int, trajs []rollout.Trajectory, sum rollout.Summary, sampled *SampledEval) error {
	name := d.Name(split)
	// A run directory copied without them (its adapters and settings
	// alone) still takes the evaluation it was given.
	for _, sub := range []string{"eval", "trajectories"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	if err := writeTrajectories(dir, "eval-"+name, trajs); err != nil {
		return err
	}
	data, err := json.MarshalIndent(struct {
		Split        envs.Split      `json:"split"`
		EpisodeCount int             `json:"episodes"`
		Adapter      string          `json:"adapter"`
		Iteration    int             `json:"iteration"`
		Summary      rollout.Summary `json:"summary"`
		Sampled      *SampledEval    `json:"sampled,omitempty"`
		Episodes     []EvalEpisode   `json:"episode_actions"`
	}{split, sum.Episodes + sum.Errors, filepath.Join("adapters", ActorAdapter+".gguf"), it, sum, sampled, briefEpisodes(trajs)}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(EvalFile(dir, name), append(data, '\n'))
}

// EvalFile is where writeEval puts the evaluation called name.
func EvalFile(dir, name string) string { return filepath.Join(dir, "eval", name+".json") }

// writeTrajectories writes the episodes gzipped to the run dir's
// trajectories/NAME.jsonl.gz.
func writeTrajectories(dir, name string, trajs []rollout.Trajectory) error {
	return atomicfile.Write(filepath.Join(dir, "trajectories", name+".jsonl.gz"), func(f io.Writer) error {
		zw := gzip.NewWriter(f)
		w := rollout.NewWriter(zw)
		for i := range trajs {
			if err := w.Write(&trajs[i]); err != nil {
				return err
			}
		}
		return errors.Join(w.Flush(), zw.Close())
	})
}

// ReadTrajectories reads the episodes a run wrote to its directory's
// trajectories/NAME.jsonl.gz (NAME: iter-NNNNNN, or eval-SPLIT).
func ReadTrajectories(dir, name string) ([]rollout.Trajectory, error) {
	path := filepath.Join(dir, "trajectories", name+".jsonl.gz")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	trajs, err := rollout.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return trajs, nil
}

// keptWarmupExamples reports whether dir holds, beside its config.yaml,
// what NLAC's warm-up keeps (nlac/) for its run to go on from.
func keptWarmupExamples(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err != nil {
		return false
	}
	entries, err := os.ReadDir(filepath.Join(dir, "nlac"))
	return err == nil && len(entries) > 0
}

// appendMetrics appends m to the metrics file after dropping the lines of
// iterations at or after m's (left by a run killed before its state was
// written).
func appendMetrics(path string, m Metrics) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var kept []byte
	for _, line := range strings.SplitAfter(string(data), "\n") {
		var prev struct {
			Iteration int `json:"iteration"`
		}
		if strings.TrimSpace(line) == "" || json.Unmarshal([]byte(line), &prev) != nil || prev.Iteration >= m.Iteration {
			continue
		}
		kept = append(kept, line...)
	}
	line, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(append(kept, line...), '\n'))
}

// ReadMetrics reads the metrics.jsonl of the run in dir, one entry per
// finished iteration.
func ReadMetrics(dir string) ([]Metrics, error) {
	path := filepath.Join(dir, "metrics.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Metrics
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m Metrics
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// stopped is the run context's error, once it has ended.
func (r *Run) stopped() error {
	if r.ctx == nil {
		return nil
	}
	return r.ctx.Err()
}

// Model is the base model as the engine loaded it: its tokenizer and chat
// template.
func (r *Run) Model() *llm.Model { return r.model }

// Collector plays the run's episodes and samples its actions.
func (r *Run) Collector() Collector { return r.collector }

// ActorSnapshot is the policy of the actor's latest hand-over with the
// given sampling settings.
func (r *Run) ActorSnapshot(s llm.Sampling) Snapshot { return r.actorSnapshot(s) }

// HandOverActor gives the engine the actor's weights now, not at the end
// of the iteration: for an algorithm that trains the actor's adapter in
// the middle of an iteration and plays it before the end (NLAC with one
// adapter for every role). It leaves the actor's adapter active.
func (r *Run) HandOverActor(ctx context.Context) error {
	if err := r.Trainer.UseAdapter(ActorAdapter); err != nil {
		return err
	}
	return r.handOver(ctx)
}

// EndPhase adds the time since the last phase ended to the named phase
// of the iteration's metrics and returns it in seconds.
func (r *Run) EndPhase(name string) float64 { return r.endPhase(name) }

// Logf writes a progress line.
func (r *Run) Logf(format string, args ...any) { r.logf(format, args...) }

// progressf is logf where the run reports progress, nil where it is
// silent.
func (r *Run) progressf() func(string, ...any) { return WriterLogf(r.Progress) }

func (r *Run) logf(format string, args ...any) {
	if r.Progress != nil {
		fmt.Fprintf(r.Progress, format+"\n", args...)
	}
}

// round formats seconds for progress lines.
func round(s float64) time.Duration {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return 0
	}
	return time.Duration(s * float64(time.Second)).Round(100 * time.Millisecond)
}
