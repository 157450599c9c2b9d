// Package stepagent is StepAgent (Deng et al. 2024, "From Novice to
// Expert: LLM Agent Policy Optimization via Step-wise Reinforcement
// Learning"): step-wise rewards from comparing the agent's actions with
// an expert's in the expert's own states, then reflection on the
// differences, by implicit rewards (step-level DPO) or by inverse RL (a
// discriminator's step rewards, optimised with PPO).
//
// The loop (run below) reads top to bottom; inspect.go samples the
// agent at the expert's prefixes, expert.go reads expert conversations.
// docs/stepagent.md says which details the paper leaves open and what we
// chose. The algorithm registers itself with the RL core as "stepagent".
package stepagent

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rl"
)

func init() {
	rl.Register(rl.Algorithm{Name: "stepagent", Prepare: prepare, Loop: run})
}

// discriminatorAdapter names the IRL discriminator's LoRA adapter.
const discriminatorAdapter = "discriminator"

// seedInspect is the seed purpose of the inspection's samples (the run's
// own purposes are below 16).
const seedInspect = 16

func prepare(r *rl.Run) error {
	if r.Config.StepAgent.Reflection != "irl" {
		return nil
	}
	return r.AddAdapter(discriminatorAdapter, train.AdapterOptions{
		Optimizer: train.AdamW{LR: r.Config.StepAgent.DiscriminatorLR}, Seed: r.Config.Seed ^ 0x64697363, // "disc"
	})
}

// run is the StepAgent loop: warm start, then per cycle inspection and
// reflection.
func run(ctx context.Context, r *rl.Run) error {
	c := r.Config.StepAgent
	// The judgement tokens are checked before the warm start, which can
	// take an hour.
	judge := judgement{residual: c.DiscriminatorResidual}
	if c.Reflection == "irl" {
		var err error
		if judge.yes, err = r.SingleToken(c.JudgementToken); err != nil {
			return fmt.Errorf("stepagent.judgement_token: %w", err)
		}
		if judge.no, err = r.SingleToken(c.NegativeToken); err != nil {
			return fmt.Errorf("stepagent.negative_token: %w", err)
		}
	}

	// 1. Warm start: SFT on the expert trajectories, loss on the actions.
	var file []Trajectory
	if c.Expert != "" {
		var err error
		if file, err = ReadExperts(c.Expert); err != nil {
			return err
		}
	}
	// The held-out probe (stepagent.probe): the same expert steps measured
	// in every cycle. Neither the warm start nor the cycles see them.
	pool, probe, err := holdOutProbe(ctx, r, file, c.Probe)
	if err != nil {
		return err
	}
	// The discriminator's pre-training conversations (an expert file's
	// last before the probe) are held out of the warm start and the
	// cycles as the probe's are, so that cycle 1 judges actions it has
	// not seen.
	var pretrainPool []Trajectory
	if n := c.DiscriminatorPretrain; file != nil && n > 0 {
		if n >= len(pool) {
			return fmt.Errorf("stepagent.discriminator_pretrain %d: the expert file has %d conversations besides the probe, and the cycles need some besides these", n, len(pool))
		}
		pool, pretrainPool = pool[:len(pool)-n], pool[len(pool)-n:]
	}
	err = r.WarmStartWith(ctx, func() ([]train.Sequence, error) {
		if file == nil {
			return r.Demonstrations(ctx, r.Config.WarmStart.Demos)
		}
		seqs, outgrew, err := fileSequences(r.Model(), pool, r.Config.WarmStart.Demos, r.Config.Rollout.Context)
		if outgrew > 0 {
			r.Logf("warm start: %d of %d expert conversations kept; %d outgrew rollout.context %d tokens", len(seqs), len(seqs)+outgrew, outgrew, r.Config.Rollout.Context)
		}
		return seqs, err
	})
	if err != nil {
		return err
	}
	if err := r.Trainer.SetLR(c.LR); err != nil {
		return err
	}

	for cycle := r.State.Iteration + 1; cycle <= r.Config.Iterations; cycle++ {
		r.BeginIteration(cycle)
		if cycle == 1 && c.Reflection == "irl" && c.DiscriminatorPretrain > 0 {
			if err := pretrainDiscriminator(ctx, r, pretrainPool, judge); err != nil {
				return err
			}
		}

		// 2. Inspection: the agent acts K times at every step of the
		// cycle's expert trajectories, from the expert's prefix.
		trajs, err := cycleExperts(ctx, r, pool, cycle)
		if err != nil {
			return err
		}
		env := r.NewEnv()
		steps, skipped, err := inspectExperts(ctx, r, env, trajs, cycle)
		if err != nil {
			err = fmt.Errorf("cycle %d: %w", cycle, err)
		}
		var probeAgree, probeLoglik float64
		if err == nil && len(probe) > 0 {
			probeAgree, probeLoglik, err = measureProbe(ctx, r, env, probe)
		}
		envs.Close(env)
		if err != nil {
			return err
		}
		greedyAgree, sampleAgree := Agreement(steps)
		expertSeqs, expertLP, err := expertLogProbs(r, steps)
		if err != nil {
			return err
		}
		m := r.Metrics()
		m.Metrics["step_agreement"] = greedyAgree
		m.Metrics["sample_agreement"] = sampleAgree
		m.Metrics["expert_loglik"] = meanTokenLogProb(expertSeqs, expertLP)
		m.Metrics["steps"] = float64(len(steps))
		m.Metrics["skipped_steps"] = float64(skipped)
		secs := r.EndPhase("rollout")
		r.Logf("cycle %d/%d inspection: %d trajectories, %d steps x %d samples in %.1fs; step agreement %.3f (samples %.3f), expert log-likelihood %.3f per token",
			cycle, r.Config.Iterations, len(trajs), len(steps), c.Samples, secs, greedyAgree, sampleAgree, m.Metrics["expert_loglik"])
		if len(probe) > 0 {
			m.Metrics["probe_agreement"], m.Metrics["probe_loglik"] = probeAgree, probeLoglik
			r.Logf("cycle %d/%d probe: %d held-out steps, step agreement %.3f, expert log-likelihood %.3f per token",
				cycle, r.Config.Iterations, len(probe), probeAgree, probeLoglik)
		}

		// 3. Reflection on the steps where the agent differs.
		if c.Reflection == "irl" {
			err = reflectIRL(r, cycle, steps, judge)
		} else {
			err = reflectImplicit(r, cycle, steps, expertSeqs, expertLP)
		}
		if err != nil {
			return fmt.Errorf("cycle %d: %w", cycle, err)
		}
		// Each cycle's probe measures the policy before its reflection:
		// after the last, once more, what the run ends with.
		if cycle == r.Config.Iterations && len(probe) > 0 {
			if err := finalProbe(ctx, r, m, probe); err != nil {
				return err
			}
		}
		if err := r.EndIteration(ctx, cycle); err != nil {
			return err
		}
	}
	return nil
}

