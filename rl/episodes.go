package rl

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rollout"
)

// Rollouts plays the iteration's training episodes with the actor: tasks
// tasks of the train split, each group times, at the given temperature.
// The trajectories are written to trajectories/iter-N.jsonl.gz and
// summarised in the iteration's metrics; episodes that failed with an
// environment error are dropped (and counted), and an iteration whose
// every episode failed is an error.
func (r *Run) Rollouts(ctx context.Context, it, tasks, group int, temperature float64) ([]rollout.Trajectory, error) {
	s := rollout.DefaultActionSampling()
	s.MaxTokens = r.Config.Rollout.MaxTokens
	s.Temperature = float32(temperature)
	s.Seed = int64(r.IterSeed(it, seedSampling))
	trajs, st, err := r.play(ctx, envs.Train, r.TaskSeed0(it, tasks), tasks, group, s)
	if err != nil {
		return nil, err
	}
	if err := writeTrajectories(r.Dir, fmt.Sprintf("iter-%06d", it), trajs); err != nil {
		return nil, err
	}
	var ok []rollout.Trajectory
	for _, t := range trajs {
		r.State.EnvSteps += int64(len(t.Steps))
		if t.Error != "" {
			r.metrics.Failed++
			continue
		}
		ok = append(ok, t)
	}
	if len(ok) == 0 {
		return nil, fmt.Errorf("iteration %d: every one of %d episodes failed; the first: %s", it, len(trajs), trajs[0].Error)
	}
	sum := rollout.Summarize(ok)
	if sum.ContextFull > 0 {
		r.metrics.Metrics["context_full"] += float64(sum.ContextFull)
	}
	r.metrics.Episodes = len(ok)
	// The optimiser steps (every adapter's) the run had taken when these
	// episodes were played, where reports place their success: an
	// iteration plays before it updates, and a warm-up or warm start may
	// come before the first iteration plays.
	r.metrics.Metrics[playedAtGradSteps] = float64(r.State.GradSteps)
	r.metrics.Reward, r.metrics.Success, r.metrics.Score, r.metrics.Invalid = sum.MeanReturn, sum.SuccessRate, sum.MeanScore, sum.InvalidActionRate
	r.State.RolloutTokens += st.GeneratedTokens
	secs := r.endPhase("rollout")
	r.logf("iter %d/%d rollout: %d episodes (%d failed) in %s, %.2f episodes/s, %.0f generated tok/s; success %.2f, reward %.3f, invalid %.2f",
		it, r.Config.Iterations, len(trajs), r.metrics.Failed, round(secs), float64(len(trajs))/secs, float64(st.GeneratedTokens)/secs,
		sum.SuccessRate, sum.MeanReturn, sum.InvalidActionRate)
	return ok, nil
}

// playedAtGradSteps is the metric of the optimiser steps taken before an
// iteration's training episodes were played (the report reads it by this
// name).
const playedAtGradSteps = "played_at_grad_steps"

// TaskSeed0 is the seed of the first train task of iteration it, which
// plays tasks tasks: every iteration plays new tasks, and runs of
// different seeds start at different places of the split.
func (r *Run) TaskSeed0(it, tasks int) int64 {
	return int64(r.IterSeed(0, seedTasks)%1_000_000) + int64(it-1)*int64(tasks)
}

// HeldOutExperts plays the expert on tasks train tasks that no iteration
// plays (those just before the first iteration's), for measurements that
// must see the same tasks in every iteration. Nothing learns from them, so
// their steps are not counted as environment steps.
func (r *Run) HeldOutExperts(ctx context.Context, tasks int) ([]rollout.Trajectory, error) {
	trajs, err := r.playExpert(ctx, r.TaskSeed0(0, tasks), tasks)
	if err != nil {
		return nil, fmt.Errorf("held-out expert episodes: %w", err)
	}
	return trajs, nil
}

// ExpertEpisodes plays the expert on tasks train tasks from seed0, e.g.
// the tasks of an iteration's rollouts, counting their steps as
// environment steps.
func (r *Run) ExpertEpisodes(ctx context.Context, seed0 int64, tasks int) ([]rollout.Trajectory, error) {
	trajs, err := r.playExpert(ctx, seed0, tasks)
	for _, t := range trajs {
		r.State.EnvSteps += int64(len(t.Steps))
	}
	if err != nil {
		return nil, fmt.Errorf("expert episodes: %w", err)
	}
	return trajs, nil
}

// playExpert plays the environment's expert on tasks train tasks from
// seed0.
func (r *Run) playExpert(ctx context.Context, seed0 int64, tasks int) ([]rollout.Trajectory, error) {
	return rollout.Run(ctx, rollout.Config{
		NewEnv: r.NewEnv, Parallel: r.Config.Rollout.Parallel, Episodes: tasks, Split: envs.Train, Seed0: seed0,
		MaxSteps: r.Config.Rollout.MaxSteps,
	}, rollout.Expert())
}

