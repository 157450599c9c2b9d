package nlac

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/rl"
	"github.com/agentrl/agentrl/rollout"
)

// Record is what the critic made of one transition in an iteration: the
// backup's target, the futures and critiques, and the action the actor
// is trained on. The iteration's log and `agentrl critique` show it.
type Record struct {
	T Transition
	// Action is the action taken, as the prompts show it.
	Action string
	// NextAction and Target are the critic update's a' and backed-up
	// description ("" at a terminal step for NextAction).
	NextAction, Target string
	Rounds             []Round
	// Candidates are NLQL's sampled actions, or the actor's offered in
	// place of a condemned one (nlac.replace_with actor), with their
	// judgements.
	Candidates []Candidate
	// Distill is the action the actor learns at the state ("" when the
	// transition teaches nothing), Why says how it was chosen.
	Distill, Why string
	// TooLong marks a transition whose prompts do not fit the context.
	TooLong bool
}

// Round is one round of critique and refinement of an action.
type Round struct {
	Action    string
	Futures   []string
	Critique  string
	Judgement Judgement
	// POptimal is the evaluator's probability of the verdict "optimal"
	// against "suboptimal" after the critique's reasoning (scoreVerdicts).
	POptimal float64
	// Asked marks a judgement the evaluator gave only when asked for it
	// (scoreVerdicts). Ranked marks a Judgement made by rank
	// (nlac.refine_share); Written is then the critique's own (or the one
	// it was given when asked), which the counts keep.
	Asked, Ranked bool
	Written       Judgement
	// FirstCritique is the critique as the evaluator wrote it, where
	// it was written again to condemn its action (nlac.rewrite_overruled;
	// "" otherwise). POptimal and Written are the first critique's: the
	// text written again is not scored.
	FirstCritique string
	// PSuccess is the successor model's probability that the action's
	// future opens with a successful outcome (foresee), where Foreseen:
	// in the first round, with a successor model and outcome-first
	// futures.
	PSuccess float64
	Foreseen bool
	// Refined is the refinement's text and action ("" when the action was
	// kept); Valid says whether the environment accepted the action.
	// Sample is its place among the refinements sampled
	// (nlac.refine_samples), from 0. FromActor marks a refinement that is
	// one of the actor's candidates (nlac.replace_with actor), Sample then
	// its place among the record's Candidates; Unreplaced says why none
	// was taken, where none was.
	RefinedText, Refined string
	Valid, FromActor     bool
	Sample               int
	Unreplaced           string
}

// Candidate is an action NLQL compares, or one the actor offers in place
// of a condemned action (nlac.replace_with actor), with its futures,
// critique and judgement (see Round).
type Candidate struct {
	Action    string
	Futures   []string
	Critique  string
	Judgement Judgement
	POptimal  float64
	Asked     bool
}

// Counts are an iteration's tallies of the critic's outputs.
type Counts struct {
	Transitions, TooLong, Judgements, Optimal, Unparsed int
	// Asked are the judgements given to critiques that stated none (the
	// likelier verdict after them, nlac.ask_judgement), AskedOptimal those
	// of them optimal; Unparsed counts critiques left without one.
	Asked, AskedOptimal int
	// Overruled are the verdicts made by rank (nlac.refine_share) that
	// differ from the ones the critiques wrote or were given when asked;
	// the other counts of judgements count these written ones.
	Overruled int
	// Replaced are the condemned actions replaced by one of the actor's
	// candidates (nlac.replace_with actor), Unreplaced those none of whose
	// candidates qualified (another action, accepted by the environment,
	// rated above the condemned one).
	Replaced, Unreplaced int
	// Rewritten are the critiques condemned by rank that the evaluator
	// wrote again to condemn their action (nlac.rewrite_overruled),
	// Unwritten those it could not (no room in the context, or a new
	// text that named nothing).
	Rewritten, Unwritten int
	// Refinements are the refinements taken, InvalidRefinements those
	// the environment rejected; Changed are the transitions whose
	// distilled action differs from the one taken.
	Refinements, InvalidRefinements, Changed, Distilled int
	// UnchangedRefinements repeated the action they refined;
	// CheckErrors are sampled refinements that could not be checked, the
	// environment failing in the replay (both ruled as invalid
	// refinements where taken, and not counted in InvalidRefinements).
	// RejectedKept are actions the environment rejected that the critic
	// approved, or whose refinement failed: not distilled.
	UnchangedRefinements, CheckErrors, RejectedKept int
	// Resampled are refinements taken from a sample after the first
	// (nlac.refine_samples); RepeatingSamples are the sampled
	// refinements, taken or not, that named the action they refine.
	Resampled, RepeatingSamples int
	// NoTarget are transitions the Bellman backup made no target for, a
	// prompt of s' or of the merge outgrowing the context; they are
	// still critiqued and distilled.
	NoTarget               int
	NoOptimal, EmptyMerges int
	// FailedRollouts are NLRL rollouts the environment failed.
	FailedRollouts int
	// The first-round judgements of the actions the episodes took, by the
	// episode's outcome (with: it succeeded) and, where the environment
	// has an expert, by whether the action is the expert's there (what the
	// warm-up teaches the evaluator to judge optimal). A critic whose
	// verdicts carry information judges more of the first kind optimal,
	// and gives them the higher probabilities of "optimal".
	ByOutcome, ByExpert JudgedSplit
	// Foresight is the successor model's probability of success for the
	// same actions, by the episode's outcome: whether the futures the
	// evaluator reads could tell them apart at all.
	Foresight Foresight
}

// Foresight keeps the successor model's probabilities that a future opens
// with a successful outcome, for the actions of successful and of failed
// episodes. A successor model whose sampled futures all state the same
// outcome may still rank the actions by this probability; one that
// foresees nothing gives both kinds the same (AUC 0.5).
type Foresight struct{ PSuccessWith, PSuccessWithout []float64 }

