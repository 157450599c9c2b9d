package rl

import "context"

// trainSFT is the supervised baseline: the actor is fine-tuned on
// SFT.Demos expert demonstrations of the train split, loss on the action
// tokens only, one epoch per iteration, evaluated as the other
// algorithms are.
func trainSFT(ctx context.Context, r *Run) error {
	s := r.Config.SFT
	s.Epochs = 1
	for it := r.State.Iteration + 1; it <= r.Config.Iterations; it++ {
		r.BeginIteration(it)
		if err := r.SFT(ctx, s, it); err != nil {
			return err
		}
		if err := r.EndIteration(ctx, it); err != nil {
			return err
		}
	}
	return nil
}
