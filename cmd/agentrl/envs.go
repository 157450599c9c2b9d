package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/registry"
	"github.com/agentrl/agentrl/envs/remote"
	"github.com/agentrl/agentrl/rl"
	"github.com/agentrl/agentrl/rollout"
)

func envsCommand() *cli.Command {
	return &cli.Command{
		Name:  "envs",
		Usage: "list, play, evaluate and serve the environments",
		Subcommands: []*cli.Command{
			{
				Name:   "list",
				Usage:  "list the built-in environments",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the specs as JSON"}},
				Action: runEnvsList,
			},
			{
				Name:      "play",
				Usage:     "play an episode in the terminal",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "split", Value: string(envs.Train), Usage: "train, test or unseen"},
					&cli.Int64Flag{Name: "seed", Usage: "episode seed"},
				},
				Action: runEnvsPlay,
			},
			{
				Name:      "eval",
				Usage:     "run a policy for some episodes and report success, reward and steps",
				ArgsUsage: "NAME",
				Flags: append(append(append(runFlags(string(envs.Test)), modelFlags(false)...), samplingFlags(128)...),
					&cli.StringFlag{Name: "policy", Value: "expert", Usage: "expert, random, or model (with --model and optionally --lora)"},
					&cli.IntFlag{Name: "trials", Value: 1, Usage: "play each of the --episodes tasks this many times and report pass^k for k = 1..N besides (tau-bench's consistency: the chance that k attempts at a task all succeed)"},
					&cli.BoolFlag{Name: "json", Usage: "print the results as JSON"},
					&cli.StringFlag{Name: "out", Usage: "write the trajectories to `FILE` (JSON lines)"},
					&cli.StringFlag{Name: "remote", Usage: "drive the environment served at `URL` (AgentGym protocol) instead of the built-in one"},
					&cli.StringFlag{Name: "protocol", Value: "agentrl", Usage: "the --remote server's dialect: " + strings.Join(remote.ProtocolNames(), ", ")},
					&cli.StringFlag{Name: "spec", Usage: "the --remote environment's spec as a JSON `FILE`, for servers that are not built in and do not serve /spec"},
				),
				Action: runEnvsEval,
			},
			{
				Name:      "demos",
				Usage:     "write expert demonstrations as chat messages for supervised fine-tuning",
				ArgsUsage: "NAME",
				Flags: append(runFlags(string(envs.Train)),
					&cli.StringFlag{Name: "out", Usage: "write the demonstrations to `FILE` (JSON lines; required)"},
				),
				Action: runEnvsDemos,
			},
			{
				Name:      "serve",
				Usage:     "serve an environment over HTTP with the AgentGym protocol",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "addr", Value: "127.0.0.1:36001", Usage: "listen on `HOST:PORT`"},
					&cli.IntFlag{Name: "max-instances", Value: 256, Usage: "most live instances"},
				},
				Action: runEnvsServe,
			},
		},
	}
}

// runFlags are the flags of the commands that run episodes.
func runFlags(split string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "split", Value: split, Usage: "train, test or unseen"},
		&cli.IntFlag{Name: "episodes", Value: 100, Usage: "number of episodes"},
		&cli.IntFlag{Name: "parallel", Value: 16, Usage: "environment instances run at once"},
		&cli.Int64Flag{Name: "seed0", Usage: "seed of the first episode; episode i has seed SEED0+i"},
		&cli.IntFlag{Name: "max-steps", Usage: "step limit per episode (0 = the environment's)"},
		&cli.DurationFlag{Name: "step-timeout", Usage: "fail an episode whose reset or step takes longer (0 = no limit)"},
	}
}

// envSource is where episodes run: a factory and the spec of its
// instances.
type envSource struct {
	newEnv func() envs.Env
	spec   envs.Spec
}

// envName returns the environment the command names.
func envName(c *cli.Context) (string, error) {
	args, err := argsAndLateFlags(c)
	if err != nil {
		return "", err
	}
	switch len(args) {
	case 0:
		return "", fmt.Errorf("name an environment (built in: %s)", strings.Join(registry.Names(), ", "))
	case 1:
		return args[0], nil
	}
	return "", fmt.Errorf("one environment at a time, got %q", args)
}

