package rl

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/train"
)

// Config is a training run: what to train, on which environment, with
// which algorithm and budget. Its YAML form is the --config file and the
// run directory's config.yaml; DefaultConfig gives every default, and
// docs/training.md explains each choice.
type Config struct {
	// Algorithm is one of Algorithms().
	Algorithm string `yaml:"algorithm"`
	// Label names the method in reports when it is a variant of an
	// algorithm (e.g. stepagent-irl); empty: the algorithm's name.
	Label string `yaml:"label,omitempty"`
	Env   string `yaml:"env"`
	// Model is what --model takes: a GGUF path, a pulled model's name or
	// ollama:NAME.
	Model string `yaml:"model"`
	// Seed drives everything random in the run: the adapters'
	// initialisation, task order, sampling and shuffling.
	Seed uint64 `yaml:"seed"`
	// Iterations of the algorithm's loop (rollouts, then updates).
	Iterations int `yaml:"iterations"`
	// Threads for inference and training (0: one per core).
	Threads int `yaml:"threads"`
	// GPU runs rollouts and training on the first GPU of an installed GPU
	// backend (docs/gpu.md); off, everything runs on the CPU even where a
	// GPU is present, so that a run's figures do not depend on the machine.
	GPU bool `yaml:"gpu"`

	Rollout RolloutConfig `yaml:"rollout"`
	Eval    EvalConfig    `yaml:"eval"`
	LoRA    LoRAConfig    `yaml:"lora"`
	// WarmStart fine-tunes the actor on expert demonstrations before the
	// first iteration of an RL algorithm (ETO requires it; GRPO and PPO
	// use it by default because a 135M model succeeds too rarely zero-shot
	// for rewards to differ within a group).
	WarmStart SFTConfig `yaml:"warm_start"`
	// InitAdapter starts the actor from this LoRA adapter (a GGUF file of
	// the same rank, e.g. an SFT run's adapters/actor.gguf) instead of a
	// warm start; it is also the "warm_start" reference policy.
	InitAdapter string     `yaml:"init_adapter"`
	SFT         SFTConfig  `yaml:"sft"`
	GRPO        GRPOConfig `yaml:"grpo"`
	PPO         PPOConfig  `yaml:"ppo"`
	ETO         ETOConfig  `yaml:"eto"`
	// StepAgent is the stepagent algorithm's section (package stepagent).
	StepAgent StepAgentConfig `yaml:"stepagent"`
	// NLAC is the nlac algorithm's section (package nlac).
	NLAC NLACConfig `yaml:"nlac"`
}

// RolloutConfig says how training episodes are played.
type RolloutConfig struct {
	// Tasks per iteration, each played Group times (GRPO) or once.
	Tasks int `yaml:"tasks"`
	// MaxSteps ends an episode after this many steps (0: the
	// environment's limit).
	MaxSteps int `yaml:"max_steps"`
	// MaxTokens bounds one action.
	MaxTokens int `yaml:"max_tokens"`
	// Temperature of the training rollouts. The recorded log-probabilities
	// are the policy's own (temperature 1), and GRPO's and PPO's ratios
	// and KL read them: at another temperature the actions come from a
	// sharper or flatter distribution than the one those ratios assume.
	Temperature float64 `yaml:"temperature"`
	// Parallel episodes played at once (one batched model call serves
	// them all).
	Parallel int `yaml:"parallel"`
	// Context is the engine's context per sequence in tokens; longer
	// histories drop their oldest turns (recorded in the trajectories).
	Context int `yaml:"context"`
	// KVCacheMiB is the engine's KV cache budget (0: enough for Parallel
	// sequences of Context tokens).
	KVCacheMiB int `yaml:"kv_cache_mib"`
	// StepTimeout bounds each environment reset and step in seconds (0:
	// none); an environment that exceeds it (a remote server that hangs)
	// fails its episode and the run goes on.
	StepTimeout float64 `yaml:"step_timeout"`
}

// kvStreams is the number of KV streams the engine keeps where
// rollout.kv_cache_mib is not set: the parallel sequences', and for NLAC
// one per prompt of a role's call (the batch's transitions; NLQL's
// candidates of each, or the actor's replacements), so that every prompt
// keeps its head cached from its future through its critique, verdict
// and refinement. The streams beyond the parallel ones take at most an
// eighth of memory (where it is known).
func (c Config) kvStreams(info llm.Info, memory uint64) int {
	want := c.Rollout.Parallel
	if c.Algorithm == "nlac" {
		prompts := c.NLAC.Batch
		if c.NLAC.Method == "nlql" || c.NLAC.ReplaceWith == "actor" {
			prompts *= c.NLAC.Candidates
		}
		want = max(want, prompts)
	}
	if memory > 0 {
		stream := uint64(c.Rollout.Context) * uint64(info.KVBytesPerToken())
		want = min(want, c.Rollout.Parallel+int(memory/8/max(stream, 1)))
	}
	return want
}

// EvalConfig says how the actor is evaluated during the run: greedy
// episodes on a split every Every iterations and after the last.
type EvalConfig struct {
	Every    int        `yaml:"every"` // 0: after the last iteration only
	Episodes int        `yaml:"episodes"`
	Split    envs.Split `yaml:"split"`
}

// LoRAConfig shapes every adapter of the run (actor, critic, ...).
type LoRAConfig struct {
	Rank  int     `yaml:"rank"`
	Alpha float64 `yaml:"alpha"` // 0: 2 x rank
	// BatchTokens bounds the tokens of one micro-batch of training.
	BatchTokens int `yaml:"batch_tokens"`
	// MemoryMiB bounds one micro-batch's activation memory: a micro-batch
	// over it is computed with gradient checkpointing, or refused with an
	// error before anything is allocated (0: no bound). A 4,096-token
	// micro-batch of SmolLM2 takes several GiB without it. Default:
	// DefaultMemoryMiB, a third of the machine's memory.
	MemoryMiB int `yaml:"memory_mib"`
	// F16Base holds a quantised base model as F16 in the trainer: about
	// 1.4x faster LoRA training on the CPU, but its log-probabilities move
	// away from the sampler's (train.Config.F16Base), so only the
	// algorithms whose losses compare the trainer with itself take it
	// (sft, eto, nlac, stepagent with implicit reflection).
	F16Base bool `yaml:"f16_base"`
}

