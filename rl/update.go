package rl

import (
	"math/rand/v2"
	"time"

	"github.com/agentrl/agentrl/llm/train"
)

// UpdateResult sums up the optimiser steps of one Update.
type UpdateResult struct {
	Steps   int
	Loss    float64 // over all the step's targets
	Targets float64 // what the loss is over (train.Counted; 1 a micro-batch otherwise)
	Tokens  int
	Metrics map[string]float64 // the micro-batches' means, weighted by their targets
}

// StepMeans gathers the optimiser steps of an iteration into its loss and
// metrics. Each step weighs its targets, so the means are those one step
// over all of them would report: a minibatch of few pairs or tokens
// counts for few.
type StepMeans struct {
	targets, loss float64
	sums          map[string]float64
}

// Add counts one step.
func (s *StepMeans) Add(res UpdateResult) { s.add(res.Loss, res.Targets, res.Metrics) }

// add counts a loss and metrics over targets: a step's, or within a
// step a micro-batch's.
func (s *StepMeans) add(loss, targets float64, metrics map[string]float64) {
	if s.sums == nil {
		s.sums = map[string]float64{}
	}
	s.targets += targets
	s.loss += loss * targets
	for k, v := range metrics {
		s.sums[k] += v * targets
	}
}

// Loss is the mean loss over the steps' targets; 0 before any step.
func (s *StepMeans) Loss() float64 {
	if s.targets == 0 {
		return 0
	}
	return s.loss / s.targets
}

// Metric is the mean of the named metric over the steps' targets; 0
// before any step.
func (s *StepMeans) Metric(name string) float64 {
	if s.targets == 0 {
		return 0
	}
	return s.sums[name] / s.targets
}

// metrics are the means of every metric counted.
func (s *StepMeans) metrics() map[string]float64 {
	out := map[string]float64{}
	for k := range s.sums {
		out[k] = s.Metric(k)
	}
	return out
}

// Update takes one optimiser step of the active adapter over the
// micro-batches given as indices into seqs (see MicroBatches): lossFor
// builds the loss of each micro-batch from its indices, and the step
// follows the loss over the targets of all (train.Trainer.Step).
func (r *Run) Update(seqs []train.Sequence, micro [][]int, lossFor func(batch []int) train.Loss) (UpdateResult, error) {
	start := time.Now()
	var res UpdateResult
	var means StepMeans // over the step's micro-batches
	for _, b := range micro {
		// A stop request (Ctrl-C) ends the iteration between
		// micro-batches; the run resumes from its last finished one.
		if err := r.stopped(); err != nil {
			r.Trainer.ZeroGrad()
			return res, err
		}
		part := make([]train.Sequence, len(b))
		for i, k := range b {
			part[i] = seqs[k]
		}
		out, err := r.Trainer.Accumulate(part, lossFor(b))
		if err != nil {
			r.Trainer.ZeroGrad()
			return res, err
		}
		means.add(out.Loss, out.Targets, out.Metrics)
		res.Tokens += out.Tokens
	}
	if _, err := r.Trainer.Step(); err != nil {
		return res, err
	}
	res.Steps = 1
	res.Loss, res.Targets, res.Metrics = means.Loss(), means.targets, means.metrics()
	r.State.GradSteps++
	r.State.TrainTokens += int64(res.Tokens)
	adapter := r.Trainer.ActiveAdapter()
	if r.updateSteps == nil { // an update outside an iteration
		r.updateSteps = map[string]int{}
	}
	r.updateSteps[adapter]++
	// An update of a real model takes minutes: it says how it goes every
	// half minute (its first step after the rollouts at once).
	if !r.fineTuning && time.Since(r.updateLogged) > 30*time.Second {
		r.updateLogged = time.Now()
		secs := time.Since(start).Seconds()
		r.logf("  update of the %s: step %d of the iteration, loss %.4f, %d tokens in %s (%.0f tok/s)",
			adapter, r.updateSteps[adapter], res.Loss, res.Tokens, round(secs), float64(res.Tokens)/secs)
	}
	return res, nil
}

// LogProbs is the trainer's LogProbs of the active adapter (base: of the
// base model) over seqs, computed micro-batch by micro-batch (see
// MicroBatches) so that a whole iteration's sequences never make one
// graph.
func (r *Run) LogProbs(seqs []train.Sequence, base bool) ([][]float32, error) {
	idx := make([]int, len(seqs))
	for i := range idx {
		idx[i] = i
	}
	out := make([][]float32, len(seqs))
	for _, mb := range r.MicroBatches(seqs, idx) {
		if err := r.stopped(); err != nil {
			return nil, err
		}
		part := make([]train.Sequence, len(mb))
		for i, k := range mb {
			part[i] = seqs[k]
		}
		var lp [][]float32
		var err error
		if base {
			lp, err = r.Trainer.BaseLogProbs(part)
		} else {
			lp, err = r.Trainer.LogProbs(part)
		}
		if err != nil {
			return nil, err
		}
		for i, k := range mb {
			out[k] = lp[i]
		}
	}
	return out, nil
}

