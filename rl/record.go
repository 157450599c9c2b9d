package rl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentrl/agentrl/rl/report"
)

// recordedFiles are the files of a run directory a sweep's record keeps:
// what reports read and what the critic said, a few kilobytes a run, not
// the adapters, checkpoints and trajectories (megabytes each).
var recordedFiles = []string{"config.yaml", "state.json", "metrics.jsonl", "eval/*.json", "nlac/*.md"}

// recordRun copies the recorded files of the run in dir to the record's
// directory of the same name, replacing what an earlier copy held.
func (s *Sweep) recordRun(dir string) error {
	if err := copyRecordedFiles(dir, filepath.Join(s.Record, filepath.Base(dir))); err != nil {
		return fmt.Errorf("record %s: %w", filepath.Base(dir), err)
	}
	return nil
}

// copyRecordedFiles copies the recordedFiles of the run directory from to
// the run directory to.
func copyRecordedFiles(from, to string) error {
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
// sweep would run again as it stands: the same settings (checked as a
// resume checks them, with as many iterations) and an evaluation on every
// split the sweep asks for. Restored, such a run need not train again.
func (s *Sweep) restorable(c sweepCell) (bool, error) {
	dir := filepath.Join(s.Record, c.name())
	st, started, err := readState(dir)
	if err != nil || !started || !st.Finished {
		return false, err
	}
	cfg, err := s.config(c)
	if err != nil {
		return false, err
	}
	if cfg.Iterations != st.Iterations {
		return false, nil
	}
	if err := checkResumedConfig(dir, cfg, st); err != nil {
		return false, nil
	}
	for _, split := range s.Eval.Splits {
		if s.Eval.Episodes == 0 {
			break
		}
		if _, err := os.Stat(filepath.Join(dir, "eval", string(split)+".json")); err != nil {
			return false, nil
		}
	}
	return true, nil
}

// restoreRecorded copies back from the record the finished runs that this
// machine has not started, so that a sweep continued on another machine
// (or after its run directories were lost) does not train them again. An
// SFT run stays unrestored while another run of its env and seed still has
// to start from its adapter, which the record does not keep: it trains
// again (the same settings and seed give the same adapter). It returns the
// names of the runs restored.
func (s *Sweep) restoreRecorded(cells []sweepCell) ([]string, error) {
	if s.Record == "" {
		return nil, nil
	}
	restorable := map[sweepCell]bool{}
	for _, c := range cells {
		if _, started, err := readState(filepath.Join(s.Out, c.name())); err != nil || started {
			if err != nil {
				return nil, err
			}
			continue
		}
		ok, err := s.restorable(c)
		if err != nil {
			return nil, err
		}
		restorable[c] = ok
	}
	var restored []string
	for _, c := range cells {
		if !restorable[c] || (s.InitFromSFT && c.algorithm == "sft" && s.adapterNeeded(c, cells, restorable)) {
			continue
		}
		if err := copyRecordedFiles(filepath.Join(s.Record, c.name()), filepath.Join(s.Out, c.name())); err != nil {
			return nil, fmt.Errorf("restore %s from the record: %w", c.name(), err)
		}
		restored = append(restored, c.name())
	}
	return restored, nil
}

// adapterNeeded reports whether a run that starts from the SFT run sft
// will train here: neither finished on this machine nor restorable.
func (s *Sweep) adapterNeeded(sft sweepCell, cells []sweepCell, restorable map[sweepCell]bool) bool {
	return slices.ContainsFunc(cells, func(c sweepCell) bool {
		if c.algorithm == "sft" || c.env != sft.env || c.seed != sft.seed || restorable[c] {
			return false
		}
		st, _, err := readState(filepath.Join(s.Out, c.name()))
		return err != nil || !st.Finished
	})
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