// SFTConfig is supervised fine-tuning on expert demonstrations, loss on
// the action tokens only: the SFT baseline (one epoch per iteration) and
// the warm start of the RL algorithms.
type SFTConfig struct {
	// Demos is the number of expert episodes on the train split (0: no
	// warm start).
	Demos  int     `yaml:"demos"`
	Epochs int     `yaml:"epochs"` // passes over the demos (warm start)
	LR     float64 `yaml:"lr"`
	// BatchTokens is the size of one optimiser step's batch in tokens.
	BatchTokens int `yaml:"batch_tokens"`
}

// GRPOConfig is group relative policy optimisation for multi-turn agents
// (Shao et al. 2024, DeepSeekMath): every action token of an episode gets
// the episode's group-normalised return as its advantage.
type GRPOConfig struct {
	// Group is G, the episodes per task.
	Group int     `yaml:"group"`
	LR    float64 `yaml:"lr"`
	// Clip is the PPO clip range of the token-level ratio.
	Clip float64 `yaml:"clip"`
	// KL weights the k3 estimate of KL(policy || reference) per token
	// (0: no reference pass). Reference is "base" (the model without
	// adapter) or "warm_start" (the actor after the warm start).
	KL        float64 `yaml:"kl"`
	Reference string  `yaml:"reference"`
	// Epochs over each iteration's episodes, in Minibatches optimiser
	// steps each.
	Epochs      int `yaml:"epochs"`
	Minibatches int `yaml:"minibatches"`
	// InvalidPenalty is subtracted from an episode's return for each step
	// whose action the environment rejected.
	InvalidPenalty float64 `yaml:"invalid_penalty"`
}

// PPOConfig is proximal policy optimisation with a learned critic (Schulman
// et al. 2017), advantages by GAE over turns.
type PPOConfig struct {
	LR       float64 `yaml:"lr"`
	CriticLR float64 `yaml:"critic_lr"`
	Clip     float64 `yaml:"clip"`
	Gamma    float64 `yaml:"gamma"`
	Lambda   float64 `yaml:"lambda"`
	Epochs   int     `yaml:"epochs"`
	// Minibatches per epoch, each one optimiser step of actor and critic.
	Minibatches    int     `yaml:"minibatches"`
	InvalidPenalty float64 `yaml:"invalid_penalty"`
	// ValueToken and NegativeToken are the critic's judgement tokens:
	// V(s) = sigmoid(log p(ValueToken) - log p(NegativeToken)) under the
	// critic adapter at the position where the action begins.
	ValueToken    string `yaml:"value_token"`
	NegativeToken string `yaml:"negative_token"`
}

// ETOConfig is exploration-based trajectory optimisation (Song et al.
// 2024): explore the train tasks with the actor, pair each failure with
// the expert's success on the same task, and train on the pairs with
// trajectory-level DPO against the previous iteration's policy.
type ETOConfig struct {
	Beta float64 `yaml:"beta"`
	LR   float64 `yaml:"lr"`
	// Temperature of exploration.
	Temperature float64 `yaml:"temperature"`
	// ExtraTurns: a rejected trajectory is cut to the expert's length plus
	// this many turns.
	ExtraTurns int `yaml:"extra_turns"`
	Epochs     int `yaml:"epochs"`
	// Minibatches per epoch, each one optimiser step over its share of
	// the iteration's pairs.
	Minibatches int `yaml:"minibatches"`
}

// StepAgentConfig is StepAgent (Deng et al. 2024, arXiv 2411.03817):
// after a warm start on expert trajectories, each cycle (iteration)
// inspects the agent at every step of Trajectories expert trajectories,
// sampling Samples actions from each expert prefix, and reflects on the
// actions that differ from the expert's, by step-level DPO ("implicit")
// or by a discriminator's step rewards and PPO ("irl"). See
// docs/stepagent.md for what the paper leaves open and what we chose.
type StepAgentConfig struct {
	// Reflection is "implicit" or "irl".
	Reflection string `yaml:"reflection"`
	// Expert is a JSONL file of expert conversations (the formats of
	// AgentInstruct/ETO or chat messages); empty: the environment's
	// built-in expert on the train split.
	Expert string `yaml:"expert"`
	// Trajectories are the expert trajectories inspected per cycle, in
	// turn through the pool.
	Trajectories int `yaml:"trajectories"`
	// Probe is the number of expert trajectories held out from every
	// cycle (built-in expert: train tasks no cycle plays; --expert: the
	// file's last ones) on which each cycle's inspection measures the
	// greedy step agreement and the expert log-likelihood again: the same
	// steps every cycle, so that their curve follows the policy rather
	// than the cycle's tasks (0: none).
	Probe int `yaml:"probe"`
	// Samples is K, the actions sampled at each expert prefix (the prefix
	// is evaluated once for all of them), at Temperature (irl's PPO ratio
	// reads the policy's own log-probabilities, at temperature 1, as
	// rollout.temperature says).
	Samples     int     `yaml:"samples"`
	Temperature float64 `yaml:"temperature"`
	LR          float64 `yaml:"lr"`
	Epochs      int     `yaml:"epochs"`
	// Beta of the step-level DPO; Reference is its reference policy:
	// "cycle" (the policy at the start of the cycle) or "warm_start".
	Beta      float64 `yaml:"beta"`
	Reference string  `yaml:"reference"`
	// The discriminator of "irl": a LoRA adapter read after an action,
	// D(h, a) = sigmoid(log p(JudgementToken) - log p(NegativeToken)),
	// trained at DiscriminatorLR; it pauses while its balanced accuracy
	// (the mean over expert and agent actions) on the cycle's data, before
	// its update, is at least MaxAccuracy, so that it cannot run away from
	// the policy.
	DiscriminatorLR float64 `yaml:"discriminator_lr"`
	// DiscriminatorEpochs is the discriminator's passes over the cycle's
	// data, Minibatches optimiser steps each; with one, its cross-entropy
	// on the recorded grids stayed near ln 2.
	DiscriminatorEpochs int `yaml:"discriminator_epochs"`
	// DiscriminatorPretrain is the number of expert trajectories on whose
	// steps the discriminator learns, before the first cycle, to tell the
	// expert's actions from the warm-started agent's samples
	// (DiscriminatorEpochs passes, in minibatches the size of a cycle's);
	// built-in expert: train tasks no cycle or probe plays; --expert: the
	// file's last N before the probe's, held out of the warm start and the
	// cycles. 0: none, the discriminator starts at chance and learns from
	// a cycle's Trajectories only.
	DiscriminatorPretrain int `yaml:"discriminator_pretrain"`
	// DiscriminatorResidual reads the discriminator's log-odds as its
	// adapter's change to the base model's: log-odds with the adapter
	// less those without, in training and in the rewards. Every action
	// then starts at D = 1/2, where a plain discriminator starts at the
	// base model's own judgement token after the action, a prior that
	// differs by kind of action (math-calc: an answer above a calc).
	DiscriminatorResidual bool    `yaml:"discriminator_residual"`
	JudgementToken        string  `yaml:"judgement_token"`
	NegativeToken         string  `yaml:"negative_token"`
	MaxAccuracy           float64 `yaml:"max_accuracy"`
	// MinAccuracy skips the policy's update in a cycle whose
	// discriminator, before its own update, tells that cycle's expert
	// and agent actions apart with a balanced accuracy below it: its
	// rewards on actions it has not trained on would be noise, which the
	// normalisation over the cycle scales to a full-size step. 0: the
	// policy always updates.
	MinAccuracy float64 `yaml:"min_accuracy"`
	// PPO on the discriminator's step rewards. KL weights the k3 estimate
	// of KL(policy || warm start) per action token in that update (0:
	// none): an anchor for the policy while the discriminator's rewards
	// say little, since their normalisation gives even a discriminator at
	// chance full scale.
	Clip        float64 `yaml:"clip"`
	Minibatches int     `yaml:"minibatches"`
	KL          float64 `yaml:"kl"`
	// Baseline is what a step reward is measured against: "cycle" (the
	// mean reward of the cycle's samples), "state" (the mean of the
	// samples in the same inspected state, as GRPO's groups) or "tree"
	// (per token: the mean of the state's samples that made the same
	// choices before it, so that tokens all of them share get no
	// advantage), scaled by the standard deviation over the cycle. With
	// "cycle" what the discriminator thinks of a state, whatever the
	// action, becomes advantage of every action taken there.
	Baseline string `yaml:"baseline"`
}