// MicroBatches groups the indexed sequences, in order, into micro-batches
// of at most LoRA.BatchTokens tokens (a longer sequence is one of its own;
// a sequence sharing a prefix counts as microBatches says).
func (r *Run) MicroBatches(seqs []train.Sequence, idx []int) [][]int {
	return microBatches(seqs, idx, r.Config.LoRA.BatchTokens)
}

// microBatches groups the indexed sequences, in order, into batches of at
// most budget tokens (a longer sequence is a batch of its own). A sequence
// sharing a prefix with one before it in its batch (train.SharedSlots)
// counts only what it adds (train.AddedTokens): the trainer computes the
// prefix once, so a judgement's second probe or a DPO pair's second
// action costs next to nothing. A sequence longer than the budget, a
// batch of its own, takes along the sequences after it that share its
// prefix, as long as what they add stays within the budget.
func microBatches(seqs []train.Sequence, idx []int, budget int) [][]int {
	var out [][]int
	var cur []int
	var held []train.Sequence // the sequences of cur
	n := 0
	for _, k := range idx {
		s := seqs[k]
		l := train.AddedTokens(s, held)
		shares := l < len(s.Tokens)
		alongLong := shares && len(held[0].Tokens) > budget && train.AddedTokens(s, held[:1]) == l && n-len(held[0].Tokens)+l <= budget
		if len(cur) > 0 && n+l > budget && !alongLong {
			out = append(out, cur)
			cur, held, n = nil, nil, 0
			l = len(s.Tokens) // apart from what it shared, computed in full
		}
		cur, held = append(cur, k), append(held, s)
		n += l
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// Minibatches shuffles 0..n-1 with the iteration's seed and deals them
// into m minibatches (fewer when n < m).
func (r *Run) Minibatches(it, epoch, n, m int) [][]int {
	rng := rand.New(rand.NewPCG(r.IterSeed(it, seedShuffle), uint64(epoch)))
	perm := rng.Perm(n)
	m = max(min(m, n), 1)
	out := make([][]int, m)
	for i, k := range perm {
		out[i%m] = append(out[i%m], k)
	}
	return out
}

// GroupMinibatches deals whole groups of indices (the sequences of one
// state, which share its prefix) into m minibatches, the groups shuffled
// with the iteration's seed as Minibatches shuffles single indices: a
// group's sequences are trained in one micro-batch where they fit, and
// the trainer computes their shared prefix once.
func (r *Run) GroupMinibatches(it, epoch int, groups [][]int, m int) [][]int {
	dealt := r.Minibatches(it, epoch, len(groups), m)
	out := make([][]int, len(dealt))
	for i, gs := range dealt {
		for _, g := range gs {
			out[i] = append(out[i], groups[g]...)
		}
	}
	return out
}

// UpdatePairs takes one optimiser step of the active adapter over
// preference pairs of seqs, in the given order: the pairs are dealt into
// micro-batches of at most LoRA.BatchTokens tokens that each hold whole
// pairs, and lossFor builds each micro-batch's loss from its pairs, whose
// sequence indices are local to the micro-batch, and their indices in
// pairs.
func (r *Run) UpdatePairs(seqs []train.Sequence, pairs []train.Pair, order []int, lossFor func(local []train.Pair, idx []int) train.Loss) (UpdateResult, error) {
	var micro, idx [][]int
	var local [][]train.Pair
	var cur, curIdx []int
	var held []train.Sequence // the sequences of cur
	var curPairs []train.Pair
	n := 0
	flush := func() {
		if len(cur) > 0 {
			micro = append(micro, cur)
			local = append(local, curPairs)
			idx = append(idx, curIdx)
		}
		cur, held, curPairs, curIdx, n = nil, nil, nil, nil, 0
	}
	for _, k := range order {
		p := pairs[k]
		// What the two add to the micro-batch: a DPO pair's two actions
		// in one context, or a judgement's two probes, share the
		// context's computation (see microBatches), and so may pairs of
		// one state.
		cost := func() int {
			l := train.AddedTokens(seqs[p.Chosen], held)
			return l + train.AddedTokens(seqs[p.Rejected], append(held[:len(held):len(held)], seqs[p.Chosen]))
		}
		l := cost()
		if len(cur) > 0 && n+l > r.Config.LoRA.BatchTokens {
			flush()
			l = cost()
		}
		lp := p
		lp.Chosen, lp.Rejected = len(cur), len(cur)+1
		cur = append(cur, p.Chosen, p.Rejected)
		held = append(held, seqs[p.Chosen], seqs[p.Rejected])
		curPairs = append(curPairs, lp)
		curIdx = append(curIdx, k)
		n += l
	}
	flush()
	batch := 0
	return r.Update(seqs, micro, func([]int) train.Loss {
		batch++
		return lossFor(local[batch-1], idx[batch-1])
	})
}
