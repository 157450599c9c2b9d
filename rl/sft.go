package rl

import (
	"context"

	"github.com/agentrl/agentrl/llm/train"
)

// trainSFT is the supervised baseline: the actor is fine-tuned on
// SFT.Demos expert demonstrations of the train split, loss on the action
// tokens only, one epoch per iteration, evaluated as the other
// algorithms are.
func trainSFT(ctx context.Context, r *Run) error {
	s := r.Config.SFT // s.Epochs is 1 (Validate)
	// The demonstrations are played once; every iteration is an epoch
	// over them.
	var demos []train.Sequence
	for it := r.State.Iteration + 1; it <= r.Config.Iterations; it++ {
		r.BeginIteration(it)
		if demos == nil {
			var err error
			if demos, err = r.Demonstrations(ctx, s.Demos); err != nil {
				return err
			}
			r.endPhase("rollout")
		}
		if err := r.FineTune(ctx, "sft", demos, s, it); err != nil {
			return err
		}
		if err := r.EndIteration(ctx, it); err != nil {
			return err
		}
	}
	return nil
}
