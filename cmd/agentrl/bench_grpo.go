package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm/models"
	"github.com/agentrl/agentrl/rl"
	"github.com/agentrl/agentrl/rollout"
)

// grpoBenchEnv is the environment both sides train on: single-turn math
// word problems, the task TRL's GRPOTrainer is built for (one prompt, one
// completion, a reward function).
const grpoBenchEnv = "math"

// grpoBenchModel is the benchmark's default model: SmolLM2's weights as
// F32. transformers dequantises any GGUF to F32, so on this file both
// sides compute with the same weights, where on the Q4_1 file agentrl
// would compute with the quantised ones (docs/results/grpo-vs-trl.md
// measures both).
const grpoBenchModel = "smollm2-135m-f32"

func benchGRPOCommand() *cli.Command {
	return &cli.Command{
		Name:  "grpo",
		Usage: "one GRPO iteration (rollouts + update) in agentrl against TRL's GRPOTrainer on the same model and task",
		Description: "Runs one iteration of agentrl's GRPO (rl.Train: --tasks math problems of the train split, each\n" +
			"played --group times, one optimiser step over every episode, no warm start, no evaluation) in a\n" +
			"temporary run directory, and reads its phases from metrics.jsonl. Then exports the same tasks as\n" +
			"expert demonstrations (as `agentrl envs demos math` writes them) and runs TRL's GRPOTrainer on them\n" +
			"(bench/peers/trl_grpo.py: transformers, which dequantises the GGUF to F32, a peft LoRA of the same\n" +
			"rank, alpha and targets, one optimisation step) with the same group size, completion length,\n" +
			"learning rate and threads. Prints seconds per iteration and tokens/s of generation and training\n" +
			"for each side, and agentrl's speed relative to TRL's.\n" +
			"The default model is SmolLM2's weights as F32 (agentrl models pull " + grpoBenchModel + "), what\n" +
			"transformers computes with, so that both sides run the same weights.\n" +
			"Without the peer's interpreter (scripts/install-peers.sh makes .venv-peers/) only agentrl's side\n" +
			"runs.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Value: grpoBenchModel, Usage: modelUsage},
			&cli.IntFlag{Name: "tasks", Value: 8, Usage: "prompts (math problems) per iteration"},
			&cli.IntFlag{Name: "group", Value: 4, Usage: "completions per prompt (G)"},
			&cli.IntFlag{Name: "max-tokens", Value: 48, Usage: "most tokens per completion"},
			&cli.IntFlag{Name: "rank", Value: rl.DefaultConfig().LoRA.Rank, Usage: "LoRA rank (alpha = 2 x rank) on q, k, v, o, gate, up, down; default: a training run's (lora.rank)"},
			&cli.Float64Flag{Name: "lr", Value: 2e-5, Usage: "AdamW learning rate"},
			&cli.IntFlag{Name: "threads", Value: 2, Usage: "CPU threads of each side"},
			&cli.IntFlag{Name: "context", Value: rl.DefaultConfig().Rollout.Context, Usage: "agentrl's tokens per sequence (rollout.context); at most the model's training context"},
			&cli.IntFlag{Name: "parallel", Usage: "agentrl's episodes played at once (0: every episode of the iteration, as TRL generates its whole batch in one call)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "agentrl run seed (it picks the tasks); TRL's seed too"},
			&cli.StringFlag{Name: "python", Value: filepath.Join(".venv-peers", "bin", "python"), Usage: "interpreter with torch, transformers, peft and trl"},
			&cli.StringFlag{Name: "script", Value: filepath.Join("bench", "peers", "trl_grpo.py"), Usage: "the TRL script"},
			&cli.StringFlag{Name: "keep", Usage: "keep agentrl's run directory and the prompts file in `DIR` (default: a temporary folder, removed)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: runBenchGRPO,
	}
}

// grpoBenchConfig is the parsed command line.
type grpoBenchConfig struct {
	Model     string  `json:"model"`
	ModelPath string  `json:"model_path"`
	Env       string  `json:"env"`
	Tasks     int     `json:"tasks"`
	Group     int     `json:"group"`
	MaxTokens int     `json:"max_tokens"`
	Rank      int     `json:"rank"`
	Alpha     int     `json:"alpha"`
	LR        float64 `json:"lr"`
	Threads   int     `json:"threads"`
	Parallel  int     `json:"parallel"`
	Context   int     `json:"context"`
	Seed      uint64  `json:"seed"`
	python    string
	script    string
}

func parseGRPOBenchFlags(c *cli.Context) (grpoBenchConfig, error) {
	g := grpoBenchConfig{Model: c.String("model"), Env: grpoBenchEnv, Tasks: c.Int("tasks"), Group: c.Int("group"),
		MaxTokens: c.Int("max-tokens"), Rank: c.Int("rank"), LR: c.Float64("lr"), Threads: c.Int("threads"),
		Parallel: c.Int("parallel"), Context: c.Int("context"), Seed: c.Uint64("seed"), python: c.String("python"), script: c.String("script")}
	g.Alpha = 2 * g.Rank
	switch {
	case g.Tasks <= 0 || g.MaxTokens <= 0 || g.Rank <= 0 || g.Threads <= 0:
		return g, errors.New("--tasks, --max-tokens, --rank and --threads must be positive")
	case g.Group < 2:
		return g, fmt.Errorf("--group %d must be at least 2", g.Group)
	case !(g.LR > 0):
		return g, fmt.Errorf("--lr %g must be positive", g.LR)
	case g.Parallel < 0:
		return g, fmt.Errorf("--parallel %d must not be negative", g.Parallel)
	}
	if g.Parallel == 0 {
		g.Parallel = g.Tasks * g.Group
	}
	var err error
	if g.ModelPath, err = models.Resolve(g.Model); err != nil {
		return g, fmt.Errorf("--model: %w", err)
	}
	return g, nil
}

// rlConfig is the GRPO configuration of the benchmark's one iteration:
// the defaults, single turn, no warm start, no evaluation, one optimiser
// step over all the iteration's episodes.
func (g grpoBenchConfig) rlConfig() (rl.Config, error) {
	cfg := rl.DefaultConfig()
	cfg.Algorithm, cfg.Env, cfg.Model, cfg.Seed = "grpo", g.Env, g.Model, g.Seed
	cfg.Iterations = 1
	cfg.Threads = g.Threads
	cfg.WarmStart.Demos = 0
	cfg.Eval.Episodes = 0
	cfg.Rollout.MaxSteps = 1
	cfg.Rollout.Tasks = g.Tasks
	cfg.Rollout.MaxTokens = g.MaxTokens
	cfg.Rollout.Parallel = g.Parallel
	cfg.Rollout.Context = g.Context
	cfg.GRPO.Group = g.Group
	cfg.GRPO.Minibatches = 1
	cfg.GRPO.Epochs = 1
	cfg.GRPO.LR = g.LR
	cfg.LoRA.Rank = g.Rank
	cfg.LoRA.Alpha = float64(g.Alpha)
	return cfg, cfg.Validate()
}

// grpoSide is one side's iteration. Seconds is the whole iteration;
// GenerateSeconds and TrainSeconds its two phases (see the report's
// "phases" for what each holds).
type grpoSide struct {
	Seconds         float64 `json:"seconds"`
	GenerateSeconds float64 `json:"generate_s"`
	TrainSeconds    float64 `json:"train_s"`
	GeneratedTokens int64   `json:"generated_tokens"`
	TrainTokens     int64   `json:"train_tokens"`
	GenerateTPS     float64 `json:"generate_tok_s"`
	TrainTPS        float64 `json:"train_tok_s"`
}

// grpoAgentrl is agentrl's side: the iteration's line of metrics.jsonl.
type grpoAgentrl struct {
	grpoSide
	// HandoverSeconds is writing the updated adapter and loading it into
	// the engine for the next rollouts; part of Seconds.
	HandoverSeconds float64 `json:"handover_s"`
	// SetupSeconds is everything else rl.Train did (loading the model into
	// the engine and the trainer, checkpoints, plots); not in Seconds.
	SetupSeconds float64 `json:"setup_s"`
	Episodes     int     `json:"episodes"`
	Reward       float64 `json:"reward"`
	Success      float64 `json:"success"`
	// FlatGroups are tasks whose episodes all scored alike: GRPO leaves
	// them out of the update (zero advantage). TrainedSequences are the
	// episodes the update did train on.
	FlatGroups       int     `json:"flat_groups"`
	TrainedSequences int     `json:"trained_sequences"`
	GradSteps        int64   `json:"grad_steps"`
	Loss             float64 `json:"loss"`
	// PromptTokens is the mean prompt length the engine saw.
	PromptTokens float64 `json:"mean_prompt_tokens"`
	// TaskSeeds are the train tasks played (the prompts TRL gets).
	TaskSeeds []int64 `json:"task_seeds"`
}

// grpoTRL is what trl_grpo.py prints.
type grpoTRL struct {
	grpoSide
	Versions map[string]string `json:"versions"`
	Details  map[string]any    `json:"details,omitempty"`
}

type grpoSpeedup struct {
	// Iteration is TRL's seconds per iteration over agentrl's: how many
	// times faster agentrl's iteration is.
	Iteration float64 `json:"iteration"`
	// GenerateSeconds and TrainSeconds are the same for each phase.
	GenerateSeconds float64 `json:"generate_s"`
	TrainSeconds    float64 `json:"train_s"`
	// GenerateTPS and TrainTPS are agentrl's tokens/s over TRL's.
	GenerateTPS float64 `json:"generate_tok_s"`
	TrainTPS    float64 `json:"train_tok_s"`
	// IterationSameTokens is an estimate for when the two sides trained
	// different numbers of tokens (agentrl leaves out the groups that
	// scored alike; TRL trains every completion): TRL's seconds over
	// agentrl's with its train phase scaled to TRL's train tokens at
	// agentrl's measured train tokens/s. 0 when agentrl trained nothing.
	IterationSameTokens float64 `json:"iteration_same_train_tokens_estimate,omitempty"`
}

// grpoReport is the command's JSON output.
type grpoReport struct {
	Settings         grpoBenchConfig   `json:"settings"`
	SystemInfo       string            `json:"system_info"`
	LoadAverageStart string            `json:"load_average_start"`
	LoadAverageAfter string            `json:"load_average_after_agentrl"`
	LoadAverageEnd   string            `json:"load_average_end"`
	Agentrl          grpoAgentrl       `json:"agentrl"`
	TRL              *grpoTRL          `json:"trl,omitempty"`
	Peer             referencePeer     `json:"peer"`
	Speedup          *grpoSpeedup      `json:"speedup_agentrl_over_trl,omitempty"`
	Phases           map[string]string `json:"phases"`
	Notes            []string          `json:"notes,omitempty"`
}

var grpoPhases = map[string]string{
	"agentrl.generate_s": "phase_s.rollout: sampling the group completions of every task with the engine (actor LoRA, one batched call serves all episodes), the environment's grading, writing the trajectories",
	"agentrl.train_s":    "phase_s.train: group advantages, training sequences from the trajectories (no tokenising), forward + backward of the clipped objective over micro-batches of <= lora.batch_tokens tokens, one AdamW step",
	"agentrl.seconds":    "generate_s + train_s + handover_s (the new adapter written and loaded by the engine for the next iteration)",
	"agentrl.tokens":     "generated_tokens: tokens the engine sampled; train_tokens: prompt + completion tokens of the sequences trained (tasks whose group scored alike are left out)",
	"trl.generate_s":     "GRPOTrainer._generate_and_score_completions: tokenising the prompts, model.generate of the whole batch, decoding, the reward function, group advantages",
	"trl.train_s":        "the rest of the optimisation step (trainer.train() from step begin to step end less generate_s): forward + backward of the loss over the micro-batches, gradient clipping, one AdamW step",
	"trl.seconds":        "generate_s + train_s",
	"trl.tokens":         "generated_tokens: completion tokens (to EOS or max_completion_length); train_tokens: prompt + completion tokens of every sequence (padding not counted)",
}

func runBenchGRPO(c *cli.Context) error {
	g, err := parseGRPOBenchFlags(c)
	if err != nil {
		return err
	}
	cfg, err := g.rlConfig()
	if err != nil {
		return err
	}
	ctx := c.Context
	progress := func(format string, args ...any) {
		fmt.Fprintf(c.App.ErrWriter, "bench grpo: "+format+"\n", args...)
	}
	rep := grpoReport{Settings: g, SystemInfo: cgo.SystemInfo(), LoadAverageStart: loadAverage(), Phases: grpoPhases,
		Peer: referencePeer{Python: g.python, Script: g.script, Skipped: peerMissing(g.python, g.script)}}
	if rep.Peer.Skipped != "" {
		fmt.Fprintf(c.App.ErrWriter, "TRL skipped: %s; %s\n", rep.Peer.Skipped, installPeersHint)
	}

	dir := c.String("keep")
	if dir == "" {
		if dir, err = os.MkdirTemp("", "agentrl-bench-grpo"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	runDir := filepath.Join(dir, "run")
	if err := os.RemoveAll(runDir); err != nil {
		return err
	}

	// 1. agentrl: one iteration of rl.Train.
	progress("agentrl: one GRPO iteration, %d tasks x %d, %d tokens, %d threads (run %s)", g.Tasks, g.Group, g.MaxTokens, g.Threads, runDir)
	newEnv, err := builtinEnv(g.Env)
	if err != nil {
		return err
	}
	var trainLog bytes.Buffer
	start := time.Now()
	err = rl.Train(ctx, cfg, rl.Options{ModelPath: g.ModelPath, Dir: runDir, NewEnv: newEnv.newEnv, Progress: io.MultiWriter(&trainLog, c.App.ErrWriter)})
	wall := time.Since(start).Seconds()
	if err != nil {
		return fmt.Errorf("agentrl: %w", err)
	}
	if rep.Agentrl, err = readGRPOIteration(runDir, wall); err != nil {
		return err
	}
	rep.LoadAverageAfter = loadAverage()
	a := rep.Agentrl
	progress("agentrl: %.1f s per iteration (generate %.1f s, %.1f tok/s; train %.1f s, %.1f tok/s)",
		a.Seconds, a.GenerateSeconds, a.GenerateTPS, a.TrainSeconds, a.TrainTPS)
	if a.TrainedSequences == 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("every one of agentrl's %d groups scored alike, so GRPO took no update: "+
			"agentrl's train phase did no training; try another --seed", g.Tasks))
	} else if a.FlatGroups > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d of agentrl's %d groups scored alike and were left out of its update "+
			"(zero advantage); TRL trains on every completion, zero advantages included, so compare the train phases by tokens/s", a.FlatGroups, g.Tasks))
	}

	// 2. TRL on the same tasks.
	if rep.Peer.Skipped == "" {
		prompts := filepath.Join(dir, "prompts.jsonl")
		if err := writeGRPOPrompts(ctx, prompts, g.Env, a.TaskSeeds); err != nil {
			return err
		}
		progress("TRL: GRPOTrainer, one step on the same %d tasks (%s)", len(a.TaskSeeds), prompts)
		peer, err := runGRPOPeer(ctx, g, prompts)
		if err != nil {
			return err
		}
		rep.TRL = &peer
		rep.Peer.Versions = peer.Versions
		rep.Speedup = &grpoSpeedup{
			Iteration:       ratio(peer.Seconds, a.Seconds),
			GenerateSeconds: ratio(peer.GenerateSeconds, a.GenerateSeconds),
			TrainSeconds:    ratio(peer.TrainSeconds, a.TrainSeconds),
			GenerateTPS:     ratio(a.GenerateTPS, peer.GenerateTPS),
			TrainTPS:        ratio(a.TrainTPS, peer.TrainTPS),
		}
		if a.TrainTokens == 0 {
			// agentrl took no update: its iteration is not the same work.
			rep.Speedup.Iteration, rep.Speedup.TrainSeconds, rep.Speedup.TrainTPS = 0, 0, 0
		}
		if a.TrainTPS > 0 && a.TrainTokens != peer.TrainTokens {
			rep.Speedup.IterationSameTokens = ratio(peer.Seconds, a.GenerateSeconds+a.HandoverSeconds+float64(peer.TrainTokens)/a.TrainTPS)
		}
		progress("TRL: %.1f s per iteration (generate %.1f s, %.1f tok/s; train %.1f s, %.1f tok/s)",
			peer.Seconds, peer.GenerateSeconds, peer.GenerateTPS, peer.TrainSeconds, peer.TrainTPS)
	}
	rep.LoadAverageEnd = loadAverage()

	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printGRPOReport(c.App.Writer, rep)
	return nil
}

