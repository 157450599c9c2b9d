package rl

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrl/agentrl/envs"
)

// resumeConfig is a short GRPO run on the vowel task that evaluates too.
func resumeConfig() Config {
	cfg := lettersConfig("grpo", 4)
	cfg.Eval = EvalConfig{Every: 2, Episodes: 4, Split: envs.Test}
	return cfg
}

// childRunDir, when set, makes TestResumeAfterKill the run that the test
// kills: it trains into that directory and never returns normally.
const childRunDir = "AGENTRL_TEST_KILLED_RUN"

// TestResumeAfterKill kills a real training run (SIGKILL, in a child
// process) after its second iteration, resumes it, and checks that every
// iteration's metrics equal those of an uninterrupted run of the same
// configuration.
func TestResumeAfterKill(t *testing.T) {
	if dir := os.Getenv(childRunDir); dir != "" {
		err := Train(context.Background(), resumeConfig(), Options{ModelPath: filepath.Join(dir, "model.gguf"), Dir: filepath.Join(dir, "run"),
			NewEnv: func() envs.Env { return &letters{} }})
		t.Fatalf("the run was to be killed, yet it ended: %v", err)
	}
	model := byteModel(t)
	newEnv := func() envs.Env { return &letters{} }
	whole := t.TempDir()
	if err := Train(context.Background(), resumeConfig(), Options{ModelPath: model, Dir: whole, NewEnv: newEnv}); err != nil {
		t.Fatal(err)
	}

	work := t.TempDir()
	data, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "model.gguf"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(work, "run")
	child := exec.Command(os.Args[0], "-test.run=^TestResumeAfterKill$")
	child.Env = append(os.Environ(), childRunDir+"="+work)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if data, _ := os.ReadFile(filepath.Join(run, "metrics.jsonl")); strings.Count(string(data), "\n") >= 2 {
			break
		}
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatal("the run did not finish two iterations in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	st, started, err := readState(run)
	if err != nil || !started || st.Finished {
		t.Fatalf("after the kill: state %+v, started %v, err %v", st, started, err)
	}
	t.Logf("killed after iteration %d", st.Iteration)

	if err := Train(context.Background(), resumeConfig(), Options{ModelPath: model, Dir: run, NewEnv: newEnv}); err == nil ||
		!strings.Contains(err.Error(), "--resume") {
		t.Fatalf("starting over a run directory: want an error suggesting --resume, got %v", err)
	}
	if err := Train(context.Background(), resumeConfig(), Options{ModelPath: model, Dir: run, NewEnv: newEnv, Resume: true}); err != nil {
		t.Fatal(err)
	}
	want, got := readMetrics(t, whole), readMetrics(t, run)
	if len(got) != len(want) {
		t.Fatalf("resumed run has %d iterations, the uninterrupted one %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.Iteration != w.Iteration || g.EnvSteps != w.EnvSteps || g.GradSteps != w.GradSteps || g.TrainTokens != w.TrainTokens ||
			math.Abs(g.Loss-w.Loss) > 1e-6*math.Max(1, math.Abs(w.Loss)) || g.Reward != w.Reward || (g.Eval == nil) != (w.Eval == nil) ||
			(w.Eval != nil && *g.Eval != *w.Eval) {
			t.Fatalf("iteration %d: resumed %+v\nuninterrupted %+v", i+1, g, w)
		}
	}
	// A finished run goes on when asked for more iterations, and
	// refuses fewer than it has done.
	more := resumeConfig()
	more.Iterations = 5
	if err := Train(context.Background(), more, Options{ModelPath: model, Dir: run, NewEnv: newEnv, Resume: true}); err != nil {
		t.Fatal(err)
	}
	if ms := readMetrics(t, run); len(ms) != 5 || ms[4].Iteration != 5 {
		t.Fatalf("extended run has %d iterations", len(ms))
	}
	fewer := resumeConfig()
	fewer.Iterations = 3
	if err := Train(context.Background(), fewer, Options{ModelPath: model, Dir: run, NewEnv: newEnv, Resume: true}); err == nil ||
		!strings.Contains(err.Error(), "more than the 3 asked for") {
		t.Fatalf("fewer iterations than done: %v", err)
	}
}
