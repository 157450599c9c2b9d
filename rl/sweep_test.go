package rl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/rollout"
	"github.com/agentrl/agentrl/rollout/rollouttest"
)

func TestReadSweep(t *testing.T) {
	path := writeConfig(t, `out: grid
algorithms: [grpo, sft, grpo-kl]
envs: [math]
seeds: [1, 2]
init_from_sft: true
eval: {splits: [test, unseen], episodes: 8}
config:
  iterations: 2
  grpo: {group: 8}
overrides:
  sft: [iterations=1]
variants:
  grpo-kl: {algorithm: grpo, set: [grpo.kl=0.05]}
`)
	s, err := ReadSweep(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Out != filepath.Join(filepath.Dir(path), "grid") {
		t.Fatalf("out %s: want it beside the sweep file", s.Out)
	}
	var names []string
	for _, c := range s.cells() {
		names = append(names, c.name())
	}
	want := []string{"math-sft-seed1", "math-grpo-seed1", "math-grpo-kl-seed1", "math-sft-seed2", "math-grpo-seed2", "math-grpo-kl-seed2"}
	if !slices.Equal(names, want) {
		t.Fatalf("cells %v, want %v (seed by seed, sft first)", names, want)
	}
	sft, _ := s.config(sweepCell{"sft", "math", 2})
	grpo, _ := s.config(sweepCell{"grpo", "math", 2})
	kl, err := s.config(sweepCell{"grpo-kl", "math", 1})
	if err != nil {
		t.Fatal(err)
	}
	if sft.Iterations != 1 || grpo.Iterations != 2 || grpo.GRPO.Group != 8 || grpo.Seed != 2 ||
		grpo.InitAdapter != filepath.Join(s.Out, "math-sft-seed2", "adapters", "actor.gguf") || sft.InitAdapter != "" {
		t.Fatalf("sft %+v\ngrpo %+v", sft, grpo)
	}
	if kl.Algorithm != "grpo" || kl.Label != "grpo-kl" || kl.GRPO.KL != 0.05 || kl.GRPO.Group != 8 {
		t.Fatalf("variant: algorithm %s, label %s, kl %g", kl.Algorithm, kl.Label, kl.GRPO.KL)
	}
}

func TestSweepErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\nrepeats: 2\n", "unknown key repeats"},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: []\n", "at least one"},
		{"algorithms: [grpo]\nenvs: [math]\nseeds: [1]\n", "out:"},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\ninit_from_sft: true\n", "needs sft"},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\nconfig: {grpo: {group: 1}}\n", "grpo.group 1"},
		{"out: x\nalgorithms: [reinforce]\nenvs: [math]\nseeds: [1]\n", `algorithm "reinforce"`},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\noverrides: {ppo: [ppo.lr=1]}\n", `overrides for "ppo"`},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\neval: {splits: [dev]}\n", "eval.splits"},
		{"out: x\nrecord: ./x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\n", "record must be another directory"},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\neval: {splits: [test], episodes: 4, sampled: {trials: 4}}\n", "eval.sampled.temperature 0: must be above 0"},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\neval: {splits: [test], episodes: 4, sampled: {temperature: 0.0001, trials: 4}}\n", "eval.sampled.temperature 0.0001: below 0.001"},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\neval: {splits: [test], episodes: 4, sampled: {temperature: 1}}\n", "eval.sampled.trials 0: at least 1"},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\neval: {splits: [test], episodes: 4, sampled: {temperature: 1, trials: 2, seed: -2}}\n", "eval.sampled.seed -2"},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\neval: {splits: [test], sampled: {temperature: 1, trials: 2}}\n", "eval.sampled evaluates eval.splits on eval.episodes tasks"},
	} {
		if _, err := ReadSweep(writeConfig(t, c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.text, err, c.want)
		}
	}
}

