package report

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeFile writes content to dir/name, making the directories it needs.
func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeRun writes a run directory: its config.yaml, state.json and
// metrics.jsonl.
func writeRun(t *testing.T, dir, config, state, metrics string) {
	t.Helper()
	writeFile(t, dir, "config.yaml", config)
	writeFile(t, dir, "state.json", state)
	writeFile(t, dir, "metrics.jsonl", metrics)
}

// markdownOf is the report of the runs under root.
func markdownOf(t *testing.T, root string) string {
	t.Helper()
	runs, unreadable, err := ReadRuns(root)
	if err != nil || len(unreadable) > 0 {
		t.Fatalf("err %v, unreadable %v", err, unreadable)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, runs, Options{}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The synthetic sweep: two finished, evaluated grpo seeds on webshop, one
// unfinished grpo seed, one sft seed that has not started, and one finished
// but unevaluated sft seed on alfworld.
func writeSweep(t *testing.T) string {
	t.Helper()
	root := t.TempDir()

	cfg := func(alg, env string, seed int) string {
		return "algorithm: " + alg + "\nenv: " + env + "\nmodel: tiny\nseed: " + string(rune('0'+seed)) +
			"\n# keys reports ignore:\nlr: 1.0e-4\nlora:\n  rank: 8\n  alpha: 16\nrollout:\n  parallel: 16\n"
	}

	// grpo seed 1: success 0.3, score 0.5, steps 4 on test; last training success 0.2.
	d := filepath.Join(root, "grpo-1")
	writeFile(t, d, "config.yaml", cfg("grpo", "webshop", 1))
	writeFile(t, d, "state.json", `{"iteration": 2, "iterations": 2, "env_steps": 200, "grad_steps": 8, "train_tokens": 1000, "rollout_tokens": 500, "wall_s": 10.5, "finished": true}`)
	writeFile(t, d, "metrics.jsonl", `{"iteration": 1, "env_steps": 100, "grad_steps": 4, "episodes": 16, "reward": 0.1, "success": 0.1, "score": 0.2, "loss": 1.5, "losses": {"policy": 1.2, "kl": 0.3}, "metrics": {"kl": 0.01}, "phase_s": {"rollout": 3, "train": 2}}

{"iteration": 2, "env_steps": 200, "grad_steps": 8, "episodes": 16, "reward": 0.3, "success": 0.2, "score": 0.4, "loss": 1.1, "losses": {"policy": 0.9, "kl": 0.2}, "eval": {"split": "test", "episodes": 16, "success": 0.25, "score": 0.4, "steps": 5.1}}
`)
	writeFile(t, d, "eval/test.json", `{"split": "test", "episodes": 100, "adapter": "adapters/actor.gguf",
 "summary": {"episodes": 100, "errors": 1, "success_rate": 0.3, "success_rate_se": 0.046,
             "mean_return": 0.4, "mean_return_se": 0.03, "mean_score": 0.5, "mean_score_se": 0.03,
             "mean_steps": 4, "mean_steps_se": 0.2, "invalid_action_rate": 0.04, "invalid_action_rate_se": 0.01}}`)

	// grpo seed 2: success 0.5, score 0.7, steps 6 on test; last training success 0.4.
	d = filepath.Join(root, "grpo-2")
	writeFile(t, d, "config.yaml", cfg("grpo", "webshop", 2))
	writeFile(t, d, "state.json", `{"iteration": 3, "iterations": 3, "env_steps": 300, "grad_steps": 12, "finished": true}`)
	writeFile(t, d, "metrics.jsonl", `{"iteration": 1, "env_steps": 100, "grad_steps": 4, "episodes": 16, "success": 0.3, "reward": 0.2, "loss": 1.4}
{"iteration": 2, "env_steps": 200, "grad_steps": 8, "episodes": 16, "success": 0.3, "reward": 0.2, "loss": 1.2}
{"iteration": 3, "env_steps": 300, "grad_steps": 12, "episodes": 16, "success": 0.4, "reward": 0.5, "loss": 1.0}
`)
	writeFile(t, d, "eval/test.json", `{"split": "test", "episodes": 100, "adapter": "adapters/actor.gguf",
 "summary": {"episodes": 100, "success_rate": 0.5, "mean_score": 0.7, "mean_steps": 6}}`)

	// grpo seed 3: under way.
	d = filepath.Join(root, "grpo-3")
	writeFile(t, d, "config.yaml", cfg("grpo", "webshop", 3))
	writeFile(t, d, "state.json", `{"iteration": 7, "iterations": 20, "env_steps": 700, "grad_steps": 28, "finished": false}`)
	writeFile(t, d, "metrics.jsonl", `{"iteration": 1, "env_steps": 100, "grad_steps": 4, "episodes": 16, "success": 0.9}
`)

	// sft seed 1 on webshop: config only.
	d = filepath.Join(root, "sft-1")
	writeFile(t, d, "config.yaml", cfg("sft", "webshop", 1))

	// sft seed 1 on alfworld: finished, not evaluated; no training
	// episodes (SFT), so no training success.
	d = filepath.Join(root, "sft-alf-1")
	writeFile(t, d, "config.yaml", cfg("sft", "alfworld", 1))
	writeFile(t, d, "state.json", `{"iteration": 1, "iterations": 1, "env_steps": 50, "grad_steps": 10, "finished": true}`)
	writeFile(t, d, "metrics.jsonl", `{"iteration": 1, "env_steps": 50, "grad_steps": 10, "success": 0.6, "loss": 0.8}`+"\n")

	// Not a run: ReadRuns must skip it.
	if err := os.MkdirAll(filepath.Join(root, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func readSweep(t *testing.T) (string, []Run) {
	t.Helper()
	root := writeSweep(t)
	runs, unreadable, err := ReadRuns(root)
	if err != nil || len(unreadable) > 0 {
		t.Fatalf("err %v, unreadable %v", err, unreadable)
	}
	return root, runs
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestReadRun(t *testing.T) {
	root := writeSweep(t)
	r, err := ReadRun(filepath.Join(root, "grpo-1"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Algorithm != "grpo" || r.Env != "webshop" || r.Model != "tiny" || r.Seed != 1 {
		t.Errorf("config: got %q %q %q %d, want grpo webshop tiny 1", r.Algorithm, r.Env, r.Model, r.Seed)
	}
	if !r.Started || !r.Finished() {
		t.Errorf("Started %v, Finished %v: want both true", r.Started, r.Finished())
	}
	want := State{Iteration: 2, Iterations: 2, EnvSteps: 200, GradSteps: 8, TrainTokens: 1000, RolloutTokens: 500, WallS: 10.5, Finished: true}
	if r.State != want {
		t.Errorf("State = %+v, want %+v", r.State, want)
	}
	if len(r.Metrics) != 2 {
		t.Fatalf("got %d iterations, want 2 (the blank line skipped)", len(r.Metrics))
	}
	it := r.Metrics[0]
	if it.Iteration != 1 || it.EnvSteps != 100 || it.GradSteps != 4 || it.Episodes != 16 || it.Success != 0.1 ||
		it.Loss != 1.5 || it.Losses["policy"] != 1.2 || it.Metrics["kl"] != 0.01 || it.PhaseS["train"] != 2 || it.Eval != nil {
		t.Errorf("iteration 1 = %+v", it)
	}
	ev := r.Metrics[1].Eval
	if ev == nil || ev.Split != "test" || ev.Episodes != 16 || ev.Success != 0.25 || ev.Steps != 5.1 {
		t.Errorf("iteration 2 eval = %+v", ev)
	}
	e, ok := r.Evals["test"]
	if !ok || len(r.Evals) != 1 {
		t.Fatalf("Evals = %+v, want test only", r.Evals)
	}
	if e.Episodes != 100 || e.Adapter != "adapters/actor.gguf" || e.Summary.Errors != 1 ||
		e.Summary.SuccessRate != 0.3 || e.Summary.MeanScore != 0.5 || e.Summary.MeanSteps != 4 || e.Summary.InvalidActionRateSE != 0.01 {
		t.Errorf("eval = %+v", e)
	}
}

func TestReadRunNotStarted(t *testing.T) {
	root := writeSweep(t)
	r, err := ReadRun(filepath.Join(root, "sft-1"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Started || r.Finished() || len(r.Metrics) != 0 || r.Algorithm != "sft" {
		t.Errorf("got %+v, want an sft run not started", r)
	}
}

func TestReadRunNotARun(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadRun(dir)
	if !errors.Is(err, ErrNotRun) {
		t.Fatalf("err = %v, want ErrNotRun", err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q does not name %s", err, dir)
	}
	if _, _, err := ReadRuns(dir); !errors.Is(err, ErrNotRun) {
		t.Errorf("ReadRuns of an empty directory: err = %v, want ErrNotRun", err)
	}
}

func TestReadRunMalformedMetrics(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", "algorithm: ppo\nenv: webshop\nseed: 4\n")
	writeFile(t, dir, "state.json", `{"iteration": 2, "iterations": 5}`)
	writeFile(t, dir, "metrics.jsonl", "{\"iteration\": 1}\n\n{\"iteration\": 2, \"success\": \n")
	_, err := ReadRun(dir)
	if err == nil {
		t.Fatal("no error for a malformed metrics line")
	}
	want := filepath.Join(dir, "metrics.jsonl") + ":3"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
}

func TestReadRunsLeavesOutUnreadableRun(t *testing.T) {
	// One run of a sweep cut off mid-line (a disk that filled, a file
	// copied by hand) must not hide the others from the report.
	root := writeSweep(t)
	broken := filepath.Join(root, "grpo-2")
	writeFile(t, broken, "metrics.jsonl", "{\"iteration\": 1, \"success\": ")
	runs, unreadable, err := ReadRuns(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 || slices.ContainsFunc(runs, func(r Run) bool { return r.Dir == broken }) {
		t.Errorf("read %d runs, want the 4 other than grpo-2", len(runs))
	}
	if len(unreadable) != 1 || unreadable[0].Dir != broken {
		t.Fatalf("unreadable = %v, want grpo-2", unreadable)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, runs, Options{Unreadable: unreadable}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	missing := md[strings.Index(md, "## Missing"):]
	if !strings.Contains(missing, "- grpo-2: unreadable: read "+filepath.Join(broken, "metrics.jsonl")+":1") {
		t.Errorf("the missing section does not name grpo-2 and its file:\n%s", missing)
	}
	if strings.Contains(missing, "Nothing:") {
		t.Errorf("the missing section says nothing is missing:\n%s", missing)
	}

	// A run named on its own is what the caller asked for: it fails.
	if _, _, err := ReadRuns(broken); err == nil {
		t.Error("ReadRuns of the unreadable run itself: no error")
	}
}

func TestReadRunRepeatedIteration(t *testing.T) {
	// A run killed after logging an iteration but before saving its state
	// logs that iteration again when it resumes; the later line counts.
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", "algorithm: ppo\nenv: webshop\n")
	writeFile(t, dir, "state.json", `{"iteration": 2, "iterations": 2, "finished": true}`)
	writeFile(t, dir, "metrics.jsonl", `{"iteration": 1, "success": 0.1}
{"iteration": 2, "success": 0.2}
{"iteration": 2, "success": 0.5}
`)
	r, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Metrics) != 2 || r.Metrics[0].Success != 0.1 || r.Metrics[1].Success != 0.5 {
		t.Errorf("Metrics = %+v, want iterations 1 (0.1) and 2 (0.5)", r.Metrics)
	}
}

func TestReadRunsSweep(t *testing.T) {
	_, runs := readSweep(t)
	var dirs []string
	for _, r := range runs {
		dirs = append(dirs, filepath.Base(r.Dir))
	}
	if got, want := strings.Join(dirs, " "), "grpo-1 grpo-2 grpo-3 sft-1 sft-alf-1"; got != want {
		t.Errorf("runs %s, want %s", got, want)
	}
}

func TestCompare(t *testing.T) {
	_, runs := readSweep(t)
	tab := Compare(runs, "")
	if tab.Split != "test" {
		t.Errorf("Split = %q, want test", tab.Split)
	}
	var keys []string
	for _, g := range tab.Groups {
		keys = append(keys, g.Env+"/"+g.Algorithm)
	}
	if got, want := strings.Join(keys, " "), "alfworld/sft webshop/grpo webshop/sft"; got != want {
		t.Fatalf("groups %s, want %s", got, want)
	}
	g := tab.Groups[1]
	if g.Seeds != 3 || g.Finished != 2 || len(g.Models) != 1 || g.Models[0] != "tiny" {
		t.Errorf("grpo: Seeds %d, Finished %d, Models %v; want 3, 2, [tiny]", g.Seeds, g.Finished, g.Models)
	}
	// Over the two finished seeds: success 0.3 and 0.5 give mean 0.4 and
	// sample standard deviation sqrt((0.1² + 0.1²)/1) = 0.1414...; score
	// 0.5, 0.7 the same spread around 0.6; steps 4, 6: mean 5, std √2;
	// training success 0.2, 0.4: mean 0.3, std 0.1414.
	s2 := math.Sqrt(0.02)
	checks := []struct {
		name      string
		got       Stat
		mean, std float64
	}{
		{"success", g.Success, 0.4, s2},
		{"score", g.Score, 0.6, s2},
		{"steps", g.Steps, 5, math.Sqrt2},
		{"train success", g.TrainSuccess, 0.3, s2},
	}
	for _, c := range checks {
		if c.got.N != 2 || !near(c.got.Mean, c.mean) || !near(c.got.Std, c.std) {
			t.Errorf("%s = %+v, want N 2, mean %g, std %g", c.name, c.got, c.mean, c.std)
		}
	}
	// One seed: the standard deviation is 0, not NaN.
	if one := newStat([]float64{0.6}); one != (Stat{N: 1, Mean: 0.6}) {
		t.Errorf("one seed: %+v", one)
	}
	// A run without training episodes (SFT) has no training success.
	alf := tab.Groups[0]
	if alf.TrainSuccess.N != 0 || alf.Success.N != 0 {
		t.Errorf("alfworld/sft: train %+v, success %+v; want none of either", alf.TrainSuccess, alf.Success)
	}

	var missing []string
	for _, m := range tab.Missing {
		missing = append(missing, m.String())
	}
	want := []string{
		"seed 1 of sft on alfworld: finished, not evaluated on test",
		"seed 3 of grpo on webshop: iteration 7 of 20",
		"seed 1 of sft on webshop: not started",
	}
	if strings.Join(missing, "\n") != strings.Join(want, "\n") {
		t.Errorf("missing:\n%s\nwant:\n%s", strings.Join(missing, "\n"), strings.Join(want, "\n"))
	}

	// No run has a train-split evaluation: every finished run is missing it.
	if n := len(Compare(runs, "train").Missing); n != 5 {
		t.Errorf("Compare on train: %d missing, want 5", n)
	}
}

func TestFormatStat(t *testing.T) {
	for _, c := range []struct {
		stat     Stat
		finished int
		want     string
	}{
		{Stat{N: 2, Mean: 0.4, Std: 0.141}, 2, "0.400 ± 0.141"},
		{Stat{N: 1, Mean: 0.406}, 1, "0.406"},
		{Stat{N: 1, Mean: 0.406}, 2, "0.406 (n=1)"},
		{Stat{N: 2, Mean: 0.5, Std: 0.1}, 3, "0.500 ± 0.100 (n=2)"},
		{Stat{}, 1, "–"},
	} {
		if got := formatStat(c.stat, c.finished, "%.3f"); got != c.want {
			t.Errorf("%+v of %d finished: %q, want %q", c.stat, c.finished, got, c.want)
		}
	}
}

func TestWriteMarkdown(t *testing.T) {
	_, runs := readSweep(t)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, runs, Options{Title: "Sweep", FigureDir: "figs", FigurePrefix: "report-"}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"# Sweep\n",
		"## webshop\n",
		"## alfworld\n",
		// Budgets over the two finished GRPO runs: 8 and 12 steps, 200 and
		// 300 env steps, 1,000 and 0 tokens, 10.5 and 0 seconds.
		"| grpo | tiny | 2 of 3 | 0.400 ± 0.141 | 0.600 ± 0.141 | 5.00 ± 1.41 | 0.300 ± 0.141 | 10 ± 3 | 250 ± 71 | 500 ± 707 | 0.1 ± 0.1 |\n",
		"| sft | tiny | 0 of 1 | – | – | – | – | – | – | – | – |\n",
		"| sft | tiny | 1 | – | – | – | – | 10 | 50 | 0 | 0.0 |\n",
		"](figs/report-curves-webshop.png)",
		"## Missing\n",
		"- seed 3 of grpo on webshop: iteration 7 of 20 (`",
		"- seed 1 of sft on webshop: not started (`",
		"- seed 1 of sft on alfworld: finished, not evaluated on test (`",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// SFT plays no training episodes: alfworld, with only an SFT run, has
	// no success curve.
	if strings.Contains(md, "report-curves-alfworld.png") {
		t.Errorf("alfworld's SFT-only section links a success curve:\n%s", md)
	}
	// The webshop table comes after the alfworld one, and its rows under
	// its heading.
	if a, w, row := strings.Index(md, "## alfworld"), strings.Index(md, "## webshop"), strings.Index(md, "| grpo |"); !(a < w && w < row) {
		t.Errorf("sections out of order:\n%s", md)
	}

	buf.Reset()
	if err := WriteMarkdown(&buf, runs, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "![") || !strings.HasPrefix(buf.String(), "# Training runs\n") {
		t.Errorf("without FigureDir or Title:\n%s", buf.String())
	}
}

// A second split adds a success column, and its missing evaluations to
// the list; a run evaluated on one split only is counted where it is.
func TestWriteMarkdownAlsoSplits(t *testing.T) {
	root := writeSweep(t)
	writeFile(t, filepath.Join(root, "grpo-1"), "eval/unseen.json", `{"split": "unseen", "episodes": 32,
 "summary": {"episodes": 32, "success_rate": 0.125, "mean_score": 0.2, "mean_steps": 7}}`)
	runs, unreadable, err := ReadRuns(root)
	if err != nil || len(unreadable) > 0 {
		t.Fatalf("err %v, unreadable %v", err, unreadable)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, runs, Options{AlsoSplits: []string{"unseen"}}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"| algorithm | model | seeds | success | score | steps | success on unseen | train success |",
		"|---|---|---:|---:|---:|---:|---:|---:|",
		// grpo seed 2 is evaluated on test only: unseen's column is over
		// one of the two finished runs.
		"| grpo | tiny | 2 of 3 | 0.400 ± 0.141 | 0.600 ± 0.141 | 5.00 ± 1.41 | 0.125 (n=1) | 0.300 ± 0.141 |",
		"| sft | tiny | 1 | – | – | – | – | – | 10 | 50 | 0 | 0.0 |\n",
		"- seed 2 of grpo on webshop: finished, not evaluated on unseen (`",
		"- seed 3 of grpo on webshop: iteration 7 of 20 (`",
		"- seed 1 of sft on alfworld: finished, not evaluated on test (`",
		"- seed 1 of sft on alfworld: finished, not evaluated on unseen (`",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// An unfinished run is missing once, not once per split.
	if n := strings.Count(md, "seed 3 of grpo on webshop"); n != 1 {
		t.Errorf("the unfinished run is listed %d times:\n%s", n, md)
	}
	// Evaluated on both splits: nothing missing, and the note names both.
	buf.Reset()
	if err := WriteMarkdown(&buf, runs[:1], Options{AlsoSplits: []string{"unseen"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Nothing: every run finished and was evaluated on test and unseen.") {
		t.Errorf("report of grpo seed 1 alone:\n%s", buf.String())
	}
}

func TestWriteMarkdownFile(t *testing.T) {
	_, runs := readSweep(t)
	path := filepath.Join(t.TempDir(), "report.md")
	if err := WriteMarkdownFile(path, runs[:1], Options{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "Nothing: every run finished and was evaluated on test.") {
		t.Errorf("report.md:\n%s", data)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

func checkPNG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return
	}
	if len(data) < 1000 || !bytes.HasPrefix(data, pngSignature) {
		t.Errorf("%s: %d bytes, not a PNG image", path, len(data))
	}
}

func TestPlot(t *testing.T) {
	root, runs := readSweep(t)
	dir := filepath.Join(root, "grpo-1", "plots")
	if err := Plot(runs[0], dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"success.png", "reward.png", "loss.png"} {
		checkPNG(t, filepath.Join(dir, name))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// A run that has not started has nothing to plot: no error, no files,
	// not even the directory.
	empty := filepath.Join(root, "sft-1", "plots")
	if err := Plot(runs[3], empty); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("plots of a run that has not started: stat err = %v, want not exist", err)
	}
}

func TestCurves(t *testing.T) {
	_, runs := readSweep(t)
	dir := t.TempDir()
	both := filepath.Join(dir, "curves.png")
	if err := Curves(runs, both); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, both)
	one := filepath.Join(dir, CurvesFile("report-", "webshop"))
	if err := Curves(runs[:3], one); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, one)

	// Nothing to draw: nothing written.
	none := filepath.Join(dir, "none.png")
	if err := Curves(runs[3:4], none); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("curves without iterations: stat err = %v, want not exist", err)
	}
}

func TestWriteCurves(t *testing.T) {
	_, runs := readSweep(t)
	dir := t.TempDir()
	// sft on webshop has not started, but grpo there has iterations, so
	// webshop gets a figure; alfworld's one SFT run played no training
	// episodes, so it does not.
	paths, err := WriteCurves(runs, dir, "report-")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "report-curves-webshop.png")}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	for _, p := range paths {
		checkPNG(t, p)
	}
	if paths, err := WriteCurves(runs[3:4], dir, "empty-"); err != nil || len(paths) != 0 {
		t.Errorf("WriteCurves of a run without iterations: %v, %v; want nothing", paths, err)
	}
}

func TestMeanCurve(t *testing.T) {
	_, runs := readSweep(t)
	// grpo seeds: 2, 3 and 1 iterations of 4 optimiser steps. Iteration 1
	// averages three seeds, iteration 2 two, iteration 3 the one that got
	// there; each at the steps taken before it played (0, 4, 8), not
	// after its own update.
	got := meanCurve(runs[:3])
	want := [][2]float64{{0, (0.1 + 0.3 + 0.9) / 3}, {4, (0.2 + 0.3) / 2}, {8, 0.4}}
	if len(got) != len(want) {
		t.Fatalf("got %d points, want %d", len(got), len(want))
	}
	for i, w := range want {
		if !near(got[i].X, w[0]) || !near(got[i].Y, w[1]) {
			t.Errorf("point %d = %+v, want %v", i, got[i], w)
		}
	}
}

func TestCurvesFile(t *testing.T) {
	if got := CurvesFile("report-", "web shop/v2"); got != "report-curves-web_shop_v2.png" {
		t.Errorf("CurvesFile = %q", got)
	}
}

// TestRunUnderWayBeforeItsFirstIteration: a run whose state.json says it
// has begun (its warm start done) but which has not finished an iteration
// is under way, not "not started".
func TestRunUnderWayBeforeItsFirstIteration(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "ppo-1")
	writeFile(t, d, "config.yaml", "algorithm: ppo\nenv: webshop\nseed: 1\n")
	writeFile(t, d, "state.json", `{"iteration": 0, "iterations": 3, "warm_started": true, "finished": false}`)
	runs, unreadable, err := ReadRuns(root)
	if err != nil || len(unreadable) > 0 {
		t.Fatalf("err %v, unreadable %v", err, unreadable)
	}
	tab := Compare(runs, "test")
	if len(tab.Missing) != 1 || tab.Missing[0].String() != "seed 1 of ppo on webshop: iteration 0 of 3" {
		t.Errorf("missing %v", tab.Missing)
	}
}
