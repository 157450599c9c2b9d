package rl

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/agentrl/agentrl/llm/train"
)

// LogOddsCrossEntropy trains yes/no judgements, each read from two
// probes of the same position (see train.Sequence.Targets): a pair holds
// the same context probed for the "yes" token (Chosen) and for the "no"
// token (Rejected) at one or more positions, those with a non-zero weight,
// the same in both. At each, D = sigmoid(log p(yes) - log p(no)) and the
// loss is the binary cross-entropy -(y log D + (1 - y) log(1 - D)) against
// the label y in [0, 1] there, averaged over every probe of the pairs.
// Unlike the probability of one token, which starts near zero over a large
// vocabulary, the log-odds start near D = 1/2 and need only the two tokens
// to move apart; and the trainer computes a pair's two sequences once
// (train.SameContext). StepAgent's discriminator (a probe after each
// judged action, labels 1 for the expert's and 0 for the agent's) and
// PPO's critic (a probe before each action, labels the λ-returns) use it.
type LogOddsCrossEntropy struct {
	Pairs []train.Pair
	// Labels hold, for each pair, one label per probe in the order of
	// their positions.
	Labels [][]float64
	// Offsets, when not nil, are shaped as Labels and subtracted from
	// each probe's log-odds before D: a judge that learns a change to
	// fixed log-odds, such as the base model's.
	Offsets [][]float64
}

// Targets implements train.Counted: the probes of the pairs.
func (l LogOddsCrossEntropy) Targets(seqs []train.Sequence) float64 {
	n := 0
	for _, p := range l.Pairs {
		at, _ := probes(seqs, p) // Eval has accepted them
		n += len(at)
	}
	return float64(n)
}

// Eval implements train.Loss. Metrics: accuracy, the share of probes on
// the side of 1/2 their label is; abs_error, the mean |D - y|.
func (l LogOddsCrossEntropy) Eval(seqs []train.Sequence, logp, grad [][]float32) (float64, map[string]float64, error) {
	if len(l.Pairs) == 0 || len(l.Labels) != len(l.Pairs) {
		return 0, nil, fmt.Errorf("log-odds cross-entropy: %d pairs and %d label rows", len(l.Pairs), len(l.Labels))
	}
	at := make([][]int, len(l.Pairs))
	n := 0
	for k, p := range l.Pairs {
		var err error
		if at[k], err = probes(seqs, p); err != nil {
			return 0, nil, err
		}
		if len(at[k]) != len(l.Labels[k]) {
			return 0, nil, fmt.Errorf("log-odds cross-entropy: pair %d has %d probes and %d labels", k, len(at[k]), len(l.Labels[k]))
		}
		if l.Offsets != nil && (len(l.Offsets) != len(l.Pairs) || len(l.Offsets[k]) != len(at[k])) {
			return 0, nil, fmt.Errorf("log-odds cross-entropy: %d offset rows for %d pairs, pair %d with %d probes", len(l.Offsets), len(l.Pairs), k, len(at[k]))
		}
		n += len(at[k])
	}
	var loss, right, absErr float64
	for k, p := range l.Pairs {
		for j, i := range at[k] {
			z := float64(logp[p.Chosen][i] - logp[p.Rejected][i])
			if l.Offsets != nil {
				z -= l.Offsets[k][j]
			}
			y := l.Labels[k][j]
			// -(y log σ(z) + (1-y) log σ(-z)) = y softplus(-z) + (1-y) softplus(z)
			loss += y*softplus(-z) + (1-y)*softplus(z)
			g := (sigmoid(z) - y) / float64(n)
			grad[p.Chosen][i] += float32(g)
			grad[p.Rejected][i] -= float32(g)
			absErr += math.Abs(sigmoid(z) - y)
			if (z > 0) == (y > 0.5) {
				right++
			}
		}
	}
	return loss / float64(n), map[string]float64{"accuracy": right / float64(n), "abs_error": absErr / float64(n)}, nil
}

// LogOdds returns, for each pair, log p(yes) - log p(no) at each of its
// probes, in the order of their positions.
func LogOdds(seqs []train.Sequence, logp [][]float32, pairs []train.Pair) ([][]float64, error) {
	out := make([][]float64, len(pairs))
	for k, p := range pairs {
		at, err := probes(seqs, p)
		if err != nil {
			return nil, err
		}
		out[k] = make([]float64, len(at))
		for j, i := range at {
			out[k][j] = float64(logp[p.Chosen][i] - logp[p.Rejected][i])
		}
	}
	return out, nil
}

// ProbePair is a judgement of tokens at the given positions, which must
// rise strictly within 1..len(tokens)-1 (labels go with the probes in
// this order): the tokens probed for yes (first) and for no (second) at
// each of them, every other token context. The two have the same context,
// which the trainer computes once.
func ProbePair(tokens []int32, at []int, yes, no int32) (train.Sequence, train.Sequence, error) {
	for i, p := range at {
		if p < 1 || p >= len(tokens) || i > 0 && p <= at[i-1] {
			return train.Sequence{}, train.Sequence{}, fmt.Errorf("judgement probes at %v of %d tokens: positions must rise within 1..%d", at, len(tokens), len(tokens)-1)
		}
	}
	probe := func(token int32) train.Sequence {
		s := train.Sequence{Tokens: tokens, Weights: make([]float32, len(tokens)), Targets: make([]int32, len(tokens))}
		for _, i := range at {
			s.Weights[i] = 1
			s.Targets[i] = token
		}
		return s
	}
	return probe(yes), probe(no), nil
}

// probes finds the probe positions (the weighted tokens) of a pair's
// sequences, which must be the same in both.
func probes(seqs []train.Sequence, p train.Pair) ([]int, error) {
	find := func(s int) ([]int, error) {
		if s < 0 || s >= len(seqs) {
			return nil, fmt.Errorf("pair names sequence %d of %d", s, len(seqs))
		}
		var at []int
		for i, w := range seqs[s].Weights {
			if w != 0 {
				at = append(at, i)
			}
		}
		if len(at) == 0 {
			return nil, errors.New("a judgement sequence has no probe")
		}
		return at, nil
	}
	yes, err := find(p.Chosen)
	if err != nil {
		return nil, err
	}
	no, err := find(p.Rejected)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(yes, no) {
		return nil, fmt.Errorf("the two probes of a judgement are at different positions (%v, %v)", yes, no)
	}
	return yes, nil
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// softplus is log(1 + e^x), computed without overflow.
func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}
