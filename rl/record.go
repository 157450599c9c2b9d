package rl

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentrl/agentrl/internal/atomicfile"
	"github.com/agentrl/agentrl/rl/report"
)

// recordedFiles are the files of a run directory a sweep's record keeps:
// what reports read and what the critic said, a few kilobytes a run, not
// the adapters, checkpoints and trajectories (megabytes each). state.json
// comes last: it says the run finished, so a copy cut short leaves a run
// that is not (yet) finished rather than one with its results missing.
var recordedFiles = []string{"config.yaml", "metrics.jsonl", "eval/*.json", "nlac/*.md", "state.json"}

// actorDigestFile, in a recorded run, holds the SHA-256 of the actor
// adapter the run's evaluations were made with (the record keeps no
// adapters): a run trained again that makes the same adapter, byte for
// byte, keeps the recorded evaluations (keepRecordedEvaluations).
const actorDigestFile = "actor.sha256"

// startDigestFile, in a recorded run that started from an adapter
// (init_adapter: with init_from_sft, its seed's SFT adapter), holds that
// adapter's SHA-256, so that the record tells which SFT run it started
// from (recordedStartKept).
const startDigestFile = "start.sha256"

// recordRun replaces the record's copy of the run in dir with its
// recorded files, and the digests of its actor adapter and of the adapter
// it started from where the run has them (a run restored from the record
// has none: its recorded digests stay).
func (s *Sweep) recordRun(dir string) error {
	name := filepath.Base(dir)
	to := filepath.Join(s.Record, name)
	if err := copyRecordedFiles(dir, to); err != nil {
		return fmt.Errorf("record %s: %w", name, err)
	}
	if !hasActor(dir) {
		return nil
	}
	digest, err := fileDigest(actorPath(dir))
	if err != nil {
		return fmt.Errorf("record %s: %w", name, err)
	}
	if err := atomicfile.WriteFile(filepath.Join(to, actorDigestFile), []byte(digest+"\n")); err != nil {
		return fmt.Errorf("record %s: %w", name, err)
	}
	cfg, err := LoadConfig(filepath.Join(dir, "config.yaml"), nil)
	if err != nil {
		return fmt.Errorf("record %s: %w", name, err)
	}
	startPath := filepath.Join(to, startDigestFile)
	if cfg.InitAdapter == "" {
		if err := os.Remove(startPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("record %s: %w", name, err)
		}
		return nil
	}
	// A start since removed (its SFT run restored from the record, without
	// adapters) leaves the recorded digest as it is.
	start, err := fileDigest(cfg.InitAdapter)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("record %s: the adapter it started from: %w", name, err)
	}
	return atomicfile.WriteFile(startPath, []byte(start+"\n"))
}

