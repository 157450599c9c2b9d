package rl

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/agentrl/agentrl/llm/train"
)

// criticAdapter names PPO's value function: a LoRA adapter of its own on
// the base model.
const criticAdapter = "critic"

func criticOptions(c Config) train.AdapterOptions {
	return train.AdapterOptions{Optimizer: train.AdamW{LR: c.PPO.CriticLR}, Seed: c.Seed ^ 0x63726974} // "crit"
}

// trainPPO is proximal policy optimisation with a learned critic. The
// critic is a second LoRA adapter that reads the same episode sequence as
// the actor; its value of the state before each action is the probability
// it gives the judgement token PPO.ValueToken (" Yes") at the position
// where the action begins, V(s) = p(Yes | s) in [0, 1]: the returns of
// the built-in environments lie in [0, 1], the value needs no head the
// base model lacks, and one forward pass over an episode reads every
// state's value (docs/training.md). Advantages come from GAE over the
// turns, normalised over the iteration; the critic is fitted to the
// λ-returns by cross-entropy.
func trainPPO(ctx context.Context, r *Run) error {
	c := r.Config.PPO
	if err := r.WarmStart(ctx); err != nil {
		return err
	}
	if err := r.Trainer.SetLR(c.LR); err != nil {
		return err
	}
	valueToken, err := r.SingleToken(c.ValueToken)
	if err != nil {
		return fmt.Errorf("ppo.value_token: %w", err)
	}
	for it := r.State.Iteration + 1; it <= r.Config.Iterations; it++ {
		r.BeginIteration(it)
		trajs, err := r.Rollouts(ctx, it, r.Config.Rollout.Tasks, 1, r.Config.Rollout.Temperature)
		if err != nil {
			return err
		}

		// The episodes as sequences; the critic's probes read the value
		// before each action.
		var episodes []ActionSequence
		var owner []int // trajectory of each sequence
		for i := range trajs {
			seqs, err := EpisodeSequences(&trajs[i])
			if err != nil {
				return err
			}
			episodes = append(episodes, seqs...)
			for range seqs {
				owner = append(owner, i)
			}
		}
		actorSeqs := make([]train.Sequence, len(episodes))
		criticSeqs := make([]train.Sequence, len(episodes))
		for i, e := range episodes {
			actorSeqs[i] = e.Sequence
			criticSeqs[i] = valueProbes(e, valueToken)
		}
		values, err := r.criticValues(criticSeqs)
		if err != nil {
			return err
		}

		// GAE per episode over its turns, from the step rewards (less the
		// invalid-action penalty) and the critic's values. An episode cut
		// by the step limit counts as ended: the environments score it as
		// a failure.
		stepValues := make([][]float64, len(trajs))
		for i := range trajs {
			stepValues[i] = make([]float64, len(trajs[i].Steps))
		}
		for k, e := range episodes {
			for _, sp := range e.Actions {
				stepValues[owner[k]][sp.Step] = math.Exp(float64(values[k][sp.Start]))
			}
		}
		stepAdv := make([][]float64, len(trajs))
		stepRet := make([][]float64, len(trajs))
		var all, meanValue []float64
		for i, t := range trajs {
			rewards := make([]float64, len(t.Steps))
			for s, st := range t.Steps {
				rewards[s] = st.Reward
				if !st.Info.ValidAction {
					rewards[s] -= c.InvalidPenalty
				}
			}
			if stepAdv[i], stepRet[i], err = GAE(rewards, stepValues[i], 0, true, c.Gamma, c.Lambda); err != nil {
				return err
			}
			all = append(all, stepAdv[i]...)
			meanValue = append(meanValue, stepValues[i]...)
		}
		mean, std := stat.MeanStdDev(all, nil)
		if std == 0 || math.IsNaN(std) {
			std = 1
		}
		advantages := make([][]float32, len(episodes))
		targets := make([][]float32, len(episodes))
		for k, e := range episodes {
			norm := make([]float64, len(stepAdv[owner[k]]))
			for s, a := range stepAdv[owner[k]] {
				norm[s] = (a - mean) / (std + 1e-8)
			}
			if advantages[k], err = e.StepValues(norm); err != nil {
				return err
			}
			ret := make([]float64, len(stepRet[owner[k]]))
			for s, g := range stepRet[owner[k]] {
				ret[s] = math.Min(1, math.Max(0, g))
			}
			if targets[k], err = e.StepValues(ret); err != nil {
				return err
			}
		}

		sampled := sampledOf(episodes)
		var policyLoss, valueLoss, clip float64
		steps := 0
		for epoch := range c.Epochs {
			for _, mb := range r.Minibatches(it, epoch, len(episodes), c.Minibatches) {
				res, err := r.Update(actorSeqs, r.MicroBatches(actorSeqs, mb), func(b []int) train.Loss {
					return train.PPO{Clip: c.Clip, SampleLogProbs: pick(sampled, b), Advantages: pick(advantages, b)}
				})
				if err != nil {
					return fmt.Errorf("iteration %d: policy: %w", it, err)
				}
				if err := r.Trainer.UseAdapter(criticAdapter); err != nil {
					return err
				}
				vres, err := r.Update(criticSeqs, r.MicroBatches(criticSeqs, mb), func(b []int) train.Loss {
					return ProbeCrossEntropy{Targets: pick(targets, b)}
				})
				if err != nil {
					return fmt.Errorf("iteration %d: critic: %w", it, err)
				}
				if err := r.Trainer.UseAdapter(ActorAdapter); err != nil {
					return err
				}
				policyLoss += res.Loss
				valueLoss += vres.Loss
				clip += res.Metrics["clip_fraction"]
				steps++
			}
		}
		m := r.Metrics()
		m.Loss = policyLoss / float64(steps)
		m.Losses["policy"] = m.Loss
		m.Losses["critic"] = valueLoss / float64(steps)
		m.Metrics["clip_fraction"] = clip / float64(steps)
		m.Metrics["value"] = stat.Mean(meanValue, nil)
		if err := r.EndIteration(ctx, it); err != nil {
			return err
		}
	}
	return nil
}

