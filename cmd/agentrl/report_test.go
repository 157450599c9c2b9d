package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportPlotsRunsUnlessTold: `report` writes the comparison and its
// curves, and each run's plots into the run directory unless
// --run-plots=false, which leaves a committed record as it is.
func TestReportPlotsRunsUnlessTold(t *testing.T) {
	write := func(dir, name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := filepath.Join(t.TempDir(), "grpo-seed1")
	write(run, "config.yaml", "algorithm: grpo\nenv: webshop\nmodel: tiny\nseed: 1\n")
	write(run, "state.json", `{"iteration": 2, "iterations": 2, "grad_steps": 8, "finished": true}`)
	write(run, "metrics.jsonl", `{"iteration": 1, "grad_steps": 4, "episodes": 16, "success": 0.25, "loss": 0.5}
{"iteration": 2, "grad_steps": 8, "episodes": 16, "success": 0.5, "loss": 0.4}
`)
	write(run, "eval/test.json", `{"split": "test", "episodes": 32, "summary": {"episodes": 32, "success_rate": 0.4375}}`)

	out := filepath.Join(t.TempDir(), "report.md")
	if _, err := runApp(t, newApp(), "report", run, "--run-plots=false", "--out", out); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(text), "| grpo | tiny | 1 | 0.438 |") {
		t.Fatalf("report (%v):\n%s", err, text)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), "report-curves-webshop.png")); err != nil {
		t.Errorf("no curves beside the report: %v", err)
	}
	if _, err := os.Stat(filepath.Join(run, "plots")); !os.IsNotExist(err) {
		t.Errorf("--run-plots=false wrote into the run directory (%v)", err)
	}

	if _, err := runApp(t, newApp(), "report", run, "--out", out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(run, "plots", "success.png")); err != nil {
		t.Errorf("the run's plots: %v", err)
	}
	// Two splits, comma-separated after the run: a success column for the
	// second.
	write(run, "eval/unseen.json", `{"split": "unseen", "episodes": 32, "summary": {"episodes": 32, "success_rate": 0.125}}`)
	if _, err := runApp(t, newApp(), "report", run, "--run-plots=false", "--split", "test,unseen", "--out", out); err != nil {
		t.Fatal(err)
	}
	if text, err := os.ReadFile(out); err != nil || !strings.Contains(string(text), "| grpo | tiny | 1 | 0.438 | 0.000 | 0.00 | 0.125 | 0.500 |") {
		t.Errorf("report on test and unseen (%v):\n%s", err, text)
	}

	// The same seed from two directories (a sweep's out folder and its
	// record) would count twice: refused, both named. The same directory
	// named twice counts once.
	if _, err := runApp(t, newApp(), "report", run, run+"/", "--run-plots=false", "--out", out); err != nil {
		t.Fatalf("one run named twice: %v", err)
	}
	copyRun := filepath.Join(t.TempDir(), "record", "grpo-seed1")
	for _, name := range []string{"config.yaml", "state.json", "metrics.jsonl", "eval/test.json"} {
		data, err := os.ReadFile(filepath.Join(run, name))
		if err != nil {
			t.Fatal(err)
		}
		write(copyRun, name, string(data))
	}
	_, err = runApp(t, newApp(), "report", run, filepath.Dir(copyRun), "--run-plots=false", "--out", out)
	if err == nil || !strings.Contains(err.Error(), "are both seed 1 of grpo on webshop with tiny") || !strings.Contains(err.Error(), copyRun) {
		t.Errorf("the same seed from two directories: want it refused, got %v", err)
	}
	for _, args := range [][]string{{"report", "--out", out}, {"report", run}, {"report", run, "--split", " ", "--out", out}} {
		if _, err := runApp(t, newApp(), args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}

	// A sweep directory with a damaged run: the others are reported, the
	// damaged one is named as missing, and the command succeeds.
	broken := filepath.Join(filepath.Dir(copyRun), "ppo-seed1")
	write(broken, "config.yaml", "algorithm: ppo\nenv: webshop\nmodel: tiny\nseed: 1\n")
	write(broken, "state.json", `{"iteration": 1, "iter`)
	stdout, err := runApp(t, newApp(), "report", filepath.Dir(copyRun), "--run-plots=false", "--out", out)
	if err != nil {
		t.Fatalf("a sweep with one damaged run: %v", err)
	}
	if !strings.Contains(stdout, "1 runs, 1 environments, 1 algorithms; 1 runs missing") {
		t.Errorf("summary line %q does not count the damaged run as missing", stdout)
	}
	if text, err := os.ReadFile(out); err != nil || !strings.Contains(string(text), "| grpo | tiny | 1 | 0.438 |") ||
		!strings.Contains(string(text), "- ppo-seed1: unreadable: read "+filepath.Join(broken, "state.json")) {
		t.Errorf("report of a sweep with a damaged run (%v):\n%s", err, text)
	}
}
