package rl

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRemoveStaleHandOvers: the hand-over files of a process that has
// ended are removed, this process's and other files are kept.
func TestRemoveStaleHandOvers(t *testing.T) {
	dir := t.TempDir()
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Skip("no process to end:", err)
	}
	dead := fmt.Sprintf("agentrl-adapter-%d-123.gguf", ended.Process.Pid)
	mine := fmt.Sprintf("agentrl-adapter-%d-456.gguf", os.Getpid())
	for _, name := range []string{dead, mine, "agentrl-adapter-789.gguf", "other.gguf"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removeStale(dir)
	for name, want := range map[string]bool{dead: false, mine: true, "agentrl-adapter-789.gguf": true, "other.gguf": true} {
		_, err := os.Stat(filepath.Join(dir, name))
		if got := err == nil; got != want {
			t.Errorf("%s: kept %v, want %v", name, got, want)
		}
	}
}
