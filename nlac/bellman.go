package nlac

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The language Bellman backup builds the successor model's target for a
// transition (s, a, r, s'): at the end of an episode, the true outcome;
// otherwise what really happened next (s', r) merged with the target
// successor model's prediction d' of what follows a' ~ pi(s'), the near
// future in more detail than the distant one (the text analogue of
// discounting).

// outcome is the line of every future description that says how the
// episode really ended, which the evaluator's judgement rests on.
func outcome(e *Episode, after int) string {
	tr := &e.Trajectory
	verdict := "failure"
	if tr.Success {
		verdict = "success"
	}
	return fmt.Sprintf("%s (score %.2f%s).", outcomeLine(verdict), tr.Score, stepsLater(after))
}

// stepsLater is how an outcome line counts the steps to the end.
func stepsLater(after int) string {
	switch {
	case after == 1:
		return ", 1 step later"
	case after > 1:
		return fmt.Sprintf(", %d steps later", after)
	}
	return ""
}

// outcomeCount parses an outcome line in outcome's form: what precedes
// its count of steps, and the count (absent at the last step).
var outcomeCount = regexp.MustCompile(`^(Outcome: \w+ \(score [^,)]*)(?:, (\d+) steps? later)?\)\.?$`)

// oneStepEarlier is an outcome line predicted at the next state as seen
// from this one: one step more to the end. A line not in outcome's form
// (a model's free text) stays as it is.
func oneStepEarlier(line string) string {
	m := outcomeCount.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return line
	}
	after := 1
	if m[2] != "" {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return line
		}
		after = n + 1
	}
	return m[1] + stepsLater(after) + ")."
}

// outcomeLine is how the outcome line begins: verdict is "success" or
// "failure".
func outcomeLine(verdict string) string { return "Outcome: " + verdict }

// futureForm writes the successor model's future descriptions with the
// outcome line ("Outcome: success (score 1.00, 2 steps later).") first
// (nlac.outcome_first), where a future cut at nlac.future_tokens still
// states it, or last, after the detail.
type futureForm struct{ outcomeFirst bool }

// join puts the detail and the outcome line in the form's order.
func (f futureForm) join(detail, outcome string) string {
	detail = strings.TrimSpace(detail)
	switch {
	case outcome == "":
		return detail
	case detail == "":
		return outcome
	case f.outcomeFirst:
		return outcome + "\n" + detail
	}
	return detail + "\n" + outcome
}

// terminalTarget is the backup's target at the last step of an episode:
// the environment's last answer and the true outcome.
func (f futureForm) terminalTarget(t Transition) string {
	ended := "the episode ends"
	switch tr := &t.Episode.Trajectory; {
	case tr.ContextFull != "":
		ended = "the episode is cut: the conversation outgrew the context"
	case tr.Truncated:
		ended = "the episode is cut at the step limit"
	}
	return f.join(fmt.Sprintf("Next: %q (reward %.2f); %s.", clip(t.nextObservation(), 300), t.step().Reward, ended),
		outcome(t.Episode, 0))
}

// trueFuture describes what really followed the transition's action, in
// the successor model's form: the outcome, and the next answer in detail,
// the following steps more briefly, the rest counted. It is the
// self-distillation ablation's future and the warm-up's target.
func (f futureForm) trueFuture(t Transition) string {
	if t.Done() {
		return f.terminalTarget(t)
	}
	steps := t.Episode.Trajectory.Steps
	var b strings.Builder
	fmt.Fprintf(&b, "Next: %q (reward %.2f).\n", clip(t.nextObservation(), 300), t.step().Reward)
	shown := 0
	for i := t.Step + 1; i < len(steps) && shown < 3; i++ {
		answer := Transition{Episode: t.Episode, Step: i}.nextObservation()
		fmt.Fprintf(&b, "Then: %s -> %q.\n", Transition{Episode: t.Episode, Step: i}.action(), clip(answer, 120>>shown))
		shown++
	}
	if rest := len(steps) - 1 - t.Step - shown; rest > 0 {
		fmt.Fprintf(&b, "Then %d more steps.\n", rest)
	}
	return f.join(b.String(), outcome(t.Episode, len(steps)-1-t.Step))
}

// templateMerge is the backup's target built without the model (merge:
// template): what happened next, then the action a' and its predicted
// future d', shortened, with the outcome line of d' counted from here
// (a step more to the end than from s').
func (f futureForm) templateMerge(t Transition, nextAction, nextFuture string) string {
	line, rest, _ := splitOutcome(nextFuture)
	return f.join(fmt.Sprintf("Next: %q (reward %.2f).\nThen: %s.\n%s",
		clip(t.nextObservation(), 300), t.step().Reward, nextAction, clip(strings.TrimSpace(rest), 400)), oneStepEarlier(line))
}

