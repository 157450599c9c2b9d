package rl

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/rollout"
)

// TestEpisodeProgress checks the progress lines of a long collection: at
// most one per interval, none for the last episode (the phase's own line
// follows), none without a log.
func TestEpisodeProgress(t *testing.T) {
	var lines []string
	logf := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	defer func(d time.Duration) { progressEvery = d }(progressEvery)

	progressEvery = time.Hour
	p := EpisodeProgress(logf, "rollout", 3)
	for done := 1; done <= 3; done++ {
		p(done)
	}
	if len(lines) != 0 {
		t.Errorf("lines within the first interval: %q", lines)
	}

	progressEvery = 0
	p = EpisodeProgress(logf, "eval test", 3)
	for done := 1; done <= 3; done++ {
		p(done)
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "  eval test: 1/3 episodes in ") || !strings.Contains(lines[1], "2/3 episodes") || !strings.Contains(lines[1], ", ETA ") {
		t.Errorf("progress lines %q", lines)
	}
	if EpisodeProgress(nil, "rollout", 3) != nil {
		t.Error("a callback without a log")
	}
}

// TestDecodingErrors: settings that cannot be played are refused with
// the flag to change.
func TestDecodingErrors(t *testing.T) {
	for _, c := range []struct {
		d    Decoding
		want string
	}{
		{Decoding{Temperature: 0, Trials: 2, Seed: 1}, "--trials 2: greedy decoding"},
		{Decoding{Temperature: -1, Trials: 1, Seed: 1}, "--temperature -1"},
		{Decoding{Temperature: math.NaN(), Trials: 1, Seed: 1}, "--temperature NaN"},
		{Decoding{Temperature: math.Inf(1), Trials: 1, Seed: 1}, "--temperature +Inf"},
		{Decoding{Temperature: 1e39, Trials: 1, Seed: 1}, "--temperature 1e+39"},
		{Decoding{Temperature: 1e-4, Trials: 1, Seed: 1}, "--temperature 0.0001: below 0.001, use 0"},
		{Decoding{Temperature: 1, Trials: 0, Seed: 1}, "--trials 0"},
		{Decoding{Temperature: 1, Trials: 2, Seed: -1}, "--seed -1"},
	} {
		if err := c.d.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error containing %q", c.d, err, c.want)
		}
	}
	if err := Greedy.Check(); err != nil {
		t.Errorf("greedy: %v", err)
	}
	if n := (Decoding{Temperature: 0.7, Trials: 4, Seed: 1}).Name(envs.Unseen); n != "unseen-t0.7-x4" {
		t.Errorf("name %q", n)
	}
}

// coin is letters won when the action's first byte is even: about half
// of the byte model's sampled actions, so that a sampled evaluation has
// tasks won sometimes, always and never for pass@k and pass^k to count.
type coin struct{ letters }

func (c *coin) Step(text string) (envs.StepResult, error) {
	won := len(text) > 0 && text[0]%2 == 0
	reward := 0.0
	if won {
		reward = 1
	}
	return envs.StepResult{Observation: "ok", Reward: reward, Done: true, Info: envs.Info{ValidAction: true, Score: reward, Success: won}}, nil
}

