package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/llm/models"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "the end-to-end demo: SmolLM2-135M-Instruct as a WebShop agent, before and after fine-tuning on expert demonstrations",
		Description: "Fetches the default model once (agentrl models pull " + models.DefaultModel + "), asks it a question in chat,\n" +
			"shows the WebShop expert, evaluates the model zero-shot as a WebShop agent, fine-tunes a LoRA adapter\n" +
			"on expert demonstrations and evaluates the model with it. Each step is an agentrl command, printed\n" +
			"first. About 13 minutes on two CPU cores; --model runs it on another model (e.g. a made tiny one).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "keep the data, adapter and trajectories in `DIR` (default: a temporary folder)"},
			&cli.StringFlag{Name: "model", Value: models.DefaultModel, Usage: modelUsage},
			&cli.IntFlag{Name: "threads", Usage: "CPU threads of every step (0: one per core)"},
			&cli.IntFlag{Name: "episodes", Value: 16, Usage: "WebShop test tasks the model is evaluated on, before and after"},
			&cli.IntFlag{Name: "demos", Value: 48, Usage: "expert demonstrations it is fine-tuned on"},
		},
		Action: runDemo,
	}
}

func runDemo(c *cli.Context) error {
	out, keep := c.String("out"), c.IsSet("out")
	if !keep {
		dir, err := os.MkdirTemp("", "agentrl-demo")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		out = dir
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	model := c.String("model")
	if c.Int("threads") < 0 {
		return fmt.Errorf("--threads %d must not be negative", c.Int("threads"))
	}
	for _, name := range []string{"episodes", "demos"} {
		if c.Int(name) <= 0 {
			return fmt.Errorf("--%s %d must be positive", name, c.Int(name))
		}
	}
	episodes := fmt.Sprint(c.Int("episodes"))
	threads := fmt.Sprint(c.Int("threads"))
	demos := filepath.Join(out, "webshop-demos.jsonl")
	adapter := filepath.Join(out, "webshop-lora.gguf")
	// The model's evaluation: the same test tasks, greedy, before and
	// after fine-tuning; six steps are enough for the expert's episodes.
	evalModel := func(name string, extra ...string) []string {
		args := []string{"envs", "eval", "webshop", "--policy", "model", "--model", model, "--split", "test",
			"--episodes", episodes, "--parallel", episodes, "--max-steps", "6", "--max-tokens", "32", "--temperature", "0",
			"--out", filepath.Join(out, name)}
		return append(append(args, extra...), "--threads", threads)
	}
	var steps [][]string
	steps = append(steps, []string{"version"})
	if _, known := models.Lookup(model); known {
		steps = append(steps, []string{"models", "pull", model})
	}
	steps = append(steps,
		[]string{"generate", "--model", model, "--chat", "--prompt", "In one sentence: how would you find a gluten free snack under 10 dollars in an online shop?",
			"--max-tokens", "48", "--temperature", "0", "--threads", threads},
		[]string{"envs", "eval", "webshop", "--policy", "expert", "--split", "test", "--episodes", episodes, "--parallel", episodes},
		evalModel("before.jsonl"),
		[]string{"envs", "demos", "webshop", "--split", "train", "--episodes", fmt.Sprint(c.Int("demos")), "--out", demos},
		[]string{"sft", "--model", model, "--data", demos, "--out", adapter, "--lr", "1e-3", "--epochs", "1", "--batch-tokens", "2048", "--threads", threads},
		evalModel("after.jsonl", "--lora", adapter),
	)
	start := time.Now()
	for _, args := range steps {
		fmt.Fprintf(c.App.Writer, "\n$ agentrl %s\n", strings.Join(quoteArgs(args), " "))
		app := newApp()
		app.Writer, app.ErrWriter, app.Reader = c.App.Writer, c.App.ErrWriter, c.App.Reader
		if err := app.RunContext(c.Context, append([]string{"agentrl"}, args...)); err != nil {
			return fmt.Errorf("demo step %q: %w", strings.Join(args[:min(2, len(args))], " "), err)
		}
	}
	fmt.Fprintf(c.App.Writer, "\ndemo finished in %s\n", time.Since(start).Round(time.Second))
	if keep {
		fmt.Fprintf(c.App.Writer, "the trajectories before and after fine-tuning, the demonstrations and the adapter are in %s\n", out)
	}
	return nil
}

// quoteArgs quotes the arguments a shell would split.
func quoteArgs(args []string) []string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if strings.ContainsAny(a, " \t'\"$?*") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return q
}
