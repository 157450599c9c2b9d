package report

import (
	"bufio"
	"fmt"
	"strings"
)

// The per-iteration tallies of an NLAC run's critic (docs/nlac.md) that
// the report shows: whether its verdicts tell actions apart, and whether
// its refinements change any.
const (
	judgedOptimal    = "judged_optimal"     // share of the batch's judgements that were "optimal"
	optimalInSuccess = "optimal_in_success" // the same over actions of successful episodes
	optimalInFailure = "optimal_in_failure" // and of failed ones
	optimalOfExpert  = "optimal_of_expert"  // of actions that are the expert's there
	optimalOfOthers  = "optimal_of_others"  // and of the others
	aucByOutcome     = "auc_by_outcome"     // how well the critic's probabilities of "optimal" tell successful episodes' actions from failed ones'
	aucByExpert      = "auc_by_expert"      // and the expert's actions from others
	refinements      = "refinements"        // refinements asked for
	changedActions   = "changed_actions"    // valid refinements unlike the action refined
	replaced         = "actor_replacements" // condemned actions replaced by the actor's candidate rated best (nlac.replace_with actor)
	unreplaced       = "unreplaced_actions" // and those none of whose candidates qualified
)

// writeCriticTable writes the table of the critic's verdicts and
// refinements by iteration of env's runs that log them (NLAC and its
// ablations; nothing when none do).
func writeCriticTable(bw *bufio.Writer, runs []Run, env string) {
	runs = runsWith(runs, judgedOptimal)
	if len(runs) == 0 {
		return
	}
	iterations := lastIteration(runs)
	fmt.Fprintf(bw, "\nThe critic by iteration on %s: the share of the batch's judgements that were optimal, in brackets the share "+
		"of the parsed first judgements of actions of successful and of failed episodes and, after \"expert's\", of actions that are and are not the expert's there "+
		"(where logged: a critic whose verdicts inform judges the first of each pair higher), with the AUC of its probabilities of \"optimal\" "+
		"between the two (0.5: they tell nothing apart), "+
		"and the actions its refinements changed of those refined (or, with nlac.replace_with actor, the condemned actions replaced by the actor's candidates of those condemned); mean over the seeds that reached the iteration.\n\n", cell(orUnknown(env)))
	writeByIterationHeader(bw, "iteration", iterations, "---", false)
	for _, alg := range algorithmsOf(runs) {
		algRuns := runsOfAlgorithm(runs, alg)
		means := map[string][]cycleMean{}
		for _, key := range []string{judgedOptimal, optimalInSuccess, optimalInFailure, optimalOfExpert, optimalOfOthers, aucByOutcome, aucByExpert, refinements, changedActions, replaced, unreplaced} {
			means[key] = meanByCycle(algRuns, key)
		}
		fmt.Fprintf(bw, "| %s | %d |", cell(orUnknown(alg)), len(algRuns))
		for i := 1; i <= iterations; i++ {
			fmt.Fprintf(bw, " %s |", criticCell(means, i))
		}
		fmt.Fprintln(bw)
	}
}

func shareOrDash(m cycleMean, ok bool) string {
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.2f", m.Mean)
}

// criticCell is "judged optimal (in success / in failure, AUC), changed
// of refined" (or "replaced of condemned") at iteration i; "–" where no
// seed got there.
func criticCell(means map[string][]cycleMean, i int) string {
	at := func(key string) (cycleMean, bool) { return atCycle(means[key], i) }
	judged, ok := at(judgedOptimal)
	if !ok {
		return "–"
	}
	out := fmt.Sprintf("%.2f", judged.Mean)
	var splits []string
	for _, pair := range [][4]string{{optimalInSuccess, optimalInFailure, aucByOutcome, ""}, {optimalOfExpert, optimalOfOthers, aucByExpert, "expert's "}} {
		with, okWith := at(pair[0])
		without, okWithout := at(pair[1])
		if !okWith && !okWithout {
			continue
		}
		split := fmt.Sprintf("%s%s / %s", pair[3], shareOrDash(with, okWith), shareOrDash(without, okWithout))
		if auc, ok := at(pair[2]); ok {
			split += fmt.Sprintf(", AUC %.2f", auc.Mean)
		}
		splits = append(splits, split)
	}
	if len(splits) > 0 {
		out += " (" + strings.Join(splits, "; ") + ")"
	}
	if r, ok := at(refinements); ok && r.Mean > 0 {
		c, _ := at(changedActions)
		out += fmt.Sprintf(", %.3g of %.3g changed", c.Mean, r.Mean)
	}
	if r, ok := at(replaced); ok {
		u, _ := at(unreplaced)
		if r.Mean+u.Mean > 0 {
			out += fmt.Sprintf(", %.3g of %.3g replaced", r.Mean, r.Mean+u.Mean)
		}
	}
	if n := means[judgedOptimal][0].Seeds; judged.Seeds != n {
		out += fmt.Sprintf(" (n=%d)", judged.Seeds)
	}
	return out
}