// reflectImplicit is step-level DPO: in each inspected state, the expert's
// action is chosen and each distinct agent action that is not equivalent
// to it rejected; the reference is the policy at the start of the cycle
// (for the expert's actions, expertLP: the log-probabilities the
// inspection just computed under it) or the warm start.
func reflectImplicit(r *rl.Run, cycle int, steps []Step, expertSeqs []train.Sequence, expertLP [][]float32) error {
	c := r.Config.StepAgent
	var seqs []train.Sequence
	var pairs []train.Pair
	var pairStep []int // the inspected state of each pair
	var byStep [][]int // the pairs of each state
	for i, st := range steps {
		seen := map[string]bool{}
		var group []int
		for k, s := range st.Samples {
			if st.Equivalent[k] || seen[s.Text] {
				continue
			}
			seen[s.Text] = true
			group = append(group, len(pairs))
			pairs = append(pairs, train.Pair{Chosen: len(seqs), Rejected: len(seqs) + 1})
			seqs = append(seqs, expertSeqs[i], train.ActionSequence(st.Prompt, s.Tokens))
			pairStep = append(pairStep, i)
		}
		if len(group) > 0 {
			byStep = append(byStep, group)
		}
	}
	m := r.Metrics()
	m.Metrics["pairs"] = float64(len(pairs))
	if len(pairs) == 0 {
		r.Logf("cycle %d: every sampled action equals the expert's; nothing to reflect on", cycle)
		return nil
	}
	// A state's expert action is the chosen side of each of its pairs:
	// its reference log-probabilities are computed once, not per pair.
	refOf := func(seqs []train.Sequence) ([][]float32, error) { return r.LogProbs(seqs, false) }
	expertRef := expertLP
	if c.Reference == "warm_start" {
		var err error
		if refOf, err = r.Reference(1, "warm_start"); err != nil {
			return err
		}
		if expertRef, err = refOf(expertSeqs); err != nil {
			return err
		}
	}
	rejected := make([]train.Sequence, len(pairs))
	for k, p := range pairs {
		rejected[k] = seqs[p.Rejected]
	}
	rejectedRef, err := refOf(rejected)
	if err != nil {
		return err
	}
	for k := range pairs {
		i := pairStep[k]
		pairs[k].RefChosen = train.SumLogProb(expertSeqs[i], expertRef[i])
		pairs[k].RefRejected = train.SumLogProb(rejected[k], rejectedRef[k])
	}
	var means rl.StepMeans
	for epoch := range c.Epochs {
		for _, mb := range r.GroupMinibatches(cycle, epoch, byStep, c.Minibatches) {
			res, err := r.UpdatePairs(seqs, pairs, mb, func(p []train.Pair, _ []int) train.Loss { return train.DPO{Beta: c.Beta, Pairs: p} })
			if err != nil {
				return err
			}
			means.Add(res)
		}
	}
	m.Loss = means.Loss()
	m.Losses["step_dpo"] = m.Loss
	m.Metrics["dpo_accuracy"] = means.Metric("accuracy")
	return nil
}