// ratio is a / b, or 0 when b is not positive.
func ratio(a, b float64) float64 {
	if !(b > 0) {
		return 0
	}
	return a / b
}

// readGRPOIteration reads agentrl's figures from the run directory: the
// first line of metrics.jsonl and the iteration's trajectories.
func readGRPOIteration(runDir string, wall float64) (grpoAgentrl, error) {
	var a grpoAgentrl
	f, err := os.Open(filepath.Join(runDir, "metrics.jsonl"))
	if err != nil {
		return a, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	if !sc.Scan() {
		return a, fmt.Errorf("%s/metrics.jsonl: no iteration written: %v", runDir, sc.Err())
	}
	var m rl.Metrics
	if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
		return a, fmt.Errorf("%s/metrics.jsonl: %w", runDir, err)
	}
	a.GenerateSeconds = m.PhaseSeconds["rollout"]
	a.TrainSeconds = m.PhaseSeconds["train"]
	a.HandoverSeconds = m.PhaseSeconds["handover"]
	a.Seconds = a.GenerateSeconds + a.TrainSeconds + a.HandoverSeconds
	a.SetupSeconds = wall - a.Seconds
	a.GeneratedTokens, a.TrainTokens = m.RolloutTokens, m.TrainTokens
	a.GenerateTPS = ratio(float64(a.GeneratedTokens), a.GenerateSeconds)
	a.TrainTPS = ratio(float64(a.TrainTokens), a.TrainSeconds)
	a.Episodes, a.Reward, a.Success = m.Episodes, m.Reward, m.Success
	a.FlatGroups, a.TrainedSequences = int(m.Metrics["flat_groups"]), int(m.Metrics["sequences"])
	a.GradSteps, a.Loss = m.GradSteps, m.Loss

	trajs, err := rl.ReadTrajectories(runDir, "iter-000001")
	if err != nil {
		return a, err
	}
	prompt, steps := 0, 0
	for _, t := range trajs {
		if !slices.Contains(a.TaskSeeds, t.Seed) {
			a.TaskSeeds = append(a.TaskSeeds, t.Seed)
		}
		for _, s := range t.Steps {
			prompt += len(s.PromptTokenIDs)
			steps++
		}
	}
	slices.Sort(a.TaskSeeds)
	a.PromptTokens = ratio(float64(prompt), float64(steps))
	return a, nil
}

