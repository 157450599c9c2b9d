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
	if target <= 0 {
		return // every run reaches nothing on its first episodes
	}
	fmt.Fprintf(bw, "\nOptimiser steps to reach %s's final training success on %s (%.3f, mean over %d %s): "+
		"the steps of every adapter (a critic's and a warm-up's too) the run had taken when it played those episodes, "+
		"0 where its first episodes reached it; mean over the finished seeds that reached it. "+
		"Training episodes are sampled at each method's exploration temperature (ETO's `eto.temperature`).\n\n"+
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