func (f *Foresight) add(pSuccess float64, succeeded bool) {
	if succeeded {
		f.PSuccessWith = append(f.PSuccessWith, pSuccess)
	} else {
		f.PSuccessWithout = append(f.PSuccessWithout, pSuccess)
	}
}

// auc is how well the probabilities tell the actions of successful
// episodes from the others (areaUnderROC).
func (f Foresight) auc() (float64, bool) { return areaUnderROC(f.PSuccessWith, f.PSuccessWithout) }

// mean is the mean probability of success over all the actions.
func (f Foresight) mean() (float64, bool) {
	n := len(f.PSuccessWith) + len(f.PSuccessWithout)
	if n == 0 {
		return 0, false
	}
	var sum float64
	for _, p := range append(slices.Clip(f.PSuccessWith), f.PSuccessWithout...) {
		sum += p
	}
	return sum / float64(n), true
}

// addTo records the mean and the AUC, where there are any, in m as
// <prefix>p_success and <prefix>auc_by_outcome.
func (f Foresight) addTo(m *rl.Metrics, prefix string) {
	if mean, ok := f.mean(); ok {
		m.Metrics[prefix+"p_success"] = mean
	}
	if a, ok := f.auc(); ok {
		m.Metrics[prefix+"auc_by_outcome"] = a
	}
}

// note says the mean and the AUC in words ("" with no probability).
func (f Foresight) note() string {
	mean, ok := f.mean()
	if !ok {
		return ""
	}
	note := fmt.Sprintf("the successor model's p(success) %.2f on average", mean)
	if a, ok := f.auc(); ok {
		note += fmt.Sprintf(", AUC %.2f", a)
	}
	return note
}

// JudgedSplit counts parsed judgements of actions with and without some
// property, and how many of each were optimal; and keeps the evaluator's
// probabilities of "optimal" for each kind, parsed or not.
type JudgedSplit struct {
	With, OptimalWith, Without, OptimalWithout int
	POptimalWith, POptimalWithout              []float64
}

// auc is how well the evaluator's probabilities of "optimal" tell the
// actions with the property from those without (areaUnderROC).
func (s JudgedSplit) auc() (float64, bool) {
	return areaUnderROC(s.POptimalWith, s.POptimalWithout)
}

// add counts judgement j, given with probability pOptimal of "optimal",
// of an action that has the property or not.
func (s *JudgedSplit) add(j Judgement, pOptimal float64, with bool) {
	if with {
		s.POptimalWith = append(s.POptimalWith, pOptimal)
	} else {
		s.POptimalWithout = append(s.POptimalWithout, pOptimal)
	}
	if j == Unparsed {
		return
	}
	optimal := 0
	if j == Optimal {
		optimal = 1
	}
	if with {
		s.With++
		s.OptimalWith += optimal
	} else {
		s.Without++
		s.OptimalWithout += optimal
	}
}

// judge parses a critique's judgement and counts it.
func (c *Counts) judge(cr critique) Judgement {
	j := ParseJudgement(cr.text)
	c.Judgements++
	if cr.asked {
		c.Asked++
		if j == Optimal {
			c.AskedOptimal++
		}
	}
	switch j {
	case Optimal:
		c.Optimal++
	case Unparsed:
		c.Unparsed++
	}
	return j
}

// seeds derives the seed of one purpose of the iteration.
type seeds func(purpose uint64) uint64

// Seed purposes (the run's own are below 16).
const (
	seedBatch = 16 + iota
	seedNextAction
	seedTargetFuture
	seedMerge
	seedFuture
	seedCritique
	seedRefine
	seedCandidates
	seedWarmup
	seedReplay
	seedWarmupBranch
	seedRewrite
	seedReplace
	seedReplaceFuture
	seedReplaceCritique
)