// NLACConfig is the natural-language actor-critic ("Natural Language
// Actor-Critic", arXiv 2512.04601): a language successor model (the critic) predicts in
// words what follows an action, trained by a language Bellman backup
// against an EMA target copy; an evaluator turns predicted futures into a
// critique ending in a judgement; a refinement rewrites actions judged
// suboptimal; the actor is trained by NLL on the refined actions. Every
// role is a prompt template (Prompts). See docs/nlac.md for what the
// paper leaves open and what we chose.
type NLACConfig struct {
	// Method is "nlac", or an ablation: "self_distill" (no successor
	// model: the evaluator reads the real continuation of the episode),
	// "nlql" (no refinement: Candidates actions are sampled and the one
	// the evaluator rates best is distilled) or "nlrl" (no successor
	// model: the evaluator aggregates in context Rollouts fresh rollouts
	// of the actor from the state and action, a language value by Monte
	// Carlo).
	Method string `yaml:"method"`
	// SharedAdapter makes one adapter play every role, as in the paper;
	// by default the actor's adapter plays only the policy and a critic
	// adapter the successor model, merge, evaluator and refinement, so
	// that the policy's weights receive nothing but the distillation loss.
	SharedAdapter bool `yaml:"shared_adapter"`
	// Prompts is a directory of prompt templates that replace the built-in
	// ones of the same name (successor, merge, evaluator, refine; see
	// docs/nlac.md); empty: the built-in templates.
	Prompts string `yaml:"prompts"`
	// Merge makes the Bellman backup's target: "prompt" (the merge role,
	// as in the paper) or "template" (what happened next and the predicted
	// continuation joined by a fixed text: no model call, for models too
	// small to merge reliably).
	Merge string `yaml:"merge"`
	// Buffer is the replay buffer's capacity in transitions (the oldest
	// go first); Sampling draws from it "uniform" or "recent" (weight
	// RecencyDecay^age in iterations).
	Buffer       int     `yaml:"buffer"`
	Sampling     string  `yaml:"sampling"`
	RecencyDecay float64 `yaml:"recency_decay"`
	// Batch is the transitions drawn from the buffer per iteration for
	// the critic update and for policy improvement: the amount of data
	// per update, kept small against forgetting.
	Batch int `yaml:"batch"`
	// Futures is k, the futures sampled per critique; Refinements is m,
	// the rounds of refinement; Candidates the actions NLQL compares, or
	// the actor offers in place of a condemned one (ReplaceWith actor).
	Futures     int `yaml:"futures"`
	Refinements int `yaml:"refinements"`
	Candidates  int `yaml:"candidates"`
	// Rollouts are NLRL's rollouts of the actor per critiqued action.
	Rollouts int `yaml:"rollouts"`
	// HistorySteps are the latest steps the role prompts show of the
	// episode (the first observation, which states the task, always).
	HistorySteps int `yaml:"history_steps"`
	// Token budgets and sampling temperature of the critic's texts.
	FutureTokens   int     `yaml:"future_tokens"`
	CritiqueTokens int     `yaml:"critique_tokens"`
	Temperature    float64 `yaml:"temperature"`
	// OutcomeFirst puts the outcome line of a future description first,
	// before the detail: a future is generated up to FutureTokens, and a
	// WebShop page alone outgrows that, so with the outcome last the
	// evaluator saw predicted futures cut before their outcome.
	OutcomeFirst bool `yaml:"outcome_first"`
	// Tau is the EMA rate of the critic's target after each critic step.
	Tau      float64 `yaml:"tau"`
	LR       float64 `yaml:"lr"`
	CriticLR float64 `yaml:"critic_lr"`
	// Epochs over each update's data, in Minibatches optimiser steps
	// each, for the critic and for the actor.
	Epochs      int `yaml:"epochs"`
	Minibatches int `yaml:"minibatches"`
	// UnparsedJudgement is how a critique without a judgement counts:
	// "suboptimal" (refine it), "optimal" (keep the action) or "skip"
	// (no distillation target).
	UnparsedJudgement string `yaml:"unparsed_judgement"`
	// AskJudgement gives a critique that ends without a judgement the
	// verdict the evaluator finds likelier after it (every critique's
	// verdict is scored: "Judgement:" continued with "optimal" and with
	// "suboptimal"); without it, UnparsedJudgement rules such a critique.
	AskJudgement bool `yaml:"ask_judgement"`
	// RefineShare, above 0, makes the verdicts by rank rather than as
	// the critiques wrote them: in an update's first round the share of
	// critiqued actions the evaluator gives the lowest probability of
	// "optimal" are suboptimal and the rest optimal; in later rounds a
	// refinement stands only when rated above the best of those
	// condemned. Our option, not the paper's: a small evaluator's
	// probabilities rank the actions (AUC against the expert's 0.98 and
	// 1.00 on tau-retail) while its written verdicts approve nearly all of
	// them, so that the actor distils its own actions
	// (docs/results/nlac.md). 0: the written verdicts rule.
	RefineShare float64 `yaml:"refine_share"`
	// RefineSamples are the refinements sampled for each condemned
	// action; the first that names another action the environment
	// accepts is taken (the first sample when none does). Our option: on
	// twenty questions SmolLM2's refiner wrote the action it was given
	// back in 21 of 24 refinements, which improves nothing
	// (docs/results/nlac.md). 1: one refinement, as the paper.
	RefineSamples int `yaml:"refine_samples"`
	// RewriteOverruled has the evaluator write again each critique that
	// the rank condemns but that does not condemn its action itself: from
	// its reasoning, without the warm-up's "An expert acts the same.",
	// continued after "An expert would do:", so that the critique the
	// refiner reads names an action to take instead. Our option: with
	// verdicts by rank on twenty questions the refiner read "An expert
	// acts the same. Judgement: suboptimal" and wrote the action back in
	// 21 of 24 refinements (docs/results/nlac.md). Measured there with
	// it, the refiner changed 23 of 24 actions, but to a few stock
	// questions, and the actor won no game. Only with RefineShare.
	RewriteOverruled bool `yaml:"rewrite_overruled"`
	// ReplaceWith is what takes the place of a condemned action:
	// "refinement" (the refiner rewrites it from the critique, as the
	// paper) or "actor": Candidates actions sampled from the actor at the
	// state, judged from their futures as NLQL judges its candidates, the
	// one the evaluator rates best among those that name another action
	// the environment accepts and that it rates above the condemned one
	// (none: the action stays, or goes with InvalidRefinement drop; an
	// action of an earlier round is not offered again). Our option: on
	// twenty questions SmolLM2's refiner wrote the condemned action back
	// (21 of 24) or, told what to name, a few stock questions for every
	// state (docs/results/nlac.md), while NLQL's choice among the actor's
	// own actions kept them varied. Measured there (seed 1), it replaced
	// 22 of 24 condemned actions with varied questions and scored as the
	// control, whose evaluator rated them all alike. Only with method nlac
	// (the candidates' futures are the successor model's).
	ReplaceWith string `yaml:"replace_with"`
	// InvalidRefinement is what a refinement the environment rejects
	// becomes: "original" (the action it refined) or "drop".
	InvalidRefinement string `yaml:"invalid_refinement"`
	// ExpertShare adds expert demonstrations to each actor update, this
	// many per distilled action (0: none), against forgetting.
	ExpertShare float64 `yaml:"expert_share"`
	// Warmup teaches the roles from the environment's ground truth before
	// the first iteration (Tasks 0: none).
	Warmup NLACWarmup `yaml:"warmup"`
}

