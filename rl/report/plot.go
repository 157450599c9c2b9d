package report

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrl/agentrl/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot writes the run's figures into dir as PNG files:
//
//   - success.png: two panels side by side, the training success rate (and
//     the evaluations the run made during training, and the final
//     evaluations of a finished run) against gradient steps on the left and
//     against environment steps on the right. One file keeps the two views
//     of the same curve together; the right panel shows sample efficiency,
//     the left one optimisation progress.
//   - reward.png: the mean training reward against gradient steps (of
//     the iterations that played training episodes).
//   - loss.png: the loss and each named loss against gradient steps.
//   - agreement.png (StepAgent runs): the step agreement and the expert
//     actions' log-likelihood by cycle.
//
// A figure without data (a run that has not finished an iteration, a run
// that logs no loss, an SFT run not yet evaluated) is not written, and an
// older file of that name is removed; dir is only created when there is
// something to write. Each file is replaced atomically, so a report read
// while a run is being plotted never shows a truncated image.
func Plot(run Run, dir string) error {
	figures := []struct {
		name string
		make func(Run) ([][]*plot.Plot, vg.Length, vg.Length)
	}{
		{"success.png", successFigure},
		{"reward.png", rewardFigure},
		{"loss.png", lossFigure},
		{"agreement.png", agreementFigure},
	}
	for _, f := range figures {
		plots, w, h := f.make(run)
		path := filepath.Join(dir, f.name)
		if plots == nil {
			// A figure drawn before the run's data said otherwise (an
			// older version's reward plot of an SFT run) goes.
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("plot %s: %w", run.Dir, err)
			}
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("plot %s: %w", run.Dir, err)
		}
		if err := savePNG(path, plots, w, h); err != nil {
			return fmt.Errorf("plot %s: %w", run.Dir, err)
		}
	}
	return nil
}

// Curves draws the training success rate against gradient steps of each
// algorithm, averaged over its seeds, into the PNG file at path: one panel
// per env, one line per algorithm. Seeds are aligned by iteration index;
// where seeds have run for different numbers of iterations, a point averages
// the seeds that reached it, and its gradient step is the mean of theirs.
// Runs without iterations that played episodes are left out; when no run
// has any, nothing is written.
func Curves(runs []Run, path string) error {
	// An algorithm keeps its colour across panels.
	colors := map[string]int{}
	for i, alg := range algorithmsOf(runs) {
		colors[alg] = i
	}
	var panels []*plot.Plot
	for _, env := range envsOf(runs) {
		p := curvePanel(env, runsOfEnv(runs, env), colors)
		if p != nil {
			panels = append(panels, p)
		}
	}
	if len(panels) == 0 {
		return nil
	}
	grid := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		grid[i] = []*plot.Plot{p}
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return savePNG(path, grid, 7*vg.Inch, vg.Length(len(panels))*4*vg.Inch)
}

