package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeAgreementRuns writes two StepAgent seeds on webshop (3 cycles with a
// held-out probe, and 2 of 3 cycles without) beside a finished SFT run with
// one epoch and no evaluation; none of them plays training episodes.
func writeAgreementRuns(t *testing.T) (string, []Run) {
	t.Helper()
	root := t.TempDir()
	cfg := func(alg string, seed int) string {
		return "algorithm: stepagent\nlabel: " + alg + "\nenv: webshop\nmodel: tiny\nseed: " + string(rune('0'+seed)) + "\n"
	}
	d := filepath.Join(root, "stepagent-1")
	writeFile(t, d, "config.yaml", cfg("stepagent", 1))
	writeFile(t, d, "state.json", `{"iteration": 3, "iterations": 3, "grad_steps": 12, "finished": true}`)
	writeFile(t, d, "metrics.jsonl", `{"iteration": 1, "grad_steps": 4, "loss": 0.69, "metrics": {"step_agreement": 0.4, "sample_agreement": 0.3, "expert_loglik": -0.5, "pairs": 10, "probe_agreement": 0.5, "probe_loglik": -0.4}}
{"iteration": 2, "grad_steps": 8, "loss": 0.6, "metrics": {"step_agreement": 0.6, "sample_agreement": 0.5, "expert_loglik": -0.3, "probe_agreement": 0.6, "probe_loglik": -0.3}}
{"iteration": 3, "grad_steps": 12, "loss": 0.5, "metrics": {"step_agreement": 0.8, "sample_agreement": 0.7, "expert_loglik": -0.1, "probe_agreement": 0.7, "probe_loglik": -0.2, "probe_agreement_final": 0.75, "probe_loglik_final": -0.15}}
`)
	d = filepath.Join(root, "stepagent-2")
	writeFile(t, d, "config.yaml", cfg("stepagent", 2))
	writeFile(t, d, "state.json", `{"iteration": 2, "iterations": 3, "grad_steps": 8}`)
	writeFile(t, d, "metrics.jsonl", `{"iteration": 1, "grad_steps": 4, "loss": 0.69, "metrics": {"step_agreement": 0.6, "sample_agreement": 0.5, "expert_loglik": -0.7}}
{"iteration": 2, "grad_steps": 8, "loss": 0.6, "metrics": {"step_agreement": 0.6, "sample_agreement": 0.6, "expert_loglik": -0.5}}
`)
	d = filepath.Join(root, "sft-1")
	writeFile(t, d, "config.yaml", "algorithm: sft\nenv: webshop\nmodel: tiny\nseed: 1\n")
	writeFile(t, d, "state.json", `{"iteration": 1, "iterations": 1, "grad_steps": 26, "finished": true}`)
	writeFile(t, d, "metrics.jsonl", `{"iteration": 1, "grad_steps": 26, "loss": 0.9}
`)
	runs, unreadable, err := ReadRuns(root)
	if err != nil || len(unreadable) > 0 {
		t.Fatalf("err %v, unreadable %v", err, unreadable)
	}
	if len(runs) != 3 || runs[1].Dir != filepath.Join(root, "stepagent-1") {
		t.Fatalf("read %d runs, the second %q; want sft-1, stepagent-1, stepagent-2", len(runs), runs[1].Dir)
	}
	return root, runs
}

func TestMeanByCycle(t *testing.T) {
	_, runs := writeAgreementRuns(t)
	got := meanByCycle(runs, stepAgreement)
	want := []cycleMean{{1, 0.5, 2}, {2, 0.6, 2}, {3, 0.8, 1}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Cycle != want[i].Cycle || !near(got[i].Mean, want[i].Mean) || got[i].Seeds != want[i].Seeds {
			t.Errorf("cycle %d: got %+v, want %+v", i+1, got[i], want[i])
		}
	}
	// The probe once more after the last cycle counts as the next cycle.
	if got := meanByCycle(runs, probeAgreement); len(got) != 4 || got[3].Cycle != 4 || !near(got[3].Mean, 0.75) || got[3].Seeds != 1 {
		t.Errorf("the probe by cycle, its final measure as cycle 4: got %+v", got)
	}
	if got := meanByCycle(runs[:1], stepAgreement); len(got) != 0 {
		t.Errorf("an SFT run has no step agreement, got %+v", got)
	}
}

func TestAgreementTable(t *testing.T) {
	_, runs := writeAgreementRuns(t)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, runs, Options{FigureDir: ".", FigurePrefix: "report-"}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"On each cycle's inspected steps (new tasks every cycle):\n\n| algorithm | seeds | cycle 1 | cycle 2 | cycle 3 |\n|---|---:|---:|---:|---:|\n",
		"| stepagent | 2 | 0.500 (-0.600) | 0.600 (-0.400) | 0.800 (-0.100) (n=1) |",
		"On the held-out probe (the same steps every cycle):\n\n| algorithm | seeds | cycle 1 | cycle 2 | cycle 3 | final |\n|---|---:|---:|---:|---:|---:|",
		"| stepagent | 1 | 0.500 (-0.400) | 0.600 (-0.300) | 0.700 (-0.200) | 0.750 (-0.150) |",
		"![step agreement on webshop by cycle, mean over seeds](report-agreement-webshop.png)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// Neither SFT nor StepAgent plays training episodes: no success curve,
	// and no training success in the table.
	if strings.Contains(out, "training success on webshop") {
		t.Errorf("report links a success curve for runs without training episodes:\n%s", out)
	}
	if !strings.Contains(out, "| stepagent | tiny | 1 of 2 | – | – | – | – |") {
		t.Errorf("stepagent row should have no numbers (not evaluated, no training episodes):\n%s", out)
	}

	// Without StepAgent runs the section is not there.
	buf.Reset()
	if err := WriteMarkdown(&buf, runs[:1], Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Step agreement") {
		t.Errorf("an SFT-only report has a step-agreement section:\n%s", buf.String())
	}
}

func TestAgreementFigures(t *testing.T) {
	root, runs := writeAgreementRuns(t)
	plots := filepath.Join(root, "stepagent-1", "plots")
	if err := Plot(runs[1], plots); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(plots, "agreement.png"))
	checkPNG(t, filepath.Join(plots, "loss.png"))
	for _, name := range []string{"success.png", "reward.png"} {
		if _, err := os.Stat(filepath.Join(plots, name)); !os.IsNotExist(err) {
			t.Errorf("%s of a StepAgent run without episodes or evaluations: stat err = %v, want not exist", name, err)
		}
	}

	dir := t.TempDir()
	paths, err := WriteAgreement(runs, dir, "report-")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || paths[0] != filepath.Join(dir, "report-agreement-webshop.png") {
		t.Fatalf("paths %v, want the webshop figure", paths)
	}
	checkPNG(t, paths[0])
	if paths, err := WriteAgreement(runs[:1], dir, "sft-"); err != nil || len(paths) != 0 {
		t.Errorf("WriteAgreement of an SFT run: %v, %v; want nothing", paths, err)
	}
	if paths, err := WriteCurves(runs, dir, "report-"); err != nil || len(paths) != 0 {
		t.Errorf("WriteCurves of runs without training episodes: %v, %v; want nothing", paths, err)
	}
}
