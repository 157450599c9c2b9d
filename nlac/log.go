package nlac

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// writeLog writes an iteration's records as Markdown a user can read:
// per transition, the state, the action, the critic's target, futures,
// critiques and judgements, the refinements and what the actor learnt.
func writeLog(path string, it int, method string, recs []Record, c Counts) error {
	return writeAtomic(path, false, func(w io.Writer) error {
		fmt.Fprintf(w, "# Iteration %d (%s)\n\n", it, method)
		fmt.Fprintf(w, "%d transitions: %d judgements, %.2f judged optimal%s, %d given when asked (%d optimal), %d unparsed; %d refinements, %d invalid, %d repeating the action, %d unchecked (environment errors); %d actions the environment rejected not distilled; %d actions changed; %d distilled; %d too long; %d without a backup target",
			c.Transitions, c.Judgements, share(c.Optimal, c.Judgements), c.outcomeNote(), c.Asked, c.AskedOptimal, c.Unparsed, c.Refinements, c.InvalidRefinements, c.UnchangedRefinements, c.CheckErrors, c.RejectedKept, c.Changed, c.Distilled, c.TooLong, c.NoTarget)
		if method == "nlql" {
			fmt.Fprintf(w, "; %d states with no candidate judged optimal", c.NoOptimal)
		}
		fmt.Fprintf(w, "%s%s%s.\n", c.rankNote(), c.samplesNote(), c.replacedNote())
		for i := range recs {
			WriteRecord(w, &recs[i])
		}
		return nil
	})
}

// outcomeNote says how the first-round judgements split by the episodes'
// outcomes and by the expert's actions ("" when none were counted, as in
// NLQL).
func (c Counts) outcomeNote() string {
	o, e := c.ByOutcome, c.ByExpert
	if o.With+o.Without == 0 {
		return ""
	}
	note := fmt.Sprintf(" (%d/%d of the actions of successful episodes, %d/%d of failed ones%s", o.OptimalWith, o.With, o.OptimalWithout, o.Without, aucNote(o))
	if e.With+e.Without > 0 {
		note += fmt.Sprintf("; %d/%d of the actions the expert takes there, %d/%d of others%s", e.OptimalWith, e.With, e.OptimalWithout, e.Without, aucNote(e))
	}
	if f := c.Foresight.note(); f != "" {
		note += "; " + f
	}
	return note + ")"
}

// aucNote gives the AUC of a split's probabilities of "optimal" ("" when
// one side is empty).
func aucNote(s JudgedSplit) string {
	if a, ok := s.auc(); ok {
		return fmt.Sprintf(", AUC %.2f", a)
	}
	return ""
}

// WriteRecord writes one transition's record as a Markdown section.
func WriteRecord(w io.Writer, r *Record) {
	tr := &r.T.Episode.Trajectory
	verdict := "failure"
	if tr.Success {
		verdict = "success"
	}
	fmt.Fprintf(w, "\n## %s seed %d, step %d of %d (episode: %s, score %.2f)\n\n", tr.Split, tr.Seed, r.T.Step+1, len(tr.Steps), verdict, tr.Score)
	fmt.Fprintf(w, "Observation: %s\n\n", quote(clip(r.T.step().Observation, 400)))
	fmt.Fprintf(w, "Action: %s (reward %.2f)\n\n", quote(r.Action), r.T.step().Reward)
	if r.Target != "" {
		if r.NextAction != "" {
			fmt.Fprintf(w, "Bellman backup, a' = %s:\n%s\n\n", quote(r.NextAction), block(r.Target))
		} else {
			fmt.Fprintf(w, "Bellman backup (end of the episode):\n%s\n\n", block(r.Target))
		}
	}
	for k, rd := range r.Rounds {
		fmt.Fprintf(w, "Round %d, action %s\n\n", k+1, quote(rd.Action))
		if rd.Foreseen {
			fmt.Fprintf(w, "The successor model's p(success): %s\n\n", probability(rd.PSuccess))
		}
		for f, fu := range rd.Futures {
			fmt.Fprintf(w, "Future %d:\n%s\n\n", f+1, block(fu))
		}
		note := judgementNote(rd.Judgement, rd.POptimal, rd.Asked)
		if rd.Ranked {
			note = fmt.Sprintf("%s by rank; the critique's own: %s", rd.Judgement, judgementNote(rd.Written, rd.POptimal, rd.Asked))
		}
		if rd.FirstCritique != "" {
			fmt.Fprintf(w, "Critique as first written, overruled:\n%s\n\n", block(rd.FirstCritique))
			note += "; written again to condemn the action, not scored"
		}
		fmt.Fprintf(w, "Critique (%s):\n%s\n\n", note, block(rd.Critique))
		switch {
		case rd.FromActor && rd.Valid:
			fmt.Fprintf(w, "Replacement: the actor's candidate %d below, rated best: %s\n\n", rd.Sample+1, quote(rd.Refined))
		case rd.FromActor:
			fmt.Fprintf(w, "Replacement: none (%s)\n\n", rd.Unreplaced)
		case rd.RefinedText != "" || rd.Judgement == Suboptimal:
			valid := "invalid"
			if rd.Valid {
				valid = "valid"
			}
			if rd.Sample > 0 {
				valid += fmt.Sprintf(", sample %d", rd.Sample+1)
			}
			fmt.Fprintf(w, "Refinement (%s): %s\n\n", valid, quote(clip(rd.RefinedText, 300)))
		}
	}
	for k, c := range r.Candidates {
		fmt.Fprintf(w, "Candidate %d: %s, %s\n", k+1, quote(c.Action), judgementNote(c.Judgement, c.POptimal, c.Asked))
		for f, fu := range c.Futures {
			fmt.Fprintf(w, "Future %d:\n%s\n", f+1, block(fu))
		}
		fmt.Fprintf(w, "Critique:\n%s\n\n", block(c.Critique))
	}
	if r.Distill != "" {
		fmt.Fprintf(w, "**Distilled: %s** (%s)\n", quote(r.Distill), r.Why)
	} else {
		fmt.Fprintf(w, "**Nothing distilled** (%s)\n", r.Why)
	}
}

