package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/rollout"
)

func TestGRPOBenchRLConfig(t *testing.T) {
	g := grpoBenchConfig{Model: "m.gguf", Env: grpoBenchEnv, Tasks: 3, Group: 5, MaxTokens: 20, Rank: 4, Alpha: 8, LR: 1e-4,
		Threads: 1, Parallel: 15, Context: 512, Seed: 7}
	cfg, err := g.rlConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Algorithm != "grpo" || cfg.Env != "math" || cfg.Iterations != 1 || cfg.WarmStart.Demos != 0 || cfg.Eval.Episodes != 0 ||
		cfg.Rollout.MaxSteps != 1 || cfg.Rollout.Tasks != 3 || cfg.GRPO.Group != 5 || cfg.GRPO.Minibatches != 1 || cfg.GRPO.Epochs != 1 ||
		cfg.Rollout.MaxTokens != 20 || cfg.LoRA.Rank != 4 || cfg.LoRA.Alpha != 8 || cfg.GRPO.LR != 1e-4 || cfg.Threads != 1 ||
		cfg.Rollout.Parallel != 15 || cfg.Rollout.Context != 512 || cfg.Seed != 7 {
		t.Fatalf("config %+v", cfg)
	}
}

// The prompts file holds the expert demonstrations of the run's tasks, in
// the form `agentrl envs demos` writes.
func TestWriteGRPOPrompts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	if err := writeGRPOPrompts(context.Background(), path, grpoBenchEnv, []int64{11, 12}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var users []string
	for sc.Scan() {
		var d rollout.Demonstration
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		// Math reads the whole reply: the expected answer is the worked
		// solution, whose last line the peer reads as the action.
		lines := strings.Split(d.Messages[2].Content, "\n")
		if len(d.Messages) != 3 || d.Messages[0].Role != "system" || d.Messages[1].Role != "user" ||
			len(lines) < 2 || !strings.HasPrefix(lines[len(lines)-1], "#### ") {
			t.Fatalf("demonstration %+v", d.Messages)
		}
		users = append(users, d.Messages[1].Content)
	}
	if len(users) != 2 || users[0] == users[1] {
		t.Fatalf("%d prompts: %q", len(users), users)
	}
	// The same task as the environment states it.
	src, err := builtinEnv(grpoBenchEnv)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := src.newEnv().Reset(envs.Train, 11)
	if err != nil || obs != users[0] {
		t.Fatalf("task 11: %q, %v; prompt %q", obs, err, users[0])
	}
}

func TestReadGRPOIteration(t *testing.T) {
	dir := t.TempDir()
	metrics := `{"iteration":1,"rollout_tokens":300,"train_tokens":1000,"episodes":4,"reward":0.5,"success":0.5,"loss":0.1,"grad_steps":1,` +
		`"metrics":{"flat_groups":1,"sequences":2},"phase_s":{"rollout":3,"train":2,"handover":0.5}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "metrics.jsonl"), []byte(metrics), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "trajectories"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "trajectories", "iter-000001.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	w := rollout.NewWriter(zw)
	for _, seed := range []int64{9, 9, 8, 8} {
		tr := rollout.Trajectory{Env: "math", Split: envs.Train, Seed: seed, NumSteps: 1,
			Steps: []rollout.Step{{PromptTokenIDs: make([]int32, 10+seed), Done: true}}}
		if err := w.Write(&tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	f.Close()

	a, err := readGRPOIteration(dir, 7)
	if err != nil {
		t.Fatal(err)
	}
	if a.GenerateSeconds != 3 || a.TrainSeconds != 2 || a.HandoverSeconds != 0.5 || a.Seconds != 5.5 || a.SetupSeconds != 1.5 {
		t.Errorf("seconds %+v", a)
	}
	if a.GenerateTPS != 100 || a.TrainTPS != 500 || a.FlatGroups != 1 || a.TrainedSequences != 2 || a.Episodes != 4 {
		t.Errorf("figures %+v", a)
	}
	if len(a.TaskSeeds) != 2 || a.TaskSeeds[0] != 8 || a.TaskSeeds[1] != 9 || a.PromptTokens != 18.5 {
		t.Errorf("tasks %v, prompt tokens %v", a.TaskSeeds, a.PromptTokens)
	}
}