// reflectIRL is the inverse-RL reflection: the discriminator D(h, a), the
// sigmoid of its log-odds of the judgement tokens after the action, is
// trained to tell the expert's actions (label 1) from the agent's that
// differ from them (label 0), unless it already does so too well; each of
// the agent's sampled actions then gets the step reward
// log D - log(1 - D) (the log-odds), less a baseline and normalised over
// the cycle (stepAdvantages), and the policy follows it with PPO-clip,
// unless the discriminator judged the cycle's new actions below
// stepagent.min_accuracy before its update.
func reflectIRL(r *rl.Run, cycle int, steps []Step, judge judgement) error {
	c := r.Config.StepAgent
	m := r.Metrics()

	d, err := judge.data(r, steps)
	if err != nil {
		return err
	}
	if err := r.Trainer.UseAdapter(discriminatorAdapter); err != nil {
		return err
	}
	odds, err := judgeWith(r, d.seqs, d.pairs, d.base)
	if err != nil {
		return err
	}
	accuracy, balanced := discriminatorAccuracy(odds, d.labels)
	m.Metrics["disc_accuracy"], m.Metrics["disc_balanced_accuracy"] = accuracy, balanced
	// The gate reads the balanced accuracy: a state has one expert action
	// and up to K agent ones, so a discriminator that says "agent" to
	// everything, as an untrained one may, would pass a plain-accuracy
	// gate at large K and never train.
	if balanced >= c.MaxAccuracy {
		// A discriminator that separates everything gives the policy
		// saturated rewards; it waits for the policy to catch up.
		m.Metrics["disc_paused"] = 1
		r.Logf("cycle %d: discriminator balanced accuracy %.3f >= %.2f: its update pauses this cycle", cycle, balanced, c.MaxAccuracy)
	} else {
		m.Metrics["disc_paused"] = 0
		loss, fit, err := fitDiscriminator(r, cycle, d, c.Minibatches)
		if err != nil {
			return err
		}
		m.Losses["discriminator"], m.Metrics["disc_fit_balanced_accuracy"] = loss, fit
	}
	if c.MinAccuracy > 0 {
		m.Metrics["policy_paused"] = 0
		if balanced < c.MinAccuracy {
			m.Metrics["policy_paused"] = 1
			r.Logf("cycle %d: discriminator balanced accuracy %.3f on the cycle's new actions < %.2f: no policy update on its rewards", cycle, balanced, c.MinAccuracy)
			return r.Trainer.UseAdapter(rl.ActorAdapter)
		}
	}

	// Step rewards of every sampled action under the updated
	// discriminator.
	var judged, policy []train.Sequence
	var judgedPairs []train.Pair
	var sampled [][]float32
	var actions [][]int32     // the action tokens of each policy sequence
	var samplesByStep [][]int // the policy's sequences of each state
	for _, st := range steps {
		var group []int
		for _, s := range st.Samples {
			group = append(group, len(policy))
			judge.add(&judged, &judgedPairs, st.Prompt, s.Tokens)
			policy = append(policy, train.ActionSequence(st.Prompt, s.Tokens))
			actions = append(actions, s.Tokens)
			lp := make([]float32, len(st.Prompt)+len(s.Tokens))
			copy(lp[len(st.Prompt):], s.LogProbs)
			sampled = append(sampled, lp)
		}
		if len(group) > 0 {
			samplesByStep = append(samplesByStep, group)
		}
	}
	judgedBase, err := judge.baseOdds(r, judged, judgedPairs)
	if err != nil {
		return err
	}
	rewards, err := judgeWith(r, judged, judgedPairs, judgedBase)
	if err != nil {
		return err
	}
	if err := r.Trainer.UseAdapter(rl.ActorAdapter); err != nil {
		return err
	}
	refOf, err := r.Reference(c.KL, "warm_start")
	if err != nil {
		return err
	}
	ref, err := refOf(policy)
	if err != nil {
		return err
	}
	for i := range rewards {
		rewards[i] = stepReward(rewards[i])
	}
	m.Metrics["step_reward"] = stat.Mean(rewards, nil)
	tokenAdv := tokenAdvantages(rewards, samplesByStep, actions, c.Baseline)
	advantages := make([][]float32, len(policy))
	for i, s := range policy {
		advantages[i] = make([]float32, len(s.Tokens))
		// The action is the sequence's end (train.ActionSequence).
		start := len(s.Tokens) - len(actions[i])
		for k, a := range tokenAdv[i] {
			advantages[i][start+k] = float32(a)
		}
	}
	var means rl.StepMeans
	for epoch := range c.Epochs {
		for _, mb := range r.GroupMinibatches(cycle, epoch+1, samplesByStep, c.Minibatches) {
			res, err := r.Update(policy, r.MicroBatches(policy, mb), func(b []int) train.Loss {
				l := train.PPO{Clip: c.Clip, SampleLogProbs: pickRows(sampled, b), Advantages: pickRows(advantages, b)}
				if c.KL > 0 {
					l.KLCoef, l.RefLogProbs = c.KL, pickRows(ref, b)
				}
				return l
			})
			if err != nil {
				return fmt.Errorf("policy: %w", err)
			}
			means.Add(res)
		}
	}
	m.Loss = means.Loss()
	m.Losses["policy"] = m.Loss
	m.Metrics["clip_fraction"] = means.Metric("clip_fraction")
	if c.KL > 0 {
		m.Metrics["kl"] = means.Metric("kl")
	}
	return nil
}

