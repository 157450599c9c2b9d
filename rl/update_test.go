package rl

import (
	"reflect"
	"testing"

	"github.com/agentrl/agentrl/llm/train"
)

// TestMicroBatchesKeepTwinsTogether: a sequence with the same context as
// the one before it (a judgement's second probe: the same tokens but the
// last) counts only its scored tokens in the budget, since the trainer
// computes the two's context once, and is never cut from it into the next
// micro-batch.
func TestMicroBatchesKeepTwinsTogether(t *testing.T) {
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
	seqs := []train.Sequence{a, a, b, probeNo, c}
	got := microBatches(seqs, []int{0, 1, 2, 3, 4}, 82)
	want := [][]int{{0, 1, 2, 3}, {4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("twins: micro-batches %v, want %v", got, want)
	}
	// A twin after a sequence longer than the budget, and one after a
	// cut, stay with their sequences.
	long := seq(100, 300)
	got = microBatches([]train.Sequence{a, long, long, b, b}, []int{0, 1, 2, 3, 4}, 82)
	if want := [][]int{{0}, {1, 2}, {3, 4}}; !reflect.DeepEqual(got, want) {
		t.Errorf("twins at cuts: micro-batches %v, want %v", got, want)
	}
	// A twin scoring every token (two equal episodes of a group) costs
	// its scored tokens: the second does not fit beside the first two.
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
	// A twin that does not follow its sequence counts in full.
	got = microBatches([]train.Sequence{a, b, a}, []int{0, 1, 2}, 80)
	if want := [][]int{{0, 1}, {2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("twin apart: micro-batches %v, want %v", got, want)
	}
}