// play runs episodes with the actor through the collector.
func (r *Run) play(ctx context.Context, split envs.Split, seed0 int64, tasks, group int, s llm.Sampling) ([]rollout.Trajectory, CollectStats, error) {
	return r.collector.Collect(ctx, r.actorSnapshot(s), Episodes{
		Split: split, Seed0: seed0, Tasks: tasks, Group: group, MaxSteps: r.Config.Rollout.MaxSteps,
		StepTimeout: r.Config.Rollout.StepTimeoutDuration(), Progress: EpisodeProgress(r.progressf(), "rollout", tasks*max(group, 1)),
	})
}

// actorSnapshot is the policy of the actor's latest hand-over.
func (r *Run) actorSnapshot(s llm.Sampling) Snapshot {
	return Snapshot{Model: r.modelPath, Adapters: []AdapterFile{{Path: r.actorFile, Scale: 1}}, Sampling: s}
}

// Evaluate plays greedy episodes of split with the actor (see Evaluate).
func (r *Run) Evaluate(ctx context.Context, split envs.Split, episodes int) ([]rollout.Trajectory, error) {
	return Evaluate(ctx, r.collector, r.actorSnapshot(llm.Sampling{}), r.Config.Rollout, split, episodes, r.progressf())
}

// Demonstrations plays n expert episodes on the train split and returns
// them as trainer sequences (the chat rendered by the model's template,
// loss on the actions). Their steps count as environment steps once per
// run, however often a run (or its resumption) replays them.
func (r *Run) Demonstrations(ctx context.Context, n int) ([]train.Sequence, error) {
	trajs, err := r.playExpert(ctx, 0, n)
	if err != nil {
		return nil, fmt.Errorf("expert demonstrations: %w", err)
	}
	var seqs []train.Sequence
	var failed, tooLong, errored int
	var firstError string
	for _, t := range trajs {
		if !r.State.DemosCounted {
			r.State.EnvSteps += int64(len(t.Steps))
		}
		if t.Error != "" {
			if errored == 0 {
				firstError = fmt.Sprintf("seed %d: %s", t.Seed, t.Error)
			}
			errored++
			continue
		}
		if !t.Success {
			failed++
			continue
		}
		s, err := train.ChatSequence(r.model, rollout.NewDemonstration(&t).Messages)
		if err != nil {
			return nil, fmt.Errorf("demonstration %d: %w", t.Seed, err)
		}
		if len(s.Tokens) > r.Config.Rollout.Context {
			tooLong++
			continue
		}
		seqs = append(seqs, s)
	}
	r.State.DemosCounted = true
	left := fmt.Sprintf("%d did not succeed within rollout.max_steps %d (0: the environment's limit), %d outgrew rollout.context %d tokens",
		failed, r.Config.Rollout.MaxSteps, tooLong, r.Config.Rollout.Context)
	if errored > 0 {
		left += fmt.Sprintf(", %d failed (the first, %s)", errored, firstError)
	}
	if len(seqs) == 0 {
		return nil, fmt.Errorf("none of %d expert episodes can be a demonstration: %s", len(trajs), left)
	}
	if failed+tooLong+errored > 0 {
		r.logf("demonstrations: %d of %d expert episodes kept; %s", len(seqs), len(trajs), left)
	}
	return seqs, nil
}

// WarmStart fine-tunes the actor on Config.WarmStart.Demos expert
// demonstrations before the first iteration, or starts it from
// Config.InitAdapter, once: a resumed run that had done it skips it.
func (r *Run) WarmStart(ctx context.Context) error {
	return r.WarmStartWith(ctx, func() ([]train.Sequence, error) { return r.Demonstrations(ctx, r.Config.WarmStart.Demos) })
}

// WarmStartWith is WarmStart on the demonstrations demos returns (called
// only when the warm start is due), e.g. a user's expert file.
func (r *Run) WarmStartWith(ctx context.Context, demos func() ([]train.Sequence, error)) error {
	ws := r.Config.WarmStart
	if (ws.Demos == 0 && r.Config.InitAdapter == "") || r.State.WarmStarted || r.State.Iteration > 0 {
		return nil
	}
	r.BeginIteration(0)
	if path := r.Config.InitAdapter; path != "" {
		if err := r.Trainer.LoadAdapter(path); err != nil {
			return fmt.Errorf("init_adapter: %w", err)
		}
		r.logf("actor initialised from %s", path)
	} else {
		seqs, err := demos()
		if err != nil {
			return fmt.Errorf("warm start: %w", err)
		}
		r.endPhase("rollout")
		if err := r.FineTune(ctx, "warm start", seqs, ws, 0); err != nil {
			return fmt.Errorf("warm start: %w", err)
		}
	}
	if err := r.Trainer.SaveAdapter(filepath.Join(r.Dir, "adapters", warmStartAdapter+".gguf")); err != nil {
		return err
	}
	if err := r.handOver(ctx); err != nil {
		return err
	}
	r.State.WarmStarted = true
	return r.commit(0, false)
}

// warmStartAdapter names the file of the actor as the warm start left it,
// kept as a reference policy.
const warmStartAdapter = "warm_start"
