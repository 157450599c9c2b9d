package rl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/internal/atomicfile"
	"github.com/agentrl/agentrl/rl/report"
)

// Sweep is a grid of runs, algorithms x envs x seeds, over one base
// configuration, in a directory of its own: out/ENV-ALGORITHM-seedN/ per
// run and out/report.md comparing whatever has finished. RunSweep skips
// finished runs and resumes unfinished ones, so a long grid can be carried
// on across many sittings.
type Sweep struct {
	Out string `yaml:"out"`
	// Record, where set, is a directory (relative to the sweep file, like
	// out) that keeps each finished run's small files (config, state,
	// metrics, evaluations, the critic's notes; docs/runs.md) and the
	// sweep's report, meant to be committed: a sweep started where out is
	// empty restores the recorded runs instead of training them again.
	Record     string   `yaml:"record"`
	Algorithms []string `yaml:"algorithms"`
	Envs       []string `yaml:"envs"`
	Seeds      []uint64 `yaml:"seeds"`
	// Eval: every finished run is evaluated greedily on each split.
	Eval SweepEval `yaml:"eval"`
	// Config is the base configuration of every run (the keys of a
	// --config file); the grid sets algorithm, env and seed.
	Config yaml.Node `yaml:"config"`
	// InitFromSFT starts every RL run from the adapter of the sft run of
	// the same env and seed (which must be in the grid, and runs first)
	// instead of a warm start of its own: every method then starts from
	// the SFT baseline, and the warm start is paid once.
	InitFromSFT bool `yaml:"init_from_sft"`
	// Overrides are KEY=VALUE settings per algorithm over the base, e.g.
	// {ppo: ["rollout.tasks=16"]} so that PPO plays as many episodes per
	// iteration as GRPO's tasks x group.
	Overrides map[string][]string `yaml:"overrides"`
	// Variants name methods that are an algorithm with other settings,
	// e.g. {stepagent-irl: {algorithm: stepagent, set:
	// ["stepagent.reflection=irl"]}}; a variant's name can stand in
	// algorithms, and reports it under that name.
	Variants map[string]SweepVariant `yaml:"variants"`

	// onlySeeds and onlyMethods, set by Select, restrict the runs
	// RunSweep trains (empty: all).
	onlySeeds   []uint64
	onlyMethods []string
}

// Select restricts the runs RunSweep trains to the given seeds and
// methods (algorithms or variants; nil: all of the grid's), together with
// the sft run each of them starts from (init_from_sft), so that a
// sitting can give the first seed of a costly method priority over later
// seeds of cheaper ones. The report still covers the whole grid. A seed
// or method not in the grid is an error naming it.
func (s *Sweep) Select(seeds []uint64, methods []string) error {
	for _, seed := range seeds {
		if !slices.Contains(s.Seeds, seed) {
			return fmt.Errorf("seed %d is not in the sweep's seeds %v", seed, s.Seeds)
		}
	}
	for _, m := range methods {
		if !slices.Contains(s.Algorithms, m) {
			return fmt.Errorf("%q is not among the sweep's algorithms %v", m, s.Algorithms)
		}
	}
	s.onlySeeds, s.onlyMethods = seeds, methods
	return nil
}

// selected reports whether RunSweep trains cell (see Select).
func (s *Sweep) selected(c sweepCell) bool {
	if len(s.onlySeeds) > 0 && !slices.Contains(s.onlySeeds, c.seed) {
		return false
	}
	if len(s.onlyMethods) == 0 || slices.Contains(s.onlyMethods, c.algorithm) {
		return true
	}
	// the start of a selected run of the same seed and env
	return s.InitFromSFT && c.algorithm == "sft" && slices.ContainsFunc(s.onlyMethods, func(m string) bool { return m != "sft" })
}

// SweepVariant is an algorithm with settings of its own.
type SweepVariant struct {
	Algorithm string   `yaml:"algorithm"`
	Set       []string `yaml:"set"`
}