// improve is policy improvement on a batch of transitions: each action
// is critiqued from k futures (sampled from the successor model; for
// self-distillation the real continuation, for NLRL fresh rollouts of
// the actor) and, where judged suboptimal, refined (or replaced by one of
// the actor's candidates: nlac.replace_with actor), up to m rounds; the
// last action standing is distilled. NLQL instead judges Candidates
// sampled actions and distils the one rated best (selectBest).
func (m *roleModel) improve(ctx context.Context, recs []Record, method string, seed seeds, counts *Counts) error {
	if method == "nlql" {
		return m.selectBest(ctx, recs, seed, counts)
	}
	rounds := m.cfg.Refinements
	if method == "self_distill" {
		// The real continuation followed the action taken only: a
		// rewritten action has no future to critique it from.
		rounds = 1
	}
	current := make([]string, len(recs))
	// valid says whether the environment accepts current: the action
	// taken as the episode's step found, a refinement as check found. An
	// action the environment rejected is never distilled, whatever the
	// critic says of it: the actor would learn to write it again.
	valid := make([]bool, len(recs))
	var open []int
	for i := range recs {
		if !recs[i].TooLong {
			current[i], valid[i] = recs[i].Action, recs[i].T.step().Info.ValidAction
			open = append(open, i)
		}
	}
	byExpert, err := m.takenByExpert(ctx, recs, open)
	if err != nil {
		return err
	}
	var pSuccess map[int]float64
	if method == "nlac" && m.cfg.OutcomeFirst {
		if pSuccess, err = m.foresee(ctx, recs, open, current); err != nil {
			return err
		}
	}
	var bar float64 // the highest p(optimal) condemned by rank in the first round
	for round := 0; round < rounds && len(open) > 0; round++ {
		var futures [][]string
		var err error
		open, futures, err = m.futuresFor(ctx, recs, open, current, method, roundSeed(seed(seedFuture), round), counts)
		if err != nil {
			return err
		}
		open, futures = fitting(recs, open, futures, counts)
		critiques, err := m.critiques(ctx, recs, open, current, futures, roundSeed(seed(seedCritique), round))
		if err != nil {
			return err
		}
		var ranked []Judgement
		var rewritten []string
		if m.cfg.RefineShare > 0 {
			ranked = rankVerdicts(critiques, m.cfg.RefineShare, round, &bar)
			if m.cfg.RewriteOverruled {
				var unwritten int
				if rewritten, unwritten, err = m.rewriteOverruled(ctx, critiques, ranked, roundSeed(seed(seedRewrite), round)); err != nil {
					return err
				}
				counts.Unwritten += unwritten
			}
		}
		var refine []int
		for k, i := range open {
			// A later round's failure (too long, no verdict to follow, an
			// invalid refinement dropped) takes back what an earlier round
			// chose: the rules mean the same in every round.
			if !critiques[k].fits {
				recs[i].TooLong, recs[i].Why, recs[i].Distill = true, "prompt too long for the context", ""
				counts.TooLong++
				continue
			}
			j := counts.judge(critiques[k])
			rd := Round{Action: current[i], Futures: futures[k], Critique: critiques[k].text, Judgement: j, POptimal: critiques[k].pOptimal, Asked: critiques[k].asked}
			if ranked != nil {
				rd.Ranked, rd.Written, rd.Judgement = true, j, ranked[k]
				if rd.Judgement != j {
					if j != Unparsed {
						counts.Overruled++
					}
					// The refinement reads the verdict that rules.
					rd.Critique = verdictTexts(rd.Critique)[verdictIndex(rd.Judgement)]
				}
				if rewritten != nil && rewritten[k] != "" {
					rd.FirstCritique, rd.Critique = critiques[k].text, rewritten[k]
					counts.Rewritten++
				}
			}
			if round == 0 {
				succeeded := recs[i].T.Episode.Trajectory.Success
				counts.ByOutcome.add(j, critiques[k].pOptimal, succeeded)
				if expert, ok := byExpert[i]; ok {
					counts.ByExpert.add(j, critiques[k].pOptimal, expert)
				}
				if rd.PSuccess, rd.Foreseen = pSuccess[i]; rd.Foreseen {
					counts.Foresight.add(rd.PSuccess, succeeded)
				}
			}
			recs[i].Rounds = append(recs[i].Rounds, rd)
			switch verdict := rd.Judgement; {
			case verdict == Unparsed && m.cfg.UnparsedJudgement == "skip":
				recs[i].Why, recs[i].Distill = "critique without a judgement: skipped", ""
			case verdict == Optimal || (verdict == Unparsed && m.cfg.UnparsedJudgement == "optimal"):
				recs[i].Distill, recs[i].Why = current[i], fmt.Sprintf("judged optimal in round %d", round+1)
				if verdict == Unparsed {
					recs[i].Why = "critique without a judgement: kept as optimal"
				}
				if !valid[i] {
					recs[i].Distill, recs[i].Why = "", recs[i].Why+", but the environment rejected the action: not distilled"
					counts.RejectedKept++
				}
			default:
				refine = append(refine, i)
			}
		}
		if len(refine) == 0 {
			break
		}
		var refined []refinement
		if m.cfg.ReplaceWith == "actor" {
			refined, err = m.replaceFromActor(ctx, recs, refine, current, seed, round, counts)
		} else {
			refined, err = m.refine(ctx, recs, refine, current, roundSeed(seed(seedRefine), round), counts)
		}
		if err != nil {
			return err
		}
		open = open[:0]
		for k, i := range refine {
			r := &recs[i].Rounds[len(recs[i].Rounds)-1]
			if refined[k].tooLong {
				recs[i].TooLong, recs[i].Why, recs[i].Distill = true, "refinement prompt too long", ""
				counts.TooLong++
				continue
			}
			r.RefinedText, r.Refined, r.Valid, r.Sample, r.FromActor = refined[k].text, refined[k].action, refined[k].valid, refined[k].sample, refined[k].fromActor
			if r.FromActor {
				if !r.Valid {
					r.Unreplaced = refined[k].unreplaced
					counts.Unreplaced++
					if m.cfg.InvalidRefinement == "drop" || !valid[i] {
						recs[i].Why, recs[i].Distill = "not replaced ("+r.Unreplaced+"): nothing distilled", ""
						if !valid[i] {
							counts.RejectedKept++
						}
					} else {
						recs[i].Distill, recs[i].Why = current[i], "not replaced ("+r.Unreplaced+"): the action kept"
					}
					continue
				}
				valid[i], current[i] = true, r.Refined
				recs[i].Distill = r.Refined
				c := recs[i].Candidates[r.Sample]
				recs[i].Why = fmt.Sprintf("replaced in round %d by the actor's candidate %d, rated best (p(optimal) %s)", round+1, r.Sample+1, probability(c.POptimal))
				counts.Replaced++
				open = append(open, i)
				continue
			}
			counts.Refinements++
			// A refinement that repeats the condemned action improves
			// nothing: it is ruled as one the environment rejects.
			why := "refinement invalid"
			switch {
			case refined[k].checkErr != nil:
				why = "refinement not checked (environment error: " + clip(refined[k].checkErr.Error(), 200) + ")"
				r.Valid = false
			case r.Valid && sameAction(r.Refined, current[i]):
				why = "refinement repeats the action"
				counts.UnchangedRefinements++
				r.Valid = false
			case !r.Valid:
				counts.InvalidRefinements++
			}
			if !r.Valid {
				switch {
				case m.cfg.InvalidRefinement == "drop":
					recs[i].Why, recs[i].Distill = why+": dropped", ""
				case !valid[i]:
					recs[i].Why, recs[i].Distill = why+", and the environment rejected the action it refined: nothing distilled", ""
					counts.RejectedKept++
				default:
					recs[i].Distill, recs[i].Why = current[i], why+": the action it refined"
				}
				continue
			}
			valid[i] = true
			current[i] = r.Refined
			recs[i].Distill, recs[i].Why = r.Refined, fmt.Sprintf("refined in round %d", round+1)
			open = append(open, i)
		}
	}
	for i := range recs {
		if recs[i].Distill != "" && !sameAction(recs[i].Distill, recs[i].Action) {
			counts.Changed++
		}
	}
	return nil
}