// discriminatorData is what the discriminator learns from: the expert's
// action (label 1) and the agent's that differ from it (label 0) in each
// inspected state, as judgement sequences and their pairs, the pairs of
// each state grouped, and for a residual discriminator the base model's
// log-odds of each pair.
type discriminatorData struct {
	seqs    []train.Sequence
	pairs   []train.Pair
	labels  []float64
	byState [][]int
	base    []float64
}

// data is the discriminator's data from inspected steps.
func (j judgement) data(r *rl.Run, steps []Step) (discriminatorData, error) {
	var d discriminatorData
	for _, st := range steps {
		group := []int{len(d.pairs)}
		j.add(&d.seqs, &d.pairs, st.Prompt, st.ExpertTokens)
		d.labels = append(d.labels, 1)
		for k, s := range st.Samples {
			if !st.Equivalent[k] {
				group = append(group, len(d.pairs))
				j.add(&d.seqs, &d.pairs, st.Prompt, s.Tokens)
				d.labels = append(d.labels, 0)
			}
		}
		d.byState = append(d.byState, group)
	}
	var err error
	d.base, err = j.baseOdds(r, d.seqs, d.pairs)
	return d, err
}

// fitDiscriminator trains the active adapter, the discriminator, on d:
// stepagent.discriminator_epochs passes of minibatches optimiser steps
// each, dealt with iteration it's seed. It returns the mean loss and the
// balanced accuracy on d after the update: a discriminator that cannot
// fit its own data has rewards that are noise.
func fitDiscriminator(r *rl.Run, it int, d discriminatorData, minibatches int) (loss, fitBalanced float64, err error) {
	var means rl.StepMeans
	// The first pass deals the minibatches as before passes were an
	// option (epoch 0); later passes count down from -1, as uint64 far
	// from the policy's epochs 1, 2, ..., so no two passes share a deal.
	for epoch := range r.Config.StepAgent.DiscriminatorEpochs {
		for _, mb := range r.GroupMinibatches(it, -epoch, d.byState, minibatches) {
			res, err := r.UpdatePairs(d.seqs, d.pairs, mb, func(local []train.Pair, idx []int) train.Loss {
				l := rl.LogOddsCrossEntropy{Pairs: local, Labels: make([][]float64, len(idx))}
				for i, k := range idx {
					l.Labels[i] = []float64{d.labels[k]}
				}
				if d.base != nil {
					l.Offsets = make([][]float64, len(idx))
					for i, k := range idx {
						l.Offsets[i] = []float64{d.base[k]}
					}
				}
				return l
			})
			if err != nil {
				return 0, 0, fmt.Errorf("discriminator: %w", err)
			}
			means.Add(res)
		}
	}
	fitted, err := judgeWith(r, d.seqs, d.pairs, d.base)
	if err != nil {
		return 0, 0, err
	}
	_, fitBalanced = discriminatorAccuracy(fitted, d.labels)
	return means.Loss(), fitBalanced, nil
}

