// Package initmodeltest writes made models into a test's temporary
// directory, so that tests across the project get real GGUF files
// without downloading anything.
package initmodeltest

import (
	"path/filepath"
	"testing"

	"github.com/agentrl/agentrl/llm/initmodel"
)

// Write writes a made model with cfg into a fresh temporary directory of
// t and returns its path; the test fails if the model cannot be made.
func Write(t testing.TB, cfg initmodel.Config) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.gguf")
	if _, err := initmodel.Write(path, cfg); err != nil {
		t.Fatalf("make test model: %v", err)
	}
	return path
}

// Bytes writes a tiny made model with a vocabulary of little more than
// the 256 bytes, so that an action's tokens are mostly single characters
// and a LoRA adapter can move the distribution over them far within a
// few steps (over thousands of tokens of random embeddings it cannot).
func Bytes(t testing.TB, contextLength int) string {
	t.Helper()
	return Write(t, initmodel.Config{Preset: "tiny", Seed: 5, VocabSize: 300, ContextLength: contextLength})
}
