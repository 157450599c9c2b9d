package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "the end-to-end demo on the built-in tiny model",
		Description: "Shows the devices, makes the tiny model, generates from it (on the GPU when there is one),\n" +
			"runs it as an agent in WebShop next to the expert, fine-tunes a LoRA adapter on expert math\n" +
			"demonstrations and evaluates the model with it. Each step is an agentrl command, printed first.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "keep the model, data and adapter in `DIR` (default: a temporary folder)"},
		},
		Action: runDemo,
	}
}

func runDemo(c *cli.Context) error {
	out := c.String("out")
	if out == "" {
		dir, err := os.MkdirTemp("", "agentrl-demo")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		out = dir
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	model := filepath.Join(out, "tiny.gguf")
	demos := filepath.Join(out, "math-demos.jsonl")
	adapter := filepath.Join(out, "math-lora.gguf")
	steps := [][]string{
		{"version"},
		{"init-model", "--preset", "tiny", "--seed", "1", "--out", model},
		{"generate", "--model", model, "--prompt", "Action:", "--n", "3", "--max-tokens", "24", "--temperature", "0.8", "--seed", "1"},
		{"envs", "eval", "webshop", "--policy", "expert", "--split", "test", "--episodes", "20", "--parallel", "8"},
		{"envs", "eval", "webshop", "--policy", "model", "--model", model, "--split", "test", "--episodes", "8", "--parallel", "8",
			"--max-steps", "6", "--max-tokens", "24", "--seed", "1", "--out", filepath.Join(out, "webshop-trajectories.jsonl")},
		{"envs", "demos", "math", "--split", "train", "--episodes", "64", "--out", demos},
		{"sft", "--model", model, "--data", demos, "--out", adapter, "--lora-rank", "16", "--lr", "1e-3", "--epochs", "2"},
		{"envs", "eval", "math", "--policy", "model", "--model", model, "--lora", adapter, "--split", "test",
			"--episodes", "16", "--parallel", "16", "--max-tokens", "64", "--temperature", "0.7", "--seed", "1"},
	}
	for _, args := range steps {
		fmt.Fprintf(c.App.Writer, "\n$ agentrl %s\n", strings.Join(args, " "))
		app := newApp()
		app.Writer, app.ErrWriter, app.Reader = c.App.Writer, c.App.ErrWriter, c.App.Reader
		if err := app.RunContext(c.Context, append([]string{"agentrl"}, args...)); err != nil {
			return fmt.Errorf("demo step %q: %w", strings.Join(args[:min(2, len(args))], " "), err)
		}
	}
	return nil
}