// WriteCurves writes one Curves figure per env into dir, named
// CurvesFile(prefix, env) as WriteMarkdown links them, and returns the
// paths it wrote. Envs whose runs have no iteration that played episodes
// get no file.
func WriteCurves(runs []Run, dir, prefix string) ([]string, error) {
	var paths []string
	for _, env := range envsOf(runs) {
		envRuns := runsOfEnv(runs, env)
		if !hasCurve(envRuns) {
			continue
		}
		path := filepath.Join(dir, CurvesFile(prefix, env))
		if err := Curves(envRuns, path); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// CurvesFile is the name of the curve figure of env that WriteMarkdown links
// to: prefix + "curves-" + env + ".png", with characters that do not belong
// in a file name or a link replaced by "_".
func CurvesFile(prefix, env string) string {
	return prefix + "curves-" + fileSafe(env) + ".png"
}

func fileSafe(s string) string {
	if s == "" {
		return "unknown"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// curvePanel returns the panel of one env, or nil when none of its runs has
// an iteration that played episodes.
func curvePanel(env string, runs []Run, colors map[string]int) *plot.Plot {
	p := newPlot(env+": training success", "gradient steps", "success rate")
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = true, true
	drawn := false
	for _, alg := range algorithmsOf(runs) {
		algRuns := runsOfAlgorithm(runs, alg)
		xys := meanCurve(algRuns)
		if len(xys) == 0 {
			continue
		}
		seeds := 0
		for _, r := range algRuns {
			if slices.ContainsFunc(r.Metrics, playedEpisodes) {
				seeds++
			}
		}
		addLine(p, xys, fmt.Sprintf("%s (%d %s)", orUnknown(alg), seeds, plural(seeds, "seed", "seeds")), colors[alg])
		drawn = true
	}
	if !drawn {
		return nil
	}
	return p
}

// meanCurve averages the runs' training success by iteration index, over
// the runs whose iteration played training episodes.
func meanCurve(runs []Run) plotter.XYs {
	var xys plotter.XYs
	for i := 0; ; i++ {
		var x, y float64
		k, reached := 0, false
		for _, r := range runs {
			if i < len(r.Metrics) {
				reached = true
				if it := r.Metrics[i]; playedEpisodes(it) {
					x += r.playedAfter(i)
					y += it.Success
					k++
				}
			}
		}
		if !reached {
			return xys
		}
		if k > 0 {
			xys = append(xys, plotter.XY{X: x / float64(k), Y: y / float64(k)})
		}
	}
}

// playedAtGradSteps is the metric in which rl records the optimiser steps
// (of every adapter) a run had taken when an iteration played its
// training episodes.
const playedAtGradSteps = "played_at_grad_steps"

// playedAfter is the number of optimiser steps the run had taken when
// iteration i (an index of r.Metrics) played its training episodes. An
// iteration plays its episodes before it updates the policy, so its
// success and reward belong there, not at its own count (an evaluation
// the iteration ends with belongs at its own count); a warm-up or warm
// start may come before the first iteration plays. Runs that do not log
// it are placed at the end of the iteration before (0 for the first).
func (r Run) playedAfter(i int) float64 {
	if v, ok := r.Metrics[i].Metrics[playedAtGradSteps]; ok {
		return v
	}
	if i == 0 {
		return 0
	}
	return r.Metrics[i-1].GradSteps
}

// playedEpisodes reports whether the iteration played training episodes,
// so that its success rate means something: SFT epochs and StepAgent
// cycles play none.
func playedEpisodes(it Iteration) bool { return it.Episodes > 0 }

func successFigure(run Run) ([][]*plot.Plot, vg.Length, vg.Length) {
	evaluated := slices.ContainsFunc(run.Metrics, func(it Iteration) bool { return it.Eval != nil }) ||
		(run.Finished() && len(run.Evals) > 0)
	if len(run.Metrics) == 0 || !(evaluated || slices.ContainsFunc(run.Metrics, playedEpisodes)) {
		return nil, 0, 0
	}
	byGrad := successPanel(run, "gradient steps", run.playedAfter, func(it Iteration) float64 { return it.GradSteps }, run.State.GradSteps)
	envSteps := func(it Iteration) float64 { return it.EnvSteps }
	byEnv := successPanel(run, "environment steps", func(i int) float64 { return envSteps(run.Metrics[i]) }, envSteps, run.State.EnvSteps)
	return [][]*plot.Plot{{byGrad, byEnv}}, 11 * vg.Inch, 4 * vg.Inch
}

// successPanel plots training success and evaluations against the x that
// x picks from an iteration; final is the x of the run's end, where the
// final evaluations of a finished run go.
func successPanel(run Run, xLabel string, trainX func(i int) float64, evalX func(Iteration) float64, final float64) *plot.Plot {
	p := newPlot(runTitle(run)+": success", xLabel, "success rate")
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = true, true
	var train plotter.XYs
	evals := map[string]plotter.XYs{}
	for i, it := range run.Metrics {
		if playedEpisodes(it) {
			train = append(train, plotter.XY{X: trainX(i), Y: it.Success})
		}
		if it.Eval != nil {
			evals[it.Eval.Split] = append(evals[it.Eval.Split], plotter.XY{X: evalX(it), Y: it.Eval.Success})
		}
	}
	n := 0
	if len(train) > 0 {
		addLine(p, train, "training", n)
		n++
	}
	for _, split := range sortedKeys(evals) {
		addLine(p, evals[split], "eval ("+orUnknown(split)+")", n)
		n++
	}
	// An evaluation of an unfinished run is of an intermediate adapter
	// whose place on the x axis is not recorded.
	if run.Finished() {
		for _, split := range sortedKeys(run.Evals) {
			s, err := plotter.NewScatter(plotter.XYs{{X: final, Y: run.Evals[split].Summary.SuccessRate}})
			if err != nil {
				continue
			}
			s.GlyphStyle.Color = plotutil.Color(n)
			s.GlyphStyle.Shape = draw.CrossGlyph{}
			s.GlyphStyle.Radius = vg.Points(5)
			p.Add(s)
			p.Legend.Add("final eval ("+split+")", s)
			n++
		}
	}
	return p
}

func rewardFigure(run Run) ([][]*plot.Plot, vg.Length, vg.Length) {
	var xys plotter.XYs
	for i, it := range run.Metrics {
		if playedEpisodes(it) {
			xys = append(xys, plotter.XY{X: run.playedAfter(i), Y: it.Reward})
		}
	}
	if len(xys) == 0 {
		return nil, 0, 0
	}
	p := newPlot(runTitle(run)+": reward", "gradient steps", "mean training reward")
	addLine(p, xys, "", 0)
	return [][]*plot.Plot{{p}}, 7 * vg.Inch, 4 * vg.Inch
}

func lossFigure(run Run) ([][]*plot.Plot, vg.Length, vg.Length) {
	loss, named := lossLines(run)
	if len(loss) == 0 && len(named) == 0 {
		return nil, 0, 0
	}
	p := newPlot(runTitle(run)+": loss", "gradient steps", "loss")
	// Losses mostly fall: the top right is where the lines are not.
	p.Legend.Top = true
	n := 0
	if len(loss) > 0 {
		addLine(p, loss, "loss", n)
		n++
	}
	for _, name := range sortedKeys(named) {
		addLine(p, named[name], name, n)
		n++
	}
	return [][]*plot.Plot{{p}}, 7 * vg.Inch, 4 * vg.Inch
}

// lossLines are the points of the loss figure: each named loss where an
// iteration logged it, and the iteration's loss where it logged no named
// one (every algorithm that names its losses logs its loss as one of
// them). An iteration without optimiser steps (before the first update,
// or algorithms that train nothing) logs no loss; nor does a StepAgent
// cycle whose policy update was skipped: their zero is absence, not a
// loss of zero.
func lossLines(run Run) (loss plotter.XYs, named map[string]plotter.XYs) {
	named = map[string]plotter.XYs{}
	prev := 0.0
	for _, it := range run.Metrics {
		stepped := it.GradSteps > prev
		prev = it.GradSteps
		if len(it.Losses) == 0 && (stepped || it.Loss != 0) {
			loss = append(loss, plotter.XY{X: it.GradSteps, Y: it.Loss})
		}
		for name, v := range it.Losses {
			named[name] = append(named[name], plotter.XY{X: it.GradSteps, Y: v})
		}
	}
	return loss, named
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// addLine adds xys as a line with points (a single iteration still shows)
// in the i-th colour; an empty name adds no legend entry.
func addLine(p *plot.Plot, xys plotter.XYs, name string, i int) {
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		// NewLinePoints rejects NaN and infinite values only; such a
		// series has nothing to draw.
		return
	}
	c := plotutil.Color(i)
	l.LineStyle.Color = c
	l.LineStyle.Width = vg.Points(1.5)
	s.GlyphStyle.Color = c
	s.GlyphStyle.Shape = plotutil.Shape(i)
	s.GlyphStyle.Radius = vg.Points(2)
	p.Add(l, s)
	if name != "" {
		p.Legend.Add(name, l, s)
	}
}

// savePNG renders a grid of plots (rows of columns) into a w×h PNG and
// writes it to path atomically.
func savePNG(path string, grid [][]*plot.Plot, w, h vg.Length) error {
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{
		Rows: len(grid), Cols: len(grid[0]),
		PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2,
	}
	canvases := plot.Align(grid, tiles, dc)
	for i, row := range grid {
		for j, p := range row {
			p.Draw(canvases[i][j])
		}
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}

func runTitle(r Run) string {
	return fmt.Sprintf("%s on %s, seed %d", orUnknown(r.Algorithm), orUnknown(r.Env), r.Seed)
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// envsOf returns the runs' envs, sorted.
func envsOf(runs []Run) []string { return distinct(runs, func(r Run) string { return r.Env }) }

// algorithmsOf returns the runs' algorithms, sorted.
func algorithmsOf(runs []Run) []string {
	return distinct(runs, func(r Run) string { return r.Algorithm })
}

// distinct returns the distinct values of key over the runs, sorted.
func distinct(runs []Run, key func(Run) string) []string {
	var out []string
	for _, r := range runs {
		if k := key(r); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func runsOfEnv(runs []Run, env string) []Run {
	var out []Run
	for _, r := range runs {
		if r.Env == env {
			out = append(out, r)
		}
	}
	return out
}

func runsOfAlgorithm(runs []Run, alg string) []Run {
	var out []Run
	for _, r := range runs {
		if r.Algorithm == alg {
			out = append(out, r)
		}
	}
	return out
}