// NLACWarmup teaches a small model the critic's roles from ground truth:
// the actor and the expert play Tasks train tasks; each step gives a
// future description of what really followed, a critique from the true
// outcome and the expert's action, and a refinement into the expert's
// action.
type NLACWarmup struct {
	Tasks       int     `yaml:"tasks"`
	Epochs      int     `yaml:"epochs"`
	LR          float64 `yaml:"lr"`
	BatchTokens int     `yaml:"batch_tokens"`
	// Replay mixes warm-up examples into every critic update, this many
	// per backed-up target: the backup trains only the successor model,
	// and a small critic forgets its other roles without them.
	Replay float64 `yaml:"replay"`
	// Balance gives the evaluator as many examples judged suboptimal as
	// optimal, repeating the fewer: where the actor mostly acts as the
	// expert does (a warm-started one), the evaluator otherwise learns to
	// call nearly everything optimal. Off by default: on WebShop it left
	// the critic's judgements as they were (docs/results/nlac.md).
	Balance bool `yaml:"balance"`
	// BalanceOutcomes gives the successor model as many futures of failed
	// episodes as of successful ones, repeating the fewer: the warm-up's
	// episodes are mostly the expert's and a warm-started actor's
	// successes, and a successor model that learns from them predicts
	// success after almost any action. Off by default.
	BalanceOutcomes bool `yaml:"balance_outcomes"`
	// Judge is what makes an action optimal in the evaluator's warm-up
	// examples: "expert" (the action is the expert's in that state) or
	// "outcome" (its episode succeeded, the outcome its future states;
	// the critique is then the outcome line and the verdict, nothing of
	// the expert between). With "expert" the judgement does not follow
	// the future: a small evaluator then judges by whether the action
	// looks like the expert's, which it cannot tell, and calls nearly
	// everything optimal.
	Judge string `yaml:"judge"`
	// Branches are the actor's further episodes from each distinct state
	// of the warm-up's episodes, sampled at BranchTemperature; the
	// actions they take there that no episode took already become warm-up
	// transitions, told with the future that really followed them. The
	// warm-up's own episodes are the expert's and a warm-started actor's,
	// which mostly acts as the expert does, so without them the evaluator
	// sees few actions that are not the expert's and learns to call every
	// action optimal. 0: none.
	Branches          int     `yaml:"branches"`
	BranchTemperature float64 `yaml:"branch_temperature"`
	// ExpertBranches has the environment's expert play on from each
	// distinct state of the warm-up's episodes; its action there, where
	// no episode took it, becomes a warm-up transition told with what
	// followed when the expert played on. The actor's states then have
	// an action that leads to success beside the actor's own, and the
	// successor model can learn that the outcome depends on the action,
	// not only on the state. Its futures are the expert's continuation,
	// not the actor's: more hopeful than the actor's own play would be.
	ExpertBranches bool `yaml:"expert_branches"`
}

