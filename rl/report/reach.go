package report

import (
	"bufio"
	"fmt"
	"slices"
)

// reachReference is the algorithm whose final training success the others
// are timed to: the baseline NLAC's paper compares with.
const reachReference = "grpo"

// writeReach writes, when env has finished GRPO runs with a training
// success, how many optimiser steps the finished runs of each algorithm
// that plays training episodes took to first reach GRPO's final training
// success (mean over GRPO's seeds): the count when the first iteration
// at or above it played its episodes (playedAfter), a method's warm-up
// included, over the seeds that reached it.
func writeReach(bw *bufio.Writer, runs []Run, groups []Group, env string) {
	ref := slices.IndexFunc(groups, func(g Group) bool {
		return g.Env == env && g.Algorithm == reachReference && g.TrainSuccess.N > 0
	})
	if ref < 0 {
		return
	}
	target := groups[ref].TrainSuccess.Mean
	fmt.Fprintf(bw, "\nOptimiser steps to reach %s's final training success on %s (%.3f, mean over %d %s), "+
		"those the policy had taken when it played the episodes, counted from the run's start (a start from SFT is 0; a warm-up counts); "+
		"mean over the finished seeds that reached it:\n\n"+
		"| algorithm | seeds that reached it | optimiser steps |\n|---|---:|---:|\n",
		reachReference, cell(orUnknown(env)), target, groups[ref].TrainSuccess.N, plural(groups[ref].TrainSuccess.N, "seed", "seeds"))
	for _, alg := range algorithmsOf(runs) {
		var steps []float64
		played := 0
		for _, r := range runsOfAlgorithm(runs, alg) {
			if !r.Finished() || !slices.ContainsFunc(r.Metrics, playedEpisodes) {
				continue
			}
			played++
			// A small tolerance: a success rate written as a decimal
			// fraction of the episodes, compared with a mean of such.
			if i := slices.IndexFunc(r.Metrics, func(it Iteration) bool {
				return playedEpisodes(it) && it.Success >= target-1e-9
			}); i >= 0 {
				steps = append(steps, r.playedAfter(i))
			}
		}
		if played == 0 {
			continue
		}
		reached := "–"
		if len(steps) > 0 {
			reached = fmt.Sprintf("%.0f", newStat(steps).Mean)
		}
		fmt.Fprintf(bw, "| %s | %d of %d | %s |\n", cell(orUnknown(alg)), len(steps), played, reached)
	}
}
