package report

import (
	"bufio"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// The per-cycle metrics of a StepAgent run (docs/stepagent.md), measured at
// each cycle's inspection, before its reflection: cycle 1 measures the
// starting policy. The claim under test is that they rise cycle by cycle.
const (
	stepAgreement   = "step_agreement"   // share of steps whose greedy action is the expert's
	sampleAgreement = "sample_agreement" // share of sampled actions that are
	expertLoglik    = "expert_loglik"    // mean log-probability per token of the expert's actions
	// The same two on the held-out probe (stepagent.probe): the same steps
	// every cycle, where the others are of each cycle's own tasks.
	probeAgreement = "probe_agreement"
	probeLoglik    = "probe_loglik"
	// finalSuffix names a measure taken once more after the last cycle's
	// reflection, logged with that cycle (the probe's): the policy the
	// run ends with, shown as the cycle after the last.
	finalSuffix = "_final"
)

// agreementMeasures are the pairs of metrics the agreement table and
// figures show: on the cycle's inspected steps, and on the probe.
var agreementMeasures = []struct{ agree, loglik, name, table string }{
	{stepAgreement, expertLoglik, "", "on each cycle's inspected steps (new tasks every cycle)"},
	{probeAgreement, probeLoglik, "probe", "on the held-out probe (the same steps every cycle)"},
}

// hasMetric reports whether any iteration of the run logs the named metric.
func hasMetric(r Run, key string) bool {
	return slices.ContainsFunc(r.Metrics, func(it Iteration) bool {
		_, ok := it.Metrics[key]
		return ok
	})
}

// seriesName is a line's legend: the algorithm, and the measure's name
// when it has one.
func seriesName(base, measure string) string {
	if measure == "" {
		return base
	}
	return base + ", " + measure
}

// cycleMean is a metric at one cycle, averaged over the seeds that logged it.
type cycleMean struct {
	Cycle int
	Mean  float64
	Seeds int
}

// meanByCycle averages the metric named key over the runs, cycle by
// cycle; key+finalSuffix, where a run logs it, counts as the next cycle's.
func meanByCycle(runs []Run, key string) []cycleMean {
	sums := map[int]*cycleMean{}
	add := func(cycle int, v float64) {
		c := sums[cycle]
		if c == nil {
			c = &cycleMean{Cycle: cycle}
			sums[cycle] = c
		}
		c.Mean += v
		c.Seeds++
	}
	for _, r := range runs {
		for _, it := range r.Metrics {
			if v, ok := it.Metrics[key]; ok {
				add(it.Iteration, v)
			}
			if v, ok := it.Metrics[key+finalSuffix]; ok {
				add(it.Iteration+1, v)
			}
		}
	}
	out := make([]cycleMean, 0, len(sums))
	for _, c := range sums {
		c.Mean /= float64(c.Seeds)
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b cycleMean) int { return a.Cycle - b.Cycle })
	return out
}

func cycleXYs(ms []cycleMean) plotter.XYs {
	xys := make(plotter.XYs, len(ms))
	for i, m := range ms {
		xys[i] = plotter.XY{X: float64(m.Cycle), Y: m.Mean}
	}
	return xys
}

// agreementFigure is a run's agreement.png: the step agreement (greedy and
// of the samples) and the expert actions' log-likelihood, by cycle, and
// the same on the held-out probe where the run measured one.
func agreementFigure(run Run) ([][]*plot.Plot, vg.Length, vg.Length) {
	if !hasMetric(run, stepAgreement) {
		return nil, 0, 0
	}
	runs := []Run{run}
	agree, loglik := agreementPanels(runTitle(run), "share equivalent to the expert's")
	addLine(agree, cycleXYs(meanByCycle(runs, stepAgreement)), "greedy action", 0)
	addLine(agree, cycleXYs(meanByCycle(runs, sampleAgreement)), "sampled actions", 1)
	addLine(loglik, cycleXYs(meanByCycle(runs, expertLoglik)), "inspected steps", 0)
	if hasMetric(run, probeAgreement) {
		addLine(agree, cycleXYs(meanByCycle(runs, probeAgreement)), "greedy action, held-out probe", 2)
		addLine(loglik, cycleXYs(meanByCycle(runs, probeLoglik)), "held-out probe", 2)
	}
	return [][]*plot.Plot{{agree, loglik}}, 11 * vg.Inch, 4 * vg.Inch
}

// agreementPanels are the two empty panels of an agreement figure: the
// agreement (0 to 1, its y axis labelled agreeLabel) and the expert
// actions' log-likelihood, by cycle.
func agreementPanels(title, agreeLabel string) (agree, loglik *plot.Plot) {
	agree = newPlot(title+": step agreement", "cycle", agreeLabel)
	agree.Y.Min, agree.Y.Max = 0, 1
	loglik = newPlot(title+": expert actions", "cycle", "log-likelihood per token")
	for _, p := range []*plot.Plot{agree, loglik} {
		p.Legend.Top, p.Legend.Left = true, true
	}
	return agree, loglik
}

// AgreementFile is the name of the step-agreement figure of env that
// WriteMarkdown links to: prefix + "agreement-" + env + ".png".
func AgreementFile(prefix, env string) string {
	return prefix + "agreement-" + fileSafe(env) + ".png"
}

