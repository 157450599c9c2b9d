package rl

import (
	"context"
	"fmt"
)

// algorithms maps Config.Algorithm to its loop. Each loop reads top to
// bottom in its own file: it plays rollouts, turns them into training
// data, updates the adapters and ends each iteration through the Run.
var algorithms = map[string]func(context.Context, *Run) error{
	"sft":  trainSFT,
	"grpo": trainGRPO,
	"ppo":  trainPPO,
	"eto":  trainETO,
}

// Train runs (or, with o.Resume, continues) the configured algorithm to
// its last iteration, writing the run directory as it goes; see
// docs/runs.md. A run stopped by ctx, or killed, loses at most the
// iteration in progress.
func Train(ctx context.Context, cfg Config, o Options) error {
	loop, ok := algorithms[cfg.Algorithm]
	if !ok {
		return fmt.Errorf("algorithm %q: want one of %v", cfg.Algorithm, Algorithms())
	}
	r, err := Open(cfg, o)
	if err != nil {
		return err
	}
	defer r.Close()
	if r.State.Finished {
		r.logf("%s: the run has finished all %d iterations", r.Dir, r.State.Iteration)
		return nil
	}
	if err := prepare(r); err != nil {
		return err
	}
	if err := r.Resume(ctx); err != nil {
		return err
	}
	if err := loop(ctx, r); err != nil {
		return fmt.Errorf("%s on %s: %w", cfg.Algorithm, cfg.Env, err)
	}
	return nil
}

// prepare adds the adapters an algorithm trains besides the actor.
func prepare(r *Run) error {
	switch r.Config.Algorithm {
	case "ppo":
		return r.AddAdapter(criticAdapter, criticOptions(r.Config))
	}
	return nil
}
