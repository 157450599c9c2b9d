package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/registry"
	"github.com/agentrl/agentrl/llm/models"
	"github.com/agentrl/agentrl/nlac"
	"github.com/agentrl/agentrl/rl"
	"github.com/agentrl/agentrl/stepagent"
)

func trainCommand() *cli.Command {
	sub := make([]*cli.Command, 0, len(rl.Algorithms()))
	for _, alg := range rl.Algorithms() {
		sub = append(sub, &cli.Command{
			Name:  alg,
			Usage: algorithmUsage[alg],
			Description: "Writes the run directory --out (docs/runs.md): config.yaml, metrics.jsonl, adapters, checkpoints,\n" +
				"trajectories, plots. Ctrl-C or a kill loses at most the iteration in progress; --resume continues\n" +
				"the run from its last finished iteration. Every setting has a default (docs/training.md); --config\n" +
				"reads a YAML file of them and --set KEY=VALUE overrides one (e.g. --set grpo.lr=1e-5).",
			Flags:  append(trainRunFlags(), algorithmFlags[alg]...),
			Action: func(c *cli.Context) error { return runTrain(c, alg) },
		})
	}
	return &cli.Command{
		Name:        "train",
		Usage:       "train an agent with an RL algorithm or the supervised baseline, writing a run directory",
		Subcommands: sub,
	}
}

var algorithmUsage = map[string]string{
	"sft":       "supervised fine-tuning on expert demonstrations (loss on actions)",
	"grpo":      "group relative policy optimisation: G episodes per task, group-normalised returns, clipped objective",
	"ppo":       "proximal policy optimisation with a critic adapter and GAE over turns",
	"eto":       "exploration-based trajectory optimisation: DPO on failed vs expert trajectories",
	"nlac":      "natural-language actor-critic: a critic that predicts futures and writes critiques, refinement, distillation",
	"stepagent": "StepAgent: inspect the agent at every step of expert trajectories, reflect by step-level DPO or inverse RL",
}

// algorithmFlags are the flags of one algorithm, each setting a key of
// its section (flagSettings).
var algorithmFlags = map[string][]cli.Flag{
	"nlac": {
		&cli.StringFlag{Name: "method", Usage: "nlac, or an ablation: self_distill (no successor model), nlql (no refinement) or nlrl (futures from rollouts of the actor); default nlac"},
		&cli.IntFlag{Name: "warmup-tasks", Usage: "train tasks of the critic's warm-up on ground truth (0: none; for small models)", DefaultText: "4"},
	},
	"stepagent": {
		&cli.StringFlag{Name: "expert", Usage: "expert conversations (`FILE.jsonl`: AgentInstruct/ETO \"conversations\" or \"messages\"); default: the built-in expert"},
		&cli.StringFlag{Name: "reflection", Usage: "implicit (step-level DPO) or irl (discriminator step rewards and PPO); default implicit"},
		&cli.IntFlag{Name: "cycles", Usage: "inspection and reflection cycles (the iterations)"},
	},
}

// flagSettings map algorithm flags to configuration keys.
var flagSettings = map[string]string{
	"expert": "stepagent.expert", "reflection": "stepagent.reflection", "cycles": "iterations",
	"method": "nlac.method", "warmup-tasks": "nlac.warmup.tasks",
}

func trainRunFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "env", Usage: "environment (" + strings.Join(registry.Names(), ", ") + ")"},
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: modelUsage + " (default " + models.DefaultModel + ")"},
		&cli.StringFlag{Name: "config", Usage: "settings as YAML (`FILE.yaml`), over the defaults"},
		&cli.StringSliceFlag{Name: "set", Usage: "override one setting, `KEY=VALUE` (repeatable), e.g. grpo.group=8"},
		&cli.StringFlag{Name: "out", Usage: "run directory (default runs/ENV-ALGORITHM-seedN)"},
		&cli.IntFlag{Name: "iterations", Usage: "iterations of the algorithm (0: the configuration's)"},
		&cli.Uint64Flag{Name: "seed", Usage: "seed of everything random in the run (0: the configuration's)"},
		&cli.IntFlag{Name: "threads", Usage: "CPU threads (0: the configuration's; one per core by default)"},
		&cli.BoolFlag{Name: "gpu", Usage: "roll out and train on the first GPU (sets gpu: true; needs the CUDA backend, docs/gpu.md)"},
		&cli.BoolFlag{Name: "resume", Usage: "continue the run in --out from its last finished iteration"},
	}
}

