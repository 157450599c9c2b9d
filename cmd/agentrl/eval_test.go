package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalSampledFromTheCommandLine trains a one-iteration GRPO run on
// math with the tiny model, then evaluates it by sampling: the command
// reports pass@k and writes the evaluation beside where the greedy one
// goes. Settings that cannot be played are refused before the model loads.
func TestEvalSampledFromTheCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a run")
	}
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	cfg := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(cfg, []byte(`threads: 1
rollout: {tasks: 2, max_tokens: 8, parallel: 4, context: 512, max_steps: 2}
eval: {episodes: 0}
lora: {rank: 4, batch_tokens: 1024}
grpo: {group: 2, minibatches: 1}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runApp(t, newApp(), "train", "grpo", "--env", "math", "--model", tinyModel(t), "--iterations", "1", "--config", cfg, "--out", run); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := runApp(t, newApp(), "eval", "--run", run, "--episodes", "2", "--temperature", "0.8", "--trials", "3", "--seed", "5")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	file := filepath.Join(run, "eval", "test-t0.8-x3.json")
	for _, want := range []string{"on math test-t0.8-x3: success ", "(6 episodes,", "2 tasks x 3 trials at temperature 0.8: pass@1 ", "pass@3 ", "pass^3 ", "written to " + file} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if data, err := os.ReadFile(file); err != nil || !strings.Contains(string(data), `"pass_hat_k": [`) {
		t.Errorf("%s: %v\n%.300s", file, err, data)
	}
	if _, err := os.Stat(filepath.Join(run, "eval", "test.json")); err == nil {
		t.Error("a sampled evaluation wrote the greedy one's file")
	}
	// Reports compare it by its name.
	reportFile := filepath.Join(dir, "report.md")
	if _, err := runApp(t, newApp(), "report", run, "--run-plots=false", "--split", "test-t0.8-x3", "--out", reportFile); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(reportFile); err != nil || !strings.Contains(string(data), "test-t0.8-x3") || strings.Contains(string(data), "not evaluated") {
		t.Errorf("the report on the sampled evaluation: %v\n%s", err, data)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--split", "dev"}, `--split: unknown split "dev"`},
		{[]string{"--episodes", "0"}, "--episodes 0 must be positive"},
		{[]string{"--trials", "2"}, "--trials 2: greedy decoding (--temperature 0) plays a task the same way every time"},
		{[]string{"--temperature", "-0.5"}, "--temperature -0.5"},
		{[]string{"--temperature", "1", "--trials", "0"}, "--trials 0"},
		{[]string{"--temperature", "1", "--seed", "-3"}, "--seed -3"},
	} {
		if _, err := runApp(t, newApp(), append([]string{"eval", "--run", run}, c.args...)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
