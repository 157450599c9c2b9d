package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/rl/report"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "plot training runs and compare them across algorithms and seeds in a markdown report",
		ArgsUsage: "RUNDIR...",
		Description: "Each RUNDIR is a run directory (docs/runs.md) or a sweep directory holding run directories one\n" +
			"level down. The report has one table per environment with a row per algorithm: the final evaluation\n" +
			"on --split (eval/SPLIT.json; a second split, --split test,unseen, adds a column with the success on it),\n" +
			"the last iteration's training success and the budget (optimiser steps,\n" +
			"environment steps, training tokens, minutes), as mean ± standard deviation over the finished runs'\n" +
			"seeds, then the runs that are not started, not finished or not evaluated. Where the runs log them it\n" +
			"adds the optimiser steps each method took to reach GRPO's final training success, StepAgent's step\n" +
			"agreement by cycle and NLAC's critic by iteration.\n" +
			"Each run's plots go to RUNDIR/plots (not with --run-plots=false, which leaves the run directories\n" +
			"as they are: a sweep's committed record, say); the training curves, one figure per environment, go\n" +
			"beside the report as OUT-curves-ENV.png.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "write the report to `FILE` (markdown; required)"},
			&cli.StringSliceFlag{Name: "split", Value: cli.NewStringSlice(report.DefaultSplit), Usage: "compare the final evaluations on this split (eval/SPLIT.json); more splits (comma-separated or repeated) add a success column each"},
			&cli.StringFlag{Name: "title", Usage: "the report's title"},
			&cli.BoolFlag{Name: "run-plots", Value: true, Usage: "write each run's plots to RUNDIR/plots (false: only read the run directories)"},
		},
		Action: runReport,
	}
}

func runReport(c *cli.Context) error {
	args, err := argsAndLateFlags(c)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return errors.New("report: name at least one run directory (or a sweep directory holding runs)")
	}
	out := c.String("out")
	if out == "" {
		return errors.New("--out: name the markdown file to write the report to (e.g. --out report.md)")
	}
	splits := splitList(c.StringSlice("split"))
	if len(splits) == 0 {
		return errors.New("--split: name an evaluation split (e.g. test, or test,unseen)")
	}
	if err := checkWritable(out); err != nil {
		return err
	}

	var runs []report.Run
	var unreadable []report.Unreadable
	seen := map[string]bool{}
	// cells finds a seed given twice from two directories (a sweep's out
	// folder and its record): it would count twice in its method's mean.
	type cell struct {
		env, algorithm, model string
		seed                  uint64
	}
	cells := map[cell]string{}
	for _, arg := range args {
		rs, broken, err := report.ReadRuns(arg)
		if err != nil {
			return err
		}
		for _, u := range broken {
			fmt.Fprintf(c.App.ErrWriter, "report: left out %s\n", u)
		}
		unreadable = append(unreadable, broken...)
		for _, r := range rs {
			// A run named both on its own and through its sweep would
			// count as two seeds.
			key := r.Dir
			if abs, err := filepath.Abs(r.Dir); err == nil {
				key = abs
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			k := cell{r.Env, r.Algorithm, r.Model, r.Seed}
			if other, ok := cells[k]; ok {
				return fmt.Errorf("%s and %s are both seed %d of %s on %s with %s: a report counts each seed once, name one of them (a sweep's out folder and its record hold the same runs)",
					other, r.Dir, r.Seed, r.Algorithm, r.Env, r.Model)
			}
			cells[k] = r.Dir
			runs = append(runs, r)
		}
	}

	write := report.Write
	if !c.Bool("run-plots") {
		write = report.WriteComparison
	}
	t, curves, err := write(runs, out, report.Options{Split: splits[0], AlsoSplits: splits[1:], Title: c.String("title"), Unreadable: unreadable})
	if err != nil {
		return err
	}
	envs := map[string]bool{}
	algorithms := map[string]bool{}
	for _, g := range t.Groups {
		envs[g.Env], algorithms[g.Algorithm] = true, true
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d runs, %d environments, %d algorithms; %d runs missing from the comparison on %s; %d figures\n",
		out, len(runs), len(envs), len(algorithms), len(t.Missing)+len(unreadable), t.Split, len(curves))
	return nil
}