// writeGRPOPrompts writes the expert demonstrations of the given train
// tasks, as `agentrl envs demos` does: one {"messages": [system, user,
// assistant]} per line (math's assistant message: the worked solution).
// The peer's prompt is the system and user messages, the expected answer
// the action it reads in the assistant's.
func writeGRPOPrompts(ctx context.Context, path, env string, seeds []int64) error {
	src, err := builtinEnv(env)
	if err != nil {
		return err
	}
	// The run's tasks are consecutive seeds; one expert episode each, in
	// seed order.
	runs := make([]rollout.Config, len(seeds))
	for i, seed := range seeds {
		runs[i] = rollout.Config{NewEnv: src.newEnv, Parallel: 1, Episodes: 1, Split: envs.Train, Seed0: seed, MaxSteps: 1}
	}
	_, err = writeDemonstrations(ctx, path, src, func(t *rollout.Trajectory) error {
		return fmt.Errorf("the expert failed task %d: %s", t.Seed, t.Error)
	}, runs...)
	return err
}

// runGRPOPeer runs trl_grpo.py on the prompts file and reads its report.
func runGRPOPeer(ctx context.Context, g grpoBenchConfig, prompts string) (grpoTRL, error) {
	cmd := exec.CommandContext(ctx, g.python, g.script, "--model", g.ModelPath, "--prompts", prompts,
		"--group", fmt.Sprint(g.Group), "--tasks", fmt.Sprint(g.Tasks), "--max-tokens", fmt.Sprint(g.MaxTokens),
		"--rank", fmt.Sprint(g.Rank), "--alpha", fmt.Sprint(g.Alpha), "--lr", fmt.Sprint(g.LR),
		"--threads", fmt.Sprint(g.Threads), "--seed", fmt.Sprint(g.Seed))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return grpoTRL{}, fmt.Errorf("%s %s: %w\n%s", g.python, g.script, err, lastLines(stderr.String(), 20))
	}
	var peer grpoTRL
	var details map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &peer); err != nil {
		return peer, fmt.Errorf("TRL output is not its JSON report: %w", err)
	}
	if err := json.Unmarshal(stdout.Bytes(), &details); err != nil {
		return peer, err
	}
	for _, k := range []string{"seconds", "generate_s", "train_s", "generated_tokens", "train_tokens", "generate_tok_s", "train_tok_s", "versions"} {
		delete(details, k)
	}
	peer.Details = details
	if !(peer.Seconds > 0) || peer.GeneratedTokens <= 0 || peer.TrainTokens <= 0 {
		return peer, fmt.Errorf("TRL report lacks its timings or token counts: %s", lastLines(stdout.String(), 5))
	}
	return peer, nil
}

