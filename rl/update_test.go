package rl

import (
	"reflect"
	"testing"

	"github.com/agentrl/agentrl/llm/train"
)

// TestMicroBatchesKeepTwinsTogether: a sequence with the same context as
// the one before it (a judgement's second probe: the same tokens but the
// last) costs nothing in the budget, since the trainer computes the two
// once, and is never cut from it into the next micro-batch.
func TestMicroBatchesKeepTwinsTogether(t *testing.T) {
	seq := func(n int, first int32) train.Sequence {
		s := train.Sequence{Tokens: make([]int32, n)}
		for i := range s.Tokens {
			s.Tokens[i] = first + int32(i)
		}
		return s
	}
	a, b, c := seq(40, 1), seq(40, 100), seq(30, 200)
	probeNo := seq(40, 100)
	probeNo.Tokens[39] = 7
	seqs := []train.Sequence{a, a, b, probeNo, c}
	got := microBatches(seqs, []int{0, 1, 2, 3, 4}, 80)
	want := [][]int{{0, 1, 2, 3}, {4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("twins: micro-batches %v, want %v", got, want)
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
