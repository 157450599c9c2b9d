// Package nlac is the natural-language actor-critic ("Natural Language
// Actor-Critic: Scalable Off-Policy Learning in Language Space", arXiv
// 2512.04601): a critic that writes instead of scoring. A language
// successor model predicts in words what follows an action; it learns by
// a language Bellman backup (what really happened next merged with the
// prediction of an EMA target copy at the next state). An evaluator
// reads predicted futures and writes a critique ending in a judgement; a
// refinement rewrites the actions judged suboptimal; the actor learns the
// refined actions by maximum likelihood. Off-policy: transitions come
// from a replay buffer.
//
// The loop (run below) reads top to bottom; bellman.go builds the
// critic's targets, improve.go critiques, refines and selects actions,
// critic.go plays the roles through the inference engine, prompts/ holds
// the role templates, warmup.go teaches a small model the roles.
// docs/nlac.md says which details the paper leaves open and what we
// chose. The algorithm registers itself with the RL core as "nlac".
package nlac

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rl"
)

func init() {
	rl.Register(rl.Algorithm{Name: "nlac", Prepare: prepare, Loop: run})
}

// criticAdapter names the critic's LoRA adapter when the roles do not
// share the actor's.
const criticAdapter = "critic"

// Files of the algorithm in each iteration's checkpoint directory.
const (
	bufferFile = "replay.jsonl.gz"
	targetFile = "critic_target.gguf"
)

func prepare(r *rl.Run) error {
	if r.Config.NLAC.SharedAdapter {
		return nil
	}
	return r.AddAdapter(criticAdapter, train.AdapterOptions{
		Optimizer: train.AdamW{LR: r.Config.NLAC.CriticLR}, Seed: r.Config.Seed ^ 0x637269746963, // "critic"
	})
}

// loop is a run of NLAC in progress: the run, the roles, the replay
// buffer and the critic's target network.
type loop struct {
	r      *rl.Run
	cfg    rl.NLACConfig
	roles  *roleModel
	buffer *Buffer
	target *train.EMA
	// critic is the adapter playing the successor model, merge, evaluator
	// and refinement: "critic", or the actor's when shared.
	critic string
	// criticFile and targetFile are the hand-over files the engine plays.
	criticFile, targetFile string
	// roleExamples are the warm-up's examples, replayed in critic updates.
	roleExamples []train.Sequence
}