// trainConfig assembles a run's configuration: the defaults, --config,
// the flags, then each --set.
func trainConfig(c *cli.Context, alg string) (rl.Config, error) {
	sets := []string{"algorithm=" + alg}
	for _, f := range []struct{ flag, key string }{{"env", "env"}, {"model", "model"}} {
		if v := c.String(f.flag); v != "" {
			sets = append(sets, f.key+"="+yamlString(v))
		}
	}
	for _, f := range []string{"iterations", "threads"} {
		if c.Int(f) < 0 {
			return rl.Config{}, fmt.Errorf("--%s %d must not be negative", f, c.Int(f))
		}
		if v := c.Int(f); v > 0 {
			sets = append(sets, fmt.Sprintf("%s=%d", f, v))
		}
	}
	if v := c.Uint64("seed"); v > 0 {
		sets = append(sets, fmt.Sprintf("seed=%d", v))
	}
	if c.IsSet("gpu") {
		sets = append(sets, fmt.Sprintf("gpu=%t", c.Bool("gpu")))
	}
	for _, f := range algorithmFlags[alg] {
		name := f.Names()[0]
		if !c.IsSet(name) {
			continue
		}
		switch f.(type) {
		case *cli.IntFlag:
			sets = append(sets, fmt.Sprintf("%s=%d", flagSettings[name], c.Int(name)))
		default:
			sets = append(sets, flagSettings[name]+"="+yamlString(c.String(name)))
		}
	}
	return rl.LoadConfig(c.String("config"), append(sets, c.StringSlice("set")...))
}

// yamlString quotes a flag value as a YAML string.
func yamlString(s string) string { return fmt.Sprintf("%q", s) }