// block indents a model's text as a Markdown quote.
func block(s string) string {
	if strings.TrimSpace(s) == "" {
		return "> (empty)"
	}
	return "> " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n> ")
}

// quote shows a short text inline.
func quote(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }

// rankNote says how many verdicts by rank overruled the critiques'
// (nlac.refine_share; "" when none did), and how many critiques were
// written again to condemn their action, or could not be.
func (c Counts) rankNote() string {
	if c.Overruled == 0 && c.Rewritten == 0 && c.Unwritten == 0 {
		return ""
	}
	note := fmt.Sprintf("; %d verdicts by rank (nlac.refine_share) overruling the critiques'", c.Overruled)
	if c.Rewritten > 0 || c.Unwritten > 0 {
		note += fmt.Sprintf(", %d critiques written again to condemn their action (nlac.rewrite_overruled), %d that could not be", c.Rewritten, c.Unwritten)
	}
	return note
}

// samplesNote counts the sampled refinements that repeated their action,
// those of actions the environment had rejected among them, and the
// refinements taken from a sample after the first (nlac.refine_samples);
// "" when there are none.
func (c Counts) samplesNote() string {
	if c.Resampled == 0 && c.RepeatingSamples == 0 {
		return ""
	}
	return fmt.Sprintf("; %d sampled refinements repeating their action, %d refinements taken from a sample after the first (nlac.refine_samples)", c.RepeatingSamples, c.Resampled)
}

// replacedNote counts the condemned actions replaced by the actor's
// candidates (nlac.replace_with actor) and those that were not; "" when
// there were none.
func (c Counts) replacedNote() string {
	if c.Replaced == 0 && c.Unreplaced == 0 {
		return ""
	}
	return fmt.Sprintf("; %d condemned actions replaced by the actor's candidate rated best, %d not (nlac.replace_with actor)", c.Replaced, c.Unreplaced)
}

// judgementNote names a judgement with the evaluator's probability of
// "optimal", and says when the evaluator gave it only when asked for it.
func judgementNote(j Judgement, pOptimal float64, asked bool) string {
	note := fmt.Sprintf("%s, p(optimal) %s", j, probability(pOptimal))
	if asked {
		note += ", given when asked"
	}
	return note
}

// probability writes p with two decimals, or, within 0.01 of 0 or 1,
// with the digits that tell it from 0 or 1 (0.0042, 0.99987, 1 - 3.1e-09):
// a small evaluator rates most actions "optimal" with p near 1, and
// verdicts by rank and the choice among candidates are made between
// such values, which two decimals would all write as 1.00.
func probability(p float64) string {
	q := min(p, 1-p)
	switch {
	case q >= 0.01 || q <= 0:
		return fmt.Sprintf("%.2f", p)
	case q < 1e-6 && p > 0.5:
		return fmt.Sprintf("1 - %.1e", q)
	case q < 1e-6:
		return fmt.Sprintf("%.1e", p)
	}
	// Two significant digits of the distance from 0 or 1.
	return strconv.FormatFloat(p, 'f', 1-int(math.Floor(math.Log10(q))), 64)
}
