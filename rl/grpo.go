package rl

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rollout"
)

// trainGRPO is group relative policy optimisation for multi-turn agents.
// Each iteration plays Rollout.Tasks train tasks GRPO.Group times each;
// an episode's advantage is its return (less InvalidPenalty per rejected
// action) normalised within its group, and every token of every action of
// the episode carries it in the clipped PPO objective, with an optional
// KL penalty towards the reference policy.
func trainGRPO(ctx context.Context, r *Run) error {
	c := r.Config.GRPO
	if err := r.WarmStart(ctx); err != nil {
		return err
	}
	if err := r.Trainer.SetLR(c.LR); err != nil {
		return err
	}
	reference, err := r.Reference(c.KL, c.Reference)
	if err != nil {
		return err
	}
	for it := r.State.Iteration + 1; it <= r.Config.Iterations; it++ {
		r.BeginIteration(it)
		trajs, err := r.Rollouts(ctx, it, r.Config.Rollout.Tasks, c.Group, r.Config.Rollout.Temperature)
		if err != nil {
			return err
		}

		// Advantages: the penalised return, normalised within each task's
		// group. Groups whose returns are all equal teach nothing and are
		// left out.
		var seqs []train.Sequence
		var sampled, advantages [][]float32
		flat := 0
		for _, group := range groupsOf(trajs) {
			returns := make([]float64, len(group))
			for i, t := range group {
				returns[i] = penalisedReturn(t, c.InvalidPenalty)
			}
			adv := GroupAdvantages(returns, 1e-6)
			if allZero(adv) {
				flat++
				continue
			}
			for i, t := range group {
				episode, err := EpisodeSequences(t)
				if err != nil {
					return err
				}
				for _, s := range episode {
					perStep := constant(len(t.Steps), adv[i])
					a, err := s.StepValues(perStep)
					if err != nil {
						return err
					}
					seqs = append(seqs, s.Sequence)
					sampled = append(sampled, s.SampleLogProbs)
					advantages = append(advantages, a)
				}
			}
		}
		m := r.Metrics()
		m.Metrics["flat_groups"] = float64(flat)
		if len(seqs) == 0 {
			r.logf("iter %d: every group's episodes scored alike; no update", it)
		} else {
			refLogProbs, err := reference(seqs)
			if err != nil {
				return err
			}
			var means StepMeans
			for epoch := range c.Epochs {
				for _, mb := range r.Minibatches(it, epoch, len(seqs), c.Minibatches) {
					res, err := r.Update(seqs, r.MicroBatches(seqs, mb), func(b []int) train.Loss {
						return train.PPO{Clip: c.Clip, SampleLogProbs: pick(sampled, b), Advantages: pick(advantages, b),
							KLCoef: c.KL, RefLogProbs: pick(refLogProbs, b)}
					})
					if err != nil {
						return fmt.Errorf("iteration %d: %w", it, err)
					}
					means.Add(res)
				}
			}
			m.Loss = means.Loss()
			m.Losses["policy"] = m.Loss
			for _, k := range []string{"clip_fraction", "kl", "ratio"} {
				m.Metrics[k] = means.Metric(k)
			}
			m.Metrics["sequences"] = float64(len(seqs))
		}
		if err := r.EndIteration(ctx, it); err != nil {
			return err
		}
	}
	return nil
}

// groupsOf splits trajectories, ordered by seed and sample as the runner
// returns them, into the groups of each task.
func groupsOf(trajs []rollout.Trajectory) [][]*rollout.Trajectory {
	var out [][]*rollout.Trajectory
	for i := range trajs {
		t := &trajs[i]
		if n := len(out); n > 0 && out[n-1][0].Seed == t.Seed {
			out[n-1] = append(out[n-1], t)
		} else {
			out = append(out, []*rollout.Trajectory{t})
		}
	}
	return out
}

// penalisedReturn is an episode's return less penalty per step whose
// action the environment rejected.
func penalisedReturn(t *rollout.Trajectory, penalty float64) float64 {
	ret := t.Return
	for _, s := range t.Steps {
		if !s.Info.ValidAction {
			ret -= penalty
		}
	}
	return ret
}

func allZero(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}

func constant(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// pick returns x[b[0]], x[b[1]], ...; nil for nil x.
func pick[T any](x []T, b []int) []T {
	if x == nil {
		return nil
	}
	out := make([]T, len(b))
	for i, k := range b {
		out[i] = x[k]
	}
	return out
}

// Reference returns the function computing the reference policy's
// log-probabilities for a penalty of weight kl (nil results when kl is 0):
// "base", the model without adapter, or "warm_start", the actor as the
// warm start left it, kept as the trainer adapter "reference".
func (r *Run) Reference(kl float64, which string) (func([]train.Sequence) ([][]float32, error), error) {
	switch {
	case kl == 0:
		return func([]train.Sequence) ([][]float32, error) { return nil, nil }, nil
	case which == "base":
		return func(seqs []train.Sequence) ([][]float32, error) { return r.LogProbs(seqs, true) }, nil
	}
	// The warm-start policy is loaded once, as the trainer adapter
	// "reference", whose values no step changes.
	if !slices.Contains(r.Trainer.AdapterNames(), "reference") {
		if err := r.Trainer.AddAdapter("reference", train.AdapterOptions{}); err != nil {
			return nil, err
		}
		path := filepath.Join(r.Dir, "adapters", warmStartAdapter+".gguf")
		if err := r.Trainer.UseAdapter("reference"); err != nil {
			return nil, err
		}
		if err := r.Trainer.LoadAdapter(path); err != nil {
			return nil, fmt.Errorf("reference policy: %w", err)
		}
	}
	if err := r.Trainer.UseAdapter(ActorAdapter); err != nil {
		return nil, err
	}
	return func(seqs []train.Sequence) ([][]float32, error) {
		if err := r.Trainer.UseAdapter("reference"); err != nil {
			return nil, err
		}
		lp, err := r.LogProbs(seqs, false)
		if err := r.Trainer.UseAdapter(ActorAdapter); err != nil {
			return nil, err
		}
		return lp, err
	}, nil
}
