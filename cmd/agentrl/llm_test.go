package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentrl/agentrl/llm/gguf"
	"github.com/agentrl/agentrl/llm/initmodel"
)

var (
	tinyOnce sync.Once
	tinyPath string
	tinyErr  error
)

// tinyModel makes the built-in tiny model once for the package's tests.
func tinyModel(t *testing.T) string {
	t.Helper()
	tinyOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentrl-cli")
		if err != nil {
			tinyErr = err
			return
		}
		tinyPath = filepath.Join(dir, "tiny.gguf")
		_, tinyErr = initmodel.Write(tinyPath, initmodel.Config{Preset: "tiny", Seed: 3})
	})
	if tinyErr != nil {
		t.Fatal(tinyErr)
	}
	return tinyPath
}

func TestVersionListsCPUFeatures(t *testing.T) {
	out, err := runApp(t, newApp(), "version", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		SystemInfo string `json:"system_info"`
		Devices    []struct{ Type string }
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("version --json: %v\n%s", err, out)
	}
	if len(v.Devices) == 0 || v.Devices[0].Type != "cpu" {
		t.Fatalf("want the CPU among the devices, got %+v", v.Devices)
	}
	// Built through the Makefile (-march=native) on a machine with AVX2,
	// ggml must have been compiled with it.
	if strings.Contains(os.Getenv("CGO_CFLAGS"), "-march=native") && cpuHasAVX2() {
		for _, feature := range []string{"AVX2 = 1", "FMA = 1"} {
			if !strings.Contains(v.SystemInfo, feature) {
				t.Errorf("system info %q lacks %s", v.SystemInfo, feature)
			}
		}
	}
}

func cpuHasAVX2() bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	return err == nil && strings.Contains(string(b), " avx2 ") && strings.Contains(string(b), " fma ")
}