// argsAndLateFlags returns the command's arguments. urfave/cli stops
// reading flags at the first argument, so the flags written after it
// ("envs eval webshop --episodes 10") are applied here.
func argsAndLateFlags(c *cli.Context) ([]string, error) {
	var args []string
	rest := c.Args().Slice()
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			args = append(args, rest[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			args = append(args, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		flag := lookupFlag(c.Command.Flags, name)
		if flag == nil {
			return nil, fmt.Errorf("flag provided but not defined: %s", a)
		}
		if _, isBool := flag.(*cli.BoolFlag); isBool && !hasValue {
			value = "true"
		} else if !hasValue {
			if i+1 == len(rest) {
				return nil, fmt.Errorf("flag needs an argument: %s", a)
			}
			i++
			value = rest[i]
		}
		if err := c.Set(name, value); err != nil {
			return nil, fmt.Errorf("invalid value %q for flag %s: %w", value, a, err)
		}
	}
	return args, nil
}

func lookupFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// builtinEnvArg is the built-in environment the command's argument names.
func builtinEnvArg(c *cli.Context) (envSource, error) {
	name, err := envName(c)
	if err != nil {
		return envSource{}, err
	}
	return builtinEnv(name)
}

// builtinEnv looks up a built-in environment.
func builtinEnv(name string) (envSource, error) {
	f, err := registry.Lookup(name)
	if err != nil {
		return envSource{}, err
	}
	return envSource{newEnv: f, spec: envs.SpecOf(f)}, nil
}

// remoteEnv connects to the server at --remote, which runs the environment
// name. The spec comes from --spec, else from the built-in environment of
// that name, else from the server.
func remoteEnv(c *cli.Context, name string) (envSource, error) {
	proto, err := remote.LookupProtocol(c.String("protocol"))
	if err != nil {
		return envSource{}, fmt.Errorf("--protocol: %w", err)
	}
	opts := remote.Options{Protocol: proto}
	if f, err := registry.Lookup(name); err == nil {
		spec := envs.SpecOf(f)
		opts.Spec = &spec
	}
	if path := c.String("spec"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return envSource{}, fmt.Errorf("--spec: %w", err)
		}
		var spec envs.Spec
		if err := json.Unmarshal(data, &spec); err != nil {
			return envSource{}, fmt.Errorf("--spec %s: %w", path, err)
		}
		opts.Spec = &spec
	}
	client, err := remote.Connect(c.Context, c.String("remote"), opts)
	if err != nil {
		return envSource{}, err
	}
	return envSource{newEnv: client.NewEnv, spec: client.Spec()}, nil
}

// splitFlag parses --split and checks that the environment has it.
func splitFlag(c *cli.Context, spec envs.Spec) (envs.Split, error) {
	split, err := envs.ParseSplit(c.String("split"))
	if err != nil {
		return "", fmt.Errorf("--split: %w", err)
	}
	if len(spec.Splits) > 0 && !slices.Contains(spec.Splits, split) {
		return "", fmt.Errorf("--split: %s has no %s split (it has %v)", spec.Name, split, spec.Splits)
	}
	return split, nil
}

// runConfig builds a runner configuration from the run flags.
func runConfig(c *cli.Context, src envSource) (rollout.Config, error) {
	split, err := splitFlag(c, src.spec)
	if err != nil {
		return rollout.Config{}, err
	}
	cfg := rollout.Config{
		NewEnv:      src.newEnv,
		Parallel:    c.Int("parallel"),
		Episodes:    c.Int("episodes"),
		Split:       split,
		Seed0:       c.Int64("seed0"),
		MaxSteps:    c.Int("max-steps"),
		StepTimeout: c.Duration("step-timeout"),
	}
	switch {
	case cfg.Episodes <= 0:
		return cfg, fmt.Errorf("--episodes %d must be > 0", cfg.Episodes)
	case cfg.Parallel <= 0:
		return cfg, fmt.Errorf("--parallel %d must be > 0", cfg.Parallel)
	case cfg.MaxSteps < 0:
		return cfg, fmt.Errorf("--max-steps %d must be >= 0", cfg.MaxSteps)
	case cfg.StepTimeout < 0:
		return cfg, fmt.Errorf("--step-timeout %v must be >= 0", cfg.StepTimeout)
	}
	return cfg, nil
}

// newPolicy makes the policy --policy names for episodes in src; close
// frees what it holds (a model).
func newPolicy(c *cli.Context, src envSource, parallel int) (policy rollout.Policy, close func(), err error) {
	name := c.String("policy")
	if name != "model" && c.IsSet("model") {
		return nil, nil, fmt.Errorf("--model goes with --policy model, not --policy %s", name)
	}
	switch name {
	case "expert":
		if _, ok := src.newEnv().(envs.Expert); !ok {
			return nil, nil, fmt.Errorf("--policy expert: %s has no expert here (remote environments have none)", src.spec.Name)
		}
		return rollout.Expert(), func() {}, nil
	case "random":
		return rollout.NewRandom(c.Int64("seed0")), func() {}, nil
	case "model":
		if c.String("model") == "" {
			return nil, nil, errors.New("--policy model needs --model FILE")
		}
		l, err := openModel(c, parallel)
		if err != nil {
			return nil, nil, err
		}
		s := samplingFromFlags(c)
		if ctx := l.engine.Options().Context; ctx <= s.MaxTokens {
			// No prompt would fit beside the action: every episode would
			// end at once, cut short by the context.
			l.Close()
			return nil, nil, fmt.Errorf("--ctx %d leaves no room for a prompt beside --max-tokens %d", ctx, s.MaxTokens)
		}
		return &rollout.LLMPolicy{Engine: l.engine, Sampling: s, Adapters: l.adapters}, l.Close, nil
	default:
		return nil, nil, fmt.Errorf("--policy: unknown policy %q (want expert, random or model)", name)
	}
}

func runEnvsList(c *cli.Context) error {
	specs := make([]envs.Spec, 0, len(registry.Names()))
	for _, name := range registry.Names() {
		f, err := registry.Lookup(name)
		if err != nil {
			return err
		}
		specs = append(specs, envs.SpecOf(f))
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(specs)
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMAX STEPS\tSPLITS\tDESCRIPTION")
	for _, s := range specs {
		splits := make([]string, len(s.Splits))
		for i, sp := range s.Splits {
			splits[i] = string(sp)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", s.Name, s.MaxSteps, strings.Join(splits, ","), s.Description)
	}
	return tw.Flush()
}

func runEnvsPlay(c *cli.Context) error {
	src, err := builtinEnvArg(c)
	if err != nil {
		return err
	}
	split, err := splitFlag(c, src.spec)
	if err != nil {
		return err
	}
	return play(c.App.Reader, c.App.Writer, src.newEnv(), split, c.Int64("seed"))
}

// play lets a person act in env: it shows each observation and the
// available actions (numbered, so a number picks one) and reads actions
// line by line. The end of input ends the game.
func play(in io.Reader, out io.Writer, env envs.Env, split envs.Split, seed int64) error {
	spec := env.Spec()
	obs, err := env.Reset(split, seed)
	if err != nil {
		return fmt.Errorf("reset %s: %w", spec.Name, err)
	}
	fmt.Fprintf(out, "== %s, %s split, seed %d: up to %d steps ==\n%s\n", spec.Name, split, seed, spec.MaxSteps, spec.Instruction)
	lines := bufio.NewReader(in)
	total := 0.0
	for step := 1; step <= spec.MaxSteps; step++ {
		fmt.Fprintf(out, "\n--- step %d ---\n%s\n", step, obs)
		available := env.AvailableActions()
		if len(available) > 0 {
			fmt.Fprintln(out, "\nAvailable actions (type one, or its number):")
			for i, a := range available {
				fmt.Fprintf(out, "  %d. %s\n", i+1, a)
			}
		}
		action, ok := readAction(lines, out, available)
		if !ok {
			fmt.Fprintln(out, "\n(end of input)")
			return nil
		}
		res, err := env.Step(action)
		if err != nil {
			return fmt.Errorf("step %s: %w", spec.Name, err)
		}
		total += res.Reward
		valid := ""
		if !res.Info.ValidAction {
			valid = " (invalid action)"
		}
		fmt.Fprintf(out, "reward %g, done %v%s\n", res.Reward, res.Done, valid)
		obs = res.Observation
		if res.Done {
			fmt.Fprintf(out, "\n%s\n\nEpisode over: return %g, score %g, success %v\n", obs, total, res.Info.Score, res.Info.Success)
			return nil
		}
	}
	fmt.Fprintf(out, "\n%s\n\nStep limit reached: return %g\n", obs, total)
	return nil
}

// readAction reads the next non-empty line; a number picks an available
// action. It reports false at the end of input.
func readAction(lines *bufio.Reader, out io.Writer, available []string) (string, bool) {
	for {
		fmt.Fprint(out, "> ")
		line, err := lines.ReadString('\n')
		line = strings.TrimSpace(line)
		if line == "" {
			if err != nil {
				return "", false
			}
			continue
		}
		if n, convErr := strconv.Atoi(line); convErr == nil && n >= 1 && n <= len(available) {
			return available[n-1], true
		}
		return line, true
	}
}

func runEnvsEval(c *cli.Context) error {
	name, err := envName(c)
	if err != nil {
		return err
	}
	var src envSource
	if c.String("remote") != "" {
		src, err = remoteEnv(c, name)
	} else {
		if c.IsSet("protocol") || c.IsSet("spec") {
			return errors.New("--protocol and --spec go with --remote")
		}
		src, err = builtinEnv(name)
	}
	if err != nil {
		return err
	}
	cfg, err := runConfig(c, src)
	if err != nil {
		return err
	}
	trials := c.Int("trials")
	if trials < 1 {
		return fmt.Errorf("--trials %d must be >= 1", trials)
	}
	if trials > 1 {
		if c.String("policy") == "expert" {
			return fmt.Errorf("--trials %d: the expert plays every attempt at a task alike; pass^k measures a policy that samples (--policy model or random)", trials)
		}
		if c.String("policy") == "model" && c.Float64("temperature") == 0 {
			return fmt.Errorf("--trials %d at --temperature 0: a greedy policy plays every attempt at a task alike; sample with --temperature > 0", trials)
		}
		// The runner plays each task's attempts as a group, each on its
		// own sampling stream.
		cfg.Group, cfg.Episodes = trials, cfg.Episodes*trials
	}
	policy, closePolicy, err := newPolicy(c, src, cfg.Parallel)
	if err != nil {
		return err
	}
	defer closePolicy()
	var out *partFile
	var w *rollout.Writer
	if path := c.String("out"); path != "" {
		if out, err = createPart(path); err != nil {
			return err
		}
		defer out.Close()
		w = rollout.NewWriter(out)
	}
	start := time.Now()
	var trajs []rollout.Trajectory
	progress := rl.EpisodeProgress(rl.WriterLogf(c.App.ErrWriter), "eval "+string(cfg.Split), cfg.Episodes)
	runErr := rollout.Stream(c.Context, cfg, policy, func(t *rollout.Trajectory) error {
		trajs = append(trajs, *t)
		progress(len(trajs))
		if w != nil {
			return w.Write(t)
		}
		return nil
	})
	seconds := time.Since(start).Seconds()
	if w != nil {
		if err := out.done(errors.Join(runErr, w.Flush())); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	summary := rollout.Summarize(trajs)
	var passHatK, passAtK []float64
	if trials > 1 {
		if passHatK, err = rollout.PassHatKs(trajs); err != nil {
			return err
		}
		if passAtK, err = rollout.PassAtKs(trajs); err != nil {
			return err
		}
	}
	if c.Bool("json") {
		// The settings that decide the figures go with them, so that a
		// results file says how it was made.
		report := map[string]any{
			"env": src.spec.Name, "split": cfg.Split, "policy": c.String("policy"),
			"seed0": cfg.Seed0, "max_steps": cfg.StepLimit(src.spec), "remote": c.String("remote"), "out": c.String("out"),
			"seconds": seconds, "summary": summary,
		}
		if trials > 1 {
			report["trials"], report["pass_hat_k"], report["pass_at_k"] = trials, passHatK, passAtK
		}
		if c.String("policy") == "model" {
			report["model"], report["lora"] = c.String("model"), c.StringSlice("lora")
			report["max_tokens"], report["temperature"] = c.Int("max-tokens"), c.Float64("temperature")
		}
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	printSummary(c.App.Writer, src.spec.Name, cfg, c.String("policy"), summary)
	if trials > 1 {
		fmt.Fprintf(c.App.Writer, "pass@k           ")
		for k, p := range passAtK {
			fmt.Fprintf(c.App.Writer, "k=%d %.3f  ", k+1, p)
		}
		fmt.Fprintf(c.App.Writer, "(a success among k attempts)\npass^k           ")
		for k, p := range passHatK {
			fmt.Fprintf(c.App.Writer, "k=%d %.3f  ", k+1, p)
		}
		fmt.Fprintf(c.App.Writer, "(%d attempts at each task", trials)
		if len(passHatK) < trials {
			fmt.Fprintf(c.App.Writer, "; k stops at %d, the fewest a task finished without an error", len(passHatK))
		}
		fmt.Fprintln(c.App.Writer, ")")
	}
	if out := c.String("out"); out != "" {
		fmt.Fprintf(c.App.Writer, "trajectories     %s\n", out)
	}
	return nil
}

func printSummary(w io.Writer, env string, cfg rollout.Config, policy string, s rollout.Summary) {
	tasks := cfg.Episodes / max(cfg.Group, 1)
	fmt.Fprintf(w, "%s, %s split, seeds %d-%d, %s policy\n", env, cfg.Split, cfg.Seed0, cfg.Seed0+int64(tasks)-1, policy)
	fmt.Fprintf(w, "episodes         %d (%d failed with an error; %d cut short by the context)\n", s.Episodes, s.Errors, s.ContextFull)
	fmt.Fprintf(w, "success rate     %.3f ± %.3f\n", s.SuccessRate, s.SuccessRateSE)
	fmt.Fprintf(w, "mean return      %.3f ± %.3f\n", s.MeanReturn, s.MeanReturnSE)
	fmt.Fprintf(w, "mean score       %.3f ± %.3f\n", s.MeanScore, s.MeanScoreSE)
	fmt.Fprintf(w, "mean steps       %.2f ± %.2f\n", s.MeanSteps, s.MeanStepsSE)
	fmt.Fprintf(w, "invalid actions  %.3f ± %.3f\n", s.InvalidActionRate, s.InvalidActionRateSE)
}

func runEnvsDemos(c *cli.Context) error {
	src, err := builtinEnvArg(c)
	if err != nil {
		return err
	}
	path := c.String("out")
	if path == "" {
		return errors.New("--out: name the file to write the demonstrations to")
	}
	cfg, err := runConfig(c, src)
	if err != nil {
		return err
	}
	skipped := 0
	written, err := writeDemonstrations(c.Context, path, src, func(*rollout.Trajectory) error {
		skipped++
		return nil
	}, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %d %s demonstrations (%s split, seeds %d-%d) to %s; left out %d unsuccessful episodes\n",
		written, src.spec.Name, cfg.Split, cfg.Seed0, cfg.Seed0+int64(cfg.Episodes)-1, path, skipped)
	return nil
}

// writeDemonstrations plays src's expert on the episodes of each of runs in
// turn and writes to path a demonstration of each successful one, one
// rollout.NewDemonstration a line, as `agentrl envs demos` and the GRPO
// benchmark's prompts for TRL need. An unsuccessful episode or one with an
// environment error is not written, since a failed demonstration would
// teach failing: it goes to failed, whose error stops the writing.
func writeDemonstrations(ctx context.Context, path string, src envSource, failed func(*rollout.Trajectory) error, runs ...rollout.Config) (written int, err error) {
	if _, ok := src.newEnv().(envs.Expert); !ok {
		return 0, fmt.Errorf("%s has no expert to demonstrate with", src.spec.Name)
	}
	out, err := createPart(path)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	var runErr error
	for _, cfg := range runs {
		runErr = rollout.Stream(ctx, cfg, rollout.Expert(), func(t *rollout.Trajectory) error {
			if !t.Success || t.Error != "" {
				return failed(t)
			}
			written++
			return enc.Encode(rollout.NewDemonstration(t))
		})
		if runErr != nil {
			break
		}
	}
	return written, out.done(errors.Join(runErr, bw.Flush()))
}

func runEnvsServe(c *cli.Context) error {
	src, err := builtinEnvArg(c)
	if err != nil {
		return err
	}
	if c.Int("max-instances") <= 0 {
		return fmt.Errorf("--max-instances %d must be > 0", c.Int("max-instances"))
	}
	srv := remote.NewServer(src.newEnv, remote.ServerOptions{MaxInstances: c.Int("max-instances")})
	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "serving %s on http://%s (AgentGym protocol; interrupt to stop)\n", src.spec.Name, ln.Addr())
	return srv.Serve(c.Context, ln)
}
