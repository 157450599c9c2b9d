package rl

import (
	"context"
	"fmt"

	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rollout"
)

// trainETO is exploration-based trajectory optimisation (Song et al.
// 2024). After the warm start on demonstrations, each iteration explores
// Rollout.Tasks train tasks with the actor at ETO.Temperature and plays
// the expert on the same tasks; where the agent's return falls short of
// the expert's, the pair (expert chosen, agent rejected) is kept, the
// agent's trajectory cut to the expert's length plus ETO.ExtraTurns
// turns; where the agent does better the roles swap; ties are dropped.
// A trajectory longer than the context is cut to the turns that fit.
// The expert's trajectory is its conversation rendered with the chat
// template, the agent's the tokens it sampled (rendered like the expert's
// where they do not make one sequence). The actor is trained on the pairs
// with trajectory-level DPO, the reference being the policy at the start
// of the iteration (the previous iteration's result).
func trainETO(ctx context.Context, r *Run) error {
	c := r.Config.ETO
	if err := r.WarmStart(ctx); err != nil {
		return err
	}
	if err := r.Trainer.SetLR(c.LR); err != nil {
		return err
	}
	for it := r.State.Iteration + 1; it <= r.Config.Iterations; it++ {
		r.BeginIteration(it)
		tasks := r.Config.Rollout.Tasks
		agent, err := r.Rollouts(ctx, it, tasks, 1, c.Temperature)
		if err != nil {
			return err
		}
		expert, err := r.ExpertEpisodes(ctx, r.TaskSeed0(it, tasks), tasks)
		if err != nil {
			return err
		}
		bySeed := map[int64]*rollout.Trajectory{}
		for i := range expert {
			if expert[i].Error == "" {
				bySeed[expert[i].Seed] = &expert[i]
			}
		}

		// Pairs: the expert's trajectory (its own text, rendered by the
		// chat template) against the agent's (the tokens it generated, or
		// its conversation rendered likewise: trajectorySequence).
		var seqs []train.Sequence
		var pairs []train.Pair
		rendered, cut, long, swapped := 0, 0, 0, 0
		for i := range agent {
			a, e := &agent[i], bySeed[agent[i].Seed]
			if e == nil || a.Return == e.Return {
				continue // no expert to compare with, or a tie
			}
			agentWins := a.Return > e.Return
			// The rejected trajectory is cut to the chosen one's length plus
			// ExtraTurns turns.
			agentCut, expertCut := *a, *e
			if agentWins {
				expertCut.Steps = e.Steps[:min(len(e.Steps), len(a.Steps)+c.ExtraTurns)]
			} else {
				agentCut.Steps = a.Steps[:min(len(a.Steps), len(e.Steps)+c.ExtraTurns)]
			}
			// A side that outgrows the context loses its last turns (as
			// DPO trainers cut sequences at their maximum length): on
			// ALFWorld at a 2,048-token context, dropping such pairs
			// instead left 1 of 15.
			var wasRendered bool
			agentSeq, agentTurns, err := fitTurns(agentCut, r.Config.Rollout.Context, func(t *rollout.Trajectory) (train.Sequence, error) {
				s, rendered, err := r.trajectorySequence(t)
				wasRendered = rendered
				return s, err
			})
			if err != nil {
				return err
			}
			expertSeq, expertTurns, err := fitTurns(expertCut, r.Config.Rollout.Context, func(t *rollout.Trajectory) (train.Sequence, error) {
				s, err := train.ChatSequence(r.model, rollout.NewDemonstration(t).Messages)
				if err != nil {
					return s, fmt.Errorf("expert trajectory %d: %w", e.Seed, err)
				}
				return s, nil
			})
			if err != nil {
				return err
			}
			if agentTurns == 0 || expertTurns == 0 {
				long++
				continue
			}
			if agentTurns < len(agentCut.Steps) || expertTurns < len(expertCut.Steps) {
				cut++
			}
			if wasRendered {
				rendered++
			}
			p := train.Pair{Chosen: len(seqs), Rejected: len(seqs) + 1}
			if agentWins {
				p.Chosen, p.Rejected = p.Rejected, p.Chosen
				swapped++
			}
			pairs = append(pairs, p)
			seqs = append(seqs, expertSeq, agentSeq)
		}
		m := r.Metrics()
		m.Metrics["pairs"] = float64(len(pairs))
		m.Metrics["rendered_pairs"] = float64(rendered)
		m.Metrics["cut_pairs"] = float64(cut)
		m.Metrics["long_pairs"] = float64(long)
		m.Metrics["agent_chosen"] = float64(swapped)
		if len(pairs) == 0 {
			r.logf("iter %d: the agent matched the expert on every task; no pairs", it)
		} else {
			// The reference is the policy before this iteration's update.
			ref, err := r.LogProbs(seqs, false)
			if err != nil {
				return err
			}
			for k := range pairs {
				p := &pairs[k]
				p.RefChosen = train.SumLogProb(seqs[p.Chosen], ref[p.Chosen])
				p.RefRejected = train.SumLogProb(seqs[p.Rejected], ref[p.Rejected])
			}
			var means StepMeans
			for epoch := range c.Epochs {
				for _, mb := range r.Minibatches(it, epoch, len(pairs), c.Minibatches) {
					res, err := r.UpdatePairs(seqs, pairs, mb, func(p []train.Pair, _ []int) train.Loss {
						return train.DPO{Beta: c.Beta, Pairs: p}
					})
					if err != nil {
						return fmt.Errorf("iteration %d: %w", it, err)
					}
					means.Add(res)
				}
			}
			m.Loss = means.Loss()
			m.Losses["dpo"] = m.Loss
			m.Metrics["accuracy"] = means.Metric("accuracy")
			m.Metrics["margin"] = means.Metric("margin")
		}
		if err := r.EndIteration(ctx, it); err != nil {
			return err
		}
	}
	return nil
}

// trajectorySequence is the agent's episode t as one training sequence:
// the tokens it was sampled as where they make one sequence, or else (a
// history cut to fit the context, an action whose text renders as other
// tokens: see EpisodeSequences) the conversation it played rendered with
// the chat template, raw actions and all, as the expert's is; rendered
// says which. A rendered episode may be longer than the context: see
// fitTurns.
func (r *Run) trajectorySequence(t *rollout.Trajectory) (s train.Sequence, rendered bool, err error) {
	seqs, err := EpisodeSequences(t)
	if err != nil {
		return train.Sequence{}, false, err
	}
	if len(seqs) == 1 {
		return seqs[0].Sequence, false, nil
	}
	s, err = train.ChatSequence(r.model, rollout.Conversation(t))
	if err != nil {
		return train.Sequence{}, true, fmt.Errorf("agent trajectory %d: %w", t.Seed, err)
	}
	return s, true, nil
}

// fitTurns cuts t to its longest prefix of whole turns whose sequence,
// made by seq, has at most limit tokens, and returns that sequence and
// the number of turns kept: 0 (and no sequence) where not even the first
// turn fits.
func fitTurns(t rollout.Trajectory, limit int, seq func(*rollout.Trajectory) (train.Sequence, error)) (train.Sequence, int, error) {
	steps := t.Steps
	for turns := len(steps); turns > 0; turns-- {
		t.Steps = steps[:turns]
		s, err := seq(&t)
		if err != nil {
			return train.Sequence{}, 0, err
		}
		if len(s.Tokens) <= limit {
			return s, turns, nil
		}
	}
	return train.Sequence{}, 0, nil
}
