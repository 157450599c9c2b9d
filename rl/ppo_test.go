package rl

import (
	"math"
	"testing"

	"github.com/agentrl/agentrl/llm/train"
)

// TestValueLoss checks the critic's cross-entropy on hand-computed values
// and its gradient against finite differences.
func TestValueLoss(t *testing.T) {
	seqs := []train.Sequence{{Tokens: []int32{1, 2, 3, 4}, Weights: []float32{0, 1, 0, 1}}}
	logp := [][]float32{{0, float32(math.Log(0.8)), 0, float32(math.Log(0.25))}}
	targets := [][]float32{{0, 1, 0, 0.5}}
	loss := ProbeCrossEntropy{Targets: targets}
	grad := [][]float32{make([]float32, 4)}
	got, m, err := loss.Eval(seqs, logp, grad)
	if err != nil {
		t.Fatal(err)
	}
	// Probe 1: -log 0.8. Probe 2: -(0.5 log 0.25 + 0.5 log 0.75).
	want := (-math.Log(0.8) - 0.5*math.Log(0.25) - 0.5*math.Log(0.75)) / 2
	if math.Abs(got-want) > 1e-6 || math.Abs(m["abs_error"]-(0.2+0.25)/2) > 1e-6 {
		t.Fatalf("loss %g (want %g), metrics %v", got, want, m)
	}
	for _, i := range []int{1, 3} {
		const h = 1e-3
		orig := logp[0][i]
		logp[0][i] = orig + h
		up, _, _ := loss.Eval(seqs, logp, [][]float32{make([]float32, 4)})
		logp[0][i] = orig - h
		down, _, _ := loss.Eval(seqs, logp, [][]float32{make([]float32, 4)})
		logp[0][i] = orig
		fd := (up - down) / (2 * h)
		if math.Abs(fd-float64(grad[0][i])) > 1e-3 {
			t.Errorf("probe %d: gradient %g, finite difference %g", i, grad[0][i], fd)
		}
	}
	if grad[0][0] != 0 || grad[0][2] != 0 {
		t.Errorf("gradient outside the probes: %v", grad[0])
	}
}

func TestValueProbesAtActionStarts(t *testing.T) {
	e := ActionSequence{
		Sequence: train.Sequence{Tokens: []int32{1, 2, 3, 4, 5, 6, 7}, Weights: []float32{0, 0, 1, 1, 0, 0, 1}},
		Actions:  []ActionSpan{{Step: 0, Start: 2, End: 4}, {Step: 1, Start: 6, End: 7}},
	}
	s := valueProbes(e, 99)
	wantW := []float32{0, 0, 1, 0, 0, 0, 1}
	for i := range wantW {
		if s.Weights[i] != wantW[i] || (wantW[i] == 1) != (s.Targets[i] == 99) {
			t.Fatalf("probes: weights %v, targets %v", s.Weights, s.Targets)
		}
	}
}

// TestLogOddsCrossEntropy checks the judgement loss on hand-computed
// log-odds and its gradient against finite differences.
func TestLogOddsCrossEntropy(t *testing.T) {
	probe := func() train.Sequence {
		return train.Sequence{Tokens: []int32{1, 2, 3}, Weights: []float32{0, 0, 1}}
	}
	seqs := []train.Sequence{probe(), probe(), probe(), probe()}
	logp := [][]float32{{0, 0, -1}, {0, 0, -2}, {0, 0, -0.5}, {0, 0, -0.25}}
	loss := LogOddsCrossEntropy{Pairs: []train.Pair{{Chosen: 0, Rejected: 1}, {Chosen: 2, Rejected: 3}}, Labels: []float64{1, 0}}
	grad := make([][]float32, 4)
	for i := range grad {
		grad[i] = make([]float32, 3)
	}
	got, m, err := loss.Eval(seqs, logp, grad)
	if err != nil {
		t.Fatal(err)
	}
	// Pair 1: z = 1, label 1: softplus(-1). Pair 2: z = -0.25, label 0: softplus(-0.25).
	want := (math.Log1p(math.Exp(-1)) + math.Log1p(math.Exp(-0.25))) / 2
	if math.Abs(got-want) > 1e-9 || m["accuracy"] != 1 {
		t.Fatalf("loss %g (want %g), metrics %v", got, want, m)
	}
	for s := range seqs {
		const h = 1e-3
		orig := logp[s][2]
		logp[s][2] = orig + h
		up, _, _ := loss.Eval(seqs, logp, [][]float32{make([]float32, 3), make([]float32, 3), make([]float32, 3), make([]float32, 3)})
		logp[s][2] = orig - h
		down, _, _ := loss.Eval(seqs, logp, [][]float32{make([]float32, 3), make([]float32, 3), make([]float32, 3), make([]float32, 3)})
		logp[s][2] = orig
		if fd := (up - down) / (2 * h); math.Abs(fd-float64(grad[s][2])) > 1e-4 {
			t.Errorf("sequence %d: gradient %g, finite difference %g", s, grad[s][2], fd)
		}
	}
	odds, err := LogOdds(seqs, logp, loss.Pairs)
	if err != nil || odds[0] != 1 || odds[1] != -0.25 {
		t.Fatalf("log-odds %v, %v", odds, err)
	}
}
