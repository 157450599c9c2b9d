package report

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCriticTable reads two NLAC seeds (one logging its judgements by
// outcome, an older one not, and one iteration short), an NLQL run,
// which refines nothing, and a run replacing condemned actions by the
// actor's candidates, beside a GRPO run, which has no critic.
func TestCriticTable(t *testing.T) {
	root := t.TempDir()
	run := func(name, label, metrics string) {
		writeRun(t, filepath.Join(root, name), "algorithm: nlac\nlabel: "+label+"\nenv: webshop\nmodel: tiny\nseed: 1\n",
			`{"iteration": 2, "iterations": 2, "finished": true}`, metrics)
	}
	run("nlac-1", "nlac", `{"iteration": 1, "metrics": {"judged_optimal": 0.5, "optimal_in_success": 0.75, "optimal_in_failure": 0.25, "optimal_of_expert": 1, "optimal_of_others": 0.125, "auc_by_outcome": 0.625, "auc_by_expert": 0.875, "refinements": 16, "changed_actions": 2}}
{"iteration": 2, "metrics": {"judged_optimal": 0.25, "optimal_in_success": 0.5, "optimal_in_failure": 0, "refinements": 24, "changed_actions": 1}}
`)
	run("nlac-2", "nlac", `{"iteration": 1, "metrics": {"judged_optimal": 0.25, "refinements": 24, "changed_actions": 0}}
`)
	// A batch without a successful episode logs no share for them.
	run("nlac-3", "nlac-failures", `{"iteration": 1, "metrics": {"judged_optimal": 0.25, "optimal_in_failure": 0.25, "refinements": 24, "changed_actions": 0}}
`)
	run("nlql-1", "nlac-nlql", `{"iteration": 1, "metrics": {"judged_optimal": 0.125, "refinements": 0, "changed_actions": 0}}
`)
	run("actor-1", "nlac-actor", `{"iteration": 1, "metrics": {"judged_optimal": 1, "refinements": 0, "changed_actions": 7, "actor_replacements": 7, "unreplaced_actions": 1}}
{"iteration": 2, "metrics": {"judged_optimal": 1, "refinements": 0, "changed_actions": 0, "actor_replacements": 0, "unreplaced_actions": 0}}
`)
	writeRun(t, filepath.Join(root, "grpo-1"), "algorithm: grpo\nenv: webshop\nmodel: tiny\nseed: 1\n",
		`{"iteration": 1, "iterations": 1, "finished": true}`, `{"iteration": 1, "loss": 0.3}
`)
	out := markdownOf(t, root)
	for _, want := range []string{
		"| algorithm | seeds | iteration 1 | iteration 2 |",
		// Iteration 1: judged 0.375 over both seeds, the split from the one
		// that logs it, 1 of 20 changed; iteration 2 from one seed.
		"| nlac | 2 | 0.38 (0.75 / 0.25, AUC 0.62; expert's 1.00 / 0.12, AUC 0.88), 1 of 20 changed | 0.25 (0.50 / 0.00), 1 of 24 changed (n=1) |",
		"| nlac-nlql | 1 | 0.12 | – |",
		"| nlac-failures | 1 | 0.25 (– / 0.25), 0 of 24 changed | – |",
		// Nothing condemned in iteration 2: nothing to say of replacements.
		"| nlac-actor | 1 | 1.00, 7 of 8 replaced | 1.00 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "| grpo | 1 | 0.") {
		t.Errorf("a GRPO run has no critic, yet has a row:\n%s", out)
	}
}