// SweepEval is the final evaluation of each run of a sweep: greedy, on
// the first Episodes tasks of each split, and, where Sampled asks for it,
// sampled on the same tasks besides.
type SweepEval struct {
	Splits   []envs.Split  `yaml:"splits"`
	Episodes int           `yaml:"episodes"`
	Sampled  *SweepSampled `yaml:"sampled"`
}

// SweepSampled is a sweep's sampled evaluation (Decoding): Trials
// episodes of each task at Temperature, from Seed (absent: 1, as
// `agentrl eval`'s default).
type SweepSampled struct {
	Temperature float64 `yaml:"temperature"`
	Trials      int     `yaml:"trials"`
	Seed        *int64  `yaml:"seed"`
}

// decoding is the evaluation's decoding, the seed's default filled in.
func (sm SweepSampled) decoding() Decoding {
	d := Decoding{Temperature: sm.Temperature, Trials: sm.Trials, Seed: Greedy.Seed}
	if sm.Seed != nil {
		d.Seed = *sm.Seed
	}
	return d
}

// sweepEvaluation is one of the evaluations a sweep makes of each run:
// a split, decoded greedily or sampled.
type sweepEvaluation struct {
	split    envs.Split
	decoding Decoding
}

// name is the evaluation's file name in eval/ and its split in reports.
func (e sweepEvaluation) name() string { return e.decoding.Name(e.split) }

// greedy tells the sweep's greedy evaluations, which a run restored from
// the record must have, from its sampled ones, which such a run (with no
// adapter) goes without until it is trained again.
func (e sweepEvaluation) greedy() bool { return e.decoding == Greedy }

// evaluations lists the sweep's evaluations: each split greedily, then
// each sampled where eval.sampled asks for it.
func (s *Sweep) evaluations() []sweepEvaluation {
	var out []sweepEvaluation
	for _, split := range s.Eval.Splits {
		out = append(out, sweepEvaluation{split, Greedy})
	}
	if sm := s.Eval.Sampled; sm != nil {
		for _, split := range s.Eval.Splits {
			out = append(out, sweepEvaluation{split, sm.decoding()})
		}
	}
	return out
}

// ReadSweep reads a sweep file; unknown keys are errors naming them.
func ReadSweep(path string) (Sweep, error) {
	var s Sweep
	data, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("sweep %s: %s", path, unknownKeyMessage(err))
	}
	switch {
	case s.Out == "":
		return s, fmt.Errorf("sweep %s: out: name the directory of the sweep's runs", path)
	case len(s.Algorithms) == 0 || len(s.Envs) == 0 || len(s.Seeds) == 0:
		return s, fmt.Errorf("sweep %s: algorithms, envs and seeds must each name at least one", path)
	case s.Eval.Episodes < 0:
		return s, fmt.Errorf("sweep %s: eval.episodes %d must not be negative", path, s.Eval.Episodes)
	case s.InitFromSFT && !slices.Contains(s.Algorithms, "sft"):
		return s, fmt.Errorf("sweep %s: init_from_sft needs sft among the algorithms", path)
	}
	for name, v := range s.Variants {
		if !slices.Contains(Algorithms(), v.Algorithm) {
			return s, fmt.Errorf("sweep %s: variant %s: algorithm %q: want one of %v", path, name, v.Algorithm, Algorithms())
		}
	}
	for alg := range s.Overrides {
		if !slices.Contains(s.Algorithms, alg) {
			return s, fmt.Errorf("sweep %s: overrides for %q, which is not among the algorithms %v", path, alg, s.Algorithms)
		}
	}
	if !filepath.IsAbs(s.Out) {
		s.Out = filepath.Join(filepath.Dir(path), s.Out)
	}
	if s.Record != "" && !filepath.IsAbs(s.Record) {
		s.Record = filepath.Join(filepath.Dir(path), s.Record)
	}
	if s.Record != "" && sameDir(s.Record, s.Out) {
		return s, fmt.Errorf("sweep %s: record must be another directory than out", path)
	}
	for _, sp := range s.Eval.Splits {
		if _, err := envs.ParseSplit(string(sp)); err != nil {
			return s, fmt.Errorf("sweep %s: eval.splits: %w", path, err)
		}
	}
	if sm := s.Eval.Sampled; sm != nil {
		keys := DecodingKeys{"eval.sampled.temperature", "eval.sampled.trials", "eval.sampled.seed"}
		switch err := sm.decoding().CheckAs(keys); {
		case !(sm.Temperature > 0):
			return s, fmt.Errorf("sweep %s: eval.sampled.temperature %g: must be above 0 (the sweep evaluates greedily anyway)", path, sm.Temperature)
		case err != nil:
			return s, fmt.Errorf("sweep %s: %w", path, err)
		case len(s.Eval.Splits) == 0 || s.Eval.Episodes == 0:
			return s, fmt.Errorf("sweep %s: eval.sampled evaluates eval.splits on eval.episodes tasks: name both", path)
		}
	}
	// Every run's configuration must be valid before the first starts.
	for _, cell := range s.cells() {
		if _, err := s.config(cell); err != nil {
			return s, fmt.Errorf("sweep %s: %s: %w", path, cell.name(), err)
		}
	}
	return s, nil
}