// rankVerdicts is the verdict the rank of each fitting critique's
// p(optimal) makes (nlac.refine_share; Unparsed for one that does not
// fit). In the first round the ceil(share x n) critiques rated lowest are
// suboptimal and the rest optimal, and bar becomes the highest
// p(optimal) condemned. Ties, common where the evaluator's log-odds
// saturate, condemn first the critiques that do not call their action
// optimal themselves, then the earlier in the batch (a random draw from
// the buffer). In a later round a critique is optimal only when rated
// above bar.
func rankVerdicts(cs []critique, share float64, round int, bar *float64) []Judgement {
	verdicts := make([]Judgement, len(cs))
	var fit []int
	for k, c := range cs {
		if c.fits {
			fit = append(fit, k)
		}
	}
	if len(fit) == 0 {
		return verdicts
	}
	if round > 0 {
		for _, k := range fit {
			verdicts[k] = Suboptimal
			if cs[k].pOptimal > *bar {
				verdicts[k] = Optimal
			}
		}
		return verdicts
	}
	approves := make([]int, len(cs)) // 1 where the critique calls its action optimal
	for _, k := range fit {
		if ParseJudgement(cs[k].text) == Optimal {
			approves[k] = 1
		}
	}
	order := slices.Clone(fit)
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(cs[a].pOptimal, cs[b].pOptimal), cmp.Compare(approves[a], approves[b]))
	})
	n := int(math.Ceil(share * float64(len(order))))
	for r, k := range order {
		verdicts[k] = Optimal
		if r < n {
			verdicts[k] = Suboptimal
		}
	}
	*bar = cs[order[n-1]].pOptimal
	return verdicts
}