// TestSweepSampledEvaluation: a sweep that asks for a sampled
// evaluation besides the greedy one makes both, records both, reports
// both, and makes again only the one a run lacks or whose seed changed.
func TestSweepSampledEvaluation(t *testing.T) {
	model := tinyModel(t)
	text := "out: grid\nrecord: record\nalgorithms: [sft]\nenvs: [guess]\nseeds: [1]\n" +
		"eval: {splits: [test], episodes: 2, sampled: {temperature: 1, trials: 2}}\n" + guessSweepConfig
	path := writeConfig(t, text)
	s, err := ReadSweep(path)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	se := guessSweepEnv(model, &log)
	if err := RunSweep(context.Background(), s, se); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	run := filepath.Join(s.Out, "guess-sft-seed1")
	for _, dir := range []string{run, filepath.Join(s.Record, "guess-sft-seed1")} {
		for _, name := range []string{"test", "test-t1-x2"} {
			if _, err := os.Stat(EvalFile(dir, name)); err != nil {
				t.Errorf("%v", err)
			}
		}
	}
	if !strings.Contains(log.String(), "sweep: guess-sft-seed1 on test: success") || !strings.Contains(log.String(), "sweep: guess-sft-seed1 on test-t1-x2: success") || !strings.Contains(log.String(), "(4 episodes)") {
		t.Fatalf("the log lacks an evaluation:\n%s", log.String())
	}
	if report, err := os.ReadFile(filepath.Join(s.Out, "report.md")); err != nil || !strings.Contains(string(report), "success on test-t1-x2") {
		t.Errorf("the report has no column for the sampled evaluation: %v\n%s", err, report)
	}

	evaluated := func(what string, want ...string) {
		t.Helper()
		log.Reset()
		if err := RunSweep(context.Background(), s, se); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		var got []string
		for _, name := range []string{"test", "test-t1-x2"} {
			if strings.Contains(log.String(), " on "+name+": success") {
				got = append(got, name)
			}
		}
		if !slices.Equal(got, want) || strings.Contains(log.String(), "sweep: run") {
			t.Fatalf("%s: evaluated %v, want %v, nothing trained:\n%s", what, got, want, log.String())
		}
	}
	evaluated("a second pass")
	if err := os.Remove(EvalFile(run, "test-t1-x2")); err != nil {
		t.Fatal(err)
	}
	evaluated("the sampled evaluation lost", "test-t1-x2")
	if err := os.WriteFile(path, []byte(strings.Replace(text, "trials: 2}", "trials: 2, seed: 5}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err = ReadSweep(path); err != nil {
		t.Fatal(err)
	}
	evaluated("another sampling seed", "test-t1-x2")

	// A new machine: the record restores the run with both evaluations.
	if err := os.RemoveAll(s.Out); err != nil {
		t.Fatal(err)
	}
	evaluated("restored from the record")
	// A record without the sampled evaluation still restores the run,
	// which has no adapter to evaluate: it goes without, and says so.
	if err := os.RemoveAll(s.Out); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(EvalFile(filepath.Join(s.Record, "guess-sft-seed1"), "test-t1-x2")); err != nil {
		t.Fatal(err)
	}
	evaluated("restored without its sampled evaluation")
	if !strings.Contains(log.String(), "restored from the record") || !strings.Contains(log.String(), "sweep: guess-sft-seed1 not evaluated on test-t1-x2: it has no actor adapter") {
		t.Fatalf("want the run restored and its sampled evaluation left out:\n%s", log.String())
	}
	if report, err := os.ReadFile(filepath.Join(s.Out, "report.md")); err != nil || !strings.Contains(string(report), "not evaluated on test-t1-x2") {
		t.Errorf("the report does not list the missing evaluation: %v\n%s", err, report)
	}
}

// TestSweepFindsMistypedNamesFirst: an environment the grid names that
// does not exist stops the sweep before any run trains.
func TestSweepFindsMistypedNamesFirst(t *testing.T) {
	s, err := ReadSweep(writeConfig(t, "out: grid\nalgorithms: [sft]\nenvs: [guess, gues]\nseeds: [1]\n"+guessSweepConfig))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	se := guessSweepEnv(tinyModel(t), &log)
	known := se.LookupEnv
	se.LookupEnv = func(name string) (func() envs.Env, error) {
		if name != "guess" {
			return nil, fmt.Errorf("unknown environment %q", name)
		}
		return known(name)
	}
	err = RunSweep(context.Background(), s, se)
	if err == nil || !strings.Contains(err.Error(), `sweep gues-sft-seed1: unknown environment "gues"`) || strings.Contains(log.String(), "sweep: run") {
		t.Fatalf("want the mistyped environment found before any run; got %v\n%s", err, log.String())
	}

	// So is a missing expert file of a later run.
	missing := filepath.Join(t.TempDir(), "experts.jsonl")
	s, err = ReadSweep(writeConfig(t, "out: grid\nalgorithms: [sft, stepagent]\nenvs: [guess]\nseeds: [1]\n"+guessSweepConfig+"  stepagent: {expert: "+missing+"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	log.Reset()
	err = RunSweep(context.Background(), s, guessSweepEnv(tinyModel(t), &log))
	if err == nil || !strings.Contains(err.Error(), "sweep guess-stepagent-seed1: stepagent.expert: ") || !strings.Contains(err.Error(), missing) || strings.Contains(log.String(), "sweep: run") {
		t.Fatalf("want the missing expert file found before any run; got %v\n%s", err, log.String())
	}
}

// TestRunSweep runs a small grid to the end, then again: the second time
// every run is finished and evaluated, so nothing is trained or evaluated
// again, and the report compares both methods. Then the run directories
// are lost, as with a new machine: the record brings both runs back, and
// a method added to the grid trains after the SFT run it starts from,
// whose adapter the record does not keep, has trained again.
func TestRunSweep(t *testing.T) {
	model := tinyModel(t)
	sweepText := `out: grid
record: record
algorithms: [sft, grpo]
envs: [guess]
seeds: [1]
init_from_sft: true
eval: {splits: [test], episodes: 2}
` + guessSweepConfig
	path := writeConfig(t, sweepText)
	s, err := ReadSweep(path)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	se := guessSweepEnv(model, &log)
	if err := RunSweep(context.Background(), s, se); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for _, run := range []string{"guess-sft-seed1", "guess-grpo-seed1"} {
		st, started, err := readState(filepath.Join(s.Out, run))
		if err != nil || !started || !st.Finished {
			t.Fatalf("%s: state %+v, started %v, %v", run, st, started, err)
		}
		checkEvalFiles(t, filepath.Join(s.Out, run), envs.Test)
	}
	report, err := os.ReadFile(filepath.Join(s.Out, "report.md"))
	if err != nil || !strings.Contains(string(report), "| grpo |") || !strings.Contains(string(report), "| sft |") {
		t.Fatalf("report: %v\n%s", err, report)
	}
	log.Reset()
	if err := RunSweep(context.Background(), s, se); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "sweep: run") || strings.Contains(log.String(), "on test") {
		t.Fatalf("the second pass trained or evaluated again:\n%s", log.String())
	}

	recorded, err := os.ReadFile(filepath.Join(s.Record, "report.md"))
	if err != nil || !strings.Contains(string(recorded), "| grpo |") {
		t.Fatalf("record's report: %v\n%s", err, recorded)
	}
	for _, f := range []string{"config.yaml", "state.json", "metrics.jsonl", "eval/test.json"} {
		if _, err := os.Stat(filepath.Join(s.Record, "guess-grpo-seed1", f)); err != nil {
			t.Fatalf("record: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Record, "guess-sft-seed1", "adapters")); err == nil {
		t.Fatal("the record keeps adapters")
	}

	// The SFT run's directory lost, but not GRPO's: SFT is restored, and
	// GRPO, recorded again, keeps the digest of the start it had.
	startPath := filepath.Join(s.Record, "guess-grpo-seed1", startDigestFile)
	start, err := os.ReadFile(startPath)
	if err != nil {
		t.Fatalf("the GRPO run's start is not recorded: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(s.Out, "guess-sft-seed1")); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	if err := RunSweep(context.Background(), s, se); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if now, err := os.ReadFile(startPath); err != nil || string(now) != string(start) {
		t.Fatalf("the GRPO run's recorded start is %q, want %q kept (%v)", now, start, err)
	}

	// A new machine: the record restores both runs.
	if err := os.RemoveAll(s.Out); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	if err := RunSweep(context.Background(), s, se); err != nil {
		t.Fatal(err)
	}
	if strings.Count(log.String(), "restored from the record") != 2 || strings.Contains(log.String(), "sweep: run") {
		t.Fatalf("want both runs restored, none trained:\n%s", log.String())
	}
	if st, _, err := readState(filepath.Join(s.Out, "guess-grpo-seed1")); err != nil || !st.Finished {
		t.Fatalf("restored grpo: %+v, %v", st, err)
	}

	// A record made with other settings is not restored, and says why.
	other, err := ReadSweep(writeConfig(t, strings.Replace(sweepText, "group: 2", "group: 3", 1)))
	if err != nil {
		t.Fatal(err)
	}
	other.Out, other.Record = s.Out, s.Record
	if ok, why, err := other.restorable(sweepCell{"grpo", "guess", 1}); ok || err != nil || !strings.Contains(why, "grpo.group: 2, now 3") {
		t.Fatalf("a record of grpo.group 2 for group 3: restorable %v (%q), %v", ok, why, err)
	}

	// A method added to the grid on the new machine starts from the SFT
	// adapter, which the restored SFT run lacks: SFT trains again first,
	// GRPO stays as restored.
	added, err := ReadSweep(writeConfig(t, strings.Replace(sweepText, "algorithms: [sft, grpo]", "algorithms: [sft, grpo, grpo-b]\nvariants: {grpo-b: {algorithm: grpo, set: [grpo.lr=0.001]}}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	added.Out, added.Record = s.Out, s.Record
	log.Reset()
	if err := RunSweep(context.Background(), added, se); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	// The SFT run trained again makes the recorded adapter (one build,
	// one seed): its recorded evaluation is kept rather than run again.
	for _, want := range []string{"guess-sft-seed1 trains again as the start of guess-grpo-b-seed1", "guess-sft-seed1 (new)", "guess-grpo-b-seed1 (new)",
		"guess-sft-seed1 made the recorded actor adapter again", "guess-grpo-b-seed1 on test"} {
		if !strings.Contains(log.String(), want) {
			t.Fatalf("want %q in the log:\n%s", want, log.String())
		}
	}
	for _, unwanted := range []string{"guess-grpo-seed1 (new)", "guess-sft-seed1 on test"} {
		if strings.Contains(log.String(), unwanted) {
			t.Fatalf("the restored runs trained or evaluated again (%q):\n%s", unwanted, log.String())
		}
	}
	if _, err := os.Stat(filepath.Join(s.Record, "guess-grpo-b-seed1", "eval", "test.json")); err != nil {
		t.Fatalf("the added run is not recorded: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Out, "guess-sft-seed1", "eval", "test.json")); err != nil {
		t.Fatalf("the SFT run kept no evaluation: %v", err)
	}

	// Where the adapter trained again is not the recorded one (here the
	// record's digests are altered, as if another machine had made its SFT
	// adapter and the GRPO runs had started from it), the run is evaluated
	// again; the record keeps its own SFT run, the start of its recorded
	// GRPO runs, and records the run started from the new one.
	digestPath := filepath.Join(s.Record, "guess-sft-seed1", actorDigestFile)
	digest, err := os.ReadFile(digestPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{digestPath, filepath.Join(s.Record, "guess-grpo-seed1", startDigestFile), filepath.Join(s.Record, "guess-grpo-b-seed1", startDigestFile)} {
		if err := os.WriteFile(path, []byte(strings.Repeat("0", 64)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// onNewMachine runs the sweep of text where the run directories are
	// lost, the record kept, and returns its log.
	onNewMachine := func(text string) string {
		t.Helper()
		sw, err := ReadSweep(writeConfig(t, text))
		if err != nil {
			t.Fatal(err)
		}
		sw.Out, sw.Record = s.Out, s.Record
		if err := os.RemoveAll(s.Out); err != nil {
			t.Fatal(err)
		}
		log.Reset()
		if err := RunSweep(context.Background(), sw, se); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		return log.String()
	}
	altered, err := os.ReadFile(digestPath)
	if err != nil {
		t.Fatal(err)
	}
	got := onNewMachine(strings.Replace(sweepText, "algorithms: [sft, grpo]", "algorithms: [sft, grpo, grpo-c]\nvariants: {grpo-c: {algorithm: grpo, set: [grpo.lr=0.002]}}", 1))
	for _, want := range []string{"guess-sft-seed1 evaluated again: it made another actor adapter than the recorded run", "guess-sft-seed1 on test",
		"guess-sft-seed1 not recorded: it made another actor adapter than the recorded run (sha256 " + string(digest[:12]) + ", recorded 000000000000), the start of the recorded guess-grpo-b-seed1, guess-grpo-seed1;"} {
		if !strings.Contains(got, want) {
			t.Fatalf("want %q in the log:\n%s", want, got)
		}
	}
	if now, err := os.ReadFile(digestPath); err != nil || string(now) != string(altered) {
		t.Fatalf("the record's digest is %q, want the recorded %q kept (%v)", now, altered, err)
	}
	if _, err := os.Stat(filepath.Join(s.Record, "guess-grpo-c-seed1", "eval", "test.json")); err != nil {
		t.Fatalf("the run started from the new SFT adapter is not recorded: %v", err)
	}
	if start, err := os.ReadFile(filepath.Join(s.Record, "guess-grpo-c-seed1", startDigestFile)); err != nil || string(start) != string(digest) {
		t.Fatalf("the recorded start of the run trained from the new SFT adapter is %q, want %q (%v)", start, digest, err)
	}
	// A record that holds no run started from its SFT run (here only one
	// that started from the new adapter) takes the new one.
	for _, run := range []string{"guess-grpo-seed1", "guess-grpo-b-seed1"} {
		if err := os.RemoveAll(filepath.Join(s.Record, run)); err != nil {
			t.Fatal(err)
		}
	}
	got = onNewMachine(sweepText)
	if strings.Contains(got, "not recorded") || !strings.Contains(got, "guess-sft-seed1 on test") {
		t.Fatalf("want the SFT run evaluated again and recorded:\n%s", got)
	}
	if now, err := os.ReadFile(digestPath); err != nil || string(now) != string(digest) {
		t.Fatalf("the record's digest is %q, want the adapter's %q (%v)", now, digest, err)
	}

	// A setting that changes the evaluation but not SFT's training (the
	// tokens an action may take): SFT is not restored, trains anew, makes
	// the recorded adapter, and is evaluated again all the same.
	got = onNewMachine(strings.Replace(sweepText, "max_tokens: 4", "max_tokens: 5", 1))
	if !strings.Contains(got, "guess-sft-seed1 evaluated again: the recorded run had other settings (rollout.max_tokens: 4, now 5)") || !strings.Contains(got, "guess-sft-seed1 on test") {
		t.Fatalf("want the SFT run evaluated again for its other settings:\n%s", got)
	}
}

// TestSweepOwnsItsEvaluationAndRecord: a run whose own last-iteration
// evaluation is of another number of episodes than the sweep's is
// evaluated again by the sweep; a run finished here with settings the
// sweep file has since changed is not recorded over the record's run of
// the current settings, made on another machine; and a finished run goes
// on when the sweep file asks for more iterations.
func TestSweepOwnsItsEvaluationAndRecord(t *testing.T) {
	model := tinyModel(t)
	text := `out: grid
record: record
algorithms: [sft]
envs: [guess]
seeds: [1]
eval: {splits: [test], episodes: 2}
` + strings.Replace(guessSweepConfig, "eval: {episodes: 0}", "eval: {episodes: 1, split: test}", 1)
	here, elsewhere, record := t.TempDir(), t.TempDir(), t.TempDir()
	sweep := func(text, out string) string {
		t.Helper()
		s, err := ReadSweep(writeConfig(t, text))
		if err != nil {
			t.Fatal(err)
		}
		s.Out, s.Record = out, record
		var log strings.Builder
		if err := RunSweep(context.Background(), s, guessSweepEnv(model, &log)); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		return log.String()
	}
	got := sweep(text, here)
	if !strings.Contains(got, "guess-sft-seed1 on test") {
		t.Fatalf("the run's own evaluation of 1 episode stood for the sweep's of 2:\n%s", got)
	}
	checkEvalFiles(t, filepath.Join(here, "guess-sft-seed1"), envs.Test)
	data, err := os.ReadFile(filepath.Join(here, "guess-sft-seed1", "eval", "test.json"))
	if err != nil || !strings.Contains(string(data), `"episodes": 2,`) {
		t.Fatalf("eval/test.json is not the sweep's 2 episodes: %v\n%.200s", err, data)
	}

	changed := strings.Replace(text, "sft: {demos: 8,", "sft: {demos: 6,", 1)
	sweep(changed, elsewhere)
	// The run kept here gets a success rate of its own, which the
	// record's report, made of the record's files, must not show.
	setEvalField(t, filepath.Join(here, "guess-sft-seed1"), envs.Test, "success_rate", 0.777)
	got = sweep(changed, here)
	if !strings.Contains(got, "kept as it is, and not recorded") {
		t.Fatalf("want the stale run kept and not recorded:\n%s", got)
	}
	cfg, err := os.ReadFile(filepath.Join(record, "guess-sft-seed1", "config.yaml"))
	if err != nil || !strings.Contains(string(cfg), "demos: 6") {
		t.Fatalf("the record's run is not the current settings' (demos 6) any more: %v\n%s", err, cfg)
	}
	for dir, want := range map[string]bool{here: true, record: false} {
		rep, err := os.ReadFile(filepath.Join(dir, "report.md"))
		if err != nil || strings.Contains(string(rep), "0.777") != want {
			t.Fatalf("%s/report.md shows the run kept here: %v, want %v (%v)\n%s", dir, !want, want, err, rep)
		}
	}

	// Asked for more iterations, a finished run goes on, and is evaluated
	// anew; not one whose other settings changed too, which a resume
	// would refuse: it is kept.
	longer := strings.Replace(changed, "iterations: 1", "iterations: 2", 1)
	got = sweep(longer, here)
	if !strings.Contains(got, "finished 1 iterations, the sweep file now asks for 2; kept as it is, and not recorded") || strings.Contains(got, "it goes on") {
		t.Fatalf("want the run of other settings kept:\n%s", got)
	}
	got = sweep(longer, elsewhere)
	if !strings.Contains(got, "finished 1 iterations, the sweep file now asks for 2: it goes on") || !strings.Contains(got, "guess-sft-seed1 on test") {
		t.Fatalf("want the run extended and evaluated again:\n%s", got)
	}
	if st, _, err := readState(filepath.Join(elsewhere, "guess-sft-seed1")); err != nil || !st.Finished || st.Iteration != 2 {
		t.Fatalf("the extended run's state %+v, %v", st, err)
	}

	// An evaluation of an earlier iteration's adapter (`agentrl eval` on
	// the run before it went on) does not stand for the final one's.
	setEvalField(t, filepath.Join(elsewhere, "guess-sft-seed1"), envs.Test, "iteration", 1)
	got = sweep(longer, elsewhere)
	if !strings.Contains(got, "guess-sft-seed1 on test") {
		t.Fatalf("want iteration 1's evaluation made again for iteration 2:\n%s", got)
	}
	if data, err := os.ReadFile(filepath.Join(elsewhere, "guess-sft-seed1", "eval", "test.json")); err != nil || !strings.Contains(string(data), `"iteration": 2,`) {
		t.Fatalf("the new evaluation does not name iteration 2: %v\n%.300s", err, data)
	}

	// A damaged run, in the record or beside the sweep's runs (a file cut
	// off by a full disk, say), is listed as unreadable in each report; it
	// neither stops the sweep nor hides the other runs.
	for _, dir := range []string{filepath.Join(record, "guess-grpo-seed9"), filepath.Join(elsewhere, "guess-ppo-seed9")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("algorithm: grpo\nenv: guess\nseed: 9\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"iteration": 1, "it`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sweep(longer, elsewhere)
	for report, damaged := range map[string][]string{
		filepath.Join(record, "report.md"):    {"guess-grpo-seed9", "guess-ppo-seed9"},
		filepath.Join(elsewhere, "report.md"): {"guess-ppo-seed9"},
	} {
		rep, err := os.ReadFile(report)
		if err != nil || !strings.Contains(string(rep), "| sft |") {
			t.Fatalf("%s does not compare the readable run (%v):\n%s", report, err, rep)
		}
		for _, name := range damaged {
			if !strings.Contains(string(rep), "- "+name+": unreadable: read ") {
				t.Errorf("%s does not list %s as unreadable:\n%s", report, name, rep)
			}
		}
	}
}

// setEvalField sets a field of the run's eval/<split>.json: key at the top
// level, or, where the top level has none, in its summary.
func setEvalField(t *testing.T, dir string, split envs.Split, key string, value any) {
	t.Helper()
	path := filepath.Join(dir, "eval", string(split)+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatal(err)
	}
	if _, ok := ev[key]; ok {
		ev[key] = value
	} else {
		ev["summary"].(map[string]any)[key] = value
	}
	if data, err = json.Marshal(ev); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// guessSweepConfig is the base configuration of the small sweeps of the
// tests: one iteration of two tasks of the guessing game on the tiny
// model.
const guessSweepConfig = `config:
  iterations: 1
  threads: 2
  rollout: {tasks: 2, max_tokens: 4, parallel: 4, context: 512, max_steps: 3}
  eval: {episodes: 0}
  lora: {rank: 8, batch_tokens: 1024}
  sft: {demos: 8, batch_tokens: 512}
  grpo: {group: 2, minibatches: 1}
`

// guessSweepEnv resolves every model to the tiny one at model and every
// environment to the guessing game, logging to log.
func guessSweepEnv(model string, log io.Writer) SweepEnv {
	return SweepEnv{
		ResolveModel: func(string) (string, error) { return model, nil },
		LookupEnv:    func(string) (func() envs.Env, error) { return func() envs.Env { return rollouttest.New() }, nil },
		Progress:     log,
	}
}

// TestSweepSelect trains only the selected part of a grid: seed 2's GRPO
// run and the SFT run it starts from; the other runs are declared, not
// started, and the report lists them as missing.
func TestSweepSelect(t *testing.T) {
	model := tinyModel(t)
	s, err := ReadSweep(writeConfig(t, `out: grid
algorithms: [sft, grpo, grpo-kl]
envs: [guess]
seeds: [1, 2]
init_from_sft: true
eval: {splits: [test], episodes: 2}
`+guessSweepConfig+`variants:
  grpo-kl: {algorithm: grpo, set: [grpo.kl=0.05]}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		seeds   []uint64
		methods []string
		want    string
	}{
		{[]uint64{3}, nil, "seed 3 is not in"},
		{nil, []string{"ppo"}, `"ppo" is not among`},
	} {
		if err := s.Select(c.seeds, c.methods); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Select(%v, %v): %v, want an error containing %q", c.seeds, c.methods, err, c.want)
		}
	}
	if err := s.Select([]uint64{2}, []string{"grpo"}); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	se := guessSweepEnv(model, &log)
	if err := RunSweep(context.Background(), s, se); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for _, cell := range s.cells() {
		st, started, err := readState(filepath.Join(s.Out, cell.name()))
		if err != nil {
			t.Fatal(err)
		}
		want := cell.seed == 2 && (cell.algorithm == "sft" || cell.algorithm == "grpo")
		if st.Finished != want || started != want {
			t.Errorf("%s: finished %v, started %v; want %v", cell.name(), st.Finished, started, want)
		}
	}
	report, err := os.ReadFile(filepath.Join(s.Out, "report.md"))
	if err != nil || !strings.Contains(string(report), "seed 1 of grpo-kl on guess: not started") {
		t.Fatalf("report: %v\n%s", err, report)
	}
}

// TestSweepLock: a second sweep in a directory in use is refused, naming
// the process that holds it, and may start once the first has ended.
func TestSweepLock(t *testing.T) {
	out := t.TempDir()
	unlock, err := lockSweep(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockSweep(out); err == nil || !strings.Contains(err.Error(), "another sweep is running") ||
		!strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Fatalf("second lock: %v", err)
	}
	// RunSweep takes the lock before anything else.
	s := Sweep{Out: out, Algorithms: []string{"grpo"}, Envs: []string{"guess"}, Seeds: []uint64{1}}
	if err := RunSweep(context.Background(), s, SweepEnv{}); err == nil || !strings.Contains(err.Error(), "another sweep is running") {
		t.Fatalf("a sweep in a locked directory: %v", err)
	}
	unlock()
	unlock, err = lockSweep(out)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock()
}

// checkEvalFiles checks a run's evaluation on split: eval/<split>.json
// lists every episode's actions, and they are the actions of the episodes
// kept whole in trajectories/eval-<split>.jsonl.gz, with the summary's
// step and invalid-action counts.
func checkEvalFiles(t *testing.T, dir string, split envs.Split) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "eval", string(split)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var eval struct {
		Summary  rollout.Summary `json:"summary"`
		Episodes []EvalEpisode   `json:"episode_actions"`
	}
	if err := json.Unmarshal(data, &eval); err != nil {
		t.Fatal(err)
	}
	trajs, err := ReadTrajectories(dir, "eval-"+string(split))
	if err != nil {
		t.Fatal(err)
	}
	if len(eval.Episodes) != eval.Summary.Episodes || len(trajs) != len(eval.Episodes) || len(trajs) == 0 {
		t.Fatalf("%d episodes in brief, %d whole, the summary says %d", len(eval.Episodes), len(trajs), eval.Summary.Episodes)
	}
	steps, invalid := 0, 0
	for i, e := range eval.Episodes {
		tr := trajs[i]
		if e.Seed != tr.Seed || e.Success != tr.Success || len(e.Actions) != len(tr.Steps) {
			t.Fatalf("episode %d in brief %+v, whole: seed %d, success %v, %d steps", i, e, tr.Seed, tr.Success, len(tr.Steps))
		}
		for k, a := range e.Actions {
			if a.Action == "" || (a.Action != tr.Steps[k].ParsedAction && tr.Steps[k].ParsedAction != "") {
				t.Fatalf("episode %d step %d: %q in brief, %q parsed", i, k+1, a.Action, tr.Steps[k].ParsedAction)
			}
			steps++
			if a.Invalid {
				invalid++
			}
		}
	}
	if got := float64(steps) / float64(len(eval.Episodes)); math.Abs(got-eval.Summary.MeanSteps) > 1e-9 {
		t.Fatalf("%.3f steps per episode in brief, the summary says %.3f", got, eval.Summary.MeanSteps)
	}
	if got := float64(invalid) / float64(steps); math.Abs(got-eval.Summary.InvalidActionRate) > 1e-9 {
		t.Fatalf("invalid-action rate %.3f in brief, the summary says %.3f", got, eval.Summary.InvalidActionRate)
	}
}

// TestProgressLabel checks what the sweep says of a run it takes up: a
// run stopped before its first iteration finished has its directories but
// no state, and is not new (its fine-tuning may go on from a checkpoint);
// a run the sweep only declared has its configuration alone.
func TestProgressLabel(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("algorithm: sft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := progressLabel(dir, State{}, false); got != "new" {
		t.Fatalf("declared run: %q", got)
	}
	if err := os.Mkdir(filepath.Join(dir, "checkpoints"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := progressLabel(dir, State{}, false); got != "started before, stopped in its first iteration" {
		t.Fatalf("started, no state: %q", got)
	}
	if got := progressLabel(dir, State{Iteration: 2}, true); got != "resuming after iteration 2" {
		t.Fatalf("state after iteration 2: %q", got)
	}
}