func TestGenerateAndScore(t *testing.T) {
	model := tinyModel(t)
	out, err := runApp(t, newApp(), "generate", "--model", model, "--prompt", "Action:", "--prompt", "Is it a cat?",
		"--n", "2", "--max-tokens", "6", "--seed", "4", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var gen struct {
		Completions [][]struct {
			Tokens       []int32
			LogProbs     []float32
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.Unmarshal([]byte(out), &gen); err != nil {
		t.Fatalf("generate --json: %v\n%s", err, out)
	}
	if len(gen.Completions) != 2 || len(gen.Completions[0]) != 2 {
		t.Fatalf("want 2 prompts x 2 samples, got %s", out)
	}
	for _, c := range gen.Completions[1] {
		if len(c.Tokens) == 0 || len(c.Tokens) != len(c.LogProbs) || c.FinishReason == "" {
			t.Fatalf("bad completion %+v", c)
		}
	}
	again, err := runApp(t, newApp(), "generate", "--model", model, "--prompt", "Action:", "--prompt", "Is it a cat?",
		"--n", "2", "--max-tokens", "6", "--seed", "4", "--json")
	if err != nil || again != out {
		t.Fatalf("the same seed gave different output (%v)", err)
	}

	out, err = runApp(t, newApp(), "score", "--model", model, "--prompt", "Is it a cat?", "--continuation", " No.", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var sc struct{ Scores []struct{ Sum float64 } }
	if err := json.Unmarshal([]byte(out), &sc); err != nil || len(sc.Scores) != 1 || sc.Scores[0].Sum >= 0 {
		t.Fatalf("score --json: %v\n%s", err, out)
	}
}

// TestBadInputFailsCleanly runs each bad input in-process: any crash inside
// llama.cpp would take the test binary down, so reaching the assertions
// means the input was rejected in Go.
func TestBadInputFailsCleanly(t *testing.T) {
	model := tinyModel(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	whole, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	foreign := gguf.NewWriter()
	foreign.Set("general.architecture", "mamba9")
	foreignPath := filepath.Join(dir, "foreign.gguf")
	if _, err := foreign.WriteFile(foreignPath); err != nil {
		t.Fatal(err)
	}
	adapter := gguf.NewWriter()
	adapter.Set("general.type", "adapter")
	adapter.Set("general.architecture", "qwen2")
	adapter.Set("adapter.type", "lora")
	adapterPath := filepath.Join(dir, "qwen-adapter.gguf")
	if _, err := adapter.WriteFile(adapterPath); err != nil {
		t.Fatal(err)
	}
	gen := func(args ...string) []string { return append([]string{"generate", "--max-tokens", "2"}, args...) }
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing model", gen("--model", filepath.Join(dir, "none.gguf"), "-p", "x"), "no such file"},
		{"not a GGUF", gen("--model", write("notes.txt", []byte("just some text")), "-p", "x"), "not a GGUF"},
		{"truncated GGUF", gen("--model", write("half.gguf", whole[:len(whole)/3]), "-p", "x"), "truncated"},
		{"unsupported architecture", gen("--model", foreignPath, "-p", "x"), "mamba9"},
		{"adapter for another architecture", gen("--model", model, "--lora", adapterPath, "-p", "x"), "qwen2"},
		{"missing adapter", gen("--model", model, "--lora", filepath.Join(dir, "none.gguf:0.5"), "-p", "x"), "no such file"},
		{"prompt longer than the context", gen("--model", model, "--ctx", "16", "-p", strings.Repeat("many words here ", 20)), "context"},
		{"negative temperature", gen("--model", model, "-p", "x", "--temperature", "-1"), "temperature"},
		{"temperature whose inverse overflows", gen("--model", model, "-p", "x", "--temperature", "1e-39"), "greedy"},
		{"adapter scale not a number", gen("--model", model, "--lora", adapterPath+":nan", "-p", "x"), "finite number"},
		{"threads past ggml's limit", gen("--model", model, "-p", "x", "--threads", "100000"), "at most 512"},
		{"top-p above 1", gen("--model", model, "-p", "x", "--top-p", "1.5"), "top-p"},
		{"zero samples", gen("--model", model, "-p", "x", "--n", "0"), "--n"},
		{"samples past the bound", gen("--model", model, "-p", "x", "--n", "1000000000000"), "at most 65536"},
		{"a context no prompt fits beside the action", []string{"envs", "eval", "math", "--policy", "model", "--model", model, "--ctx", "128", "--max-tokens", "128"}, "leaves no room for a prompt"},
		{"zero max tokens", []string{"generate", "--model", model, "-p", "x", "--max-tokens", "0"}, "max tokens"},
		{"negative context", gen("--model", model, "-p", "x", "--ctx", "-5"), "--ctx"},
		{"context past the bound", gen("--model", model, "-p", "x", "--ctx", "4503599627370496"), "at most 16777216"},
		{"score without continuation text", []string{"score", "--model", model, "-p", "x", "-c", ""}, "empty continuation"},
		{"bench with a bad parallel list", []string{"bench", "infer", "--model", model, "--parallel", "8,zero"}, "--parallel"},
	}
	for _, c := range cases {
		_, err := runApp(t, newApp(), c.args...)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.want)
		}
	}
}

func TestEvalWithTheModelPolicy(t *testing.T) {
	model := tinyModel(t)
	traj := filepath.Join(t.TempDir(), "traj.jsonl")
	out, err := runApp(t, newApp(), "envs", "eval", "math", "--policy", "model", "--model", model,
		"--episodes", "3", "--parallel", "3", "--max-tokens", "12", "--seed", "2", "--out", traj, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Model       string
		MaxSteps    int     `json:"max_steps"`
		MaxTokens   int     `json:"max_tokens"`
		Temperature float64 `json:"temperature"`
		Summary     struct{ Episodes int }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Summary.Episodes != 3 {
		t.Fatalf("eval --json: %v\n%s", err, out)
	}
	// The settings that made the figures: math's own step limit (1) where
	// --max-steps is left at 0.
	if res.Model != model || res.MaxSteps != 1 || res.MaxTokens != 12 || res.Temperature != 1 {
		t.Fatalf("eval --json should carry its settings, got %+v", res)
	}
	data, err := os.ReadFile(traj)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"token_ids"`) || !strings.Contains(string(data), `"logprobs"`) {
		t.Fatalf("model trajectories should keep token ids and log-probs:\n%.300s", data)
	}
	if _, err := runApp(t, newApp(), "envs", "eval", "math", "--policy", "model"); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Fatalf("want an error asking for --model, got %v", err)
	}
}

func TestCommasStayInsidePrompts(t *testing.T) {
	model := tinyModel(t)
	out, err := runApp(t, newApp(), "score", "--model", model, "--prompt", "Hello, world", "--continuation", " a, b", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var sc struct{ Scores []struct{ Tokens []int32 } }
	if err := json.Unmarshal([]byte(out), &sc); err != nil || len(sc.Scores) != 1 {
		t.Fatalf("a continuation with a comma was split: %v\n%s", err, out)
	}
}
