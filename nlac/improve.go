package nlac

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentrl/agentrl/envs"
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
	// Candidates are NLQL's sampled actions with their judgements.
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
	// Asked marks a judgement the evaluator gave only when asked for it
	// (askJudgements).
	Asked bool
	// Refined is the refinement's text and action ("" when the action was
	// kept); Valid says whether the environment accepted the action.
	RefinedText, Refined string
	Valid                bool
}

// Candidate is an action NLQL compares, with its futures and critique.
type Candidate struct {
	Action    string
	Futures   []string
	Critique  string
	Judgement Judgement
	Asked     bool
}

// Counts are an iteration's tallies of the critic's outputs.
type Counts struct {
	Transitions, TooLong, Judgements, Optimal, Unparsed int
	// Asked are the judgements the evaluator gave when asked for one
	// after a critique without it, AskedOptimal those of them optimal
	// (Unparsed counts what it then did not give either).
	Asked, AskedOptimal                                 int
	Refinements, InvalidRefinements, Changed, Distilled int
	NoOptimal, EmptyMerges                              int
	// FailedRollouts are NLRL rollouts the environment failed.
	FailedRollouts int
	// The first-round judgements of the actions the episodes took, by the
	// episode's outcome (with: it succeeded) and, where the environment
	// has an expert, by whether the action is the expert's there (what the
	// warm-up teaches the evaluator to judge optimal). A critic whose
	// verdicts carry information judges more of the first kind optimal.
	ByOutcome, ByExpert JudgedSplit
}

// JudgedSplit counts parsed judgements of actions with and without some
// property, and how many of each were optimal.
type JudgedSplit struct {
	With, OptimalWith, Without, OptimalWithout int
}

// add counts judgement j of an action that has the property or not.
func (s *JudgedSplit) add(j Judgement, with bool) {
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
)

// improve is policy improvement on a batch of transitions: each action
// is critiqued from k futures (sampled from the successor model; for
// self-distillation the real continuation, for NLRL fresh rollouts of
// the actor) and, where judged suboptimal, refined, up to m rounds; the
// last action standing is distilled. NLQL instead judges Candidates
// sampled actions and distils the first judged optimal.
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
	var open []int
	for i := range recs {
		if !recs[i].TooLong {
			current[i] = recs[i].Action
			open = append(open, i)
		}
	}
	byExpert, err := m.takenByExpert(ctx, recs, open)
	if err != nil {
		return err
	}
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
		var refine []int
		for k, i := range open {
			if !critiques[k].fits {
				recs[i].TooLong, recs[i].Why = true, "prompt too long for the context"
				counts.TooLong++
				continue
			}
			j := counts.judge(critiques[k])
			if round == 0 {
				counts.ByOutcome.add(j, recs[i].T.Episode.Trajectory.Success)
				if expert, ok := byExpert[i]; ok {
					counts.ByExpert.add(j, expert)
				}
			}
			recs[i].Rounds = append(recs[i].Rounds, Round{Action: current[i], Futures: futures[k], Critique: critiques[k].text, Judgement: j, Asked: critiques[k].asked})
			switch verdict := j; {
			case verdict == Unparsed && m.cfg.UnparsedJudgement == "skip":
				recs[i].Why = "critique without a judgement: skipped"
			case verdict == Optimal || (verdict == Unparsed && m.cfg.UnparsedJudgement == "optimal"):
				recs[i].Distill, recs[i].Why = current[i], fmt.Sprintf("judged optimal in round %d", round+1)
				if verdict == Unparsed {
					recs[i].Why = "critique without a judgement: kept as optimal"
				}
			default:
				refine = append(refine, i)
			}
		}
		if len(refine) == 0 {
			break
		}
		refined, err := m.refine(ctx, recs, refine, current, roundSeed(seed(seedRefine), round))
		if err != nil {
			return err
		}
		open = open[:0]
		for k, i := range refine {
			r := &recs[i].Rounds[len(recs[i].Rounds)-1]
			if refined[k].tooLong {
				recs[i].TooLong, recs[i].Why = true, "refinement prompt too long"
				counts.TooLong++
				continue
			}
			r.RefinedText, r.Refined, r.Valid = refined[k].text, refined[k].action, refined[k].valid
			counts.Refinements++
			if !r.Valid {
				counts.InvalidRefinements++
				if m.cfg.InvalidRefinement == "original" {
					recs[i].Distill, recs[i].Why = current[i], "refinement invalid: the action it refined"
				} else {
					recs[i].Why = "refinement invalid: dropped"
				}
				continue
			}
			current[i] = r.Refined
			recs[i].Distill, recs[i].Why = r.Refined, fmt.Sprintf("refined in round %d", round+1)
			open = append(open, i)
		}
	}
	for i := range recs {
		if recs[i].Distill != "" && !strings.EqualFold(recs[i].Distill, recs[i].Action) {
			counts.Changed++
		}
	}
	return nil
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
			out[k] = []string{TrueFuture(recs[i].T)}
		}
		return open, out, nil
	case "nlrl":
		return m.rolloutFutures(ctx, recs, open, current, seed, counts)
	}
	prompts := make([][]int32, len(open))
	for k, i := range open {
		tokens, err := m.promptTokens(roleSuccessor, recs[i].T, current[i], nil, m.cfg.FutureTokens)
		if err != nil {
			return nil, nil, err
		}
		prompts[k] = tokens
	}
	out, err := m.generateSome(ctx, "futures", m.critic, prompts, m.cfg.Futures, m.cfg.FutureTokens, m.cfg.Temperature, seed)
	return open, out, err
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
		tr := &t.Episode.Trajectory
		actions := make([]string, 0, t.Step+1)
		for _, s := range tr.Steps[:t.Step] {
			actions = append(actions, s.Action)
		}
		// The action as the actor wrote it, where it is the one taken:
		// its conversation then goes on from its own words.
		a := current[i]
		if a == recs[i].Action {
			a = tr.Steps[t.Step].Action
		}
		starts[k] = rollout.Start{Split: tr.Split, Seed: tr.Seed, Actions: append(actions, a)}
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
		futures[k] = append(futures[k], TrueFuture(Transition{Episode: &Episode{Trajectory: *tr}, Step: len(starts[k].Actions) - 1}))
	}
	if m.progress != nil {
		m.progress("  rollouts: %d x %d in %.1fs", len(starts), group, time.Since(began).Seconds())
	}
	var keptOpen []int
	var kept [][]string
	for k, i := range open {
		if futures[k] == nil {
			recs[i].Why = "no NLRL rollout finished: " + failed[k]
			continue
		}
		keptOpen = append(keptOpen, i)
		kept = append(kept, futures[k])
	}
	return keptOpen, kept, nil
}