// TestSampledEvaluation evaluates a trained run greedily and by sampling:
// the sampled evaluation plays each task its number of times with varied
// actions, writes pass@k and pass^k beside the greedy file (which it
// leaves alone), and plays the same episodes again from the same seed.
func TestSampledEvaluation(t *testing.T) {
	dir, model := t.TempDir(), byteModel(t)
	if err := Train(context.Background(), lettersConfig("grpo", 1), Options{ModelPath: model, Dir: dir, NewEnv: func() envs.Env { return &letters{} }, Progress: testLog{t}}); err != nil {
		t.Fatal(err)
	}
	newEnv := func() envs.Env { return &coin{} }
	// A run directory copied without its evaluations and episodes takes
	// them too.
	for _, sub := range []string{"eval", "trajectories"} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			t.Fatal(err)
		}
	}
	const tasks = 6
	greedy, err := EvaluateRun(context.Background(), dir, model, newEnv, envs.Test, tasks, Greedy, nil)
	if err != nil {
		t.Fatal(err)
	}
	if greedy.Sampled != nil || greedy.File != EvalFile(dir, "test") || greedy.Summary.Episodes != tasks {
		t.Fatalf("greedy evaluation %+v", greedy)
	}
	greedyData, err := os.ReadFile(greedy.File)
	if err != nil {
		t.Fatal(err)
	}

	d := Decoding{Temperature: 1, Trials: 4, Seed: 7}
	sampled, err := EvaluateRun(context.Background(), dir, model, newEnv, envs.Test, tasks, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sampled.Sampled
	if s == nil || sampled.File != EvalFile(dir, "test-t1-x4") || sampled.Summary.Episodes != tasks*d.Trials || s.Tasks != tasks || len(s.PassAtK) != d.Trials || len(s.PassHatK) != d.Trials {
		t.Fatalf("sampled evaluation %+v, %+v", sampled, s)
	}
	if math.Abs(s.PassAtK[0]-sampled.Summary.SuccessRate) > 1e-12 || !slices.IsSorted(s.PassAtK) || math.Abs(s.PassHatK[0]-s.PassAtK[0]) > 1e-12 {
		t.Errorf("pass@k %v, pass^k %v with success rate %.3f: pass@1 is the success rate, and pass@k does not fall with k", s.PassAtK, s.PassHatK, sampled.Summary.SuccessRate)
	}
	trajs, err := ReadTrajectories(dir, "eval-test-t1-x4")
	if err != nil {
		t.Fatal(err)
	}
	wins, actions := map[int64]int{}, map[string]bool{}
	for i, tr := range trajs {
		if tr.Seed != int64(i/d.Trials) || tr.Sample != i%d.Trials {
			t.Fatalf("episode %d is task %d trial %d, want task %d trial %d", i, tr.Seed, tr.Sample, i/d.Trials, i%d.Trials)
		}
		if tr.Success {
			wins[tr.Seed]++
		}
		actions[tr.Steps[0].Action] = true
	}
	anyWon, allWon := 0, 0
	for _, n := range wins {
		anyWon++
		if n == d.Trials {
			allWon++
		}
	}
	t.Logf("%d of %d tasks won at least once, %d every time; pass@k %v, pass^k %v", anyWon, tasks, allWon, s.PassAtK, s.PassHatK)
	if anyWon == 0 || allWon == tasks || anyWon == allWon {
		t.Fatalf("the coin's tasks were won %d times at least once and %d times always: no mix to count", anyWon, allWon)
	}
	if k := d.Trials - 1; math.Abs(s.PassAtK[k]-float64(anyWon)/tasks) > 1e-12 || math.Abs(s.PassHatK[k]-float64(allWon)/tasks) > 1e-12 {
		t.Errorf("pass@k %v and pass^k %v, but %d of %d tasks have a success and %d succeed in every trial", s.PassAtK, s.PassHatK, anyWon, tasks, allWon)
	}
	if len(actions) < 2 {
		t.Errorf("%d sampled episodes took one action: %v", len(trajs), actions)
	}
	var file struct {
		Split   string       `json:"split"`
		Sampled *SampledEval `json:"sampled"`
	}
	data, err := os.ReadFile(sampled.File)
	if err != nil || json.Unmarshal(data, &file) != nil || file.Split != "test" || file.Sampled == nil || file.Sampled.Seed != 7 || !slices.Equal(file.Sampled.PassAtK, s.PassAtK) {
		t.Fatalf("the sampled evaluation's file: %v\n%.300s", err, data)
	}
	if again, err := os.ReadFile(greedy.File); err != nil || string(again) != string(greedyData) {
		t.Errorf("the sampled evaluation changed the greedy one's file (%v)", err)
	}

	// The same seed plays the same episodes.
	if _, err := EvaluateRun(context.Background(), dir, model, newEnv, envs.Test, tasks, d, nil); err != nil {
		t.Fatal(err)
	}
	replayed, err := ReadTrajectories(dir, "eval-test-t1-x4")
	if err != nil {
		t.Fatal(err)
	}
	for i := range trajs {
		if replayed[i].Steps[0].Action != trajs[i].Steps[0].Action {
			t.Fatalf("episode %d: %q, then %q from the same seed", i, trajs[i].Steps[0].Action, replayed[i].Steps[0].Action)
		}
	}
}

// TestSampledEvalOfFailedEpisodes: where every episode ended in an error
// there is no task to count, and the evaluation is still written.
func TestSampledEvalOfFailedEpisodes(t *testing.T) {
	failed := []rollout.Trajectory{{Seed: 0, Error: "the server is down"}, {Seed: 0, Sample: 1, Error: "the server is down"}}
	s, err := sampledEval(Decoding{Temperature: 1, Trials: 2, Seed: 1}, failed)
	if err != nil || s.Tasks != 0 || s.PassAtK != nil || s.PassHatK != nil || s.Trials != 2 {
		t.Fatalf("%+v, %v", s, err)
	}
}
