package rl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrl/agentrl/rl/report"
)

// recordedFiles are the files of a run directory a sweep's record keeps:
// what reports read and what the critic said, a few kilobytes a run, not
// the adapters, checkpoints and trajectories (megabytes each). state.json
// comes last: it says the run finished, so a copy cut short leaves a run
// that is not (yet) finished rather than one with its results missing.
var recordedFiles = []string{"config.yaml", "metrics.jsonl", "eval/*.json", "nlac/*.md", "state.json"}

// recordRun replaces the record's copy of the run in dir with its
// recorded files.
func (s *Sweep) recordRun(dir string) error {
	if err := copyRecordedFiles(dir, filepath.Join(s.Record, filepath.Base(dir))); err != nil {
		return fmt.Errorf("record %s: %w", filepath.Base(dir), err)
	}
	return nil
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
			if err := copyFile(f, filepath.Join(to, rel)); err != nil {
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
	for _, split := range s.Eval.Splits {
		if s.Eval.Episodes == 0 {
			break
		}
		if _, err := os.Stat(filepath.Join(dir, "eval", string(split)+".json")); err != nil {
			return false, "not evaluated on " + string(split), nil
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

// writeRecordReport writes the record's report.md: the sweep's comparison
// with its curve figures (not each run's plots), runs named relative to
// the record.
func (s *Sweep) writeRecordReport(runs []report.Run, opts report.Options) error {
	named := slices.Clone(runs)
	for i := range named {
		named[i].Dir = filepath.Base(named[i].Dir)
	}
	_, _, err := report.WriteComparison(named, filepath.Join(s.Record, "report.md"), opts)
	return err
}

// copyFile copies from to to (creating to's directory) through a
// temporary file, so that a copy cut short leaves no half file.
func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	tmp := to + ".tmp"
	dst, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	err = errors.Join(err, dst.Close())
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, to)
}
