package train

import (
	"errors"
	"fmt"
	"math"
)

// Loss is an objective on the log-probabilities of a micro-batch's tokens.
// Every loss the trainer supports is a function of the log-probabilities
// of the tokens that were actually seen, so the trainer computes them,
// hands them to the loss, and back-propagates the gradient the loss
// returns for each through the network.
type Loss interface {
	// Eval returns the loss of the micro-batch and writes its gradient with
	// respect to each log-probability into grad. logp[s][i] and grad[s][i]
	// belong to seqs[s].Tokens[i]; logp is computed (and grad read) where
	// seqs[s].Weights[i] != 0. metrics are named figures to report.
	Eval(seqs []Sequence, logp, grad [][]float32) (loss float64, metrics map[string]float64, err error)
}

// Counted is a Loss that is a mean over its micro-batch's targets (weighted
// tokens, preference pairs, probes): Targets says what it divides by. A
// step over several micro-batches weighs each by its targets, so that its
// gradient is that of the mean over all of them, however the step was
// split into micro-batches; a loss that is not Counted weighs 1 a
// micro-batch. Targets is called after Eval has accepted seqs.
type Counted interface {
	Loss
	Targets(seqs []Sequence) float64
}

// targetsOf is the weight of a micro-batch of loss in its step.
func targetsOf(loss Loss, seqs []Sequence) (float64, error) {
	c, ok := loss.(Counted)
	if !ok {
		return 1, nil
	}
	n := c.Targets(seqs)
	if !(n > 0) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("the loss counts %g targets in its micro-batch", n)
	}
	return n, nil
}

// Normalization selects what a token-level loss is divided by.
type Normalization int

const (
	// ByWeight divides by the sum of |weight| over the micro-batch.
	ByWeight Normalization = iota
	// ByTokens divides by the number of tokens with a non-zero weight.
	ByTokens
)

func normalizer(seqs []Sequence, norm Normalization) float64 {
	z := 0.0
	for _, s := range seqs {
		for i := 1; i < len(s.Tokens); i++ {
			w := float64(s.weight(i))
			switch {
			case w == 0:
			case norm == ByTokens:
				z++
			default:
				z += math.Abs(w)
			}
		}
	}
	return z
}

// CrossEntropy is the weighted token cross-entropy, -sum w_i log p_i / Z:
// supervised fine-tuning with weights 0 and 1, advantage-weighted
// regression with real weights.
type CrossEntropy struct {
	Norm Normalization
}

// Targets implements Counted: the normaliser Z.
func (c CrossEntropy) Targets(seqs []Sequence) float64 { return normalizer(seqs, c.Norm) }

// Eval implements Loss.
func (c CrossEntropy) Eval(seqs []Sequence, logp, grad [][]float32) (float64, map[string]float64, error) {
	z := normalizer(seqs, c.Norm)
	if z == 0 {
		return 0, nil, errors.New("cross-entropy: every weight is zero")
	}
	loss := 0.0
	for s, seq := range seqs {
		for i := 1; i < len(seq.Tokens); i++ {
			if w := float64(seq.weight(i)); w != 0 {
				loss -= w * float64(logp[s][i])
				grad[s][i] = float32(-w / z)
			}
		}
	}
	// The tokens it scored are the trainer's Result.Scored.
	return loss / z, nil, nil
}

// Pair is a preference pair of a DPO micro-batch: two continuations of one
// prompt, as indices of the micro-batch's sequences, whose target tokens
// (non-zero weights) are the continuations. RefChosen and RefRejected are
// the reference model's log-probabilities of the continuations (weighted
// sums, as the policy's are computed).
type Pair struct {
	Chosen, Rejected       int
	RefChosen, RefRejected float64
}

// DPO is direct preference optimisation: -log sigmoid(beta * margin), with
// margin = (log pi(chosen) - log ref(chosen)) - (log pi(rejected) -
// log ref(rejected)), averaged over the pairs. A continuation's
// log-probability is the sum of w_i log p_i over its tokens, so step-level
// variants weight the tokens of one step.
type DPO struct {
	Beta  float64
	Pairs []Pair
}

// SumLogProb is the weighted sum of a sequence's token log-probabilities,
// the sequence score DPO compares.
func SumLogProb(s Sequence, logp []float32) float64 {
	sum := 0.0
	for i := 1; i < len(s.Tokens); i++ {
		if w := s.weight(i); w != 0 {
			sum += float64(w) * float64(logp[i])
		}
	}
	return sum
}

// Targets implements Counted: the pairs.
func (d DPO) Targets([]Sequence) float64 { return float64(len(d.Pairs)) }