// run is the NLAC loop: warm start, then per iteration rollouts into the
// replay buffer, the critic's language Bellman backup, and policy
// improvement by critique, refinement and distillation.
func run(ctx context.Context, r *rl.Run) error {
	c := r.Config.NLAC
	prompts, err := LoadPrompts(c.Prompts)
	if err != nil {
		return err
	}
	// 0. The actor's warm start on expert demonstrations, if configured.
	if err := r.WarmStart(ctx); err != nil {
		return err
	}
	l := &loop{r: r, cfg: c, critic: criticAdapter}
	if c.SharedAdapter {
		l.critic = rl.ActorAdapter
	}
	l.roles = newRoleModel(r.Config, prompts, r.Model(), r.Collector(), r.NewEnv)
	l.roles.progress = r.Logf
	defer l.removeHandOvers()
	if err := l.restore(ctx); err != nil {
		return err
	}

	for it := r.State.Iteration + 1; it <= r.Config.Iterations; it++ {
		r.BeginIteration(it)
		// The run handed the actor over anew at the end of the last
		// iteration (and with it, where they share an adapter, the
		// critic).
		l.roles.actor = r.ActorSnapshot(llm.Sampling{})
		l.roles.critic = l.criticSnapshot()
		seed := func(purpose uint64) uint64 { return r.IterSeed(it, purpose) }
		m := r.Metrics()

		// 1. Before the first iteration, the optional warm-up teaches the
		// critic its roles from the environment's ground truth (once: a
		// run stopped after it resumes with its metrics).
		if it == 1 && c.Warmup.Tasks > 0 {
			if err := l.warmup(ctx, it); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}

		// 2. Rollouts of the current policy go into the replay buffer.
		trajs, err := r.Rollouts(ctx, it, r.Config.Rollout.Tasks, 1, r.Config.Rollout.Temperature)
		if err != nil {
			return err
		}
		l.buffer.Add(it, trajs)
		batch := l.buffer.Sample(c.Batch, decay(c), rand.New(rand.NewPCG(seed(seedBatch), 0)))
		recs := make([]Record, len(batch))
		for i, t := range batch {
			recs[i] = Record{T: t, Action: t.action()}
		}
		var counts Counts
		counts.Transitions = len(recs)
		if it == 1 && c.Warmup.Tasks > 0 && c.Method == "nlac" && c.OutcomeFirst {
			if err := l.warmupForesight(ctx, recs, m); err != nil {
				return fmt.Errorf("iteration %d: the warmed-up successor model: %w", it, err)
			}
		}

		// 3. Critic: the language Bellman backup, NLL of the targets.
		if c.Method == "nlac" || c.Method == "nlql" {
			if err := l.roles.backup(ctx, recs, seed, &counts); err != nil {
				return fmt.Errorf("iteration %d: critic targets: %w", it, err)
			}
			if err := l.trainCritic(ctx, it, recs); err != nil {
				return fmt.Errorf("iteration %d: critic update: %w", it, err)
			}
			r.Logf("iter %d/%d critic: backup targets for %d transitions and the critic's update in %.1fs, loss %.4f",
				it, r.Config.Iterations, len(recs), r.EndPhase("critic"), m.Losses["critic"])
		}

		// 4. Policy improvement: critique and refine (or select), then
		// distil into the actor.
		if err := l.roles.improve(ctx, recs, c.Method, seed, &counts); err != nil {
			return fmt.Errorf("iteration %d: policy improvement: %w", it, err)
		}
		r.Logf("iter %d/%d improvement: futures, critiques and refinements of %d transitions in %.1fs",
			it, r.Config.Iterations, len(recs), r.EndPhase("improve"))
		if err := l.trainActor(ctx, it, recs, &counts); err != nil {
			return fmt.Errorf("iteration %d: actor update: %w", it, err)
		}

		// 5. The log a user reads, the tallies, and what a resumed run
		// needs; then the run ends the iteration.
		if err := writeLog(filepath.Join(r.Dir, "nlac", fmt.Sprintf("iter-%06d.md", it)), it, c.Method, recs, counts); err != nil {
			return err
		}
		counts.addTo(m)
		r.State.EnvSteps += l.roles.envSteps
		l.roles.envSteps = 0
		r.Logf("iter %d/%d critic: %d transitions, judged optimal %.2f%s, given when asked %d, unparsed %d%s, refinements %d (%d invalid), %d actions changed, %d distilled",
			it, r.Config.Iterations, counts.Transitions, share(counts.Optimal, counts.Judgements), counts.outcomeNote(), counts.Asked, counts.Unparsed, counts.rankNote()+counts.replacedNote(),
			counts.Refinements, counts.InvalidRefinements, counts.Changed, counts.Distilled)
		if err := l.save(it); err != nil {
			return err
		}
		if err := r.EndIteration(ctx, it); err != nil {
			return err
		}
	}
	return nil
}

// decay is the buffer's recency weight per iteration of age.
func decay(c rl.NLACConfig) float64 {
	if c.Sampling == "recent" {
		return c.RecencyDecay
	}
	return 1
}

// restore reads the replay buffer and the critic's target from the
// checkpoint of the last finished iteration (a new run starts both
// empty, the target at the critic's initial weights), and hands the
// critic and its target to the engine.
func (l *loop) restore(ctx context.Context) error {
	r := l.r
	l.buffer = &Buffer{Capacity: l.cfg.Buffer}
	if err := r.Trainer.UseAdapter(l.critic); err != nil {
		return err
	}
	l.target = r.Trainer.NewEMA()
	if it := r.State.Iteration; it > 0 || r.State.Prepared {
		dir := r.CheckpointDir(it)
		b, err := LoadBuffer(filepath.Join(dir, bufferFile), l.cfg.Buffer)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		l.buffer = b
		if err := l.target.LoadAdapter(filepath.Join(dir, targetFile)); err != nil {
			return fmt.Errorf("resume: critic target: %w", err)
		}
		// A run that began without a warm-up has no examples to replay.
		if _, err := os.Stat(l.warmupFile()); err == nil {
			if l.roleExamples, err = loadSequences(l.warmupFile()); err != nil {
				return fmt.Errorf("resume: %w", err)
			}
		}
	}
	if err := r.Trainer.UseAdapter(rl.ActorAdapter); err != nil {
		return err
	}
	return l.handOver(ctx)
}

// save writes the buffer and the target into the iteration's checkpoint
// directory, which the run's state names once the iteration ends.
func (l *loop) save(it int) error {
	dir := l.r.CheckpointDir(it)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := l.buffer.Save(filepath.Join(dir, bufferFile)); err != nil {
		return err
	}
	return l.target.SaveAdapter(filepath.Join(dir, targetFile))
}