// pretrainDiscriminator trains the discriminator before the first cycle
// on the warm-started agent's samples at the steps of
// stepagent.discriminator_pretrain expert trajectories (the file's held
// out for it, or with none the built-in expert's: pretrainExperts),
// in minibatches of about a cycle's states, so that the first cycle's
// rewards come from a discriminator that has seen more than one cycle's
// few trajectories. Its figures go to the first cycle's metrics.
func pretrainDiscriminator(ctx context.Context, r *rl.Run, file []Trajectory, judge judgement) error {
	c := r.Config.StepAgent
	trajs, err := pretrainExperts(ctx, r, file)
	if err != nil {
		return fmt.Errorf("stepagent.discriminator_pretrain: %w", err)
	}
	r.Logf("discriminator pre-training: inspecting %d trajectories, %d samples a step", len(trajs), c.Samples)
	env := r.NewEnv()
	// Iteration 0's seed: no cycle samples with it.
	steps, _, err := inspectExperts(ctx, r, env, trajs, 0)
	envs.Close(env)
	if err != nil {
		return fmt.Errorf("stepagent.discriminator_pretrain: %w", err)
	}
	r.EndPhase("rollout")
	d, err := judge.data(r, steps)
	if err != nil {
		return fmt.Errorf("stepagent.discriminator_pretrain: %w", err)
	}
	if err := r.Trainer.UseAdapter(discriminatorAdapter); err != nil {
		return err
	}
	// As many optimiser steps a pass as the trajectories fill cycles.
	minibatches := c.Minibatches * ((len(trajs) + c.Trajectories - 1) / c.Trajectories)
	loss, fit, err := fitDiscriminator(r, 0, d, minibatches)
	if err != nil {
		return fmt.Errorf("stepagent.discriminator_pretrain: %w", err)
	}
	if err := r.Trainer.UseAdapter(rl.ActorAdapter); err != nil {
		return err
	}
	secs := r.EndPhase("train")
	m := r.Metrics()
	m.Losses["discriminator_pretrain"] = loss
	m.Metrics["disc_pretrain_fit_balanced_accuracy"] = fit
	m.Metrics["disc_pretrain_judgements"] = float64(len(d.labels))
	r.Logf("discriminator pre-training: %d trajectories, %d steps, %d judgements (%d of the agent's differing actions), %d passes of %d minibatches in %.1fs; loss %.4f, balanced accuracy on them %.3f",
		len(trajs), len(steps), len(d.labels), len(d.labels)-len(steps), c.DiscriminatorEpochs, minibatches, secs, loss, fit)
	return nil
}

// inspectExperts samples the policy K times, and greedily, at every step
// of trajs that fits the context (skipped counts those that do not), in
// env, with iteration it's seed.
func inspectExperts(ctx context.Context, r *rl.Run, env envs.Env, trajs []Trajectory, it int) (steps []Step, skipped int, err error) {
	c := r.Config.StepAgent
	prefixes, skipped, err := Prefixes(r.Model(), trajs, r.Config.Rollout.Context, r.Config.Rollout.MaxTokens)
	if err != nil {
		return nil, 0, err
	}
	if len(prefixes) == 0 {
		return nil, 0, fmt.Errorf("no expert step fits the context of %d tokens", r.Config.Rollout.Context)
	}
	steps, err = Inspect(ctx, r.Collector(), r.ActorSnapshot(llm.Sampling{}), env, prefixes, c.Samples,
		r.Config.Rollout.MaxTokens, c.Temperature, r.IterSeed(it, seedInspect))
	return steps, skipped, err
}

