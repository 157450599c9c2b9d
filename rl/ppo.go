package rl

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/agentrl/agentrl/envs"
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
// the actor; its value of the state before each action is its judgement
// at the position where the action begins, the log-odds of the tokens
// PPO.ValueToken (" Yes") and PPO.NegativeToken (" No") there, a
// probability sigmoid(log p(Yes | s) - log p(No | s)) that stands for
// where the return falls between the environment's bounds
// (returnScale): the value needs no head the base model lacks, and one
// forward pass over an episode reads every state's value
// (docs/training.md). Advantages come from GAE over the turns, normalised
// over the iteration; the critic is fitted to the λ-returns, mapped onto
// [0, 1], by cross-entropy.
func trainPPO(ctx context.Context, r *Run) error {
	c := r.Config.PPO
	// The value tokens are checked before the warm start, which can take
	// an hour.
	yes, err := r.SingleToken(c.ValueToken)
	if err != nil {
		return fmt.Errorf("ppo.value_token: %w", err)
	}
	no, err := r.SingleToken(c.NegativeToken)
	if err != nil {
		return fmt.Errorf("ppo.negative_token: %w", err)
	}
	if yes == no {
		return fmt.Errorf("ppo.value_token %q and ppo.negative_token %q are the same token of this model: the critic's log-odds would always be 0", c.ValueToken, c.NegativeToken)
	}
	scale, err := newReturnScale(envs.SpecOf(r.NewEnv))
	if err != nil {
		return err
	}
	if err := r.WarmStart(ctx); err != nil {
		return err
	}
	if err := r.Trainer.SetLR(c.LR); err != nil {
		return err
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
		var criticSeqs []train.Sequence
		criticPairs := make([]train.Pair, len(episodes))
		for i, e := range episodes {
			actorSeqs[i] = e.Sequence
			criticPairs[i] = train.Pair{Chosen: len(criticSeqs), Rejected: len(criticSeqs) + 1}
			yesProbe, noProbe, err := valueProbes(e, yes, no)
			if err != nil {
				return err
			}
			criticSeqs = append(criticSeqs, yesProbe, noProbe)
		}
		values, err := r.criticValues(criticSeqs, criticPairs, scale)
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
			for j, sp := range e.Actions {
				stepValues[owner[k]][sp.Step] = values[k][j]
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
		targets := make([][]float64, len(episodes)) // the λ-return before each action, mapped onto [0, 1]
		for k, e := range episodes {
			norm := make([]float64, len(stepAdv[owner[k]]))
			for s, a := range stepAdv[owner[k]] {
				norm[s] = (a - mean) / (std + 1e-8)
			}
			if advantages[k], err = e.StepValues(norm); err != nil {
				return err
			}
			for _, sp := range e.Actions {
				targets[k] = append(targets[k], scale.target(stepRet[owner[k]][sp.Step]))
			}
		}

		sampled := sampledOf(episodes)
		var policy, critic StepMeans
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
				vres, err := r.UpdatePairs(criticSeqs, criticPairs, mb, func(local []train.Pair, idx []int) train.Loss {
					return LogOddsCrossEntropy{Pairs: local, Labels: pick(targets, idx)}
				})
				if err != nil {
					return fmt.Errorf("iteration %d: critic: %w", it, err)
				}
				if err := r.Trainer.UseAdapter(ActorAdapter); err != nil {
					return err
				}
				policy.Add(res)
				critic.Add(vres)
			}
		}
		m := r.Metrics()
		m.Loss = policy.Loss()
		m.Losses["policy"] = m.Loss
		m.Losses["critic"] = critic.Loss()
		m.Metrics["clip_fraction"] = policy.Metric("clip_fraction")
		m.Metrics["value"] = stat.Mean(meanValue, nil)
		m.Metrics["value_error"] = critic.Metric("abs_error") * scale.span
		if err := r.EndIteration(ctx, it); err != nil {
			return err
		}
	}
	return nil
}

// returnScale maps an environment's episode returns, between its
// Spec.RewardMin and Spec.RewardMax, onto the critic's probability and
// back: [0, 1] on most built-in environments, [-20, 0] on twenty
// questions, where every turn short of the right guess costs 1. A
// λ-return beyond the bounds (the invalid-action penalty takes it below)
// is a target at the nearer bound.
type returnScale struct{ min, span float64 }

func newReturnScale(spec envs.Spec) (returnScale, error) {
	lo, hi := spec.RewardMin, spec.RewardMax
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(hi > lo) {
		return returnScale{}, fmt.Errorf("ppo: the environment %s declares episode returns from %g to %g; the critic's value is a probability mapped onto those bounds, which must be finite with reward_min below reward_max", spec.Name, lo, hi)
	}
	return returnScale{min: lo, span: hi - lo}, nil
}

// value is the return that the critic's probability p stands for.
func (s returnScale) value(p float64) float64 { return s.min + p*s.span }

// target is the critic's target probability for the return ret.
func (s returnScale) target(ret float64) float64 {
	return math.Min(1, math.Max(0, (ret-s.min)/s.span))
}

// valueProbes is the critic's view of an episode sequence: the same
// tokens, probed for the judgement tokens yes and no at the first token of
// each action (two sequences of one context, computed once).
func valueProbes(e ActionSequence, yes, no int32) (train.Sequence, train.Sequence, error) {
	at := make([]int, len(e.Actions))
	for j, sp := range e.Actions {
		at[j] = sp.Start
	}
	return ProbePair(e.Tokens, at, yes, no)
}

// criticValues returns the critic's value of the state before each
// action of each episode, in the order of the actions: the return that
// the sigmoid of its log-odds at the episode's probe pair stands for.
func (r *Run) criticValues(seqs []train.Sequence, pairs []train.Pair, scale returnScale) ([][]float64, error) {
	if err := r.Trainer.UseAdapter(criticAdapter); err != nil {
		return nil, err
	}
	lp, err := r.LogProbs(seqs, false)
	if e := r.Trainer.UseAdapter(ActorAdapter); e != nil {
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	values, err := LogOdds(seqs, lp, pairs)
	if err != nil {
		return nil, err
	}
	for _, row := range values {
		for j, z := range row {
			row[j] = scale.value(sigmoid(z))
		}
	}
	return values, nil
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