// sweepCell is one run of the grid.
type sweepCell struct {
	algorithm, env string
	seed           uint64
}

func (c sweepCell) name() string { return fmt.Sprintf("%s-%s-seed%d", c.env, c.algorithm, c.seed) }

// cells lists the grid seed by seed, so that a sweep cut short has every
// method of the first seeds rather than every seed of the first methods;
// within a seed and env, sft comes first when the others start from it.
func (s *Sweep) cells() []sweepCell {
	algs := s.Algorithms
	if s.InitFromSFT {
		algs = append([]string{"sft"}, slices.DeleteFunc(slices.Clone(algs), func(a string) bool { return a == "sft" })...)
	}
	var out []sweepCell
	for _, seed := range s.Seeds {
		for _, env := range s.Envs {
			for _, alg := range algs {
				out = append(out, sweepCell{alg, env, seed})
			}
		}
	}
	return out
}

// config is a cell's configuration: the base with the cell's keys set.
func (s *Sweep) config(c sweepCell) (Config, error) {
	var base []byte
	if s.Config.Kind != 0 {
		var err error
		if base, err = yaml.Marshal(&s.Config); err != nil {
			return Config{}, err
		}
	}
	sets := []string{"algorithm=" + c.algorithm, "env=" + c.env, fmt.Sprintf("seed=%d", c.seed)}
	if v, ok := s.Variants[c.algorithm]; ok {
		sets = append([]string{"algorithm=" + v.Algorithm, "label=" + c.algorithm, "env=" + c.env, fmt.Sprintf("seed=%d", c.seed)}, v.Set...)
	}
	sets = append(sets, s.Overrides[c.algorithm]...)
	if s.InitFromSFT && c.algorithm != "sft" {
		sft := sweepCell{"sft", c.env, c.seed}
		sets = append(sets, fmt.Sprintf("init_adapter=%q", filepath.Join(s.Out, sft.name(), "adapters", ActorAdapter+".gguf")))
	}
	return parseConfig(base, "", sets)
}

// SweepEnv resolves what a sweep's runs need outside the rl package: a
// model name to its GGUF file and an environment name to its factory.
type SweepEnv struct {
	ResolveModel func(name string) (string, error)
	LookupEnv    func(name string) (func() envs.Env, error)
	Progress     io.Writer
}

// RunSweep trains, resumes and evaluates the grid's runs in turn, and
// rewrites the sweep's report after each. It stops at the first error or
// when ctx ends; what finished stays finished.
func RunSweep(ctx context.Context, s Sweep, se SweepEnv) error {
	if err := os.MkdirAll(s.Out, 0o755); err != nil {
		return err
	}
	unlock, err := lockSweep(s.Out)
	if err != nil {
		return err
	}
	defer unlock()
	r := sweepRunner{Sweep: &s, env: se, cells: s.cells()}
	if err := r.lookUp(); err != nil {
		return err
	}
	if err := s.restoreRecorded(r.cells, r.logf); err != nil {
		return err
	}
	// Every run of the grid has its directory and configuration from the
	// start, so that the report names the runs not started yet.
	for _, cell := range r.cells {
		if err := s.declare(cell); err != nil {
			return err
		}
	}
	for i, cell := range r.cells {
		if !s.selected(cell) {
			continue
		}
		if err := r.run(ctx, i, cell); err != nil {
			return err
		}
	}
	return nil
}

