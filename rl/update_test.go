package rl

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm/train"
)

// TestStepMeansWeighStepsByTargets: an iteration's loss and metrics over
// optimiser steps of unequal size are those of one step over all their
// targets, not the mean of the steps' means; and a real Update says how
// many targets its step had.
func TestStepMeansWeighStepsByTargets(t *testing.T) {
	var m StepMeans
	if m.Loss() != 0 || m.Metric("accuracy") != 0 {
		t.Fatalf("no steps: loss %g, accuracy %g; want 0", m.Loss(), m.Metric("accuracy"))
	}
	m.Add(UpdateResult{Loss: 1, Targets: 1, Metrics: map[string]float64{"accuracy": 0}})
	m.Add(UpdateResult{Loss: 3, Targets: 3, Metrics: map[string]float64{"accuracy": 1}})
	if m.Loss() != 2.5 || m.Metric("accuracy") != 0.75 {
		t.Errorf("loss %g, accuracy %g; want 2.5 and 0.75 (the plain mean of the steps: 2 and 0.5)", m.Loss(), m.Metric("accuracy"))
	}

	r, err := Open(lettersConfig("grpo", 1), Options{ModelPath: byteModel(t), Dir: t.TempDir(), NewEnv: func() envs.Env { return &letters{} }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	seqs := []train.Sequence{
		{Tokens: []int32{1, 40, 41, 42, 43}, Weights: []float32{0, 0, 1, 1, 1}},
		{Tokens: []int32{1, 50, 51}, Weights: []float32{0, 0, 1}},
	}
	res, err := r.Update(seqs, [][]int{{0}, {1}}, func([]int) train.Loss { return train.CrossEntropy{} })
	if err != nil {
		t.Fatal(err)
	}
	if res.Targets != 4 {
		t.Errorf("a step over 3 and 1 weighted tokens has %g targets, want 4", res.Targets)
	}
}

// TestMicroBatchesCountSharedPrefixesOnce: a sequence sharing a prefix
// with one before it in its batch (a judgement's second probe: the same
// tokens but the last; a DPO pair's other action in the same context)
// counts only what it adds, since the trainer computes the prefix once,
// and a sequence longer than the budget takes its probes along.
func TestMicroBatchesCountSharedPrefixesOnce(t *testing.T) {
	seq := func(n int, first int32) train.Sequence {
		s := train.Sequence{Tokens: make([]int32, n), Weights: make([]float32, n)}
		for i := range s.Tokens {
			s.Tokens[i] = first + int32(i)
		}
		s.Weights[n-1] = 1 // one probe
		return s
	}
	a, b, c := seq(40, 1), seq(40, 100), seq(30, 200)
	probeNo := seq(40, 100)
	probeNo.Tokens[39] = 7
	// a twin adds its one token and its scored one: 2
	seqs := []train.Sequence{a, a, b, probeNo, c}
	got := microBatches(seqs, []int{0, 1, 2, 3, 4}, 84)
	want := [][]int{{0, 1, 2, 3}, {4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("twins: micro-batches %v, want %v", got, want)
	}
	if got := microBatches(seqs, []int{0, 1, 2, 3, 4}, 83); !reflect.DeepEqual(got, [][]int{{0, 1, 2}, {3, 4}}) {
		t.Errorf("twins over the budget by one: micro-batches %v", got)
	}
	// A twin after a sequence longer than the budget, and one after a
	// cut, stay with their sequences.
	long := seq(100, 300)
	got = microBatches([]train.Sequence{a, long, long, b, b}, []int{0, 1, 2, 3, 4}, 82)
	if want := [][]int{{0}, {1, 2}, {3, 4}}; !reflect.DeepEqual(got, want) {
		t.Errorf("twins at cuts: micro-batches %v, want %v", got, want)
	}
	// A twin scoring every token (two equal episodes of a group) adds a
	// logit row per token, as much as computing it: the third does not
	// fit beside the first two.
	full := train.Sequence{Tokens: a.Tokens}
	got = microBatches([]train.Sequence{full, full, full}, []int{0, 1, 2}, 80)
	if want := [][]int{{0, 1}, {2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("fully scored twins: micro-batches %v, want %v", got, want)
	}
	// Sequences of different tokens fill the budget as before.
	got = microBatches([]train.Sequence{a, b, c}, []int{0, 1, 2}, 80)
	if want := [][]int{{0, 1}, {2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("distinct: micro-batches %v, want %v", got, want)
	}
	// A twin shares with any sequence before it in its batch.
	got = microBatches([]train.Sequence{a, b, a}, []int{0, 1, 2}, 82)
	if want := [][]int{{0, 1, 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("twin apart: micro-batches %v, want %v", got, want)
	}
	// Two actions in one context of 40 tokens: the second adds its 5
	// tokens and the logit row of its first, read from the context's
	// last slot. One sharing less than half of its context counts in
	// full.
	action := func(ctx train.Sequence, keep int, tail ...int32) train.Sequence {
		s := train.Sequence{Tokens: append(append([]int32(nil), ctx.Tokens[:keep]...), tail...)}
		s.Weights = make([]float32, len(s.Tokens))
		for i := keep; i < len(s.Tokens); i++ {
			s.Weights[i] = 1
		}
		return s
	}
	chosen, rejected := action(a, 40, 1, 2, 3, 4, 5), action(a, 40, 9, 8, 7, 6, 5)
	little := action(a, 10, make([]int32, 20)...)
	if got := microBatches([]train.Sequence{chosen, rejected, c}, []int{0, 1, 2}, 81); !reflect.DeepEqual(got, [][]int{{0, 1, 2}}) {
		t.Errorf("a pair in one context: micro-batches %v, want one of 45+6+30 tokens", got)
	}
	if got := microBatches([]train.Sequence{chosen, little}, []int{0, 1}, 74); !reflect.DeepEqual(got, [][]int{{0}, {1}}) {
		t.Errorf("a short shared prefix: micro-batches %v, want two (45+30 tokens over 74)", got)
	}
	// A sequence longer than the budget takes along endings of its own
	// that add 41 tokens each while they add up to the budget, no more.
	ends := []train.Sequence{long}
	for first := range int32(3) {
		tail := make([]int32, 40)
		for i := range tail {
			tail[i] = 1000*(first+1) + int32(i)
		}
		ends = append(ends, action(long, 60, tail...))
	}
	if got := microBatches(ends, []int{0, 1, 2, 3}, 82); !reflect.DeepEqual(got, [][]int{{0, 1, 2}, {3}}) {
		t.Errorf("endings of a long sequence: micro-batches %v, want the first two taken along", got)
	}
}

// TestGroupMinibatches: whole groups are dealt, every index once, in an
// order the iteration's seed fixes.
func TestGroupMinibatches(t *testing.T) {
	r := &Run{Config: Config{Seed: 7}}
	groups := [][]int{{0, 1, 2}, {3}, {4, 5}, {6, 7, 8, 9}, {10}}
	got := r.GroupMinibatches(2, 0, groups, 2)
	if len(got) != 2 {
		t.Fatalf("%d minibatches, want 2", len(got))
	}
	seen := map[int]bool{}
	for _, mb := range got {
		for i := 0; i < len(mb); {
			g := slices.IndexFunc(groups, func(g []int) bool { return g[0] == mb[i] })
			if g < 0 || !slices.Equal(mb[i:min(i+len(groups[g]), len(mb))], groups[g]) {
				t.Fatalf("minibatch %v splits a group at %d", mb, i)
			}
			for _, k := range groups[g] {
				seen[k] = true
			}
			i += len(groups[g])
		}
	}
	if len(seen) != 11 {
		t.Fatalf("indices dealt: %v", got)
	}
	if again := r.GroupMinibatches(2, 0, groups, 2); !reflect.DeepEqual(again, got) {
		t.Fatalf("the same iteration dealt %v, then %v", got, again)
	}
	if other := r.GroupMinibatches(2, 1, groups, 5); reflect.DeepEqual(other, r.GroupMinibatches(2, 2, groups, 5)) {
		t.Errorf("two epochs dealt the groups in the same order: %v", other)
	}
}
