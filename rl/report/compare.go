package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/agentrl/agentrl/internal/atomicfile"
	"gonum.org/v1/gonum/stat"
)

// DefaultSplit is the evaluation split reports compare when none is named:
// the held-out tasks, which the runs did not train on.
const DefaultSplit = "test"

// Table compares runs grouped by env and algorithm.
type Table struct {
	// Split is the evaluation split the table compares.
	Split string
	// Groups are sorted by env, then algorithm.
	Groups []Group
	// Missing lists the runs whose results are not (all) in Groups'
	// statistics, sorted by env, algorithm and seed.
	Missing []Missing
}

// Group summarises the runs of one algorithm on one env. Only finished runs
// enter the statistics: an unfinished run's numbers describe a shorter run,
// and an evaluation of it an intermediate adapter.
type Group struct {
	Env, Algorithm string
	// Models are the models the runs trained, sorted; more than one
	// means the group mixes what should be compared separately.
	Models []string
	// Seeds counts the group's runs, Finished those that finished.
	Seeds, Finished int
	// Success, Score and Steps are the success rate, mean score and mean
	// steps of the final evaluation on the split, over the finished runs
	// evaluated on it.
	Success, Score, Steps Stat
	// TrainSuccess is the last iteration's training success rate, over the
	// finished runs.
	TrainSuccess Stat
	// The budget of the finished runs: optimiser steps, environment steps
	// and training tokens of the run itself (not of an SFT run it started
	// from), and its wall time in minutes.
	GradSteps, EnvSteps, TrainTokens, Minutes Stat
}

// Stat is a mean and standard deviation over N seeds. Std is the sample
// standard deviation, and 0 for fewer than two seeds, where it is not
// defined.
type Stat struct {
	N         int
	Mean, Std float64
}

func newStat(xs []float64) Stat {
	switch len(xs) {
	case 0:
		return Stat{}
	case 1:
		return Stat{N: 1, Mean: xs[0]}
	}
	mean, std := stat.MeanStdDev(xs, nil)
	return Stat{N: len(xs), Mean: mean, Std: std}
}

// Status says why a run is missing from a comparison.
type Status int

const (
	// NotStarted: the run has not begun (no state.json).
	NotStarted Status = iota
	// Unfinished: the run is under way, or stopped before its last
	// iteration.
	Unfinished
	// NotEvaluated: the run finished but has no evaluation on the split.
	NotEvaluated
)

// Missing is a run whose results a comparison lacks.
type Missing struct {
	Dir, Env, Algorithm string
	Seed                uint64
	Status              Status
	// Iteration and Iterations are where an unfinished run stands.
	Iteration, Iterations int
	// Split is the split a NotEvaluated run lacks.
	Split string
}

// String describes the run and what it lacks, e.g. "seed 2 of grpo on
// webshop: iteration 7 of 20".
func (m Missing) String() string {
	who := fmt.Sprintf("seed %d of %s on %s", m.Seed, orUnknown(m.Algorithm), orUnknown(m.Env))
	switch m.Status {
	case NotStarted:
		return who + ": not started"
	case Unfinished:
		return fmt.Sprintf("%s: iteration %d of %d", who, m.Iteration, m.Iterations)
	default:
		return fmt.Sprintf("%s: finished, not evaluated on %s", who, m.Split)
	}
}