// Algorithms names the algorithms a Config can select, sorted.
func Algorithms() []string {
	names := make([]string, 0, len(algorithms))
	for n := range algorithms {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// DefaultConfig is the configuration with every default: the papers'
// settings scaled to small models trained with LoRA on a CPU (see
// docs/training.md for each scaling).
func DefaultConfig() Config {
	return Config{
		Algorithm:  "grpo",
		Model:      "smollm2-135m",
		Seed:       1,
		Iterations: 10,
		Rollout: RolloutConfig{
			Tasks: 8, MaxTokens: 48, Temperature: 1, Parallel: 16, Context: 2048,
		},
		Eval: EvalConfig{Every: 5, Episodes: 16, Split: envs.Test},
		LoRA: LoRAConfig{Rank: train.DefaultLoRARank, BatchTokens: 2048, MemoryMiB: DefaultMemoryMiB()},
		// The demo's recipe: 48-64 WebShop demos, one epoch at 1e-3, take
		// SmolLM2 from 0 to half of the test tasks.
		WarmStart: SFTConfig{Demos: 64, Epochs: 1, LR: 1e-3, BatchTokens: 1024},
		SFT:       SFTConfig{Demos: 64, Epochs: 1, LR: 1e-3, BatchTokens: 1024},
		GRPO: GRPOConfig{
			Group: 4, LR: 2e-5, Clip: 0.2, KL: 0, Reference: "base", Epochs: 1, Minibatches: 2, InvalidPenalty: 0.1,
		},
		PPO: PPOConfig{
			LR: 2e-5, CriticLR: 1e-4, Clip: 0.2, Gamma: 1, Lambda: 0.95, Epochs: 2, Minibatches: 2,
			InvalidPenalty: 0.1, ValueToken: " Yes", NegativeToken: " No",
		},
		ETO: ETOConfig{Beta: 0.1, LR: 2e-5, Temperature: 0.7, ExtraTurns: 5, Epochs: 1, Minibatches: 1},
		StepAgent: StepAgentConfig{
			Reflection: "implicit", Trajectories: 16, Samples: 4, Temperature: 1, LR: 2e-5, Epochs: 1,
			Beta: 0.1, Reference: "cycle", DiscriminatorLR: 1e-4, DiscriminatorEpochs: 1, JudgementToken: " Yes", NegativeToken: " No", MaxAccuracy: 0.95,
			Clip: 0.2, Minibatches: 2, Baseline: "cycle",
		},
		NLAC: NLACConfig{
			Method: "nlac", Merge: "prompt", Buffer: 4096, Sampling: "uniform", RecencyDecay: 0.5, Batch: 32,
			Futures: 1, Refinements: 1, RefineSamples: 1, ReplaceWith: "refinement", Candidates: 4, Rollouts: 4, HistorySteps: 4, FutureTokens: 64, CritiqueTokens: 64, OutcomeFirst: true, Temperature: 0.7,
			Tau: 0.1, LR: 1e-4, CriticLR: 1e-4, Epochs: 1, Minibatches: 2, UnparsedJudgement: "suboptimal", AskJudgement: true, InvalidRefinement: "original",
			Warmup: NLACWarmup{Tasks: 4, Epochs: 1, LR: 1e-3, BatchTokens: 2048, Replay: 0.5, Judge: "expert", BranchTemperature: 1},
		},
	}
}

// LoadConfig reads a YAML configuration over the defaults, then applies
// overrides of the form "key.path=value" (YAML values, e.g.
// "grpo.lr=1e-5"). A key the configuration does not have is an error
// naming it; so is an invalid value.
func LoadConfig(path string, overrides []string) (Config, error) {
	var data []byte
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return Config{}, fmt.Errorf("config: %w", err)
		}
	}
	return parseConfig(data, path, overrides)
}

// parseConfig is LoadConfig of the YAML text data, read from path (for
// messages; "" when it comes from elsewhere).
func parseConfig(data []byte, path string, overrides []string) (Config, error) {
	where := "config"
	if path != "" {
		where = "config " + path
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Config{}, fmt.Errorf("%s: %w", where, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	} else if root.Kind == 0 {
		root = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	if root.Kind != yaml.MappingNode {
		return Config{}, fmt.Errorf("%s: want a mapping of keys to values at the top", where)
	}
	for _, o := range overrides {
		key, value, ok := strings.Cut(o, "=")
		if !ok || key == "" {
			return Config{}, fmt.Errorf("override %q: want key=value, e.g. grpo.lr=1e-5", o)
		}
		if err := setKey(root, strings.Split(key, "."), value); err != nil {
			return Config{}, fmt.Errorf("override %q: %w", o, err)
		}
	}
	cfg := DefaultConfig()
	var buf bytes.Buffer
	if err := yaml.NewEncoder(&buf).Encode(root); err != nil {
		return Config{}, err
	}
	text := buf.String()
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("%s: %s", where, keyedMessage(unknownKeyMessage(err), text))
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", where, err)
	}
	return cfg, nil
}

// setKey sets the value at a dotted key path in a YAML mapping, creating
// mappings on the way; unknown keys are left for the strict decoding to
// name.
func setKey(m *yaml.Node, path []string, value string) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != path[0] {
			continue
		}
		if len(path) == 1 {
			return parseScalar(m.Content[i+1], value)
		}
		if m.Content[i+1].Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a section", path[0])
		}
		return setKey(m.Content[i+1], path[1:], value)
	}
	child := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: path[0]}, child)
	if len(path) == 1 {
		return parseScalar(child, value)
	}
	return setKey(child, path[1:], value)
}

// parseScalar replaces n by the YAML value text.
func parseScalar(n *yaml.Node, text string) error {
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		return err
	}
	if len(v.Content) == 0 {
		*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
		return nil
	}
	*n = *v.Content[0]
	return nil
}

// unknownKeyMessage rewrites the YAML decoder's "field X not found in
// type rl.GRPOConfig" as "unknown key X".
func unknownKeyMessage(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	msgs := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		msg := e
		if a, b, ok := strings.Cut(msg, "field "); ok {
			if name, _, ok := strings.Cut(b, " not found in type"); ok {
				msg = a + "unknown key " + name
			}
		}
		msgs[i] = msg
	}
	return strings.Join(msgs, "; ")
}