// sweepRunner runs the cells of one sweep.
type sweepRunner struct {
	*Sweep
	env   SweepEnv
	cells []sweepCell
}

// lookUp finds the environment, the model and the files the settings
// name of every selected run (each distinct one once) before the first
// trains: a name mistyped in the sweep file is an error now, not hours
// into the grid.
func (r *sweepRunner) lookUp() error {
	seen := map[string]bool{}
	for _, cell := range r.cells {
		if !r.selected(cell) {
			continue
		}
		cfg, err := r.config(cell)
		if err != nil {
			return err
		}
		if !seen["env "+cfg.Env] {
			if _, err := r.env.LookupEnv(cfg.Env); err != nil {
				return fmt.Errorf("sweep %s: %w", cell.name(), err)
			}
			seen["env "+cfg.Env] = true
		}
		if !seen["model "+cfg.Model] {
			if _, err := r.env.ResolveModel(cfg.Model); err != nil {
				return fmt.Errorf("sweep %s: %w", cell.name(), err)
			}
			seen["model "+cfg.Model] = true
		}
		// init_adapter is left out: with init_from_sft it is an SFT run's
		// adapter that the sweep makes first.
		files := map[string]string{}
		switch cfg.Algorithm {
		case "stepagent":
			files["stepagent.expert"] = cfg.StepAgent.Expert
		case "nlac":
			files["nlac.prompts"] = cfg.NLAC.Prompts
		}
		for key, path := range files {
			if path == "" || seen["file "+path] {
				continue
			}
			if _, err := os.Stat(path); err != nil {
				return fmt.Errorf("sweep %s: %s: %w", cell.name(), key, err)
			}
			seen["file "+path] = true
		}
	}
	return nil
}

func (r *sweepRunner) logf(format string, args ...any) {
	if r.env.Progress != nil {
		fmt.Fprintf(r.env.Progress, format+"\n", args...)
	}
}

