package rl

import (
	"errors"
	"fmt"
	"math"

	"github.com/agentrl/agentrl/llm/train"
)

// LogOddsCrossEntropy trains a yes/no judgement read from two probes of
// one position (see train.Sequence.Targets): each pair holds the same
// tokens probed for the "yes" token (Chosen) and the "no" token
// (Rejected), D = sigmoid(log p(yes) - log p(no)), and the loss is the
// binary cross-entropy -(y log D + (1 - y) log(1 - D)) against the label y
// in [0, 1], averaged over the pairs. Unlike the probability of one token,
// which starts near zero over a large vocabulary, the log-odds start near
// D = 1/2 and need only the two tokens to move apart. StepAgent's
// discriminator uses it.
type LogOddsCrossEntropy struct {
	Pairs  []train.Pair
	Labels []float64 // one per pair
}

// Eval implements train.Loss. Metrics: accuracy, the share of pairs on
// the side of 1/2 their label is.
func (l LogOddsCrossEntropy) Eval(seqs []train.Sequence, logp, grad [][]float32) (float64, map[string]float64, error) {
	if len(l.Pairs) == 0 || len(l.Labels) != len(l.Pairs) {
		return 0, nil, fmt.Errorf("log-odds cross-entropy: %d pairs and %d labels", len(l.Pairs), len(l.Labels))
	}
	var loss, right float64
	n := float64(len(l.Pairs))
	for k, p := range l.Pairs {
		yes, no, err := probes(seqs, p)
		if err != nil {
			return 0, nil, err
		}
		z := float64(logp[p.Chosen][yes] - logp[p.Rejected][no])
		y := l.Labels[k]
		// -(y log σ(z) + (1-y) log σ(-z)) = y softplus(-z) + (1-y) softplus(z)
		loss += y*softplus(-z) + (1-y)*softplus(z)
		g := (sigmoid(z) - y) / n
		grad[p.Chosen][yes] += float32(g)
		grad[p.Rejected][no] -= float32(g)
		if (z > 0) == (y > 0.5) {
			right++
		}
	}
	return loss / n, map[string]float64{"accuracy": right / n}, nil
}

// LogOdds returns, for each pair, log p(yes) - log p(no) from the
// log-probabilities of the pair's sequences.
func LogOdds(seqs []train.Sequence, logp [][]float32, pairs []train.Pair) ([]float64, error) {
	out := make([]float64, len(pairs))
	for k, p := range pairs {
		yes, no, err := probes(seqs, p)
		if err != nil {
			return nil, err
		}
		out[k] = float64(logp[p.Chosen][yes] - logp[p.Rejected][no])
	}
	return out, nil
}

// probes finds the probe position (the one weighted token) of each
// sequence of a pair.
func probes(seqs []train.Sequence, p train.Pair) (yes, no int, err error) {
	find := func(s int) (int, error) {
		if s < 0 || s >= len(seqs) {
			return 0, fmt.Errorf("pair names sequence %d of %d", s, len(seqs))
		}
		at := -1
		for i, w := range seqs[s].Weights {
			if w != 0 {
				if at >= 0 {
					return 0, errors.New("a judgement sequence has more than one probe")
				}
				at = i
			}
		}
		if at < 0 {
			return 0, errors.New("a judgement sequence has no probe")
		}
		return at, nil
	}
	if yes, err = find(p.Chosen); err != nil {
		return
	}
	no, err = find(p.Rejected)
	return
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// softplus is log(1 + e^x), computed without overflow.
func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}
