package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/llm/initmodel"
)

// TestDemoOnAMadeModel runs the whole demo on the tiny model: every step,
// in order, up to the evaluation with the fine-tuned adapter.
func TestDemoOnAMadeModel(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo takes a while")
	}
	out := t.TempDir()
	// WebShop demonstrations run to about 1,400 tokens.
	model := filepath.Join(out, "tiny-2k.gguf")
	if _, err := initmodel.Write(model, initmodel.Config{Preset: "tiny", Seed: 3, ContextLength: 2048}); err != nil {
		t.Fatal(err)
	}
	text, err := runApp(t, newApp(), "demo", "--model", model, "--out", out, "--threads", "1", "--episodes", "4", "--demos", "4")
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	for _, want := range []string{"$ agentrl envs eval webshop --policy expert", "$ agentrl sft", "--lora " + filepath.Join(out, "webshop-lora.gguf"), "demo finished"} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
	if strings.Contains(text, "models pull") {
		t.Error("the demo pulled a model although it was given a file")
	}
	for _, f := range []string{"before.jsonl", "after.jsonl", "webshop-demos.jsonl", "webshop-lora.gguf"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