// Compare groups runs by env and algorithm and summarises each group's
// results on the evaluation split (DefaultSplit if empty).
func Compare(runs []Run, split string) Table {
	if split == "" {
		split = DefaultSplit
	}
	t := Table{Split: split}
	type key struct{ env, alg string }
	groups := map[key][]Run{}
	for _, r := range runs {
		k := key{r.Env, r.Algorithm}
		groups[k] = append(groups[k], r)
	}
	for k, rs := range groups {
		g := Group{Env: k.env, Algorithm: k.alg, Seeds: len(rs)}
		var success, score, steps, train, grad, env, tokens, minutes []float64
		for _, r := range rs {
			if r.Model != "" && !slices.Contains(g.Models, r.Model) {
				g.Models = append(g.Models, r.Model)
			}
			m := Missing{Dir: r.Dir, Env: r.Env, Algorithm: r.Algorithm, Seed: r.Seed, Split: split}
			switch {
			case !r.Started && r.State.Iterations == 0:
				m.Status = NotStarted
				t.Missing = append(t.Missing, m)
				continue
			case !r.Started || !r.State.Finished:
				// A run whose state says it has begun (a warm start
				// done, say) is under way before its first iteration.
				m.Status, m.Iteration, m.Iterations = Unfinished, r.State.Iteration, r.State.Iterations
				t.Missing = append(t.Missing, m)
				continue
			}
			g.Finished++
			grad, env = append(grad, r.State.GradSteps), append(env, r.State.EnvSteps)
			tokens, minutes = append(tokens, r.State.TrainTokens), append(minutes, r.State.WallS/60)
			// Runs that play no training episodes (SFT, StepAgent) have
			// no training success to report.
			if last, ok := r.Last(); ok && playedEpisodes(last) {
				train = append(train, last.Success)
			}
			ev, ok := r.Evals[split]
			if !ok {
				m.Status = NotEvaluated
				t.Missing = append(t.Missing, m)
				continue
			}
			success = append(success, ev.Summary.SuccessRate)
			score = append(score, ev.Summary.MeanScore)
			steps = append(steps, ev.Summary.MeanSteps)
		}
		slices.Sort(g.Models)
		g.Success, g.Score, g.Steps = newStat(success), newStat(score), newStat(steps)
		g.TrainSuccess = newStat(train)
		g.GradSteps, g.EnvSteps, g.TrainTokens, g.Minutes = newStat(grad), newStat(env), newStat(tokens), newStat(minutes)
		t.Groups = append(t.Groups, g)
	}
	slices.SortFunc(t.Groups, func(a, b Group) int {
		return cmp.Or(cmp.Compare(a.Env, b.Env), cmp.Compare(a.Algorithm, b.Algorithm))
	})
	slices.SortFunc(t.Missing, byRun)
	return t
}

// byRun orders missing runs by env, algorithm, seed and directory.
func byRun(a, b Missing) int {
	return cmp.Or(cmp.Compare(a.Env, b.Env), cmp.Compare(a.Algorithm, b.Algorithm),
		cmp.Compare(a.Seed, b.Seed), cmp.Compare(a.Dir, b.Dir))
}

// Options configure WriteMarkdown.
type Options struct {
	// Split is the evaluation split to compare; empty means DefaultSplit.
	Split string
	// AlsoSplits are more evaluation splits (test and unseen, say): each
	// adds a column with the success rate on it, and its missing
	// evaluations to the list of what is missing.
	AlsoSplits []string
	// Title heads the document; empty means "Training runs".
	Title string
	// FigureDir is the directory of the curve figures, relative to the
	// markdown file's directory ("." for beside it); empty means no
	// figures. The figures of env are FigureDir/CurvesFile(FigurePrefix,
	// env) and FigureDir/AgreementFile(FigurePrefix, env), which the caller
	// writes with WriteCurves and WriteAgreement.
	FigureDir string
	// FigurePrefix starts the curve figures' file names, e.g. "report-".
	FigurePrefix string
	// Unreadable are runs left out because their files could not be
	// read; the report lists them with what is missing.
	Unreadable []Unreadable
}