// valueProbes is the critic's view of an episode sequence: the same
// tokens, read at the first token of each action, where the judgement
// token is probed.
func valueProbes(e ActionSequence, token int32) train.Sequence {
	s := train.Sequence{Tokens: e.Tokens, Weights: make([]float32, len(e.Tokens)), Targets: make([]int32, len(e.Tokens))}
	for _, sp := range e.Actions {
		s.Weights[sp.Start] = 1
		s.Targets[sp.Start] = token
	}
	return s
}

// criticValues returns the critic's log-probabilities of the judgement
// token at every probe.
func (r *Run) criticValues(seqs []train.Sequence) ([][]float32, error) {
	if err := r.Trainer.UseAdapter(criticAdapter); err != nil {
		return nil, err
	}
	lp, err := r.LogProbs(seqs, false)
	if e := r.Trainer.UseAdapter(ActorAdapter); e != nil {
		return nil, e
	}
	return lp, err
}

func sampledOf(episodes []ActionSequence) [][]float32 {
	out := make([][]float32, len(episodes))
	for i, e := range episodes {
		out[i] = e.SampleLogProbs
	}
	return out
}

// SingleToken tokenises text, which must be one token of the model (a
// judgement token).
func (r *Run) SingleToken(text string) (int32, error) {
	toks, err := r.model.Tokenize(text, false, false)
	if err != nil {
		return 0, err
	}
	if len(toks) != 1 {
		return 0, fmt.Errorf("%q is %d tokens of this model; the judgement must be one token", text, len(toks))
	}
	return toks[0], nil
}

// ProbeCrossEntropy trains a judgement read from a probe token (see
// train.Sequence.Targets): the binary cross-entropy between the
// probability p = exp(log p) of the judgement token at each probe (each
// position with a non-zero weight) and the target in [0, 1] there,
// -(G log p + (1 - G) log(1 - p)), averaged over the probes. PPO's critic
// (targets: returns) and StepAgent's discriminator (targets: 1 for expert
// actions, 0 for the agent's) use it. Only log p is computed, so the
// gradient goes through it: dL/dlog p = -G + (1 - G) p / (1 - p).
type ProbeCrossEntropy struct {
	// Targets are indexed like the sequences' tokens.
	Targets [][]float32
}

// maxValue keeps 1 - p away from 0, where the gradient of log(1 - p)
// grows without bound.
const maxValue = 1 - 1e-4

// Eval implements train.Loss.
func (v ProbeCrossEntropy) Eval(seqs []train.Sequence, logp, grad [][]float32) (float64, map[string]float64, error) {
	if len(v.Targets) != len(seqs) {
		return 0, nil, fmt.Errorf("probe cross-entropy: %d target rows for %d sequences", len(v.Targets), len(seqs))
	}
	var loss, n, absErr float64
	for _, seq := range seqs {
		for i := 1; i < len(seq.Tokens); i++ {
			if seq.Weights[i] != 0 {
				n++
			}
		}
	}
	if n == 0 {
		return 0, nil, errors.New("probe cross-entropy: no probes")
	}
	for s, seq := range seqs {
		for i := 1; i < len(seq.Tokens); i++ {
			if seq.Weights[i] == 0 {
				continue
			}
			g := float64(v.Targets[s][i])
			p := math.Min(math.Exp(float64(logp[s][i])), maxValue)
			loss -= g*math.Log(math.Max(p, 1e-12)) + (1-g)*math.Log1p(-p)
			grad[s][i] = float32((-g + (1-g)*p/(1-p)) / n)
			absErr += math.Abs(p - g)
		}
	}
	return loss / n, map[string]float64{"abs_error": absErr / n}, nil
}