// run trains or resumes the i-th cell unless it finished, evaluates it
// on the splits it lacks, records it and rewrites the reports. A finished
// run without its adapter (restored from the record) trains again where
// the adapter is needed: to evaluate it, or as the start of a later run.
func (r *sweepRunner) run(ctx context.Context, i int, cell sweepCell) error {
	dir := filepath.Join(r.Out, cell.name())
	cfg, err := r.config(cell)
	if err != nil {
		return err
	}
	st, started, err := readState(dir)
	if err != nil {
		return err
	}
	modelPath, err := r.env.ResolveModel(cfg.Model)
	if err != nil {
		return err
	}
	newEnv, err := r.env.LookupEnv(cfg.Env)
	if err != nil {
		return err
	}
	// A run finished with other settings than the sweep file gives it now
	// is kept, but not recorded: the record may hold the run of the
	// current settings, made elsewhere.
	stale := false
	if st.Finished {
		if changed, err := changedSettings(dir, cfg, st); err == nil && len(changed) > 0 {
			stale = true
			r.logf("sweep: %s finished with other settings than the sweep file gives it now (%s); kept as it is, and not recorded", cell.name(), strings.Join(changed, "; "))
		}
		// Other iterations than it finished: a run goes on to more where
		// it can (its settings otherwise the same; not the SFT start of
		// other runs, which began from its adapter as it is), trains anew
		// where it has no adapter, and is kept otherwise.
		startOfOthers := r.InitFromSFT && cell.algorithm == "sft"
		switch {
		case cfg.Iterations == st.Iterations:
		case cfg.Iterations > st.Iterations && !stale && !startOfOthers && hasActor(dir):
			// Its evaluations were of the shorter run's adapter.
			r.logf("sweep: %s finished %d iterations, the sweep file now asks for %d: it goes on", cell.name(), st.Iterations, cfg.Iterations)
			if err := os.RemoveAll(filepath.Join(dir, "eval")); err != nil {
				return err
			}
			st.Finished = false
		case cfg.Iterations > st.Iterations && !hasActor(dir):
			if st, started, err = r.clear(cell, fmt.Sprintf("for the %d iterations now asked for", cfg.Iterations)); err != nil {
				return err
			}
		default:
			stale = true
			r.logf("sweep: %s finished %d iterations, the sweep file now asks for %d; kept as it is, and not recorded", cell.name(), st.Iterations, cfg.Iterations)
		}
		if st.Finished && slices.ContainsFunc(r.unevaluated(dir), sweepEvaluation.greedy) && !hasActor(dir) {
			if st, started, err = r.clear(cell, "to evaluate it"); err != nil {
				return err
			}
		}
		if !started {
			stale = false // cleared: it trains anew with the current settings
		}
	}
	if !st.Finished {
		if r.InitFromSFT && cell.algorithm != "sft" && !hasActor(filepath.Join(r.Out, sweepCell{"sft", cell.env, cell.seed}.name())) {
			sft := sweepCell{"sft", cell.env, cell.seed}
			if _, _, err := r.clear(sft, "as the start of "+cell.name()); err != nil {
				return err
			}
			if err := r.run(ctx, slices.Index(r.cells, sft), sft); err != nil {
				return err
			}
		}
		r.logf("sweep: run %d of %d, %s (%s)", i+1, len(r.cells), cell.name(), progressLabel(dir, st, started))
		start := time.Now()
		err := Train(ctx, cfg, Options{ModelPath: modelPath, Dir: dir, NewEnv: newEnv, Resume: started, Progress: r.env.Progress})
		if err != nil {
			return fmt.Errorf("sweep %s: %w", cell.name(), err)
		}
		r.logf("sweep: %s finished in %s", cell.name(), time.Since(start).Round(time.Second))
		r.keepRecordedEvaluations(cell, dir, r.logf)
	}
	for _, e := range r.unevaluated(dir) {
		if !hasActor(dir) {
			r.logf("sweep: %s not evaluated on %s: it has no actor adapter (the record, which restored it, keeps none); it is when the run trains again", cell.name(), e.name())
			continue
		}
		ev, err := EvaluateRun(ctx, dir, modelPath, newEnv, e.split, r.Eval.Episodes, e.decoding, r.env.Progress)
		if err != nil {
			return fmt.Errorf("sweep %s: evaluate on %s: %w", cell.name(), e.name(), err)
		}
		sum := ev.Summary
		r.logf("sweep: %s on %s: success %.3f ± %.3f, score %.3f (%d episodes)", cell.name(), e.name(),
			sum.SuccessRate, sum.SuccessRateSE, sum.MeanScore, sum.Episodes)
	}
	if r.Record != "" && !stale {
		kept, err := r.recordedStartKept(cell, dir)
		switch {
		case err != nil:
			return err
		case kept != "":
			r.logf("sweep: %s not recorded: %s", cell.name(), kept)
		default:
			if err := r.recordRun(dir); err != nil {
				return err
			}
		}
	}
	return r.writeReport()
}

// unevaluated lists the sweep's evaluations the run in dir lacks, of the
// sweep's number of episodes.
func (s *Sweep) unevaluated(dir string) []sweepEvaluation {
	if s.Eval.Episodes == 0 {
		return nil
	}
	var out []sweepEvaluation
	for _, e := range s.evaluations() {
		if s.evaluationOf(dir, e) != "" {
			out = append(out, e)
		}
	}
	return out
}