func runTrain(c *cli.Context, alg string) error {
	loadGPUBackends()
	if c.Args().Len() > 0 {
		return fmt.Errorf("unexpected arguments %v (settings are flags: --env, --model, --set KEY=VALUE)", c.Args().Slice())
	}
	out := c.String("out")
	if c.Bool("resume") && out == "" {
		return errors.New("--resume: name the run directory to continue with --out")
	}
	if c.Bool("resume") && c.String("config") == "" {
		// A resumed run keeps its own configuration; flags may extend it.
		cfg, err := rl.LoadConfig(filepath.Join(out, "config.yaml"), nil)
		if err != nil {
			return fmt.Errorf("--resume: %w", err)
		}
		if cfg.Algorithm != alg {
			return fmt.Errorf("--resume: %s is a %s run, not %s", out, cfg.Algorithm, alg)
		}
		c.Set("config", filepath.Join(out, "config.yaml"))
	}
	cfg, err := trainConfig(c, alg)
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join("runs", fmt.Sprintf("%s-%s-seed%d", cfg.Env, cfg.Algorithm, cfg.Seed))
	}
	modelPath, err := models.Resolve(cfg.Model)
	if err != nil {
		return err
	}
	newEnv, err := registry.Lookup(cfg.Env)
	if err != nil {
		return err
	}
	err = rl.Train(c.Context, cfg, rl.Options{ModelPath: modelPath, Dir: out, NewEnv: newEnv, Resume: c.Bool("resume"), Progress: c.App.ErrWriter})
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted: %s keeps every finished iteration; continue with: agentrl train %s --out %s --resume", out, alg, out)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "run %s: adapter %s; evaluate with: agentrl eval --run %s --split unseen\n",
		out, filepath.Join(out, "adapters", "actor.gguf"), out)
	return nil
}

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "evaluate a run's latest actor adapter on a split, greedily or by sampling (pass@k), writing RUNDIR/eval/NAME.json",
		Description: "Greedy by default, as runs and sweeps evaluate: one episode on each of the split's first tasks,\n" +
			"written to RUNDIR/eval/SPLIT.json. With --temperature above 0 it samples --trials episodes of each task\n" +
			"and reports pass@1 (the mean success, its standard error over the tasks), pass@k (a success in k trials)\n" +
			"and pass^k (success in all k, tau-bench's consistency) for k up to --trials, written beside the greedy\n" +
			"evaluation as RUNDIR/eval/SPLIT-tT-xN.json (reports compare it as a split, e.g. --split test-t1-x4).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run", Required: true, Usage: "the run directory (`RUNDIR`)"},
			&cli.StringFlag{Name: "split", Value: string(envs.Test), Usage: "test or unseen (or train)"},
			&cli.IntFlag{Name: "episodes", Value: 100, Usage: "tasks, the split's first"},
			&cli.Float64Flag{Name: "temperature", Value: 0, Usage: "0 decodes greedily; above 0 samples at this temperature"},
			&cli.IntFlag{Name: "trials", Value: 1, Usage: "episodes of each task (above 1 needs --temperature)"},
			&cli.Int64Flag{Name: "seed", Value: rl.Greedy.Seed, Usage: "the sampling seed: the same seed plays the same episodes again"},
		},
		Action: func(c *cli.Context) error {
			loadGPUBackends()
			d := rl.Decoding{Temperature: c.Float64("temperature"), Trials: c.Int("trials"), Seed: c.Int64("seed")}
			if err := d.Check(); err != nil {
				return err
			}
			split, err := envs.ParseSplit(c.String("split"))
			if err != nil {
				return fmt.Errorf("--split: %w", err)
			}
			if n := c.Int("episodes"); n <= 0 {
				return fmt.Errorf("--episodes %d must be positive", n)
			}
			dir := c.String("run")
			cfg, modelPath, newEnv, err := openRunDir(dir, "")
			if err != nil {
				return err
			}
			ev, err := rl.EvaluateRun(c.Context, dir, modelPath, newEnv, split, c.Int("episodes"), d, c.App.ErrWriter)
			if err != nil {
				return err
			}
			sum := ev.Summary
			fmt.Fprintf(c.App.Writer, "%s on %s %s: success %.3f ± %.3f, score %.3f ± %.3f, steps %.2f, invalid actions %.3f (%d episodes, %d failed, %d cut short by the context)\n",
				dir, cfg.Env, d.Name(split), sum.SuccessRate, sum.SuccessRateSE, sum.MeanScore, sum.MeanScoreSE, sum.MeanSteps,
				sum.InvalidActionRate, sum.Episodes, sum.Errors, sum.ContextFull)
			switch s := ev.Sampled; {
			case s != nil && s.Tasks == 0:
				fmt.Fprintf(c.App.Writer, "no task finished an episode without an error: no pass@k\n")
			case s != nil:
				k := len(s.PassAtK)
				fmt.Fprintf(c.App.Writer, "%d tasks x %d trials at temperature %g: pass@1 %.3f ± %.3f (the mean of the tasks' success rates, its error over the tasks), pass@%d %.3f, pass^%d %.3f\n",
					s.Tasks, s.Trials, s.Temperature, s.PassAtK[0], s.PassAt1SE, k, s.PassAtK[k-1], k, s.PassHatK[k-1])
			}
			fmt.Fprintf(c.App.Writer, "written to %s\n", ev.File)
			return nil
		},
	}
}

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name:      "sweep",
		Usage:     "run a grid of training runs (algorithms x envs x seeds), resuming where it stopped, and report",
		ArgsUsage: "FILE.yaml",
		Description: "The file names out (the sweep's directory), algorithms, envs, seeds, eval (splits, episodes and\n" +
			"optionally sampled: {temperature, trials, seed}, a sampled evaluation besides the greedy one)\n" +
			"and config (the base settings of every run); optionally overrides (KEY=VALUE settings per algorithm),\n" +
			"variants (methods that are an algorithm with other settings) and init_from_sft (every run starts from\n" +
			"its seed's sft adapter). Finished runs are skipped, unfinished ones resumed;\n" +
			"after each run OUT/report.md compares what has finished and lists what is missing. With record (a directory\n" +
			"to commit), each finished run's metrics, evaluations and settings are kept there, and a sweep started\n" +
			"where out lacks them restores them instead of training them again (docs/runs.md, Sweeps).\n" +
			"--seeds and --methods train only part of the grid (with the sft runs they start from); the report\n" +
			"still covers all of it.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "seeds", Usage: "train only the runs of these seeds of the grid (comma-separated or repeated, e.g. --seeds 1,2); default all"},
			&cli.StringSliceFlag{Name: "methods", Usage: "train only the runs of these algorithms or variants of the grid (comma-separated or repeated, e.g. --methods nlac,grpo); default all"},
		},
		Action: func(c *cli.Context) error {
			loadGPUBackends()
			args, err := argsAndLateFlags(c)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return errors.New("sweep: name one sweep file (FILE.yaml)")
			}
			s, err := rl.ReadSweep(args[0])
			if err != nil {
				return err
			}
			var seeds []uint64
			for _, text := range splitList(c.StringSlice("seeds")) {
				seed, err := strconv.ParseUint(text, 10, 64)
				if err != nil {
					return fmt.Errorf("sweep: --seeds %q: a seed is a number from 0 up", text)
				}
				seeds = append(seeds, seed)
			}
			if err := s.Select(seeds, splitList(c.StringSlice("methods"))); err != nil {
				return fmt.Errorf("sweep: %w", err)
			}
			err = rl.RunSweep(c.Context, s, rl.SweepEnv{
				ResolveModel: models.Resolve,
				LookupEnv:    func(name string) (func() envs.Env, error) { return registry.Lookup(name) },
				Progress:     c.App.ErrWriter,
			})
			if errors.Is(err, context.Canceled) {
				return fmt.Errorf("interrupted: finished runs are kept; run the same command to continue")
			}
			if err != nil {
				return err
			}
			done := "sweep finished"
			if c.IsSet("seeds") || c.IsSet("methods") {
				done = "the selected runs of the sweep finished"
			}
			fmt.Fprintf(c.App.Writer, "%s: %s\n", done, filepath.Join(s.Out, "report.md"))
			return nil
		},
	}
}