// printGRPOReport writes the report as a table for a person.
func printGRPOReport(w io.Writer, rep grpoReport) {
	s := rep.Settings
	fmt.Fprintf(w, "one GRPO iteration: %s, env %s, %d tasks x group %d, <= %d tokens per completion, LoRA rank %d (alpha %d), lr %g, %d threads\n",
		filepath.Base(s.ModelPath), s.Env, s.Tasks, s.Group, s.MaxTokens, s.Rank, s.Alpha, s.LR, s.Threads)
	fmt.Fprintf(w, "load average at start %s, after agentrl %s, at end %s\n", rep.LoadAverageStart, rep.LoadAverageAfter, rep.LoadAverageEnd)
	if rep.Peer.Skipped != "" {
		fmt.Fprintf(w, "TRL skipped: %s; %s\n", rep.Peer.Skipped, installPeersHint)
	} else {
		v := rep.Peer.Versions
		fmt.Fprintf(w, "TRL %s, transformers %s, peft %s, torch %s (%s)\n", v["trl"], v["transformers"], v["peft"], v["torch"], rep.Peer.Python)
	}
	fmt.Fprintf(w, "\n  %-22s %12s %12s %12s\n", "", "agentrl", "TRL", "speedup")
	row := func(name string, ours, theirs, speedup float64, format string) {
		t, sp := "-", "-"
		if rep.TRL != nil {
			t, sp = fmt.Sprintf(format, theirs), "n/a"
			if speedup > 0 {
				sp = fmt.Sprintf("%.2fx", speedup)
			}
		}
		fmt.Fprintf(w, "  %-22s %12s %12s %12s\n", name, fmt.Sprintf(format, ours), t, sp)
	}
	a := rep.Agentrl
	var t grpoTRL
	var sp grpoSpeedup
	if rep.TRL != nil {
		t, sp = *rep.TRL, *rep.Speedup
	}
	row("seconds / iteration", a.Seconds, t.Seconds, sp.Iteration, "%.1f")
	row("generate s", a.GenerateSeconds, t.GenerateSeconds, sp.GenerateSeconds, "%.1f")
	row("generated tokens", float64(a.GeneratedTokens), float64(t.GeneratedTokens), ratio(float64(a.GeneratedTokens), float64(t.GeneratedTokens)), "%.0f")
	row("generate tok/s", a.GenerateTPS, t.GenerateTPS, sp.GenerateTPS, "%.1f")
	row("train s", a.TrainSeconds, t.TrainSeconds, sp.TrainSeconds, "%.1f")
	row("train tokens", float64(a.TrainTokens), float64(t.TrainTokens), ratio(float64(a.TrainTokens), float64(t.TrainTokens)), "%.0f")
	row("train tok/s", a.TrainTPS, t.TrainTPS, sp.TrainTPS, "%.1f")
	if sp.IterationSameTokens > 0 {
		fmt.Fprintf(w, "\nestimate: had agentrl trained TRL's %d tokens at its measured %.1f tok/s, its iteration would take %.1f s: %.2fx\n",
			t.TrainTokens, a.TrainTPS, a.GenerateSeconds+a.HandoverSeconds+float64(t.TrainTokens)/a.TrainTPS, sp.IterationSameTokens)
	}
	fmt.Fprintf(w, "\nagentrl: hand-over %.1f s (in seconds / iteration), setup %.1f s (not); reward %.3f, %d of %d groups flat, %d sequences trained\n",
		a.HandoverSeconds, a.SetupSeconds, a.Reward, a.FlatGroups, s.Tasks, a.TrainedSequences)
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