// pretrainExperts are the discriminator's pre-training trajectories: an
// expert file's held out for it, or, with none, the built-in expert's on
// the stepagent.discriminator_pretrain train tasks just before the
// probe's (which are just before the first cycle's).
func pretrainExperts(ctx context.Context, r *rl.Run, file []Trajectory) ([]Trajectory, error) {
	if file != nil {
		return file, nil
	}
	c := r.Config.StepAgent
	n := c.DiscriminatorPretrain
	return builtinExperts(ctx, r, r.TaskSeed0(0, c.Probe)-int64(n), n)
}

// stepAdvantages are the samples' advantages from their step rewards:
// each reward less its baseline (baseline "cycle": the mean of all;
// "state": the mean of its state's samples, byState listing each state's),
// divided by the standard deviation of those differences over the cycle
// (rl.GroupAdvantages over the cycle, of the centred rewards for "state").
func stepAdvantages(rewards []float64, byState [][]int, baseline string) []float64 {
	if baseline == "state" {
		rewards = stateCentred(rewards, byState)
	}
	return rl.GroupAdvantages(rewards, 1e-8)
}

// stateCentred is each reward less the mean of its state's (byState
// lists each state's samples).
func stateCentred(rewards []float64, byState [][]int) []float64 {
	centred := make([]float64, len(rewards))
	for _, group := range byState {
		var sum float64
		for _, i := range group {
			sum += rewards[i]
		}
		for _, i := range group {
			centred[i] = rewards[i] - sum/float64(len(group))
		}
	}
	return centred
}

// tokenAdvantages are the advantages of each sample's action tokens
// (actions[i], rewards[i]; byState lists each state's samples). With the
// baselines "cycle" and "state" every token of a sample has the sample's
// stepAdvantages. With "tree" a token's advantage is what choosing it
// gained among the samples of its state that had chosen the same tokens
// before it: the mean reward of the samples that begin with the action up
// to and including the token, less the mean of those that begin with it
// up to the token before. A prefix all of a state's samples share gets 0,
// so a shared "Action: calc[" is not pushed by what its samples did after
// it; the first token where samples part gets the state baseline's
// advantage of its branch. Scaled as "state": divided by the standard
// deviation over the cycle of the state-centred rewards.
func tokenAdvantages(rewards []float64, byState [][]int, actions [][]int32, baseline string) [][]float64 {
	out := make([][]float64, len(rewards))
	if baseline != "tree" {
		adv := stepAdvantages(rewards, byState, baseline)
		for i := range out {
			out[i] = make([]float64, len(actions[i]))
			for k := range out[i] {
				out[i][k] = adv[i]
			}
		}
		return out
	}
	scale := 0.0
	if sd := stat.StdDev(stateCentred(rewards, byState), nil); sd > 0 && !math.IsNaN(sd) {
		scale = 1 / (sd + 1e-8)
	}
	// meanSharing is the mean reward of the group's samples whose action
	// begins with prefix.
	meanSharing := func(group []int, prefix []int32) float64 {
		sum, n := 0.0, 0
		for _, j := range group {
			if len(actions[j]) >= len(prefix) && slices.Equal(actions[j][:len(prefix)], prefix) {
				sum += rewards[j]
				n++
			}
		}
		return sum / float64(n) // n >= 1: the sample itself
	}
	for _, group := range byState {
		for _, i := range group {
			out[i] = make([]float64, len(actions[i]))
			before := meanSharing(group, nil)
			for k := range actions[i] {
				after := meanSharing(group, actions[i][:k+1])
				out[i][k] = (after - before) * scale
				before = after
			}
		}
	}
	return out
}

// judgement is the discriminator's pair of tokens, and whether its
// log-odds are the adapter's change to the base model's
// (stepagent.discriminator_residual).
type judgement struct {
	yes, no  int32
	residual bool
}