// evaluationOf says what the run in dir lacks of the sweep's evaluation
// e: "" when it has one of the sweep's number of episodes (and, sampled,
// of its trials and seed), of the adapter of the run's last finished
// iteration. A run's own last-iteration evaluation (eval.episodes of its
// config) may be of another number, and does not stand for the sweep's;
// nor does an evaluation made before the run went on to more iterations
// (`agentrl eval` on a run in progress, or a finished run resumed for
// more). Evaluations written before they recorded their iteration are
// taken as they are.
func (s *Sweep) evaluationOf(dir string, e sweepEvaluation) string {
	path := EvalFile(dir, e.name())
	data, err := os.ReadFile(path)
	if err != nil {
		return "not evaluated on " + e.name()
	}
	var ev struct {
		report.Eval
		Sampled *SampledEval `json:"sampled"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Sprintf("%s: %v", path, err)
	}
	if want := s.Eval.Episodes * e.decoding.Trials; ev.Split != string(e.split) || ev.Episodes != want {
		return fmt.Sprintf("its evaluation on %s is of %d episodes on %q, the sweep asks for %d", e.name(), ev.Episodes, ev.Split, want)
	}
	if e.decoding != Greedy && (ev.Sampled == nil || ev.Sampled.Seed != e.decoding.Seed) {
		return fmt.Sprintf("its evaluation on %s is not sampled from seed %d", e.name(), e.decoding.Seed)
	}
	if ev.Iteration != 0 {
		st, _, err := readState(dir)
		if err != nil {
			return err.Error()
		}
		if ev.Iteration != st.Iteration {
			return fmt.Sprintf("its evaluation on %s is of iteration %d's adapter, the run has finished %d", e.name(), ev.Iteration, st.Iteration)
		}
	}
	return ""
}

// clear empties the directory of a finished run that lacks its adapter,
// so that it trains again, and says why; it returns the new run's state.
func (r *sweepRunner) clear(c sweepCell, why string) (State, bool, error) {
	r.logf("sweep: %s trains again %s: it has no actor adapter (a run restored from the record keeps none)", c.name(), why)
	if err := os.RemoveAll(filepath.Join(r.Out, c.name())); err != nil {
		return State{}, false, err
	}
	return State{}, false, r.declare(c)
}

// hasActor reports whether the run in dir has its actor adapter.
func hasActor(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "adapters", ActorAdapter+".gguf"))
	return err == nil
}

// declare writes the configuration of a run that has none yet.
func (s *Sweep) declare(c sweepCell) error {
	dir := filepath.Join(s.Out, c.name())
	if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
		return nil
	}
	cfg, err := s.config(c)
	if err != nil {
		return err
	}
	text, err := cfg.YAML()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, "config.yaml"), text)
}

// writeReport compares the sweep's runs in out/report.md, and in the
// record's report.md where the sweep keeps one.
func (s *Sweep) writeReport() error {
	runs, unreadable, err := report.ReadRuns(s.Out)
	if err != nil {
		return err
	}
	opts := report.Options{Split: report.DefaultSplit, Title: "Sweep " + filepath.Base(s.Out), Unreadable: unreadable}
	for i, e := range s.evaluations() {
		if i == 0 {
			opts.Split = e.name()
		} else {
			opts.AlsoSplits = append(opts.AlsoSplits, e.name())
		}
	}
	if _, _, err = report.Write(runs, filepath.Join(s.Out, "report.md"), opts); err != nil {
		return err
	}
	if s.Record == "" {
		return nil
	}
	return s.writeRecordReport(runs, opts)
}

// readState reads a run directory's state; started is false where there
// is none yet.
func readState(dir string) (st State, started bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if errors.Is(err, os.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, false, fmt.Errorf("%s/state.json: %w", dir, err)
	}
	return st, true, nil
}

// progressLabel says how far the run in dir had got before this sweep
// took it up: not started, stopped in its first iteration (a long
// fine-tuning goes on from its checkpoint, which only the run can judge)
// or after some.
func progressLabel(dir string, st State, started bool) string {
	if started {
		return fmt.Sprintf("resuming after iteration %d", st.Iteration)
	}
	// The sweep declares every run's configuration up front; a run that
	// started has made its directories.
	if _, err := os.Stat(filepath.Join(dir, "checkpoints")); err == nil {
		return "started before, stopped in its first iteration"
	}
	return "new"
}

// sameDir reports whether two paths name one directory, spelled alike or
// not (relative, absolute, with dots).
func sameDir(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}
