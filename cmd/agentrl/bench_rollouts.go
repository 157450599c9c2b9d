package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/envs/registry"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/initmodel"
	"github.com/agentrl/agentrl/rl"
	"github.com/agentrl/agentrl/rollout"
)

func benchRolloutsCommand() *cli.Command {
	return &cli.Command{
		Name:  "rollouts",
		Usage: "multi-turn rollouts with and without sessions and the prefix cache; scoring K actions under one state",
		Flags: append(modelFlags(false),
			&cli.StringFlag{Name: "envs", Value: "alfworld,webshop", Usage: "comma-separated environments"},
			&cli.IntFlag{Name: "parallel", Value: 32, Usage: "episodes run at once"},
			&cli.IntFlag{Name: "episodes", Value: 32, Usage: "episodes per environment"},
			&cli.IntFlag{Name: "turns", Value: 10, Usage: "steps per episode (at most)"},
			&cli.IntFlag{Name: "max-tokens", Value: 32, Usage: "tokens generated per action (at most)"},
			&cli.IntFlag{Name: "state-tokens", Value: 500, Usage: "tokens of the state the candidate actions are scored under"},
			&cli.IntFlag{Name: "candidates", Value: 8, Usage: "candidate actions scored under one state"},
			&cli.IntFlag{Name: "action-tokens", Value: 16, Usage: "tokens per candidate action"},
			&cli.IntFlag{Name: "repeats", Value: 3, Usage: "repeats of the scoring benchmark (best counts)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		),
		Action: runBenchRollouts,
	}
}

func runBenchRollouts(c *cli.Context) error {
	for _, f := range []string{"parallel", "episodes", "turns", "max-tokens", "state-tokens", "candidates", "action-tokens", "repeats"} {
		if c.Int(f) <= 0 {
			return fmt.Errorf("--%s must be > 0", f)
		}
	}
	if c.String("model") == "" {
		dir, err := os.MkdirTemp("", "agentrl-bench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "small.gguf")
		if _, err := initmodel.Write(path, initmodel.Config{Preset: "small", Seed: 1}); err != nil {
			return err
		}
		if err := c.Set("model", path); err != nil {
			return err
		}
	}
	l, err := openModel(c, 1)
	if err != nil {
		return err
	}
	defer l.Close()
	// Each side of the benchmark starts its own engine.
	l.engine.Close()
	l.engine = nil
	opts := llm.EngineOptions{Context: c.Int("ctx"), Threads: c.Int("threads")}
	s := rollout.DefaultActionSampling()
	s.Seed, s.MaxTokens = 1, c.Int("max-tokens")
	report := struct {
		SystemInfo string                   `json:"system_info"`
		Model      llm.Info                 `json:"model"`
		Rollouts   []rollout.BenchResult    `json:"rollouts"`
		Scoring    rollout.ScoreBenchResult `json:"scoring"`
	}{SystemInfo: cgo.SystemInfo(), Model: l.model.Info()}
	for _, name := range strings.Split(c.String("envs"), ",") {
		name = strings.TrimSpace(name)
		f, err := registry.Lookup(name)
		if err != nil {
			return err
		}
		r, err := rollout.BenchRollouts(c.Context, l.model, rollout.BenchConfig{
			Env: name, NewEnv: f, Parallel: c.Int("parallel"), Episodes: c.Int("episodes"), Turns: c.Int("turns"),
			Sampling: s, Engine: opts,
			Logf: rl.WriterLogf(c.App.ErrWriter),
		})
		if err != nil {
			return err
		}
		report.Rollouts = append(report.Rollouts, r)
		// The human summary goes to stderr as each part ends, also with
		// --json: a full run takes a while.
		for _, side := range []rollout.BenchSide{r.Plain, r.Cached} {
			fmt.Fprintf(c.App.ErrWriter, "%-9s prefix cache %-5v: %6.0f prompt tokens/episode evaluated (%6.0f reused), %.3f episodes/s, %.0f%% in llama_decode, %d steps\n",
				name, side.PrefixCache, side.PromptTokensPerEpisode, side.CachedTokensPerEpisode, side.EpisodesPerSecond, side.DecodePct, side.Steps)
		}
		fmt.Fprintf(c.App.ErrWriter, "%-9s %.1fx fewer prompt tokens, %.2fx episodes/s\n", name, r.Ratios.FewerPromptTokens, r.Ratios.EpisodesPerSecond)
	}
	report.Scoring, err = rollout.BenchScoreCandidates(c.Context, l.model, opts, c.Int("state-tokens"), c.Int("candidates"), c.Int("action-tokens"), c.Int("repeats"))
	if err != nil {
		return err
	}
	sc := report.Scoring
	fmt.Fprintf(c.App.ErrWriter, "scoring %d actions of %d tokens under a %d-token state: %.3f s re-evaluating it, %.3f s evaluating it once (%.1fx)\n",
		sc.Candidates, sc.ActionTokens, sc.StateTokens, sc.PlainSeconds, sc.SharedSeconds, sc.Speedup)
	if !c.Bool("json") {
		return nil
	}
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(report)
}