// add appends the two probes of D(prompt, action), read after the
// action, to seqs and their pair.
func (j judgement) add(seqs *[]train.Sequence, pairs *[]train.Pair, prompt, action []int32) {
	tokens := make([]int32, 0, len(prompt)+len(action)+1)
	tokens = append(append(append(tokens, prompt...), action...), j.yes)
	// The one probe, after the action, is always in range.
	yes, no, _ := rl.ProbePair(tokens, []int{len(tokens) - 1}, j.yes, j.no)
	*pairs = append(*pairs, train.Pair{Chosen: len(*seqs), Rejected: len(*seqs) + 1})
	*seqs = append(*seqs, yes, no)
}

// judgeWith is the active adapter's log-odds of each judgement of seqs
// (judgementOdds of one pass of the trainer), less base's where base is
// not nil.
func judgeWith(r *rl.Run, seqs []train.Sequence, pairs []train.Pair, base []float64) ([]float64, error) {
	lp, err := r.LogProbs(seqs, false)
	if err != nil {
		return nil, err
	}
	odds, err := judgementOdds(seqs, lp, pairs)
	if err != nil || base == nil {
		return odds, err
	}
	for k := range odds {
		odds[k] -= base[k]
	}
	return odds, nil
}

// baseOdds is the base model's log-odds of each judgement of seqs, what a
// residual discriminator's are measured from; nil for a plain one.
func (j judgement) baseOdds(r *rl.Run, seqs []train.Sequence, pairs []train.Pair) ([]float64, error) {
	if !j.residual {
		return nil, nil
	}
	lp, err := r.LogProbs(seqs, true)
	if err != nil {
		return nil, fmt.Errorf("the base model's judgements: %w", err)
	}
	return judgementOdds(seqs, lp, pairs)
}

// judgementOdds is the log-odds of each judgement (one probe a pair).
func judgementOdds(seqs []train.Sequence, logp [][]float32, pairs []train.Pair) ([]float64, error) {
	odds, err := rl.LogOdds(seqs, logp, pairs)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(odds))
	for k, o := range odds {
		out[k] = o[0]
	}
	return out, nil
}

// stepReward is log D - log(1 - D), which for D = sigmoid(z) is the
// log-odds z itself, bounded so that a saturated discriminator cannot give
// unbounded rewards.
func stepReward(z float64) float64 { return math.Max(-20, math.Min(20, z)) }

// discriminatorAccuracy is the share of judgements on their label's side
// of D = 1/2 (log-odds 0), and the balanced accuracy: the mean of that
// share over the expert's and over the agent's actions (the share of the
// one class where the other has none).
func discriminatorAccuracy(odds, labels []float64) (accuracy, balanced float64) {
	var right, total [2]int
	for i, z := range odds {
		class := 0
		if labels[i] > 0.5 {
			class = 1
		}
		total[class]++
		if (z > 0) == (class == 1) {
			right[class]++
		}
	}
	var shares []float64
	for k := range total {
		if total[k] > 0 {
			shares = append(shares, float64(right[k])/float64(total[k]))
		}
	}
	if len(shares) == 0 {
		return 0, 0
	}
	accuracy = float64(right[0]+right[1]) / float64(total[0]+total[1])
	for _, s := range shares {
		balanced += s / float64(len(shares))
	}
	return accuracy, balanced
}