// keyedMessage replaces the "line N:" of the decoder's messages, which
// count lines of the merged configuration rather than of any file, by the
// dotted key at that line.
func keyedMessage(msg, text string) string {
	var root yaml.Node
	if yaml.Unmarshal([]byte(text), &root) != nil {
		return msg
	}
	keys := map[int]string{}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		for _, c := range n.Content {
			if n.Kind == yaml.DocumentNode {
				walk(c, prefix)
			}
		}
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := prefix + n.Content[i].Value
			keys[n.Content[i].Line] = key
			walk(n.Content[i+1], key+".")
		}
	}
	walk(&root, "")
	parts := strings.Split(msg, "; ")
	for i, p := range parts {
		var line int
		if _, err := fmt.Sscanf(p, "line %d:", &line); err == nil && keys[line] != "" {
			_, rest, _ := strings.Cut(p, ":")
			parts[i] = keys[line] + ":" + rest
		}
	}
	return strings.Join(parts, "; ")
}

// Validate checks every value the run will use.
func (c *Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	// Comparisons below let NaN through (it is neither negative nor
	// positive) and a learning rate of +Inf; both would fail only after
	// a warm start had run.
	for _, key := range nonFinite(reflect.ValueOf(*c), "") {
		check(false, "%s: must be a finite number", key)
	}
	// Sampling takes 0 (greedy) or at least llm.MinTemperature.
	for key, t := range map[string]float64{"rollout.temperature": c.Rollout.Temperature, "eto.temperature": c.ETO.Temperature,
		"stepagent.temperature": c.StepAgent.Temperature, "nlac.temperature": c.NLAC.Temperature, "nlac.warmup.branch_temperature": c.NLAC.Warmup.BranchTemperature} {
		check(t <= 0 || t >= llm.MinTemperature, "%s %g: below %g use 0, greedy decoding", key, t, llm.MinTemperature)
	}
	check(slices.Contains(Algorithms(), c.Algorithm), "algorithm %q: want one of %s", c.Algorithm, strings.Join(Algorithms(), ", "))
	check(c.Env != "", "env: none given")
	check(c.Model != "", "model: none given")
	check(c.Iterations > 0, "iterations %d must be positive", c.Iterations)
	check(c.Threads >= 0, "threads %d must not be negative", c.Threads)
	r := c.Rollout
	check(r.Tasks > 0, "rollout.tasks %d must be positive", r.Tasks)
	check(r.MaxSteps >= 0, "rollout.max_steps %d must not be negative", r.MaxSteps)
	check(r.MaxTokens > 0, "rollout.max_tokens %d must be positive", r.MaxTokens)
	check(r.Temperature >= 0, "rollout.temperature %g must not be negative", r.Temperature)
	check(r.Parallel > 0, "rollout.parallel %d must be positive", r.Parallel)
	check(r.Context > r.MaxTokens, "rollout.context %d must exceed rollout.max_tokens %d", r.Context, r.MaxTokens)
	check(r.KVCacheMiB >= 0, "rollout.kv_cache_mib %d must not be negative", r.KVCacheMiB)
	// A day bounds it well inside a time.Duration (about 292 years).
	check(r.StepTimeout >= 0 && r.StepTimeout <= 86400, "rollout.step_timeout %g must be in [0, 86400] seconds", r.StepTimeout)
	check(c.Eval.Every >= 0 && c.Eval.Episodes >= 0, "eval.every %d and eval.episodes %d must not be negative", c.Eval.Every, c.Eval.Episodes)
	if _, err := envs.ParseSplit(string(c.Eval.Split)); err != nil {
		errs = append(errs, fmt.Errorf("eval.split: %w", err))
	}
	check(c.LoRA.Rank > 0 && c.LoRA.Rank <= 4096, "lora.rank %d out of range [1, 4096]", c.LoRA.Rank)
	check(c.LoRA.Alpha >= 0, "lora.alpha %g must not be negative", c.LoRA.Alpha)
	check(c.LoRA.BatchTokens >= 64, "lora.batch_tokens %d must be at least 64", c.LoRA.BatchTokens)
	check(c.LoRA.MemoryMiB >= 0, "lora.memory_mib %d must not be negative", c.LoRA.MemoryMiB)
	samplerRatios := c.Algorithm == "grpo" || c.Algorithm == "ppo" || (c.Algorithm == "stepagent" && c.StepAgent.Reflection == "irl")
	check(!c.LoRA.F16Base || !samplerRatios, "lora.f16_base: %s compares the trainer's log-probabilities with the sampler's, which F16 base weights move apart; use it with sft, eto, nlac or implicit stepagent", c.Algorithm)
	sft := func(name string, s SFTConfig, required bool) {
		check(s.Demos >= 0 && (!required || s.Demos > 0), "%s.demos %d must be positive", name, s.Demos)
		check(s.Demos == 0 || (s.Epochs > 0 && s.LR > 0 && s.BatchTokens > 0), "%s.epochs %d, %s.lr %g and %s.batch_tokens %d must be positive",
			name, s.Epochs, name, s.LR, name, s.BatchTokens)
	}
	switch c.Algorithm {
	case "sft":
		sft("sft", c.SFT, true)
		check(c.SFT.Epochs == 1, "sft.epochs %d: the SFT baseline trains one epoch per iteration; set iterations for more epochs", c.SFT.Epochs)
		// Refused rather than ignored: the SFT baseline trains a new adapter
		// from the base model, and a run that silently dropped the file
		// would be read as fine-tuned from it.
		check(c.InitAdapter == "", "init_adapter %q: the sft baseline trains a new adapter from the base model; start the other algorithms from an adapter", c.InitAdapter)
	case "grpo":
		sft("warm_start", c.WarmStart, false)
		g := c.GRPO
		check(g.Group >= 2, "grpo.group %d must be at least 2 (advantages compare the episodes of a task)", g.Group)
		check(g.LR > 0 && g.Clip > 0, "grpo.lr %g and grpo.clip %g must be positive", g.LR, g.Clip)
		check(g.KL >= 0, "grpo.kl %g must not be negative", g.KL)
		check(g.Reference == "base" || g.Reference == "warm_start", "grpo.reference %q: want base or warm_start", g.Reference)
		check(g.Reference != "warm_start" || c.WarmStart.Demos > 0 || c.InitAdapter != "", "grpo.reference warm_start needs a warm start (warm_start.demos > 0 or init_adapter)")
		check(g.Epochs > 0 && g.Minibatches > 0, "grpo.epochs %d and grpo.minibatches %d must be positive", g.Epochs, g.Minibatches)
		check(g.InvalidPenalty >= 0, "grpo.invalid_penalty %g must not be negative", g.InvalidPenalty)
	case "ppo":
		sft("warm_start", c.WarmStart, false)
		p := c.PPO
		check(p.LR > 0 && p.CriticLR > 0 && p.Clip > 0, "ppo.lr %g, ppo.critic_lr %g and ppo.clip %g must be positive", p.LR, p.CriticLR, p.Clip)
		check(p.Gamma >= 0 && p.Gamma <= 1 && p.Lambda >= 0 && p.Lambda <= 1, "ppo.gamma %g and ppo.lambda %g must be in [0, 1]", p.Gamma, p.Lambda)
		check(p.Epochs > 0 && p.Minibatches > 0, "ppo.epochs %d and ppo.minibatches %d must be positive", p.Epochs, p.Minibatches)
		check(p.InvalidPenalty >= 0, "ppo.invalid_penalty %g must not be negative", p.InvalidPenalty)
		check(p.ValueToken != "" && p.NegativeToken != "" && p.ValueToken != p.NegativeToken,
			"ppo.value_token %q and ppo.negative_token %q must be two different tokens", p.ValueToken, p.NegativeToken)
	case "eto":
		sft("warm_start", c.WarmStart, c.InitAdapter == "")
		e := c.ETO
		check(e.Beta > 0 && e.LR > 0, "eto.beta %g and eto.lr %g must be positive", e.Beta, e.LR)
		check(e.Temperature >= 0, "eto.temperature %g must not be negative", e.Temperature)
		check(e.ExtraTurns >= 0 && e.Epochs > 0 && e.Minibatches > 0, "eto.extra_turns %d must not be negative, eto.epochs %d and eto.minibatches %d positive", e.ExtraTurns, e.Epochs, e.Minibatches)
	case "stepagent":
		sft("warm_start", c.WarmStart, false)
		a := c.StepAgent
		check(a.Reflection == "implicit" || a.Reflection == "irl", "stepagent.reflection %q: want implicit or irl", a.Reflection)
		check(a.Trajectories > 0 && a.Samples > 0, "stepagent.trajectories %d and stepagent.samples %d must be positive", a.Trajectories, a.Samples)
		check(a.Probe >= 0, "stepagent.probe %d must not be negative", a.Probe)
		check(a.Temperature >= 0, "stepagent.temperature %g must not be negative", a.Temperature)
		check(a.LR > 0 && a.Epochs > 0, "stepagent.lr %g and stepagent.epochs %d must be positive", a.LR, a.Epochs)
		check(a.Beta > 0, "stepagent.beta %g must be positive", a.Beta)
		check(a.Reference == "cycle" || a.Reference == "warm_start", "stepagent.reference %q: want cycle or warm_start", a.Reference)
		check(a.Reference != "warm_start" || c.WarmStart.Demos > 0 || c.InitAdapter != "", "stepagent.reference warm_start needs a warm start")
		check(a.DiscriminatorLR > 0 && a.Clip > 0 && a.Minibatches > 0, "stepagent.discriminator_lr %g, stepagent.clip %g and stepagent.minibatches %d must be positive",
			a.DiscriminatorLR, a.Clip, a.Minibatches)
		check(a.DiscriminatorEpochs > 0, "stepagent.discriminator_epochs %d must be positive", a.DiscriminatorEpochs)
		check(a.DiscriminatorPretrain >= 0, "stepagent.discriminator_pretrain %d must not be negative", a.DiscriminatorPretrain)
		check(a.DiscriminatorPretrain == 0 || a.Reflection == "irl", "stepagent.discriminator_pretrain %d applies to the irl reflection only (its discriminator)", a.DiscriminatorPretrain)
		check(a.MinAccuracy == 0 || a.MinAccuracy > 0.5 && a.MinAccuracy < a.MaxAccuracy,
			"stepagent.min_accuracy %g must be 0 (off) or in (0.5, stepagent.max_accuracy %g): a balanced accuracy of 0.5 is chance", a.MinAccuracy, a.MaxAccuracy)
		check(a.MinAccuracy == 0 || a.Reflection == "irl", "stepagent.min_accuracy %g applies to the irl reflection only (its discriminator)", a.MinAccuracy)
		check(!a.DiscriminatorResidual || a.Reflection == "irl", "stepagent.discriminator_residual applies to the irl reflection only (its discriminator)")
		check(a.JudgementToken != "" && a.NegativeToken != "" && a.JudgementToken != a.NegativeToken,
			"stepagent.judgement_token %q and stepagent.negative_token %q must be two different tokens", a.JudgementToken, a.NegativeToken)
		check(a.MaxAccuracy > 0.5 && a.MaxAccuracy <= 1, "stepagent.max_accuracy %g must be in (0.5, 1]", a.MaxAccuracy)
		check(a.Baseline == "cycle" || a.Baseline == "state" || a.Baseline == "tree", "stepagent.baseline %q: want cycle, state or tree", a.Baseline)
		check(a.Baseline == "cycle" || a.Reflection == "irl", "stepagent.baseline %s applies to the irl reflection only (its step rewards)", a.Baseline)
		check(a.KL >= 0, "stepagent.kl %g must not be negative", a.KL)
		check(a.KL == 0 || a.Reflection == "irl", "stepagent.kl %g applies to the irl reflection only (its PPO update)", a.KL)
		check(a.KL == 0 || c.WarmStart.Demos > 0 || c.InitAdapter != "", "stepagent.kl needs a warm start to stay near (warm_start.demos > 0 or init_adapter)")
	case "nlac":
		sft("warm_start", c.WarmStart, false)
		n := c.NLAC
		check(slices.Contains([]string{"nlac", "self_distill", "nlql", "nlrl"}, n.Method), "nlac.method %q: want nlac, self_distill, nlql or nlrl", n.Method)
		check(n.Merge == "prompt" || n.Merge == "template", "nlac.merge %q: want prompt or template", n.Merge)
		check(n.Buffer > 0 && n.Batch > 0, "nlac.buffer %d and nlac.batch %d must be positive", n.Buffer, n.Batch)
		check(n.Sampling == "uniform" || n.Sampling == "recent", "nlac.sampling %q: want uniform or recent", n.Sampling)
		check(n.RecencyDecay > 0 && n.RecencyDecay <= 1, "nlac.recency_decay %g must be in (0, 1]", n.RecencyDecay)
		check(n.Futures > 0 && n.Refinements > 0 && n.Candidates > 0 && n.Rollouts > 0, "nlac.futures %d, nlac.refinements %d, nlac.candidates %d and nlac.rollouts %d must be positive",
			n.Futures, n.Refinements, n.Candidates, n.Rollouts)
		check(n.HistorySteps > 0, "nlac.history_steps %d must be positive", n.HistorySteps)
		check(n.FutureTokens > 0 && n.CritiqueTokens > 0, "nlac.future_tokens %d and nlac.critique_tokens %d must be positive", n.FutureTokens, n.CritiqueTokens)
		check(n.Temperature >= 0, "nlac.temperature %g must not be negative", n.Temperature)
		check(n.Tau > 0 && n.Tau <= 1, "nlac.tau %g must be in (0, 1]", n.Tau)
		check(n.LR > 0 && n.CriticLR > 0 && n.Epochs > 0 && n.Minibatches > 0, "nlac.lr %g, nlac.critic_lr %g, nlac.epochs %d and nlac.minibatches %d must be positive",
			n.LR, n.CriticLR, n.Epochs, n.Minibatches)
		check(slices.Contains([]string{"suboptimal", "optimal", "skip"}, n.UnparsedJudgement), "nlac.unparsed_judgement %q: want suboptimal, optimal or skip", n.UnparsedJudgement)
		check(n.InvalidRefinement == "original" || n.InvalidRefinement == "drop", "nlac.invalid_refinement %q: want original or drop", n.InvalidRefinement)
		check(n.ExpertShare >= 0, "nlac.expert_share %g must not be negative", n.ExpertShare)
		check(n.RefineShare >= 0 && n.RefineShare < 1, "nlac.refine_share %g must be in [0, 1)", n.RefineShare)
		check(n.RefineShare == 0 || n.Method != "nlql", "nlac.refine_share %g: NLQL refines nothing (it distils the best-rated of its candidates)", n.RefineShare)
		check(!n.RewriteOverruled || n.RefineShare > 0, "nlac.rewrite_overruled: only verdicts by rank (nlac.refine_share above 0) overrule a critique")
		check(n.RefineSamples >= 1, "nlac.refine_samples %d must be at least 1", n.RefineSamples)
		check(n.RefineSamples == 1 || n.Method != "nlql", "nlac.refine_samples %d: NLQL refines nothing (it distils the best-rated of its candidates)", n.RefineSamples)
		check(n.RefineSamples == 1 || n.Temperature > 0, "nlac.refine_samples %d: with nlac.temperature 0 every sample is the same", n.RefineSamples)
		check(n.ReplaceWith == "refinement" || n.ReplaceWith == "actor", "nlac.replace_with %q: want refinement or actor", n.ReplaceWith)
		if n.ReplaceWith == "actor" {
			check(n.Method == "nlac", "nlac.replace_with actor: the actor's candidates are judged from the successor model's futures, which only nlac.method nlac has (not %s)", n.Method)
			check(n.RefineSamples == 1 && !n.RewriteOverruled, "nlac.replace_with actor asks no refiner: nlac.refine_samples and nlac.rewrite_overruled shape what the refiner writes")
			check(c.Rollout.Temperature > 0, "nlac.replace_with actor: at rollout.temperature 0 the actor offers its action again every time")
		}
		w := n.Warmup
		check(w.Tasks >= 0, "nlac.warmup.tasks %d must not be negative", w.Tasks)
		check(w.Replay >= 0, "nlac.warmup.replay %g must not be negative", w.Replay)
		check(w.Judge == "expert" || w.Judge == "outcome", "nlac.warmup.judge %q: want expert or outcome", w.Judge)
		check(w.Branches >= 0, "nlac.warmup.branches %d must not be negative", w.Branches)
		check(w.Branches == 0 || w.BranchTemperature > 0, "nlac.warmup.branch_temperature %g must be positive for nlac.warmup.branches %d", w.BranchTemperature, w.Branches)
		check(w.Tasks == 0 || (w.Epochs > 0 && w.LR > 0 && w.BatchTokens >= 64), "nlac.warmup.epochs %d and nlac.warmup.lr %g must be positive and nlac.warmup.batch_tokens %d at least 64",
			w.Epochs, w.LR, w.BatchTokens)
	}
	return errors.Join(errs...)
}