// critique is the evaluator's text on one action. fits is false where
// its prompt does not fit the context (no text); asked marks a text whose
// judgement the evaluator gave only when asked for it, appended as a
// last "Judgement: ..." line (askJudgements).
type critique struct {
	text        string
	fits, asked bool
}

// critiques has the evaluator critique each open transition's current
// action from its futures: one text each.
func (m *roleModel) critiques(ctx context.Context, recs []Record, open []int, current []string, futures [][]string, seed uint64) ([]critique, error) {
	// Room for the critique, and for the question after it.
	reserve := m.cfg.CritiqueTokens
	if m.cfg.AskJudgement {
		reserve += askCueTokens + askTokens
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
			out[k] = critique{text: t[0], fits: true}
		}
	}
	if !m.cfg.AskJudgement {
		return out, nil
	}
	return out, m.askJudgements(ctx, prompts, out)
}

// askTokens bound the evaluator's answer to "Judgement:", and askCueTokens
// the tokens of the question itself beyond the critique's (the critique
// retokenised may take a few more than it was generated in).
const askTokens, askCueTokens = 4, 8

// askJudgements continues each critique that ends without a judgement
// (ParseJudgement: Unparsed) with "Judgement:" in the evaluator's own
// turn, has the evaluator answer greedily, and where the answer is a
// verdict and nothing more, appends it to the critique as its last
// "Judgement: ..." line and marks the critique asked. A small evaluator
// often writes a sound critique and runs out of tokens, or drifts into
// describing the page, before its verdict. An answer that is no verdict,
// or more than one (a copy of the instructions' 'optimal" or
// "suboptimal'), leaves the critique Unparsed.
func (m *roleModel) askJudgements(ctx context.Context, prompts [][]int32, critiques []critique) error {
	var asked []int
	var asks [][]int32
	for k, c := range critiques {
		if !c.fits || ParseJudgement(c.text) != Unparsed {
			continue
		}
		cue, err := m.model.Tokenize(c.text+"\nJudgement:", false, false)
		if err != nil {
			return err
		}
		ask := append(slices.Clip(prompts[k]), cue...)
		if len(ask)+askTokens > m.context {
			continue
		}
		asked = append(asked, k)
		asks = append(asks, ask)
	}
	answers, err := m.generate(ctx, "asked judgements", m.critic, asks, 1, askTokens, 0, 0)
	if err != nil {
		return err
	}
	for j, k := range asked {
		if verdict := verdictAnswer(answers[j][0]); verdict != Unparsed {
			critiques[k].text += "\nJudgement: " + verdict.String()
			critiques[k].asked = true
		}
	}
	return nil
}

