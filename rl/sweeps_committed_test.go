package rl_test

import (
	"fmt"
	"path/filepath"
	"testing"

	_ "github.com/agentrl/agentrl/nlac"
	"github.com/agentrl/agentrl/rl"
	_ "github.com/agentrl/agentrl/stepagent"
)

// TestCommittedSweeps reads every sweep file of the results: each must be
// valid (every run's configuration resolves, NLAC and StepAgent
// registered), and sweeps that share a directory must give a run they
// both name the settings it was started with, whichever of them starts it
// (those a resume may not change: another algorithm's section may differ).
func TestCommittedSweeps(t *testing.T) {
	files, err := filepath.Glob("../docs/results/sweeps/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sweep files found (%v)", err)
	}
	type origin struct {
		file string
		cfg  rl.Config
	}
	seen := map[string]origin{}
	for _, f := range files {
		s, err := rl.ReadSweep(f)
		if err != nil {
			t.Error(err)
			continue
		}
		runs, err := s.RunConfigs()
		if err != nil {
			t.Error(err)
			continue
		}
		for dir, cfg := range runs {
			if o, ok := seen[dir]; ok {
				changed, err := rl.ChangedSettings(o.cfg, cfg)
				if err != nil {
					t.Fatal(err)
				}
				// A resume may change the iterations; sweeps sharing a
				// run may not, or each would extend or set aside the
				// other's run.
				if o.cfg.Iterations != cfg.Iterations {
					changed = append(changed, fmt.Sprintf("iterations: %d, %d", o.cfg.Iterations, cfg.Iterations))
				}
				if len(changed) > 0 {
					t.Errorf("%s: %s and %s configure it differently: %v", dir, o.file, f, changed)
				}
			}
			seen[dir] = origin{f, cfg}
		}
	}
}
