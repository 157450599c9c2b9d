// Package report reads training run directories (docs/runs.md), plots them
// and compares runs across algorithms and seeds.
//
// The package reads the files a run writes and nothing else, so it works on
// runs copied from another machine and on runs still in progress. It is pure
// Go: reporting must not need the llama.cpp build.
package report

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrNotRun is returned (wrapped) by ReadRun for a directory that holds no
// config.yaml, so that callers can tell a sweep directory from a broken run.
var ErrNotRun = errors.New("not a run directory")

// Run is what a run directory holds, as far as reports need it.
type Run struct {
	Dir string
	// Algorithm (the label of a variant, else the algorithm), Env, Model
	// and Seed come from config.yaml; runs are grouped by them.
	Algorithm string
	Env       string
	Model     string
	Seed      uint64
	// Started is false when state.json or metrics.jsonl is missing: the run
	// has not finished an iteration yet, which is not an error.
	Started bool
	State   State
	Metrics []Iteration
	// Evals holds eval/<split>.json by split.
	Evals map[string]Eval
}

// Finished reports whether the run did its last iteration.
func (r Run) Finished() bool { return r.Started && r.State.Finished }

// Last returns the last finished iteration, or false when there is none.
func (r Run) Last() (Iteration, bool) {
	if len(r.Metrics) == 0 {
		return Iteration{}, false
	}
	return r.Metrics[len(r.Metrics)-1], true
}

// State mirrors state.json. Counters are float64 so that a writer that
// stores them as floating point cannot make the file unreadable.
type State struct {
	Iteration     int     `json:"iteration"`
	Iterations    int     `json:"iterations"`
	EnvSteps      float64 `json:"env_steps"`
	GradSteps     float64 `json:"grad_steps"`
	TrainTokens   float64 `json:"train_tokens"`
	RolloutTokens float64 `json:"rollout_tokens"`
	WallS         float64 `json:"wall_s"`
	Finished      bool    `json:"finished"`
}

// Iteration mirrors one line of metrics.jsonl. Counters are cumulative since
// the start of the run; the rest describe the iteration.
type Iteration struct {
	Iteration     int                `json:"iteration"`
	EnvSteps      float64            `json:"env_steps"`
	GradSteps     float64            `json:"grad_steps"`
	TrainTokens   float64            `json:"train_tokens"`
	RolloutTokens float64            `json:"rollout_tokens"`
	WallS         float64            `json:"wall_s"`
	Episodes      int                `json:"episodes"`
	Reward        float64            `json:"reward"`
	Success       float64            `json:"success"`
	Score         float64            `json:"score"`
	Invalid       float64            `json:"invalid"`
	Failed        int                `json:"failed"`
	Loss          float64            `json:"loss"`
	Losses        map[string]float64 `json:"losses,omitempty"`
	Metrics       map[string]float64 `json:"metrics,omitempty"`
	PhaseS        map[string]float64 `json:"phase_s,omitempty"`
	// Eval is nil on iterations that did not evaluate.
	Eval *IterationEval `json:"eval,omitempty"`
}

// IterationEval is the evaluation some iterations run during training.
type IterationEval struct {
	Split    string  `json:"split"`
	Episodes int     `json:"episodes"`
	Success  float64 `json:"success"`
	Score    float64 `json:"score"`
	Steps    float64 `json:"steps"`
}

// Eval mirrors eval/<split>.json: an evaluation of the run's final adapter.
type Eval struct {
	Split    string `json:"split"`
	Episodes int    `json:"episodes"`
	Adapter  string `json:"adapter"`
	// Iteration is the run's iteration whose adapter was evaluated (0 in
	// evaluations written before it was recorded).
	Iteration int     `json:"iteration,omitempty"`
	Summary   Summary `json:"summary"`
}

// Summary has the fields of rollout.Summary. It is defined here rather than
// imported so that reading runs does not link the rollout package and what
// it depends on.
type Summary struct {
	Episodes            int     `json:"episodes"`
	Errors              int     `json:"errors"`
	SuccessRate         float64 `json:"success_rate"`
	SuccessRateSE       float64 `json:"success_rate_se"`
	MeanReturn          float64 `json:"mean_return"`
	MeanReturnSE        float64 `json:"mean_return_se"`
	MeanScore           float64 `json:"mean_score"`
	MeanScoreSE         float64 `json:"mean_score_se"`
	MeanSteps           float64 `json:"mean_steps"`
	MeanStepsSE         float64 `json:"mean_steps_se"`
	InvalidActionRate   float64 `json:"invalid_action_rate"`
	InvalidActionRateSE float64 `json:"invalid_action_rate_se"`
}

// config is the part of config.yaml that reports group by; the file has
// many more keys, which are ignored.
type config struct {
	Algorithm string `yaml:"algorithm"`
	Label     string `yaml:"label"`
	Env       string `yaml:"env"`
	Model     string `yaml:"model"`
	Seed      uint64 `yaml:"seed"`
}