// handOver gives the engine the critic's latest weights and its
// target's, and the actor the run handed over last. With one shared
// adapter the critic's weights are the actor's: they are handed over
// anew, and the rollouts play them too, as a run resumed from the
// checkpoint would.
func (l *loop) handOver(ctx context.Context) error {
	r := l.r
	if l.cfg.SharedAdapter {
		if err := r.HandOverActor(ctx); err != nil {
			return err
		}
	}
	l.roles.actor = r.ActorSnapshot(llm.Sampling{})
	snap := l.roles.actor
	fallback := filepath.Join(r.Dir, "adapters")
	critic := ""
	if !l.cfg.SharedAdapter {
		if err := r.Trainer.UseAdapter(l.critic); err != nil {
			return err
		}
		var err error
		if critic, err = rl.HandOver(ctx, r.Trainer, r.Collector(), snap, fallback); err != nil {
			return err
		}
		if err := r.Trainer.UseAdapter(rl.ActorAdapter); err != nil {
			return err
		}
	}
	target, err := rl.HandOverFile(ctx, l.target.SaveAdapter, r.Collector(), snap, fallback)
	if err != nil {
		if critic != "" {
			os.Remove(critic)
		}
		return err
	}
	l.removeHandOvers()
	l.criticFile, l.targetFile = critic, target
	l.roles.critic = l.criticSnapshot()
	l.roles.target = withAdapter(snap, target)
	return nil
}

// criticSnapshot is the policy that plays the critic's roles: the actor's
// latest hand-over when they share one adapter.
func (l *loop) criticSnapshot() rl.Snapshot {
	if l.cfg.SharedAdapter {
		return l.roles.actor
	}
	return withAdapter(l.roles.actor, l.criticFile)
}

// removeHandOvers deletes the critic's hand-over files (the engine frees
// an adapter once its file is gone).
func (l *loop) removeHandOvers() {
	for _, f := range []string{l.criticFile, l.targetFile} {
		if f != "" {
			os.Remove(f)
		}
	}
	l.criticFile, l.targetFile = "", ""
}

// withAdapter is the snapshot with one adapter file in place of its own.
func withAdapter(s rl.Snapshot, path string) rl.Snapshot {
	s.Adapters = []rl.AdapterFile{{Path: path, Scale: 1}}
	return s
}

// trainCritic trains the successor model by NLL of the backed-up targets
// given (s, a), in nlac.minibatches steps, the target network following
// after each; then the engine gets the new critic and target. A target
// that does not fit the context even with the shortest view of the state
// (criticSequence) is left out and counted (critic_targets_too_long), its
// transition still critiqued, whose futures are shorter.
func (l *loop) trainCritic(ctx context.Context, it int, recs []Record) error {
	r := l.r
	var seqs []train.Sequence
	tooLong := 0
	for i := range recs {
		if recs[i].TooLong || recs[i].Target == "" {
			continue
		}
		s, ok, err := l.roles.criticSequence(recs[i])
		if err != nil {
			return err
		}
		if !ok {
			tooLong++
			continue
		}
		seqs = append(seqs, s)
	}
	m := r.Metrics()
	m.Metrics["critic_targets_too_long"] = float64(tooLong)
	if tooLong > 0 {
		r.Logf("iter %d: %d of the critic's targets do not fit rollout.context after the successor model's prompt and are left out", it, tooLong)
	}
	if len(seqs) == 0 {
		return nil
	}
	targets := len(seqs)
	if n := int(l.cfg.Warmup.Replay*float64(targets) + 0.5); n > 0 && len(l.roleExamples) > 0 {
		rng := rand.New(rand.NewPCG(r.IterSeed(it, seedReplay), 0))
		for range n {
			seqs = append(seqs, l.roleExamples[rng.IntN(len(l.roleExamples))])
		}
	}
	loss, err := l.fit(l.critic, l.cfg.CriticLR, it, seqs, func() error { return l.target.Update(l.cfg.Tau) })
	if err != nil {
		return err
	}
	m.Losses["critic"] = loss
	m.Metrics["critic_targets"] = float64(targets)
	m.Metrics["critic_replayed"] = float64(len(seqs) - targets)
	return l.handOver(ctx)
}

// trainActor distils the chosen actions into the actor: NLL of each
// given the state as the actor saw it, action tokens only, with
// nlac.expert_share expert demonstrations mixed in.
func (l *loop) trainActor(ctx context.Context, it int, recs []Record, counts *Counts) error {
	r := l.r
	var seqs []train.Sequence
	for i := range recs {
		if recs[i].Distill == "" {
			continue
		}
		s, ok, err := l.roles.distillSequence(recs[i].T, recs[i].Distill)
		if err != nil {
			return err
		}
		if !ok {
			if !sameAction(recs[i].Distill, recs[i].Action) {
				counts.Changed--
			}
			recs[i].Distill, recs[i].Why = "", recs[i].Why+"; with the state it outgrows rollout.context: not distilled"
			counts.TooLong++
			continue
		}
		seqs = append(seqs, s)
		counts.Distilled++
	}
	if len(seqs) == 0 {
		r.Logf("iter %d: no action to distil; the actor is unchanged", it)
		return nil
	}
	if n := int(l.cfg.ExpertShare*float64(len(seqs)) + 0.5); n > 0 {
		demos, err := r.Demonstrations(ctx, n)
		if err != nil {
			return err
		}
		seqs = append(seqs, demos...)
	}
	loss, err := l.fit(rl.ActorAdapter, l.cfg.LR, it, seqs, nil)
	if err != nil {
		return err
	}
	m := r.Metrics()
	m.Loss = loss
	m.Losses["actor"] = loss
	return nil
}