// WriteAgreement writes, for each env with runs that log step agreement, a
// figure of the greedy step agreement and the expert actions'
// log-likelihood by cycle, one line per algorithm (and per algorithm on its
// held-out probe) averaged over its seeds, into dir as
// AgreementFile(prefix, env); it returns the paths written.
func WriteAgreement(runs []Run, dir, prefix string) ([]string, error) {
	var paths []string
	for _, env := range envsOf(runs) {
		envRuns := runsWith(runsOfEnv(runs, env), stepAgreement)
		if len(envRuns) == 0 {
			continue
		}
		agree, loglik := agreementPanels(env, "greedy actions equivalent to the expert's")
		line := 0
		for _, alg := range algorithmsOf(envRuns) {
			algRuns := runsOfAlgorithm(envRuns, alg)
			name := fmt.Sprintf("%s (%d %s)", orUnknown(alg), len(algRuns), plural(len(algRuns), "seed", "seeds"))
			for _, m := range agreementMeasures {
				if len(runsWith(algRuns, m.agree)) == 0 {
					continue
				}
				addLine(agree, cycleXYs(meanByCycle(algRuns, m.agree)), seriesName(name, m.name), line)
				addLine(loglik, cycleXYs(meanByCycle(algRuns, m.loglik)), seriesName(name, m.name), line)
				line++
			}
		}
		p := filepath.Join(dir, AgreementFile(prefix, env))
		if err := savePNG(p, [][]*plot.Plot{{agree, loglik}}, 11*vg.Inch, 4*vg.Inch); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// runsWith are the runs that log the named metric.
func runsWith(runs []Run, key string) []Run {
	var out []Run
	for _, r := range runs {
		if hasMetric(r, key) {
			out = append(out, r)
		}
	}
	return out
}

// writeAgreementTable writes the markdown tables of the greedy step
// agreement by cycle of env's runs that log it (nothing when none do): one
// on each cycle's inspected steps, one on the held-out probe where runs
// have one; with the figure's link when figureDir is set. A cell averaged
// over fewer seeds than cycle 1 says how many (n=).
func writeAgreementTable(bw *bufio.Writer, runs []Run, env, figureDir, prefix string) {
	runs = runsWith(runs, stepAgreement)
	if len(runs) == 0 {
		return
	}
	cycles := lastIteration(runs)
	fmt.Fprintf(bw, "\nStep agreement by cycle: the share of expert steps whose greedy action is equivalent to the expert's, "+
		"and in brackets the expert actions' log-likelihood per token, measured at each cycle's inspection before its reflection "+
		"(cycle 1 is the starting policy; *final*, on the probe, the policy after the last cycle's reflection); mean over the seeds that reached the cycle, of runs finished or not.\n")
	for _, m := range agreementMeasures {
		measured := runsWith(runs, m.agree)
		if len(measured) == 0 {
			continue
		}
		columns := cycles
		final := len(runsWith(measured, m.agree+finalSuffix)) > 0
		if final {
			columns++
		}
		fmt.Fprintf(bw, "\n%s:\n\n", strings.ToUpper(m.table[:1])+m.table[1:])
		writeByIterationHeader(bw, "cycle", cycles, "---:", final)
		for _, alg := range algorithmsOf(measured) {
			algRuns := runsOfAlgorithm(measured, alg)
			agree := meanByCycle(algRuns, m.agree)
			loglik := meanByCycle(algRuns, m.loglik)
			fmt.Fprintf(bw, "| %s | %d |", cell(orUnknown(alg)), len(algRuns))
			for c := 1; c <= columns; c++ {
				fmt.Fprintf(bw, " %s |", agreementCell(agree, loglik, c))
			}
			fmt.Fprintln(bw)
		}
	}
	if figureDir != "" {
		fmt.Fprintf(bw, "\n![step agreement on %s by cycle, mean over seeds](%s)\n", cell(orUnknown(env)), path.Join(figureDir, AgreementFile(prefix, env)))
	}
}

// atCycle is the mean at cycle (iteration) c, false where no seed got
// there.
func atCycle(ms []cycleMean, c int) (cycleMean, bool) {
	i := slices.IndexFunc(ms, func(m cycleMean) bool { return m.Cycle == c })
	if i < 0 {
		return cycleMean{}, false
	}
	return ms[i], true
}

// lastIteration is the latest iteration any of the runs logged.
func lastIteration(runs []Run) int {
	n := 0
	for _, r := range runs {
		for _, it := range r.Metrics {
			n = max(n, it.Iteration)
		}
	}
	return n
}

// writeByIterationHeader writes the head of a table with a row per
// algorithm and a column per iteration (named label, e.g. "cycle"), and
// one more, "final", where final says; aligned as align says ("---:" or
// "---").
func writeByIterationHeader(bw *bufio.Writer, label string, n int, align string, final bool) {
	fmt.Fprint(bw, "| algorithm | seeds |")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(bw, " %s %d |", label, i)
	}
	columns := n
	if final {
		fmt.Fprint(bw, " final |")
		columns++
	}
	fmt.Fprint(bw, "\n|---|---:|")
	for range columns {
		fmt.Fprint(bw, align+"|")
	}
	fmt.Fprintln(bw)
}

// agreementCell is "agreement (log-likelihood)" at cycle c, with n where
// fewer seeds than the others got there; "–" where no seed did.
func agreementCell(agree, loglik []cycleMean, c int) string {
	a, ok := atCycle(agree, c)
	if !ok {
		return "–"
	}
	out := fmt.Sprintf("%.3f", a.Mean)
	if l, ok := atCycle(loglik, c); ok {
		out += fmt.Sprintf(" (%.3f)", l.Mean)
	}
	if n := agree[0].Seeds; a.Seeds != n {
		out += fmt.Sprintf(" (n=%d)", a.Seeds)
	}
	return out
}