// recordedStartKept says why the record keeps its own run of an SFT cell
// rather than the one in dir, trained again (as the start of a later
// run) into another actor adapter than the recorded one ("" when it does
// not): the recorded runs of the cell's other methods started from the
// recorded adapter, and a record whose SFT run is another would compare
// them with a start they did not have. Another CPU or thread count makes
// another adapter from the same settings and seed, and on a real model
// scores differently (docs/runs.md, Sweeps).
func (r *sweepRunner) recordedStartKept(c sweepCell, dir string) (string, error) {
	if !r.InitFromSFT || c.algorithm != "sft" || !hasActor(dir) {
		return "", nil
	}
	recorded, err := readDigest(filepath.Join(r.Record, c.name(), actorDigestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("record %s: %w", c.name(), err)
	}
	made, err := fileDigest(actorPath(dir))
	if err != nil {
		return "", fmt.Errorf("record %s: %w", c.name(), err)
	}
	if made == recorded {
		return "", nil
	}
	// Every recorded run of the seed counts, of methods since dropped from
	// the grid too, but one the report cannot read and one recorded with
	// another start than the recorded SFT run (a run recorded before
	// starts were is taken to have started from it).
	runs, _, err := report.ReadRuns(r.Record)
	if err != nil {
		return "", fmt.Errorf("record %s: %w", c.name(), err)
	}
	var started []string
	for _, run := range runs {
		if run.Algorithm == "sft" || run.Env != c.env || run.Seed != c.seed || !run.Finished() {
			continue
		}
		start, err := readDigest(filepath.Join(run.Dir, startDigestFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("record %s: %w", filepath.Base(run.Dir), err)
		}
		if err == nil && start != recorded {
			continue
		}
		started = append(started, filepath.Base(run.Dir))
	}
	if len(started) == 0 {
		return "", nil
	}
	return fmt.Sprintf("it made another actor adapter than the recorded run (sha256 %.12s, recorded %.12s), the start of the recorded %s; the record keeps that run, and this one's evaluations are in %s",
		made, recorded, strings.Join(started, ", "), dir), nil
}

// actorPath is the actor adapter of the run in dir.
func actorPath(dir string) string { return filepath.Join(dir, "adapters", ActorAdapter+".gguf") }

// readDigest reads a digest the record keeps (actorDigestFile,
// startDigestFile), without its line end.
func readDigest(path string) (string, error) {
	data, err := os.ReadFile(path)
	return strings.TrimSpace(string(data)), err
}

// fileDigest is the hex SHA-256 of the file at path.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// keepRecordedEvaluations gives a run restored from the record and
// trained again (as the start of a later run) the record's evaluations,
// where its new actor adapter is byte for byte the one they were made
// with, the evaluation's settings are the recorded run's and the
// evaluations have the sweep's number of episodes: greedy evaluations of
// the same adapter with the same settings come out the same (and sampled
// ones from the same seed), and each costs minutes on a real model.
// Otherwise the run is evaluated again, and the log says why; so it is
// when the record cannot be read.
func (s *Sweep) keepRecordedEvaluations(c sweepCell, dir string, logf func(string, ...any)) {
	missing := s.unevaluated(dir)
	if s.Record == "" || len(missing) == 0 {
		return
	}
	recorded := filepath.Join(s.Record, c.name())
	want, err := readDigest(filepath.Join(recorded, actorDigestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	again := func(why string, args ...any) {
		logf("sweep: %s evaluated again: "+why, append([]any{c.name()}, args...)...)
	}
	if err != nil {
		again("%v", err)
		return
	}
	got, err := fileDigest(actorPath(dir))
	if err != nil {
		again("%v", err)
		return
	}
	if got != want {
		again("it made another actor adapter than the recorded run (sha256 %.12s, recorded %.12s)", got, want)
		return
	}
	if changed, err := evalSettingsChanged(recorded, dir); err != nil {
		again("%v", err)
		return
	} else if len(changed) > 0 {
		again("the recorded run had other settings (%s)", strings.Join(changed, "; "))
		return
	}
	var kept []string
	for _, e := range missing {
		from := EvalFile(recorded, e.name())
		if _, err := os.Stat(from); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if lack := s.evaluationOf(recorded, e); lack != "" {
			again("the recorded run: %s", lack)
			continue
		}
		if err := atomicfile.Copy(from, EvalFile(dir, e.name())); err != nil {
			again("%v", err)
			continue
		}
		kept = append(kept, e.name())
	}
	if len(kept) > 0 {
		logf("sweep: %s made the recorded actor adapter again (sha256 %.12s): its recorded evaluations on %s are kept", c.name(), got, strings.Join(kept, ", "))
	}
}

// evalSettingsChanged lists the settings, as "key: was, now v", in which
// the run in dir differs from the recorded run in recorded, other than
// those that do not touch an evaluation: the label, the training-time
// evaluation schedule and the path of the adapter it started from (whose
// bytes the actor's digest covers).
func evalSettingsChanged(recorded, dir string) ([]string, error) {
	was, err := runSettings(recorded)
	if err != nil {
		return nil, err
	}
	now, err := runSettings(dir)
	if err != nil {
		return nil, err
	}
	return diffSettings(was, now, []string{"label", "eval.", "init_adapter"}), nil
}

// copyRecordedFiles replaces the recordedFiles of the run directory to
// with those of the run directory from (what to held of them and from
// does not, a stale evaluation say, goes).
func copyRecordedFiles(from, to string) error {
	for _, pattern := range recordedFiles {
		stale, err := filepath.Glob(filepath.Join(to, pattern))
		if err != nil {
			return err
		}
		for _, f := range stale {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	for _, pattern := range recordedFiles {
		files, err := filepath.Glob(filepath.Join(from, pattern))
		if err != nil {
			return err
		}
		for _, f := range files {
			rel, err := filepath.Rel(from, f)
			if err != nil {
				return err
			}
			if err := atomicfile.Copy(f, filepath.Join(to, rel)); err != nil {
				return err
			}
		}
	}
	return nil
}

// restorable reports whether the record holds cell as a finished run the
// sweep would run again as it stands: the same settings (compared as a
// resume compares them, with as many iterations), an evaluation on every
// split the sweep asks for, and, for a run that starts from its seed's
// SFT adapter, an SFT start that is restorable or finished here too.
// Where the record has the run finished but it is not restorable, why
// says why.
func (s *Sweep) restorable(c sweepCell) (ok bool, why string, err error) {
	dir := filepath.Join(s.Record, c.name())
	st, started, err := readState(dir)
	if err != nil || !started || !st.Finished {
		return false, "", err
	}
	cfg, err := s.config(c)
	if err != nil {
		return false, "", err
	}
	if cfg.Iterations != st.Iterations {
		return false, fmt.Sprintf("recorded with %d iterations, now %d", st.Iterations, cfg.Iterations), nil
	}
	changed, err := changedSettings(dir, cfg, st)
	if err != nil {
		return false, err.Error(), nil
	}
	if len(changed) > 0 {
		return false, "recorded with other settings: " + strings.Join(changed, "; "), nil
	}
	for _, e := range s.evaluations() {
		if s.Eval.Episodes == 0 {
			break
		}
		if lack := s.evaluationOf(dir, e); lack != "" && e.greedy() {
			return false, lack, nil
		}
	}
	if s.InitFromSFT && c.algorithm != "sft" {
		sft := sweepCell{"sft", c.env, c.seed}
		if st, _, err := readState(filepath.Join(s.Out, sft.name())); err == nil && st.Finished {
			return true, "", nil
		}
		if ok, _, err := s.restorable(sft); err != nil || !ok {
			return false, "its SFT start " + sft.name() + " is not restorable", err
		}
	}
	return true, "", nil
}

// restoreRecorded copies back from the record the finished runs that this
// machine has not started, so that a sweep continued on another machine
// (or after its run directories were lost) does not train them again,
// and logs why a recorded run is not restored. A restored run has no
// adapters: RunSweep trains it again should a later run start from it.
func (s *Sweep) restoreRecorded(cells []sweepCell, logf func(string, ...any)) error {
	if s.Record == "" {
		return nil
	}
	for _, c := range cells {
		dir := filepath.Join(s.Out, c.name())
		if _, started, err := readState(dir); err != nil || started {
			if err != nil {
				return err
			}
			continue
		}
		ok, why, err := s.restorable(c)
		if err != nil {
			return err
		}
		if !ok {
			if why != "" {
				logf("sweep: %s not restored from the record, trained anew: %s", c.name(), why)
			}
			continue
		}
		if err := copyRecordedFiles(filepath.Join(s.Record, c.name()), dir); err != nil {
			return fmt.Errorf("restore %s from the record: %w", c.name(), err)
		}
		logf("sweep: %s restored from the record %s (finished there; its adapters are not kept)", c.name(), s.Record)
	}
	return nil
}

// writeRecordReport writes the record's report.md: the comparison of the
// finished runs the record holds, beside the runs of out (outRuns) still
// in progress, with its curve figures (not each run's plots), runs named
// relative to the record. A run finished in out but not recorded (kept
// with settings the sweep file has since changed) is left out: the
// report's figures are those of the record's files.
func (s *Sweep) writeRecordReport(outRuns []report.Run, opts report.Options) error {
	if _, err := os.Stat(s.Record); errors.Is(err, fs.ErrNotExist) {
		return nil // nothing recorded yet
	}
	runs, unreadable, err := report.ReadRuns(s.Record)
	if err != nil && !errors.Is(err, report.ErrNotRun) {
		return err
	}
	recorded := map[string]bool{}
	for i := range runs {
		runs[i].Dir = filepath.Base(runs[i].Dir)
		recorded[runs[i].Dir] = true
	}
	for _, u := range unreadable {
		recorded[filepath.Base(u.Dir)] = true
	}
	// The runs of out that could not be read are listed where the record
	// has no copy of them.
	for _, u := range opts.Unreadable {
		if !recorded[filepath.Base(u.Dir)] {
			unreadable = append(unreadable, u)
		}
	}
	opts.Unreadable = unreadable
	for _, r := range outRuns {
		if name := filepath.Base(r.Dir); !recorded[name] && !r.Finished() {
			r.Dir = name
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 && len(opts.Unreadable) == 0 {
		return nil
	}
	_, _, err = report.WriteComparison(runs, filepath.Join(s.Record, "report.md"), opts)
	return err
}