// fit trains the named adapter on seqs by cross-entropy at lr,
// nlac.epochs epochs of nlac.minibatches optimiser steps, calling after
// (if any) after each step, and returns the loss over all the steps'
// tokens (rl.StepMeans); the actor is active afterwards.
func (l *loop) fit(adapter string, lr float64, it int, seqs []train.Sequence, after func() error) (float64, error) {
	r := l.r
	if err := r.Trainer.UseAdapter(adapter); err != nil {
		return 0, err
	}
	defer r.Trainer.UseAdapter(rl.ActorAdapter)
	if err := r.Trainer.SetLR(lr); err != nil {
		return 0, err
	}
	var means rl.StepMeans
	for epoch := range l.cfg.Epochs {
		for _, mb := range r.Minibatches(it, epoch, len(seqs), l.cfg.Minibatches) {
			res, err := r.Update(seqs, r.MicroBatches(seqs, mb), func([]int) train.Loss { return train.CrossEntropy{} })
			if err != nil {
				return 0, err
			}
			means.Add(res)
			if after != nil {
				if err := after(); err != nil {
					return 0, err
				}
			}
		}
	}
	return means.Loss(), nil
}

// addTo records the tallies in the iteration's metrics.
func (c Counts) addTo(m *rl.Metrics) {
	m.Metrics["transitions"] = float64(c.Transitions)
	m.Metrics["too_long"] = float64(c.TooLong)
	m.Metrics["judgements"] = float64(c.Judgements)
	// Shares of no judgement at all (every NLRL rollout failed; the
	// first-round splits of NLQL, or of a batch without a successful
	// episode) are left out rather than written as 0.
	if c.Judgements > 0 {
		m.Metrics["judged_optimal"] = share(c.Optimal, c.Judgements)
	}
	// (with, without, AUC) keys of each split.
	for key, split := range map[[3]string]JudgedSplit{
		{"optimal_in_success", "optimal_in_failure", "auc_by_outcome"}: c.ByOutcome,
		{"optimal_of_expert", "optimal_of_others", "auc_by_expert"}:    c.ByExpert,
	} {
		if split.With > 0 {
			m.Metrics[key[0]] = share(split.OptimalWith, split.With)
		}
		if split.Without > 0 {
			m.Metrics[key[1]] = share(split.OptimalWithout, split.Without)
		}
		if a, ok := split.auc(); ok {
			m.Metrics[key[2]] = a
		}
	}
	c.Foresight.addTo(m, "successor_")
	m.Metrics["unparsed_judgements"] = float64(c.Unparsed)
	m.Metrics["asked_judgements"] = float64(c.Asked)
	m.Metrics["asked_optimal"] = float64(c.AskedOptimal)
	m.Metrics["overruled_judgements"] = float64(c.Overruled)
	m.Metrics["rewritten_critiques"] = float64(c.Rewritten)
	m.Metrics["actor_replacements"] = float64(c.Replaced)
	m.Metrics["unreplaced_actions"] = float64(c.Unreplaced)
	m.Metrics["unwritten_critiques"] = float64(c.Unwritten)
	m.Metrics["refinements"] = float64(c.Refinements)
	m.Metrics["invalid_refinements"] = float64(c.InvalidRefinements)
	m.Metrics["changed_actions"] = float64(c.Changed)
	m.Metrics["distilled"] = float64(c.Distilled)
	m.Metrics["no_optimal"] = float64(c.NoOptimal)
	m.Metrics["empty_merges"] = float64(c.EmptyMerges)
	m.Metrics["no_target"] = float64(c.NoTarget)
	m.Metrics["unchanged_refinements"] = float64(c.UnchangedRefinements)
	m.Metrics["resampled_refinements"] = float64(c.Resampled)
	m.Metrics["repeating_samples"] = float64(c.RepeatingSamples)
	m.Metrics["refinement_check_errors"] = float64(c.CheckErrors)
	m.Metrics["rejected_not_distilled"] = float64(c.RejectedKept)
	m.Metrics["failed_rollouts"] = float64(c.FailedRollouts)
}

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}