// sameAction tells whether two actions, as actionText writes them, are
// one text but for case and the space around them.
func sameAction(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

// roundSeed is the seed of a refinement round's generations: the base
// seed in the first round, unrelated ones after.
func roundSeed(base uint64, round int) uint64 {
	return base ^ uint64(round)*0x9E3779B97F4A7C15
}

// futuresFor gives the futures of each open transition's current action:
// k samples of the successor model (nil where the prompt does not fit the
// context), the real continuation (self-distillation), or fresh rollouts
// of the actor (NLRL, which leaves out the transitions none of whose
// rollouts finished). It returns the transitions still open with their
// futures.
func (m *roleModel) futuresFor(ctx context.Context, recs []Record, open []int, current []string, method string, seed uint64, counts *Counts) ([]int, [][]string, error) {
	out := make([][]string, len(open))
	switch method {
	case "self_distill":
		for k, i := range open {
			out[k] = []string{m.form().trueFuture(recs[i].T)}
		}
		return open, out, nil
	case "nlrl":
		return m.rolloutFutures(ctx, recs, open, current, seed, counts)
	}
	prompts, err := m.successorPrompts(recs, open, current)
	if err != nil {
		return nil, nil, err
	}
	out, err = m.generateSome(ctx, "futures", m.critic, prompts, m.cfg.Futures, m.cfg.FutureTokens, m.cfg.Temperature, seed)
	return open, out, err
}

// successorPrompts are the successor model's prompts for each open
// transition's current action (nil where one does not fit the context
// with a future of nlac.future_tokens).
func (m *roleModel) successorPrompts(recs []Record, open []int, current []string) ([][]int32, error) {
	prompts := make([][]int32, len(open))
	for k, i := range open {
		tokens, err := m.promptTokens(roleSuccessor, recs[i].T, current[i], nil, m.cfg.FutureTokens)
		if err != nil {
			return nil, err
		}
		prompts[k] = tokens
	}
	return prompts, nil
}

// foresee has the successor model choose how each open transition's
// current action's future opens, "Outcome: success" or "Outcome:
// failure" (outcome-first futures), and returns the probability of
// success by record index; prompts that do not fit are left out. The
// probabilities measure what the sampled futures can only show as a
// draw: whether the successor model tells better actions from worse.
func (m *roleModel) foresee(ctx context.Context, recs []Record, open []int, current []string) (map[int]float64, error) {
	prompts, err := m.successorPrompts(recs, open, current)
	if err != nil {
		return nil, err
	}
	var texts [2][]int32
	for v, outcome := range [2]string{"success", "failure"} {
		if texts[v], err = m.model.Tokenize(outcomeLine(outcome), false, false); err != nil {
			return nil, err
		}
	}
	var scored []int
	var heads [][]int32
	var pairs [][2][]int32
	for k, p := range prompts {
		if p != nil {
			scored = append(scored, open[k])
			heads = append(heads, p)
			pairs = append(pairs, texts)
		}
	}
	p, err := m.choose(ctx, "outcomes", heads, pairs)
	if err != nil {
		return nil, err
	}
	out := make(map[int]float64, len(scored))
	for j, i := range scored {
		out[i] = p[j]
	}
	return out, nil
}

// rolloutFutures are NLRL's futures: Rollouts episodes of the actor from
// each open transition's state after its current action, each told as
// what really followed it. The evaluator aggregates them in context into
// its critique, a language value estimated by Monte Carlo. A rollout the
// environment fails (an error, a step timeout, a replay that does not
// reach the state) is left out and counted; a transition with none left
// is dropped from open.
func (m *roleModel) rolloutFutures(ctx context.Context, recs []Record, open []int, current []string, seed uint64, counts *Counts) ([]int, [][]string, error) {
	starts := make([]rollout.Start, len(open))
	for k, i := range open {
		t := recs[i].T
		// The action as the actor wrote it, where it is the one taken:
		// its conversation then goes on from its own words.
		a := current[i]
		if a == recs[i].Action {
			a = t.step().Action
		}
		starts[k] = stateOf(t)
		starts[k].Actions = append(starts[k].Actions, a)
	}
	began := time.Now()
	s := rollout.DefaultActionSampling()
	s.MaxTokens, s.Temperature, s.Seed = m.actionTokens, float32(m.rolloutTemperature), int64(seed>>1)
	snap := m.actor
	snap.Sampling = s
	group := m.cfg.Rollouts
	trajs, _, err := m.collector.Collect(ctx, snap, rl.Episodes{Starts: starts, Group: group, MaxSteps: m.maxSteps, StepTimeout: m.stepTimeout})
	if err != nil {
		return nil, nil, fmt.Errorf("NLRL rollouts: %w", err)
	}
	if len(trajs) != len(starts)*group {
		return nil, nil, fmt.Errorf("NLRL rollouts: %d episodes for %d starts x %d", len(trajs), len(starts), group)
	}
	futures := make([][]string, len(open))
	failed := make([]string, len(open))
	for e := range trajs {
		tr := &trajs[e]
		m.envSteps += int64(len(tr.Steps))
		k := e / group
		if tr.Error != "" {
			counts.FailedRollouts++
			failed[k] = tr.Error
			continue
		}
		futures[k] = append(futures[k], m.form().trueFuture(Transition{Episode: &Episode{Trajectory: *tr}, Step: len(starts[k].Actions) - 1}))
	}
	if m.progress != nil {
		m.progress("  rollouts: %d x %d in %.1fs", len(starts), group, time.Since(began).Seconds())
	}
	var keptOpen []int
	var kept [][]string
	for k, i := range open {
		if futures[k] == nil {
			recs[i].Why, recs[i].Distill = "no NLRL rollout finished: "+failed[k], ""
			continue
		}
		keptOpen = append(keptOpen, i)
		kept = append(kept, futures[k])
	}
	return keptOpen, kept, nil
}

// critique is the evaluator's text on one action and its probability of
// the verdict "optimal" (scoreVerdicts). fits is false where its prompt,
// or the scoring of its verdict, does not fit the context (no text);
// asked marks a text whose judgement the evaluator gave only when asked
// for it, appended as a last "Judgement: ..." line.
type critique struct {
	text        string
	pOptimal    float64
	fits, asked bool
	// prompt is the evaluator's prompt the text was written after.
	prompt []int32
}

// critiques has the evaluator critique each open transition's current
// action from its futures: one text each, its verdict scored.
func (m *roleModel) critiques(ctx context.Context, recs []Record, open []int, current []string, futures [][]string, seed uint64) ([]critique, error) {
	reserve, err := m.critiqueRoom()
	if err != nil {
		return nil, err
	}
	prompts := make([][]int32, len(open))
	for k, i := range open {
		fs := futures[k]
		tokens, err := m.promptTokens(roleEvaluator, recs[i].T, current[i], func(d *promptData) {
			d.Futures = make([]string, len(fs))
			for f, text := range fs {
				d.Futures[f] = shorten(text, 500)
			}
		}, reserve)
		if err != nil {
			return nil, err
		}
		prompts[k] = tokens
	}
	texts, err := m.generateSome(ctx, "critiques", m.critic, prompts, 1, m.cfg.CritiqueTokens, m.cfg.Temperature, seed)
	if err != nil {
		return nil, err
	}
	out := make([]critique, len(texts))
	for k, t := range texts {
		if t != nil {
			out[k] = critique{text: t[0], fits: true, prompt: prompts[k]}
		}
	}
	return out, m.scoreVerdicts(ctx, prompts, out)
}

// critiqueRoom is the room a critique takes after its prompt: its tokens,
// the cue and the longer verdict scored after it, and a few tokens more
// that the critique may take when tokenised again.
func (m *roleModel) critiqueRoom() (int, error) {
	verdict, err := m.model.Tokenize(verdictTexts("")[1], false, false)
	if err != nil {
		return 0, err
	}
	return m.cfg.CritiqueTokens + len(verdict) + 4, nil
}

// rewriteOverruled has the evaluator write again each fitting critique
// that the rank condemns but that does not condemn its action itself
// (nlac.rewrite_overruled): after the same prompt, from condemningLead,
// so that the critique the refiner reads names an action to take
// instead of approving the one it refines. It returns the critiques so
// written, with the verdict suboptimal, "" for the others; and how many
// it could not write: the prompt leaving no room for the lead and a
// critique, or the new text naming nothing before its verdict (those
// keep the critique as first written).
func (m *roleModel) rewriteOverruled(ctx context.Context, cs []critique, ranked []Judgement, seed uint64) ([]string, int, error) {
	room, err := m.critiqueRoom()
	if err != nil {
		return nil, 0, err
	}
	unwritten := 0
	leads := make([]string, len(cs))
	prompts := make([][]int32, len(cs))
	for k, c := range cs {
		if !c.fits || ranked[k] != Suboptimal || ParseJudgement(c.text) == Suboptimal {
			continue
		}
		lead := condemningLead(c.text)
		tokens, err := m.model.Tokenize(lead, false, false)
		if err != nil {
			return nil, 0, err
		}
		if len(c.prompt)+len(tokens)+room > m.context {
			unwritten++
			continue
		}
		leads[k], prompts[k] = lead, append(slices.Clip(c.prompt), tokens...)
	}
	texts, err := m.generateSome(ctx, "rewritten critiques", m.critic, prompts, 1, m.cfg.CritiqueTokens, m.cfg.Temperature, seed)
	if err != nil {
		return nil, 0, err
	}
	out := make([]string, len(cs))
	for k, t := range texts {
		if t == nil {
			continue
		}
		if reasoning(t[0]) == "" {
			unwritten++
			continue
		}
		// The texts come trimmed: the space after the cue is gone.
		out[k] = verdictTexts(leads[k] + " " + t[0])[verdictIndex(Suboptimal)]
	}
	return out, unwritten, nil
}

// condemningLead is how a critique that condemns its action begins: the
// critique's reasoning, cut where it first says what the warm-up teaches
// of the expert's action, in any case and whatever follows ("An expert
// acts the same, 7 out of 12 are correct.", or an "An expert would do:"
// it then approved all the same), then the warm-up's cue for the
// expert's action.
func condemningLead(critique string) string {
	lead := reasoning(critique)
	lower := strings.ToLower(lead)
	for _, said := range []string{expertAgrees, expertDiffers} {
		if i := strings.Index(lower, strings.ToLower(strings.TrimRight(strings.TrimSpace(said), ".:"))); i >= 0 {
			lead, lower = lead[:i], lower[:i]
		}
	}
	if lead = strings.TrimSpace(lead); lead == "" {
		return strings.TrimSpace(expertDiffers)
	}
	return lead + expertDiffers
}

// scoreVerdicts has the evaluator choose between the two verdicts after
// each critique's reasoning (the critique before the verdict it wrote),
// continued with verdictCue in its own turn: pOptimal is the probability
// of the text ending "optimal" against the one ending "suboptimal" (each
// text tokenised whole, as the model would have written it; the tokens
// the two share are the prompt of both). A sampled verdict is one draw;
// the probability grades it, so that NLQL can take the best-rated
// candidate and a run can measure whether the critic ranks better
// actions higher. Where a critique states no verdict and
// nlac.ask_judgement is on, the likelier one (suboptimal on a tie) is
// appended to it as its last "Judgement: ..." line and the critique is
// marked asked: a small evaluator often writes a sound critique and runs
// out of tokens, or drifts into describing the page, before its verdict.
func (m *roleModel) scoreVerdicts(ctx context.Context, prompts [][]int32, critiques []critique) error {
	var scored []int
	var verdicts [][2]string // each scored critique's two texts
	var heads [][]int32
	var pairs [][2][]int32
	for k, c := range critiques {
		if !c.fits {
			continue
		}
		both := verdictTexts(c.text)
		var texts [2][]int32
		for v, text := range both {
			tokens, err := m.model.Tokenize(text, false, false)
			if err != nil {
				return err
			}
			texts[v] = tokens
		}
		if len(prompts[k])+max(len(texts[0]), len(texts[1])) > m.context {
			critiques[k].fits = false
			continue
		}
		scored = append(scored, k)
		verdicts = append(verdicts, both)
		heads = append(heads, prompts[k])
		pairs = append(pairs, texts)
	}
	p, err := m.choose(ctx, "verdicts", heads, pairs)
	if err != nil {
		return err
	}
	for j, k := range scored {
		c := &critiques[k]
		c.pOptimal = p[j]
		if m.cfg.AskJudgement && ParseJudgement(c.text) == Unparsed {
			// The likelier of the two texts scored (suboptimal on a tie).
			c.text = verdicts[j][1]
			if c.pOptimal > 0.5 {
				c.text = verdicts[j][0]
			}
			c.asked = true
		}
	}
	return nil
}

// choose has the critic score, after each prompt, the two continuations
// of its pair (each tokenised whole, as the model would have written it;
// the tokens the two share join the prompt) and returns the probability
// of the first against the second for each.
func (m *roleModel) choose(ctx context.Context, what string, prompts [][]int32, pairs [][2][]int32) ([]float64, error) {
	if len(prompts) == 0 {
		return nil, nil
	}
	heads := make([][]int32, 0, 2*len(prompts))
	tails := make([][]int32, 0, 2*len(prompts))
	for k, pair := range pairs {
		shared := llm.CommonPrefix(pair[0], pair[1])
		head := append(slices.Clip(prompts[k]), pair[0][:shared]...)
		heads = append(heads, head, head)
		tails = append(tails, pair[0][shared:], pair[1][shared:])
	}
	start := time.Now()
	logProbs, err := m.collector.Score(ctx, m.critic, heads, tails)
	if err != nil {
		return nil, fmt.Errorf("scoring %s: %w", what, err)
	}
	if m.progress != nil {
		m.progress("  %s: %d x 2 scored in %.1fs", what, len(prompts), time.Since(start).Seconds())
	}
	p := make([]float64, len(prompts))
	for j := range p {
		p[j] = firstOfTwo(logProbs[2*j], logProbs[2*j+1])
	}
	return p, nil
}

// fitting drops from open (and from texts, indexed alike) the
// transitions that got no texts because their prompts do not fit the
// context, marking them too long, with nothing to distil (in a later
// round of refinement, not the earlier round's action either).
func fitting(recs []Record, open []int, texts [][]string, counts *Counts) ([]int, [][]string) {
	var keptOpen []int
	var keptTexts [][]string
	for k, i := range open {
		if texts[k] == nil {
			recs[i].TooLong, recs[i].Why, recs[i].Distill = true, "prompt too long for the context", ""
			counts.TooLong++
			continue
		}
		keptOpen = append(keptOpen, i)
		keptTexts = append(keptTexts, texts[k])
	}
	return keptOpen, keptTexts
}

type refinement struct {
	text, action   string
	valid, tooLong bool
	// checkErr is the environment's failure in replaying the state to
	// try the action (valid is then false).
	checkErr error
	// sample is the refinement's place among those sampled for its
	// action (nlac.refine_samples), or, fromActor, among the record's
	// Candidates.
	sample int
	// fromActor marks one of the actor's candidates (nlac.replace_with
	// actor); unreplaced says why none was taken, where none was.
	fromActor  bool
	unreplaced string
}

// improves says whether r can replace the action current: it names
// another action, which the environment accepted.
func (r refinement) improves(current string) bool {
	return r.valid && r.checkErr == nil && !sameAction(r.action, current)
}

// refine rewrites each listed transition's current action from its last
// critique and checks the result in the environment: a refinement with
// no action in it, or one the environment rejects, is invalid. With
// nlac.refine_samples above 1 it samples that many for each action and
// returns the first that improves on it (the first sample when none
// does: the rules for a failed refinement then apply to it). It counts
// the samples that repeat their action or could not be checked, and
// those taken after the first.
func (m *roleModel) refine(ctx context.Context, recs []Record, idx []int, current []string, seed uint64, counts *Counts) ([]refinement, error) {
	prompts := make([][]int32, len(idx))
	for k, i := range idx {
		critique := recs[i].Rounds[len(recs[i].Rounds)-1].Critique
		tokens, err := m.promptTokens(roleRefine, recs[i].T, current[i], func(d *promptData) { d.Critique = shorten(critique, 600) }, m.actionTokens)
		if err != nil {
			return nil, err
		}
		prompts[k] = tokens
	}
	samples := max(m.cfg.RefineSamples, 1)
	texts, err := m.generateSome(ctx, "refinements", m.critic, prompts, samples, m.actionTokens, m.cfg.Temperature, seed)
	if err != nil {
		return nil, err
	}
	sampled := make([][]refinement, len(idx))
	var toCheck []Transition
	var actions []string
	var where [][2]int
	for k, t := range texts {
		if t == nil {
			continue
		}
		for j, text := range t {
			r := refinement{text: text, action: actionOf(recs[idx[k]].T.Episode.Trajectory.WholeReply, text), sample: j}
			sampled[k] = append(sampled[k], r)
			repeats := r.action != "" && sameAction(r.action, current[idx[k]])
			if repeats {
				counts.RepeatingSamples++
			}
			// A repeat of the action needs no check when another sample
			// may improve on it; the first sample is checked anyway, as
			// it is the one the rules judge when none does.
			if r.action != "" && (j == 0 || !repeats) {
				toCheck = append(toCheck, recs[idx[k]].T)
				actions = append(actions, r.action)
				where = append(where, [2]int{k, j})
			}
		}
	}
	valid, errs, err := m.check(ctx, toCheck, actions)
	if err != nil {
		return nil, err
	}
	for c, kj := range where {
		r := &sampled[kj[0]][kj[1]]
		r.valid, r.checkErr = valid[c], errs[c]
		if r.checkErr != nil {
			counts.CheckErrors++
		}
	}
	out := make([]refinement, len(idx))
	for k, rs := range sampled {
		if len(rs) == 0 {
			out[k].tooLong = true
			continue
		}
		out[k] = rs[0]
		for _, r := range rs {
			if r.improves(current[idx[k]]) {
				out[k] = r
				if r.sample > 0 {
					counts.Resampled++
				}
				break
			}
		}
	}
	return out, nil
}

// replaceFromActor is nlac.replace_with actor: for each listed
// transition, Candidates actions sampled from the actor at its state
// (its own prompt, at the rollout temperature) are the replacements on
// offer: the distinct ones that name an action the record has not had in
// an earlier round, that the environment accepts and that the evaluator,
// judging them from their futures as NLQL judges its candidates, rates
// above the condemned action (a higher probability of "optimal" than its
// critique's). The one rated best (the first on a tie) is returned as the
// transition's refinement; where none qualifies, one that says why. The
// judged candidates are kept with the record for the log; their
// judgements are not the batch's (Counts counts the batch's critiques).
func (m *roleModel) replaceFromActor(ctx context.Context, recs []Record, idx []int, current []string, seed seeds, round int, counts *Counts) ([]refinement, error) {
	prompts := make([][]int32, len(idx))
	for k, i := range idx {
		prompts[k] = recs[i].T.step().PromptTokenIDs
	}
	samples, err := m.generate(ctx, "replacement candidates", m.actor, prompts, m.cfg.Candidates, m.actionTokens, m.rolloutTemperature, roundSeed(seed(seedReplace), round))
	if err != nil {
		return nil, err
	}
	// Each state's distinct new actions, checked in the environment, and
	// what became of them, for a state none of whose candidates qualifies.
	type candidate struct {
		state      int // in idx
		text, name string
	}
	type fate struct {
		offered, rejected, ratedBelow int
		checkErr                      error
	}
	var cands []candidate
	var toCheck []Transition
	var names []string
	fates := make([]fate, len(idx))
	for k, texts := range samples {
		i := idx[k]
		tried := []string{current[i]}
		for _, rd := range recs[i].Rounds {
			tried = append(tried, rd.Action)
		}
		for _, text := range texts {
			name := actionOf(recs[i].T.Episode.Trajectory.WholeReply, text)
			if name == "" || slices.ContainsFunc(tried, func(s string) bool { return sameAction(s, name) }) {
				continue
			}
			tried = append(tried, name)
			cands = append(cands, candidate{k, text, name})
			toCheck, names = append(toCheck, recs[i].T), append(names, name)
			fates[k].offered++
		}
	}
	valid, errs, err := m.check(ctx, toCheck, names)
	if err != nil {
		return nil, err
	}
	var judged []candidate
	var ts []Transition
	var actions []string
	for c, cand := range cands {
		switch {
		case errs[c] != nil:
			counts.CheckErrors++
			fates[cand.state].checkErr = errs[c]
		case !valid[c]:
			fates[cand.state].rejected++
		default:
			judged = append(judged, cand)
			ts, actions = append(ts, recs[idx[cand.state]].T), append(actions, cand.name)
		}
	}
	verdicts, err := m.judgeActions(ctx, ts, actions, roundSeed(seed(seedReplaceFuture), round), roundSeed(seed(seedReplaceCritique), round))
	if err != nil {
		return nil, err
	}
	out := make([]refinement, len(idx))
	for k := range out {
		out[k].fromActor = true
	}
	for f, v := range verdicts {
		cand := judged[f]
		i, o := idx[cand.state], &out[cand.state]
		if !v.fits {
			continue
		}
		recs[i].Candidates = append(recs[i].Candidates, v.candidate(cand.name, &Counts{}))
		condemned := recs[i].Rounds[len(recs[i].Rounds)-1].POptimal
		switch {
		case v.critique.pOptimal <= condemned:
			fates[cand.state].ratedBelow++
		case !o.valid || v.critique.pOptimal > recs[i].Candidates[o.sample].POptimal:
			*o = refinement{text: cand.text, action: cand.name, valid: true, sample: len(recs[i].Candidates) - 1, fromActor: true}
		}
	}
	for k, f := range fates {
		i := idx[k]
		switch {
		case out[k].valid:
		case f.offered == 0:
			out[k].unreplaced = fmt.Sprintf("the actor's %d candidates name no action or only ones already taken", m.cfg.Candidates)
		case f.checkErr != nil:
			out[k].unreplaced = "the environment failed to check a candidate: " + clip(f.checkErr.Error(), 200)
		case f.rejected == f.offered:
			out[k].unreplaced = "the environment rejected every new action the actor offered"
		case f.ratedBelow == 0: // the accepted ones did not fit
			out[k].unreplaced = "no candidate judged: prompts too long"
		default:
			out[k].unreplaced = "no candidate rated above the action's p(optimal) " + probability(recs[i].Rounds[len(recs[i].Rounds)-1].POptimal)
		}
	}
	return out, nil
}

// judgedAction is an action critiqued at its transition from the
// successor model's futures (judgeActions); fits is false where a
// prompt outgrew the context.
type judgedAction struct {
	futures  []string
	critique critique
	fits     bool
}

// candidate is the action as a Candidate, its judgement counted in c.
func (v judgedAction) candidate(action string, c *Counts) Candidate {
	return Candidate{Action: action, Futures: v.futures, Critique: v.critique.text, Judgement: c.judge(v.critique), POptimal: v.critique.pOptimal, Asked: v.critique.asked}
}

// judgeActions critiques each action at its transition from the
// successor model's futures, as records of their own: NLQL's candidates
// and the actor's replacements are judged so.
func (m *roleModel) judgeActions(ctx context.Context, ts []Transition, actions []string, futureSeed, critiqueSeed uint64) ([]judgedAction, error) {
	recs := make([]Record, len(ts))
	rows := make([]int, len(ts))
	for f := range ts {
		recs[f], rows[f] = Record{T: ts[f], Action: actions[f]}, f
	}
	var tally Counts
	rows, futures, err := m.futuresFor(ctx, recs, rows, actions, "nlac", futureSeed, &tally)
	if err != nil {
		return nil, err
	}
	rows, futures = fitting(recs, rows, futures, &tally)
	critiques, err := m.critiques(ctx, recs, rows, actions, futures, critiqueSeed)
	if err != nil {
		return nil, err
	}
	out := make([]judgedAction, len(ts))
	for r, f := range rows {
		out[f] = judgedAction{futures: futures[r], critique: critiques[r], fits: critiques[r].fits}
	}
	return out, nil
}

// selectBest is NLQL's improvement: Candidates actions sampled from the
// actor at each state, each judged from its futures; the one the
// evaluator rates best (the highest probability of "optimal", the first
// on a tie) is distilled, whatever its sampled verdict, as Q-learning
// takes the greedy action. A state with no candidate action teaches
// nothing; NoOptimal counts the states none of whose candidates was
// judged optimal.
func (m *roleModel) selectBest(ctx context.Context, recs []Record, seed seeds, counts *Counts) error {
	var open []int
	var prompts [][]int32
	for i := range recs {
		if recs[i].TooLong {
			continue
		}
		open = append(open, i)
		prompts = append(prompts, recs[i].T.step().PromptTokenIDs)
	}
	samples, err := m.generate(ctx, "candidate actions", m.actor, prompts, m.cfg.Candidates, m.actionTokens, m.rolloutTemperature, seed(seedCandidates))
	if err != nil {
		return err
	}
	// Every candidate of every state is judged in one batch per role.
	var flatRecs []int
	var flatActions []string
	for k, i := range open {
		for _, s := range samples[k] {
			flatRecs = append(flatRecs, i)
			flatActions = append(flatActions, textAction(recs[i].T.Episode.Trajectory.WholeReply, s))
		}
	}
	ts := make([]Transition, len(flatRecs))
	for f, i := range flatRecs {
		ts[f] = recs[i].T
	}
	verdicts, err := m.judgeActions(ctx, ts, flatActions, seed(seedFuture), seed(seedCritique))
	if err != nil {
		return err
	}
	for f, i := range flatRecs {
		if verdicts[f].fits {
			recs[i].Candidates = append(recs[i].Candidates, verdicts[f].candidate(flatActions[f], counts))
		}
	}
	for _, i := range open {
		best := -1
		judgedOptimal := false
		for c, cand := range recs[i].Candidates {
			judgedOptimal = judgedOptimal || cand.Judgement == Optimal
			if envs.ParseAction(cand.Action) != "" && (best < 0 || cand.POptimal > recs[i].Candidates[best].POptimal) {
				best = c
			}
		}
		if !judgedOptimal {
			counts.NoOptimal++
		}
		if best < 0 {
			recs[i].Why = "no candidate is an action"
			if len(recs[i].Candidates) == 0 {
				// Every candidate's successor or evaluator prompt
				// outgrew the context: the transition is too long.
				recs[i].TooLong, recs[i].Why = true, "no candidate judged: prompts too long"
				counts.TooLong++
			}
			continue
		}
		b := recs[i].Candidates[best]
		recs[i].Distill = b.Action
		recs[i].Why = fmt.Sprintf("candidate %d of %d rated best (p(optimal) %s, judged %s)", best+1, len(recs[i].Candidates), probability(b.POptimal), b.Judgement)
		if !sameAction(recs[i].Distill, recs[i].Action) {
			counts.Changed++
		}
	}
	return nil
}