// verdictAnswer reads an answer to "Judgement:" that is one verdict and
// nothing more but punctuation and emphasis ("optimal", " **Suboptimal.**",
// "not optimal"); anything else is Unparsed.
func verdictAnswer(answer string) Judgement {
	words := strings.FieldsFunc(strings.ToLower(answer), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '-')
	})
	switch strings.Join(words, " ") {
	case "optimal":
		return Optimal
	case "suboptimal", "sub-optimal", "not optimal":
		return Suboptimal
	}
	return Unparsed
}

// fitting drops from open (and from texts, indexed alike) the
// transitions that got no texts because their prompts do not fit the
// context, marking them too long.
func fitting(recs []Record, open []int, texts [][]string, counts *Counts) ([]int, [][]string) {
	var keptOpen []int
	var keptTexts [][]string
	for k, i := range open {
		if texts[k] == nil {
			recs[i].TooLong, recs[i].Why = true, "prompt too long for the context"
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
}

// refine rewrites each listed transition's current action from its last
// critique and checks the result in the environment: a refinement with
// no action in it, or one the environment rejects, is invalid.
func (m *roleModel) refine(ctx context.Context, recs []Record, idx []int, current []string, seed uint64) ([]refinement, error) {
	prompts := make([][]int32, len(idx))
	for k, i := range idx {
		critique := recs[i].Rounds[len(recs[i].Rounds)-1].Critique
		tokens, err := m.promptTokens(roleRefine, recs[i].T, current[i], func(d *promptData) { d.Critique = shorten(critique, 600) }, m.actionTokens)
		if err != nil {
			return nil, err
		}
		prompts[k] = tokens
	}
	texts, err := m.generateSome(ctx, "refinements", m.critic, prompts, 1, m.actionTokens, m.cfg.Temperature, seed)
	if err != nil {
		return nil, err
	}
	out := make([]refinement, len(idx))
	var toCheck []Transition
	var actions []string
	var where []int
	for k, t := range texts {
		if t == nil {
			out[k].tooLong = true
			continue
		}
		out[k] = refinement{text: t[0], action: actionOf(t[0])}
		if out[k].action != "" {
			toCheck = append(toCheck, recs[idx[k]].T)
			actions = append(actions, out[k].action)
			where = append(where, k)
		}
	}
	valid, err := m.check(ctx, toCheck, actions)
	if err != nil {
		return nil, err
	}
	for c, k := range where {
		out[k].valid = valid[c]
	}
	return out, nil
}

// selectBest is NLQL's improvement: Candidates actions sampled from the
// actor at each state, each judged from its futures; the first judged
// optimal is distilled, and a state with none teaches nothing.
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
			flatActions = append(flatActions, actionText(envs.ParseAction(s), s))
		}
	}
	// The candidates are judged as records of their own, one per action.
	cands := make([]Record, len(flatRecs))
	idx := make([]int, len(flatRecs))
	for f, i := range flatRecs {
		cands[f] = Record{T: recs[i].T, Action: flatActions[f]}
		idx[f] = f
	}
	var tally Counts
	idx, futures, err := m.futuresFor(ctx, cands, idx, flatActions, "nlac", seed(seedFuture), &tally)
	if err != nil {
		return err
	}
	open2, futures := fitting(cands, idx, futures, &tally)
	critiques, err := m.critiques(ctx, cands, open2, flatActions, futures, seed(seedCritique))
	if err != nil {
		return err
	}
	judged := map[int]int{} // candidate -> its row in critiques
	for k, f := range open2 {
		if critiques[k].fits {
			judged[f] = k
		}
	}
	for f, i := range flatRecs {
		k, ok := judged[f]
		if !ok {
			continue
		}
		j := counts.judge(critiques[k])
		recs[i].Candidates = append(recs[i].Candidates, Candidate{Action: flatActions[f], Futures: futures[k], Critique: critiques[k].text, Judgement: j, Asked: critiques[k].asked})
		if j == Optimal && recs[i].Distill == "" && envs.ParseAction(flatActions[f]) != "" {
			recs[i].Distill, recs[i].Why = flatActions[f], fmt.Sprintf("candidate %d of %d judged optimal", len(recs[i].Candidates), m.cfg.Candidates)
		}
	}
	for _, i := range open {
		if recs[i].Distill == "" {
			counts.NoOptimal++
			recs[i].Why = "no candidate judged optimal"
		} else if !strings.EqualFold(recs[i].Distill, recs[i].Action) {
			counts.Changed++
		}
	}
	return nil
}