// YAML is the configuration as written to a run's config.yaml.
func (c *Config) YAML() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// trainerConfig is the trainer configuration shared by the run's adapters.
func (c *Config) trainerConfig(context int) train.Config {
	return train.Config{
		Adapter: ActorAdapter,
		LoRA:    train.LoRAConfig{Rank: c.LoRA.Rank, Alpha: float32(c.LoRA.Alpha)},
		F16Base: c.LoRA.F16Base,
		// The budget bounds the activations; checkpointing ("auto")
		// recomputes what does not fit.
		MemoryBudget: int64(c.LoRA.MemoryMiB) << 20,
		Seed:         c.Seed,
		Threads:      c.Threads,
		GPU:          c.GPU,
		Context:      context,
		// The trainer's log-probabilities must equal the sampling ones for
		// the importance ratios of PPO and GRPO to start at 1.
		F16KV: true,
	}
}

// LoadOptions places the model for the run's engines: every layer on the
// GPU with gpu set, the CPU otherwise.
func (c *Config) LoadOptions() (llm.LoadOptions, error) {
	if !c.GPU {
		return llm.LoadOptions{GPULayers: 0}, nil
	}
	if llm.GPU() == "" {
		return llm.LoadOptions{}, errors.New("gpu: true, but no GPU was found: agentrl version lists the devices, docs/gpu.md says how to install the CUDA backend; gpu: false (a run's config.yaml, or --gpu=false) runs on the CPU")
	}
	return llm.LoadOptions{GPULayers: -1}, nil
}

// ActorAdapter names the policy's adapter in the trainer and the run
// directory.
const ActorAdapter = "actor"

// nonFinite lists the keys of the float settings under v (a Config or
// one of its sections, its keys prefixed) that are NaN or infinite.
func nonFinite(v reflect.Value, prefix string) []string {
	var keys []string
	for i := range v.NumField() {
		f, tag := v.Field(i), v.Type().Field(i).Tag.Get("yaml")
		name, _, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" {
			continue
		}
		switch f.Kind() {
		case reflect.Float32, reflect.Float64:
			if x := f.Float(); math.IsNaN(x) || math.IsInf(x, 0) {
				keys = append(keys, prefix+name)
			}
		case reflect.Struct:
			keys = append(keys, nonFinite(f, prefix+name+".")...)
		}
	}
	return keys
}