// WriteMarkdown writes a comparison of runs as markdown: one table per env
// with a row per algorithm (mean ± standard deviation over seeds), the
// training curves when opts.FigureDir is set, the step agreement by cycle
// of runs that log it (StepAgent), then the runs whose results are missing
// and why.
func WriteMarkdown(w io.Writer, runs []Run, opts Options) error {
	t := Compare(runs, opts.Split)
	also := make([]Table, len(opts.AlsoSplits))
	for i, split := range opts.AlsoSplits {
		also[i] = Compare(runs, split)
	}
	missing := missingOnAnySplit(t, also)
	title := opts.Title
	if title == "" {
		title = "Training runs"
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s\n\n", title)
	fmt.Fprintf(bw, "Final evaluation on the %s split (`eval/%s.json`) of the finished runs: mean ± standard deviation over seeds (the mean alone over one). "+
		"*seeds* counts the finished runs (of all runs, where some are missing); a cell over fewer of them says so with *n*. "+
		"*train success* is the training success rate of the last iteration. "+
		"The budget of each run, its own (a start from an SFT run not counted): optimiser steps, environment steps, training tokens and minutes of wall time.\n", t.Split, t.Split)
	var alsoHeads, alsoRule string
	if len(also) > 0 {
		fmt.Fprintf(bw, "\n*success on S* is the success rate of the same final adapters on split S (`eval/S.json`).\n")
		for _, a := range also {
			alsoHeads += fmt.Sprintf(" success on %s |", cell(a.Split))
			alsoRule += "---:|"
		}
	}
	for _, env := range envsOf(runs) {
		fmt.Fprintf(bw, "\n## %s\n\n", cell(orUnknown(env)))
		fmt.Fprintln(bw, "| algorithm | model | seeds | success | score | steps |"+alsoHeads+" train success | grad steps | env steps | train tokens | minutes |")
		fmt.Fprintln(bw, "|---|---|---:|---:|---:|---:|"+alsoRule+"---:|---:|---:|---:|---:|")
		for gi, g := range t.Groups {
			if g.Env != env {
				continue
			}
			seeds := fmt.Sprint(g.Finished)
			if g.Finished != g.Seeds {
				seeds = fmt.Sprintf("%d of %d", g.Finished, g.Seeds)
			}
			var alsoCells string
			for _, a := range also {
				// Compare groups the same runs in the same order
				// whatever the split.
				alsoCells += " " + formatStat(a.Groups[gi].Success, g.Finished, "%.3f") + " |"
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %s |%s %s | %s | %s | %s | %s |\n",
				cell(orUnknown(g.Algorithm)), cell(strings.Join(g.Models, ", ")), seeds,
				formatStat(g.Success, g.Finished, "%.3f"), formatStat(g.Score, g.Finished, "%.3f"),
				formatStat(g.Steps, g.Finished, "%.2f"), alsoCells, formatStat(g.TrainSuccess, g.Finished, "%.3f"),
				formatStat(g.GradSteps, g.Finished, "%.0f"), formatStat(g.EnvSteps, g.Finished, "%.0f"),
				formatStat(g.TrainTokens, g.Finished, "%.0f"), formatStat(g.Minutes, g.Finished, "%.1f"))
		}
		if opts.FigureDir != "" && hasCurve(runsOfEnv(runs, env)) {
			link := path.Join(opts.FigureDir, CurvesFile(opts.FigurePrefix, env))
			fmt.Fprintf(bw, "\n![training success on %s, mean over seeds](%s)\n", cell(orUnknown(env)), link)
		}
		writeReach(bw, runsOfEnv(runs, env), t.Groups, env)
		writeAgreementTable(bw, runsOfEnv(runs, env), env, opts.FigureDir, opts.FigurePrefix)
		writeCriticTable(bw, runsOfEnv(runs, env), env)
	}
	fmt.Fprintf(bw, "\n## Missing\n\n")
	if len(missing) == 0 && len(opts.Unreadable) == 0 {
		splits := append([]string{t.Split}, opts.AlsoSplits...)
		fmt.Fprintf(bw, "Nothing: every run finished and was evaluated on %s.\n", strings.Join(splits, " and "))
	}
	for _, m := range missing {
		fmt.Fprintf(bw, "- %s (`%s`)\n", m, m.Dir)
	}
	for _, u := range opts.Unreadable {
		fmt.Fprintf(bw, "- %s\n", cell(u.String()))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// WriteMarkdownFile writes WriteMarkdown's report to path atomically, so
// that a report being regenerated is never seen half written.
func WriteMarkdownFile(path string, runs []Run, opts Options) error {
	return atomicfile.Write(path, func(w io.Writer) error { return WriteMarkdown(w, runs, opts) })
}

// missingOnAnySplit is what the comparison on t's split lacks, and the
// evaluations on the other splits that finished runs lack.
func missingOnAnySplit(t Table, also []Table) []Missing {
	missing := slices.Clone(t.Missing)
	for _, a := range also {
		for _, m := range a.Missing {
			// Runs not started or not finished are in t's list already.
			if m.Status == NotEvaluated {
				missing = append(missing, m)
			}
		}
	}
	// Stable: a run's missing splits keep the order of the splits.
	slices.SortStableFunc(missing, byRun)
	return missing
}

// hasCurve reports whether Curves draws a panel for these runs.
func hasCurve(runs []Run) bool {
	return slices.ContainsFunc(runs, func(r Run) bool { return slices.ContainsFunc(r.Metrics, playedEpisodes) })
}

// formatStat writes "mean ± std", the mean alone over one run (whose
// standard deviation over seeds is not zero but unknown), "–" without
// data, and notes n when fewer than the group's finished runs contribute.
func formatStat(s Stat, finished int, format string) string {
	if s.N == 0 || math.IsNaN(s.Mean) {
		return "–"
	}
	out := fmt.Sprintf(format, s.Mean)
	if s.N > 1 {
		out += fmt.Sprintf(" ± "+format, s.Std)
	}
	if s.N != finished {
		out += fmt.Sprintf(" (n=%d)", s.N)
	}
	return out
}

// cell escapes what would end a markdown table cell or line.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
