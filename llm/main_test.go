package llm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentrl/agentrl/llm/initmodel"
)

// testModel is the built-in tiny model, made once for the package's tests.
var (
	testModel     *Model
	testModelPath string
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "llm-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testModelPath = filepath.Join(dir, "tiny.gguf")
	if _, err := initmodel.Write(testModelPath, initmodel.Config{Preset: "tiny", Seed: 7}); err != nil {
		fmt.Fprintln(os.Stderr, "make test model:", err)
		return 1
	}
	testModel, err = Load(testModelPath, LoadOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "load test model:", err)
		return 1
	}
	defer testModel.Close()
	return m.Run()
}

// newTestEngine starts an engine on the test model, closed with the test.
// It runs llama.cpp on one thread: on a busy machine two threads spin at
// ggml's barriers waiting for each other, which made single tests take
// minutes.
func newTestEngine(t *testing.T, opts EngineOptions) *Engine {
	t.Helper()
	if opts.Threads == 0 {
		opts.Threads = 1
	}
	e, err := testModel.NewEngine(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func greedy(maxTokens int) Sampling {
	return Sampling{Temperature: 0, TopP: 1, Seed: 1, MaxTokens: maxTokens, IgnoreEOS: true}
}

func generateOne(t *testing.T, e *Engine, prompt string, s Sampling) Completion {
	t.Helper()
	res, err := e.Generate(context.Background(), []GenerateRequest{{Prompt: prompt}}, s, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res[0][0]
}
