package report

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReach times NLAC and PPO to GRPO's final training success: two GRPO
// seeds end at 0.5 and 0.25 (the target 0.375), NLAC reaches it on the
// episodes its second iteration played (after iteration 1's 40 steps), PPO
// never does, an unfinished NLAC seed and an SFT run (no episodes) are
// left out.
func TestReach(t *testing.T) {
	root := t.TempDir()
	run := func(name, alg string, seed int, finished bool, metrics string) {
		state := `{"iteration": 2, "iterations": 2, "finished": true}`
		if !finished {
			state = `{"iteration": 1, "iterations": 2}`
		}
		writeRun(t, filepath.Join(root, name), "algorithm: "+alg+"\nenv: webshop\nmodel: tiny\nseed: "+string(rune('0'+seed))+"\n", state, metrics)
	}
	run("grpo-1", "grpo", 1, true, `{"iteration": 1, "grad_steps": 4, "episodes": 16, "success": 0.125}
{"iteration": 2, "grad_steps": 8, "episodes": 16, "success": 0.5}
`)
	run("grpo-2", "grpo", 2, true, `{"iteration": 1, "grad_steps": 4, "episodes": 16, "success": 0.375}
{"iteration": 2, "grad_steps": 8, "episodes": 16, "success": 0.25}
`)
	// Runs that log where they played are placed there (NLAC's second
	// iteration played after 40 steps, not 38 as an older run would be
	// read; ETO's first after a warm start's 12).
	run("nlac-1", "nlac", 1, true, `{"iteration": 1, "grad_steps": 38, "episodes": 16, "success": 0.25, "metrics": {"played_at_grad_steps": 36}}
{"iteration": 2, "grad_steps": 44, "episodes": 16, "success": 0.5, "metrics": {"played_at_grad_steps": 40}}
`)
	run("eto-1", "eto", 1, true, `{"iteration": 1, "grad_steps": 16, "episodes": 16, "success": 0.5, "metrics": {"played_at_grad_steps": 12}}
`)
	run("nlac-2", "nlac", 2, false, `{"iteration": 1, "grad_steps": 40, "episodes": 16, "success": 0.9}
`)
	run("ppo-1", "ppo", 1, true, `{"iteration": 1, "grad_steps": 4, "episodes": 16, "success": 0.25}
{"iteration": 2, "grad_steps": 8, "episodes": 16, "success": 0.3125}
`)
	run("sft-1", "sft", 1, true, `{"iteration": 1, "grad_steps": 26}
`)
	out := markdownOf(t, root)
	for _, want := range []string{
		"Optimiser steps to reach grpo's final training success on webshop (0.375, mean over 2 seeds)",
		// GRPO seed 2 reached it on its first episodes (0 steps), seed 1
		// on its second iteration's (4): mean 2.
		"| grpo | 2 of 2 | 2 |",
		"| nlac | 1 of 1 | 40 |",
		"| eto | 1 of 1 | 12 |",
		"| ppo | 0 of 1 | – |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "| sft | 0 of") || strings.Contains(out, "| sft | 1 of") {
		t.Errorf("SFT plays no episodes, yet has a row:\n%s", out)
	}
}

// TestReachNeedsATarget: GRPO runs that never succeed give nothing to
// reach, and no table.
func TestReachNeedsATarget(t *testing.T) {
	root := t.TempDir()
	writeRun(t, filepath.Join(root, "grpo-1"), "algorithm: grpo\nenv: webshop\nmodel: tiny\nseed: 1\n",
		`{"iteration": 1, "iterations": 1, "finished": true}`, `{"iteration": 1, "grad_steps": 4, "episodes": 16, "success": 0}
`)
	if out := markdownOf(t, root); strings.Contains(out, "Optimiser steps to reach") {
		t.Errorf("a table of steps to reach a success of 0:\n%s", out)
	}
}
