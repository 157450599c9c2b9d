package train

import (
	"math"
	"math/rand/v2"
	"testing"
)

// lossSequences are three sequences with weights, and log-probabilities
// for their tokens.
func lossSequences() ([]Sequence, [][]float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	var seqs []Sequence
	var logp [][]float32
	for _, n := range []int{6, 9, 5} {
		s := Sequence{Tokens: make([]int32, n), Weights: make([]float32, n)}
		lp := make([]float32, n)
		for i := 2; i < n; i++ {
			s.Weights[i] = float32(1 + rng.IntN(2))
			lp[i] = float32(-3 * rng.Float64())
		}
		seqs = append(seqs, s)
		logp = append(logp, lp)
	}
	return seqs, logp
}

// checkLossGradient compares a loss's gradient with central differences
// in each log-probability.
func checkLossGradient(t *testing.T, name string, loss Loss, seqs []Sequence, logp [][]float32) {
	t.Helper()
	zero := func() [][]float32 {
		g := make([][]float32, len(seqs))
		for i, s := range seqs {
			g[i] = make([]float32, len(s.Tokens))
		}
		return g
	}
	grad := zero()
	if _, _, err := loss.Eval(seqs, logp, grad); err != nil {
		t.Fatal(err)
	}
	nonzero := 0
	for s := range seqs {
		for i := range seqs[s].Tokens {
			if seqs[s].weight(i) == 0 {
				if grad[s][i] != 0 {
					t.Errorf("%s: gradient %g at a zero-weight token", name, grad[s][i])
				}
				continue
			}
			orig := logp[s][i]
			const h = 1e-3
			logp[s][i] = orig + h
			up, _, _ := loss.Eval(seqs, logp, zero())
			logp[s][i] = orig - h
			down, _, _ := loss.Eval(seqs, logp, zero())
			logp[s][i] = orig
			fd := (up - down) / (float64(orig+h) - float64(orig-h))
			if math.Abs(fd-float64(grad[s][i])) > 1e-3*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s: sequence %d token %d: gradient %g, finite difference %g", name, s, i, grad[s][i], fd)
			}
			if grad[s][i] != 0 {
				nonzero++
			}
		}
	}
	if nonzero == 0 {
		t.Errorf("%s: every gradient is zero", name)
	}
}

func TestLossGradients(t *testing.T) {
	seqs, logp := lossSequences()
	checkLossGradient(t, "cross-entropy by weight", CrossEntropy{}, seqs, logp)
	checkLossGradient(t, "cross-entropy by tokens", CrossEntropy{Norm: ByTokens}, seqs, logp)
	checkLossGradient(t, "dpo", DPO{Beta: 0.5, Pairs: []Pair{{Chosen: 0, Rejected: 1, RefChosen: -5, RefRejected: -9}, {Chosen: 2, Rejected: 1, RefChosen: -4, RefRejected: -8}}}, seqs, logp)
	sample, adv, ref := make([][]float32, 3), make([][]float32, 3), make([][]float32, 3)
	rng := rand.New(rand.NewPCG(3, 4))
	for s := range seqs {
		sample[s], adv[s], ref[s] = make([]float32, len(logp[s])), make([]float32, len(logp[s])), make([]float32, len(logp[s]))
		for i := range logp[s] {
			// Ratios inside and outside the clip range, advantages of both signs.
			sample[s][i] = logp[s][i] + float32(0.4*rng.NormFloat64())
			adv[s][i] = float32(rng.NormFloat64())
			ref[s][i] = logp[s][i] + float32(0.2*rng.NormFloat64())
		}
	}
	checkLossGradient(t, "ppo", PPO{Clip: 0.2, SampleLogProbs: sample, Advantages: adv, KLCoef: 0.1, RefLogProbs: ref}, seqs, logp)
}

func TestCrossEntropyValue(t *testing.T) {
	seqs := []Sequence{{Tokens: []int32{1, 2, 3}, Weights: []float32{0, 1, -2}}}
	logp := [][]float32{{0, -1, -3}}
	grad := [][]float32{make([]float32, 3)}
	for _, tc := range []struct {
		norm Normalization
		want float64
	}{{ByWeight, -(1*-1 + -2*-3) / 3.0}, {ByTokens, -(1*-1 + -2*-3) / 2.0}} {
		got, _, err := CrossEntropy{Norm: tc.norm}.Eval(seqs, logp, grad)
		if err != nil || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("normalisation %d: loss %g, %v; want %g", tc.norm, got, err, tc.want)
		}
	}
	if _, _, err := (CrossEntropy{}).Eval([]Sequence{{Tokens: []int32{1, 2}, Weights: []float32{0, 0}}}, [][]float32{{0, 0}}, [][]float32{{0, 0}}); err == nil {
		t.Error("all-zero weights accepted")
	}
}

func TestDPOMetrics(t *testing.T) {
	seqs := []Sequence{{Tokens: []int32{1, 2}}, {Tokens: []int32{1, 3}}}
	logp := [][]float32{{0, -1}, {0, -2}}
	grad := [][]float32{{0, 0}, {0, 0}}
	loss, m, err := DPO{Beta: 0.1, Pairs: []Pair{{Chosen: 0, Rejected: 1, RefChosen: -1.5, RefRejected: -1.5}}}.Eval(seqs, logp, grad)
	if err != nil {
		t.Fatal(err)
	}
	// Rewards 0.1 * (-1 + 1.5) = 0.05 and 0.1 * (-2 + 1.5) = -0.05.
	if math.Abs(m["reward_chosen"]-0.05) > 1e-9 || math.Abs(m["reward_rejected"]+0.05) > 1e-9 || m["accuracy"] != 1 {
		t.Errorf("metrics %v", m)
	}
	if want := math.Log1p(math.Exp(-0.1)); math.Abs(loss-want) > 1e-9 {
		t.Errorf("loss %g, want %g", loss, want)
	}
	if grad[0][1] >= 0 || grad[1][1] <= 0 {
		t.Errorf("gradients %v should raise the chosen and lower the rejected", grad)
	}
	if _, _, err := (DPO{Beta: 0.1, Pairs: []Pair{{Chosen: 0, Rejected: 0}}}).Eval(seqs, logp, grad); err == nil {
		t.Error("a pair of one sequence with itself accepted")
	}
}

func TestPPOClipsTheRatio(t *testing.T) {
	seqs := []Sequence{{Tokens: []int32{1, 2, 3}}}
	logp := [][]float32{{0, -1, -1}}
	// Token 1: ratio e^0.5 > 1.2 with a positive advantage: clipped, no
	// gradient. Token 2: ratio e^-0.5 < 0.8 with a positive advantage:
	// unclipped, gradient -A r / 2.
	sample := [][]float32{{0, -1.5, -0.5}}
	adv := [][]float32{{0, 1, 1}}
	grad := [][]float32{make([]float32, 3)}
	_, m, err := PPO{Clip: 0.2, SampleLogProbs: sample, Advantages: adv}.Eval(seqs, logp, grad)
	if err != nil {
		t.Fatal(err)
	}
	if grad[0][1] != 0 || math.Abs(float64(grad[0][2])+math.Exp(-0.5)/2) > 1e-6 || m["clip_fraction"] != 0.5 {
		t.Errorf("gradients %v, metrics %v", grad, m)
	}
}
