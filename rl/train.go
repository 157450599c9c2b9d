package rl

import (
	"context"
	"fmt"
)

// Algorithm is a training algorithm: its loop, which reads top to bottom
// (it plays rollouts, turns them into training data, updates the adapters
// and ends each iteration through the Run), and the adapters it trains
// besides the actor.
type Algorithm struct {
	Name string
	// Prepare adds the algorithm's other adapters (nil: none).
	Prepare func(*Run) error
	Loop    func(context.Context, *Run) error
}

// algorithms are the registered algorithms by name: the baselines here,
// NLAC and StepAgent from their packages (Register).
var algorithms = map[string]Algorithm{
	"sft":  {Name: "sft", Loop: trainSFT},
	"grpo": {Name: "grpo", Loop: trainGRPO},
	"ppo": {Name: "ppo", Loop: trainPPO, Prepare: func(r *Run) error {
		return r.AddAdapter(criticAdapter, criticOptions(r.Config))
	}},
	"eto": {Name: "eto", Loop: trainETO},
}

// Register adds an algorithm defined outside this package; its settings
// are a section of Config. It panics on a duplicate name, a programming
// error.
func Register(a Algorithm) {
	if _, ok := algorithms[a.Name]; ok {
		panic("rl: algorithm " + a.Name + " registered twice")
	}
	algorithms[a.Name] = a
}

// Train runs (or, with o.Resume, continues) the configured algorithm to
// its last iteration, writing the run directory as it goes; see
// docs/runs.md. A run stopped by ctx, or killed, loses at most the
// iteration in progress.
func Train(ctx context.Context, cfg Config, o Options) error {
	alg, ok := algorithms[cfg.Algorithm]
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
	if alg.Prepare != nil {
		if err := alg.Prepare(r); err != nil {
			return err
		}
	}
	if err := r.Resume(ctx); err != nil {
		return err
	}
	if r.State.Iteration > 0 && r.State.Iteration == cfg.Iterations {
		// Stopped after this iteration when it was to run more, and resumed
		// with as many as it has: it ends here.
		return r.endShortened(ctx)
	}
	if err := alg.Loop(ctx, r); err != nil {
		return fmt.Errorf("%s on %s: %w", cfg.Algorithm, cfg.Env, err)
	}
	return nil
}
