package main

import (
	"path/filepath"
	"testing"

	"github.com/agentrl/agentrl/rl"
)

// TestCommittedSweepsAreValid reads the experiment files of docs/results
// with every algorithm of the binary registered: reading a sweep makes
// and checks each run's configuration, so a broken file fails here rather
// than hours into a sweep.
func TestCommittedSweepsAreValid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "results", "sweeps", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sweep files found (%v)", err)
	}
	for _, f := range files {
		if _, err := rl.ReadSweep(f); err != nil {
			t.Error(err)
		}
	}
}