// ReadRun reads the run directory dir. A run that has not finished an
// iteration (no state.json or metrics.jsonl) is returned with Started false;
// a directory without config.yaml is an error wrapping ErrNotRun.
func ReadRun(dir string) (Run, error) {
	run := Run{Dir: dir, Evals: map[string]Eval{}}
	cfgPath := filepath.Join(dir, "config.yaml")
	data, err := os.ReadFile(cfgPath)
	if errors.Is(err, fs.ErrNotExist) {
		return Run{}, fmt.Errorf("%s: %w (no config.yaml)", dir, ErrNotRun)
	}
	if err != nil {
		return Run{}, fmt.Errorf("read %s: %w", cfgPath, err)
	}
	var cfg config
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return Run{}, fmt.Errorf("read %s: %w", cfgPath, err)
	}
	// A variant of an algorithm (label) is a method of its own in reports.
	run.Algorithm, run.Env, run.Model, run.Seed = cmp.Or(cfg.Label, cfg.Algorithm), cfg.Env, cfg.Model, cfg.Seed

	hasState, err := readJSON(filepath.Join(dir, "state.json"), &run.State)
	if err != nil {
		return Run{}, err
	}
	hasMetrics, err := readMetrics(filepath.Join(dir, "metrics.jsonl"), &run.Metrics)
	if err != nil {
		return Run{}, err
	}
	run.Started = hasState && hasMetrics

	paths, err := filepath.Glob(filepath.Join(dir, "eval", "*.json"))
	if err != nil {
		return Run{}, fmt.Errorf("read %s: %w", filepath.Join(dir, "eval"), err)
	}
	for _, path := range paths {
		var ev Eval
		if _, err := readJSON(path, &ev); err != nil {
			return Run{}, err
		}
		// The file name is what `--split` selects, so it wins over a
		// missing or different "split" field.
		split := strings.TrimSuffix(filepath.Base(path), ".json")
		if ev.Split == "" {
			ev.Split = split
		}
		run.Evals[split] = ev
	}
	return run, nil
}

// Unreadable is a run of a sweep directory whose files could not be read
// (a config.yaml, state.json, metrics.jsonl or evaluation that is not what
// the run writes). It is left out of the comparison and listed as missing,
// so that one damaged run does not hide the others.
type Unreadable struct {
	Dir string
	Err error
}

// String says which run and why, e.g. "sft-1: read sft-1/state.json: ...".
func (u Unreadable) String() string {
	return fmt.Sprintf("%s: unreadable: %v", filepath.Base(u.Dir), u.Err)
}

// ReadRuns reads the run at dir or, when dir is a sweep directory (no
// config.yaml, but run directories one level down), the runs it holds, in
// the order of their names. A run named as dir must be readable; a run of
// a sweep that is not is returned in unreadable rather than failing the
// rest.
func ReadRuns(dir string) (runs []Run, unreadable []Unreadable, err error) {
	run, err := ReadRun(dir)
	if err == nil {
		return []Run{run}, nil, nil
	}
	if !errors.Is(err, ErrNotRun) {
		return nil, nil, err
	}
	entries, readErr := os.ReadDir(dir)
	if readErr != nil {
		return nil, nil, fmt.Errorf("read %s: %w", dir, readErr)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if _, statErr := os.Stat(filepath.Join(sub, "config.yaml")); statErr != nil {
			continue
		}
		r, err := ReadRun(sub)
		if err != nil {
			unreadable = append(unreadable, Unreadable{Dir: sub, Err: err})
			continue
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 && len(unreadable) == 0 {
		return nil, nil, fmt.Errorf("%s: %w: no config.yaml in it or in its subdirectories", dir, ErrNotRun)
	}
	return runs, unreadable, nil
}

// readJSON decodes the file at path into v; it reports false, and no
// error, when the file does not exist.
func readJSON(path string, v any) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return true, nil
}

// readMetrics reads metrics.jsonl; it reports false, and no error, when
// the file does not exist.
func readMetrics(path string, its *[]Iteration) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	// Lines hold a few maps of metrics; the limit only guards against a
	// file that is not JSON lines at all.
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var it Iteration
		if err := json.Unmarshal(line, &it); err != nil {
			return false, fmt.Errorf("read %s:%d: %w", path, n, err)
		}
		*its = append(*its, it)
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	// A run resumed from a checkpoint may repeat iterations it had logged
	// after the checkpoint; the later line is the one the run continued from.
	*its = dedupIterations(*its)
	return true, nil
}

// dedupIterations keeps the last line of each iteration number, in the
// order of the iterations.
func dedupIterations(its []Iteration) []Iteration {
	sorted := slices.IsSortedFunc(its, func(a, b Iteration) int { return a.Iteration - b.Iteration })
	unique := true
	for i := 1; i < len(its) && unique; i++ {
		unique = its[i].Iteration != its[i-1].Iteration
	}
	if sorted && unique {
		return its
	}
	last := map[int]Iteration{}
	for _, it := range its {
		last[it.Iteration] = it
	}
	out := make([]Iteration, 0, len(last))
	for _, it := range last {
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b Iteration) int { return a.Iteration - b.Iteration })
	return out
}