// splitOutcome finds a description's outcome line, its first or its last
// line when that begins "Outcome", and returns it, the rest, and whether
// it came first; "" and the whole description without one.
func splitOutcome(d string) (line, rest string, first bool) {
	d = strings.TrimSpace(d)
	if strings.HasPrefix(d, "Outcome") {
		line, rest, _ = strings.Cut(d, "\n")
		return line, strings.TrimSpace(rest), true
	}
	if i := strings.LastIndex(d, "\n"); i >= 0 && strings.HasPrefix(strings.TrimSpace(d[i+1:]), "Outcome") {
		return strings.TrimSpace(d[i+1:]), strings.TrimSpace(d[:i]), false
	}
	return "", d, false
}

// shorten cuts a description to about n characters, keeping its outcome
// line where it is.
func shorten(d string, n int) string {
	d = strings.TrimSpace(d)
	if len([]rune(d)) <= n {
		return d
	}
	line, rest, first := splitOutcome(d)
	return futureForm{outcomeFirst: first}.join(clip(rest, n), line)
}

// mergeData fills the merge prompt of a transition.
func mergeData(t Transition, nextAction, nextFuture string) func(*promptData) {
	return func(d *promptData) {
		d.NextObservation = clip(t.nextObservation(), 300)
		d.Reward = t.step().Reward
		d.NextAction = nextAction
		d.NextFuture = shorten(nextFuture, 600)
	}
}

// backup builds the language Bellman target of each record's transition:
// the true outcome at the end of an episode; otherwise a' sampled from the
// actor at s' (the prompt the actor really saw there), d' from the target
// successor model at (s', a'), and the two merged with what happened next
// by the target's merge role (or the fixed template).
func (m *roleModel) backup(ctx context.Context, recs []Record, seed seeds, counts *Counts) error {
	var open []int
	var actorPrompts [][]int32
	for i := range recs {
		if recs[i].TooLong {
			continue
		}
		if t := recs[i].T; t.Done() {
			recs[i].Target = m.form().terminalTarget(t)
		} else {
			open = append(open, i)
			actorPrompts = append(actorPrompts, t.next().PromptTokenIDs)
		}
	}
	if len(open) == 0 {
		return nil
	}
	next, err := m.generate(ctx, "a' from the actor", m.actor, actorPrompts, 1, m.actionTokens, m.rolloutTemperature, seed(seedNextAction))
	if err != nil {
		return fmt.Errorf("a' ~ pi(s'): %w", err)
	}
	successorPrompts := make([][]int32, len(open))
	for k, i := range open {
		t := recs[i].T
		recs[i].NextAction = textAction(t.Episode.Trajectory.WholeReply, next[k][0])
		after := Transition{Episode: t.Episode, Step: t.Step + 1}
		if successorPrompts[k], err = m.promptTokens(roleSuccessor, after, recs[i].NextAction, nil, m.cfg.FutureTokens); err != nil {
			return err
		}
	}
	futures, err := m.generateSome(ctx, "d' from the target", m.target, successorPrompts, 1, m.cfg.FutureTokens, m.cfg.Temperature, seed(seedTargetFuture))
	if err != nil {
		return fmt.Errorf("d' ~ M_target(s', a'): %w", err)
	}
	// A transition whose s' prompt does not fit gets no target, but is
	// still critiqued and distilled: its own prompts at s are shorter.
	var kept []int
	var keptFutures [][]string
	for k, i := range open {
		if futures[k] == nil {
			counts.NoTarget++
			continue
		}
		kept, keptFutures = append(kept, i), append(keptFutures, futures[k])
	}
	open, futures = kept, keptFutures
	if m.cfg.Merge == "template" {
		for k, i := range open {
			recs[i].Target = m.form().templateMerge(recs[i].T, recs[i].NextAction, futures[k][0])
		}
		return nil
	}
	mergePrompts := make([][]int32, len(open))
	for k, i := range open {
		fill := mergeData(recs[i].T, recs[i].NextAction, futures[k][0])
		if mergePrompts[k], err = m.promptTokens(roleMerge, recs[i].T, recs[i].Action, fill, m.cfg.FutureTokens); err != nil {
			return err
		}
	}
	merged, err := m.generateSome(ctx, "merges by the target", m.target, mergePrompts, 1, m.cfg.FutureTokens, m.cfg.Temperature, seed(seedMerge))
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	for k, i := range open {
		switch {
		case merged[k] == nil:
			counts.NoTarget++ // the merge prompt does not fit the context
		case merged[k][0] == "":
			// An empty merge teaches nothing; the template keeps the
			// transition's target.
			recs[i].Target = m.form().templateMerge(recs[i].T, recs[i].NextAction, futures[k][0])
			counts.EmptyMerges++
		default:
			recs[i].Target = merged[k][0]
		}
	}
	return nil
}