// splitList is a repeatable flag's values with each split at commas (the
// app splits none, since prompts and paths may hold commas; seeds and
// method names never do), blanks dropped.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

func inspectCommand() *cli.Command {
	var untrained bool
	cmd := episodeCommand("inspect",
		"show a StepAgent run's agent at every step of an expert trajectory: its actions, whether each equals the expert's, step rewards",
		"expert trajectory", envs.Train,
		func(ctx context.Context, dir, modelPath string, newEnv func() envs.Env, split envs.Split, seed int64, w io.Writer) error {
			in, err := stepagent.InspectRun(ctx, dir, modelPath, newEnv, split, seed, untrained)
			if err != nil {
				return err
			}
			return in.WriteText(w)
		})
	cmd.Flags = append(cmd.Flags, &cli.BoolFlag{Name: "untrained-discriminator", Destination: &untrained,
		Usage: "step rewards of the discriminator as every IRL run's starts, the base model's judgement with no adapter (any run, not only irl ones)"})
	return cmd
}

func critiqueCommand() *cli.Command {
	return episodeCommand("critique",
		"show what an NLAC run's critic makes of one episode of its actor: predicted futures, critiques, judgements, refinements",
		"episode", envs.Test,
		func(ctx context.Context, dir, modelPath string, newEnv func() envs.Env, split envs.Split, seed int64, w io.Writer) error {
			cr, err := nlac.CritiqueRun(ctx, dir, modelPath, newEnv, split, seed)
			if err != nil {
				return err
			}
			return cr.WriteText(w)
		})
}

// episodeCommand is a command that shows one task of a run step by step:
// --run, --env, --seed and --split select it, show writes it.
func episodeCommand(name, usage, what string, split envs.Split,
	show func(ctx context.Context, dir, modelPath string, newEnv func() envs.Env, split envs.Split, seed int64, w io.Writer) error) *cli.Command {
	return &cli.Command{
		Name:  name,
		Usage: usage,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run", Required: true, Usage: "the run directory (`RUNDIR`)"},
			&cli.StringFlag{Name: "env", Usage: "environment of the " + what + " (default: the run's)"},
			&cli.Int64Flag{Name: "seed", Usage: "task seed of the " + what},
			&cli.StringFlag{Name: "split", Value: string(split), Usage: "split of the task"},
		},
		Action: func(c *cli.Context) error {
			loadGPUBackends()
			dir := c.String("run")
			_, modelPath, newEnv, err := openRunDir(dir, c.String("env"))
			if err != nil {
				return err
			}
			split, err := envs.ParseSplit(c.String("split"))
			if err != nil {
				return err
			}
			return show(c.Context, dir, modelPath, newEnv, split, c.Int64("seed"), c.App.Writer)
		},
	}
}

// openRunDir reads the configuration of the run in dir and resolves its
// model file and its environment (env, when given, instead of the run's).
func openRunDir(dir, env string) (cfg rl.Config, modelPath string, newEnv func() envs.Env, err error) {
	if cfg, err = rl.LoadConfig(filepath.Join(dir, "config.yaml"), nil); err != nil {
		return cfg, "", nil, fmt.Errorf("--run: %w", err)
	}
	if modelPath, err = models.Resolve(cfg.Model); err != nil {
		return cfg, "", nil, err
	}
	if env == "" {
		env = cfg.Env
	}
	newEnv, err = registry.Lookup(env)
	return cfg, modelPath, newEnv, err
}