// meanTokenLogProb is the mean log-probability of the weighted tokens.
func meanTokenLogProb(seqs []train.Sequence, logp [][]float32) float64 {
	sum, n := 0.0, 0
	for i, s := range seqs {
		for k, w := range s.Weights {
			if w != 0 {
				sum += float64(logp[i][k])
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func pickRows[T any](x []T, b []int) []T {
	out := make([]T, len(b))
	for i, k := range b {
		out[i] = x[k]
	}
	return out
}

// holdOutProbe returns the trajectories the cycles draw from (the file's
// but its last n; nil for the built-in expert) and the prefixes of the n
// held-out probe trajectories (the file's last n, or the built-in expert's
// on train tasks no cycle plays); n 0: no probe.
func holdOutProbe(ctx context.Context, r *rl.Run, file []Trajectory, n int) ([]Trajectory, []Prefix, error) {
	if n == 0 {
		return file, nil, nil
	}
	var probe []Trajectory
	if file != nil {
		if len(file) <= n {
			return nil, nil, fmt.Errorf("stepagent.probe %d: the expert file has %d conversations, and the cycles need some besides the probe", n, len(file))
		}
		file, probe = file[:len(file)-n], file[len(file)-n:]
	} else {
		eps, err := r.HeldOutExperts(ctx, n)
		if err != nil {
			return nil, nil, fmt.Errorf("stepagent.probe: %w", err)
		}
		if probe, err = successfulExperts(eps); err != nil {
			return nil, nil, fmt.Errorf("stepagent.probe: %w", err)
		}
	}
	prefixes, _, err := Prefixes(r.Model(), probe, r.Config.Rollout.Context, r.Config.Rollout.MaxTokens)
	if err != nil {
		return nil, nil, fmt.Errorf("stepagent.probe: %w", err)
	}
	if len(prefixes) == 0 {
		return nil, nil, fmt.Errorf("stepagent.probe: no step of the %d probe trajectories fits the context of %d tokens", len(probe), r.Config.Rollout.Context)
	}
	return file, prefixes, nil
}

// measureProbe is the greedy step agreement and the expert actions'
// log-likelihood per token under the policy at the probe's prefixes.
func measureProbe(ctx context.Context, r *rl.Run, env envs.Env, probe []Prefix) (agreement, loglik float64, err error) {
	steps, err := Inspect(ctx, r.Collector(), r.ActorSnapshot(llm.Sampling{}), env, probe, 0, r.Config.Rollout.MaxTokens, 0, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("probe: %w", err)
	}
	seqs, lp, err := expertLogProbs(r, steps)
	if err != nil {
		return 0, 0, fmt.Errorf("probe: %w", err)
	}
	agreement, _ = Agreement(steps)
	return agreement, meanTokenLogProb(seqs, lp), nil
}

// finalProbe measures the held-out probe with the actor as the last
// reflection left it, into m as probe_agreement_final and
// probe_loglik_final.
func finalProbe(ctx context.Context, r *rl.Run, m *rl.Metrics, probe []Prefix) error {
	r.EndPhase("train")
	if err := r.HandOverActor(ctx); err != nil {
		return err
	}
	env := r.NewEnv()
	agree, loglik, err := measureProbe(ctx, r, env, probe)
	envs.Close(env)
	if err != nil {
		return fmt.Errorf("after the last cycle: %w", err)
	}
	m.Metrics["probe_agreement_final"], m.Metrics["probe_loglik_final"] = agree, loglik
	r.EndPhase("rollout")
	r.Logf("after cycle %d: probe step agreement %.3f, expert log-likelihood %.3f per token", r.Config.Iterations, agree, loglik)
	return nil
}

// expertLogProbs are the inspected steps' expert sequences (h_t and the
// expert's action) and their log-probabilities under the policy.
func expertLogProbs(r *rl.Run, steps []Step) ([]train.Sequence, [][]float32, error) {
	seqs := make([]train.Sequence, len(steps))
	for i, st := range steps {
		seqs[i] = expertSequence(st)
	}
	lp, err := r.LogProbs(seqs, false)
	return seqs, lp, err
}

// cycleExperts returns the cycle's expert trajectories: the next ones of
// the file, in turn, or the built-in expert's on new train tasks.
func cycleExperts(ctx context.Context, r *rl.Run, file []Trajectory, cycle int) ([]Trajectory, error) {
	n := r.Config.StepAgent.Trajectories
	if file == nil {
		return builtinExperts(ctx, r, r.TaskSeed0(cycle, n), n)
	}
	out := make([]Trajectory, 0, n)
	for i := range min(n, len(file)) {
		out = append(out, file[((cycle-1)*n+i)%len(file)])
	}
	return out, nil
}

// fileSequences turns up to n of a file's conversations (n 0: all) into
// warm-start sequences, the loss on their steps only (a turn marked
// "loss": false is context), leaving out and counting those longer than
// the context.
func fileSequences(m train.Tokenizer, file []Trajectory, n, context int) (seqs []train.Sequence, outgrew int, err error) {
	if n <= 0 || n > len(file) {
		n = len(file)
	}
	for _, t := range file[:n] {
		s, err := train.ChatSequenceOf(m, t.Messages, t.Steps)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", t.Source, err)
		}
		if len(s.Tokens) > context {
			outgrew++
			continue
		}
		seqs = append(seqs, s)
	}
	if len(seqs) == 0 {
		return nil, outgrew, fmt.Errorf("no expert conversation fits the context of %d tokens", context)
	}
	return seqs, outgrew, nil
}
