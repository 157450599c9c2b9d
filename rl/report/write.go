package report

import (
	"path/filepath"
	"strings"
)

// Write is the whole report of runs: each run's plots in its plots/
// directory, the training curves of each env beside out (OUT-curves-ENV.png)
// and its step-agreement curves where runs log them (OUT-agreement-ENV.png),
// and the markdown comparison at out. It returns the comparison and the
// figure files written.
func Write(runs []Run, out string, opts Options) (Table, []string, error) {
	for _, r := range runs {
		if err := Plot(r, filepath.Join(r.Dir, "plots")); err != nil {
			return Table{}, nil, err
		}
	}
	return WriteComparison(runs, out, opts)
}

// WriteComparison is Write without each run's plots: the figures beside
// out and the markdown comparison at out. Runs are only read, so their
// directories need not exist (a sweep's record names them by name).
func WriteComparison(runs []Run, out string, opts Options) (Table, []string, error) {
	prefix := strings.TrimSuffix(filepath.Base(out), filepath.Ext(out)) + "-"
	curves, err := WriteCurves(runs, filepath.Dir(out), prefix)
	if err != nil {
		return Table{}, nil, err
	}
	agreement, err := WriteAgreement(runs, filepath.Dir(out), prefix)
	if err != nil {
		return Table{}, nil, err
	}
	curves = append(curves, agreement...)
	opts.FigureDir, opts.FigurePrefix = ".", prefix
	if opts.Split == "" {
		opts.Split = DefaultSplit
	}
	if err := WriteMarkdownFile(out, runs, opts); err != nil {
		return Table{}, nil, err
	}
	return Compare(runs, opts.Split), curves, nil
}