// Eval implements Loss. Metrics: reward_chosen and reward_rejected (the
// implicit rewards beta * (log pi - log ref), averaged), margin and
// accuracy (the share of pairs whose chosen reward is higher).
func (d DPO) Eval(seqs []Sequence, logp, grad [][]float32) (float64, map[string]float64, error) {
	if len(d.Pairs) == 0 {
		return 0, nil, errors.New("dpo: no pairs")
	}
	if !(d.Beta > 0) {
		return 0, nil, fmt.Errorf("dpo: beta %g must be positive", d.Beta)
	}
	var loss, rc, rr, acc, margin float64
	n := float64(len(d.Pairs))
	for k, p := range d.Pairs {
		if p.Chosen < 0 || p.Chosen >= len(seqs) || p.Rejected < 0 || p.Rejected >= len(seqs) || p.Chosen == p.Rejected {
			return 0, nil, fmt.Errorf("dpo: pair %d names sequences %d and %d of %d", k, p.Chosen, p.Rejected, len(seqs))
		}
		rewardC := d.Beta * (SumLogProb(seqs[p.Chosen], logp[p.Chosen]) - p.RefChosen)
		rewardR := d.Beta * (SumLogProb(seqs[p.Rejected], logp[p.Rejected]) - p.RefRejected)
		z := rewardC - rewardR
		loss += softplus(-z)
		// d/dz of -log sigmoid(z) is -sigmoid(-z).
		g := -sigmoid(-z) * d.Beta / n
		scaleGrad(seqs[p.Chosen], grad[p.Chosen], g)
		scaleGrad(seqs[p.Rejected], grad[p.Rejected], -g)
		rc += rewardC
		rr += rewardR
		margin += z
		if z > 0 {
			acc++
		}
	}
	return loss / n, map[string]float64{
		"reward_chosen": rc / n, "reward_rejected": rr / n, "margin": margin / n, "accuracy": acc / n,
	}, nil
}

// scaleGrad adds g * w_i to the gradient of each weighted token.
func scaleGrad(s Sequence, grad []float32, g float64) {
	for i := 1; i < len(s.Tokens); i++ {
		if w := s.weight(i); w != 0 {
			grad[i] += float32(g * float64(w))
		}
	}
}

// PPO is the clipped surrogate objective of proximal policy optimisation,
// per token: -min(r A, clip(r, 1-Clip, 1+Clip) A) with r = p / p_sample,
// plus KLCoef times the k3 estimate of KL(pi || ref), exp(ref - lp) -
// (ref - lp) - 1. Tokens with a non-zero weight take part, each scaled by
// its weight, and the sum is divided by the sum of |weight|.
type PPO struct {
	Clip float64
	// SampleLogProbs, Advantages and (with KLCoef > 0) RefLogProbs are
	// indexed like the sequences' tokens.
	SampleLogProbs [][]float32
	Advantages     [][]float32
	KLCoef         float64
	RefLogProbs    [][]float32
}

// Targets implements Counted: the sum of |weight|.
func (p PPO) Targets(seqs []Sequence) float64 { return normalizer(seqs, ByWeight) }

// Eval implements Loss. Metrics: clip_fraction (tokens whose clipped term
// is active), ratio (mean p / p_sample) and kl (mean KL estimate).
func (p PPO) Eval(seqs []Sequence, logp, grad [][]float32) (float64, map[string]float64, error) {
	if !(p.Clip > 0) {
		return 0, nil, fmt.Errorf("ppo: clip %g must be positive", p.Clip)
	}
	if len(p.SampleLogProbs) != len(seqs) || len(p.Advantages) != len(seqs) || (p.KLCoef != 0 && len(p.RefLogProbs) != len(seqs)) {
		return 0, nil, fmt.Errorf("ppo: log-probabilities and advantages for %d sequences needed", len(seqs))
	}
	z := normalizer(seqs, ByWeight)
	if z == 0 {
		return 0, nil, errors.New("ppo: every weight is zero")
	}
	var loss, clipped, ratios, kls, n float64
	for s, seq := range seqs {
		if len(p.SampleLogProbs[s]) != len(seq.Tokens) || len(p.Advantages[s]) != len(seq.Tokens) ||
			(p.KLCoef != 0 && len(p.RefLogProbs[s]) != len(seq.Tokens)) {
			return 0, nil, fmt.Errorf("ppo: sequence %d: per-token inputs must have %d entries", s, len(seq.Tokens))
		}
		for i := 1; i < len(seq.Tokens); i++ {
			w := float64(seq.weight(i))
			if w == 0 {
				continue
			}
			lp, adv := float64(logp[s][i]), float64(p.Advantages[s][i])
			r := math.Exp(lp - float64(p.SampleLogProbs[s][i]))
			unclipped, clippedTerm := r*adv, math.Max(1-p.Clip, math.Min(1+p.Clip, r))*adv
			var g float64
			if unclipped <= clippedTerm {
				loss -= w * unclipped
				g = -w * adv * r // d(r A)/dlp = r A
			} else {
				loss -= w * clippedTerm
				clipped++
			}
			if p.KLCoef != 0 {
				d := float64(p.RefLogProbs[s][i]) - lp
				kl := math.Exp(d) - d - 1
				loss += w * p.KLCoef * kl
				g += w * p.KLCoef * (1 - math.Exp(d))
				kls += kl
			}
			grad[s][i] = float32(g / z)
			ratios += r
			n++
		}
	}
	return loss / z, map[string]float64{"clip_fraction": clipped / n, "ratio": ratios / n, "kl": kls / n}, nil
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// softplus is log(1 + e^x), computed without overflow.
func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}
