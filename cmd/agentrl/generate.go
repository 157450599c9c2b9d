package main

import (
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/llm"
)

func generateCommand() *cli.Command {
	return &cli.Command{
		Name:  "generate",
		Usage: "sample completions of a prompt",
		Flags: append(append(modelFlags(true), samplingFlags(128)...),
			&cli.StringSliceFlag{Name: "prompt", Aliases: []string{"p"}, Usage: "prompt text (repeatable: prompts are decoded together)", Required: true},
			&cli.BoolFlag{Name: "chat", Usage: "wrap each prompt as a user message in the model's chat template"},
			&cli.IntFlag{Name: "n", Value: 1, Usage: "completions per prompt"},
			&cli.StringSliceFlag{Name: "stop", Usage: "stop string (repeatable)"},
			&cli.BoolFlag{Name: "json", Usage: "print completions as JSON with token ids and log-probabilities"},
		),
		Action: runGenerate,
	}
}

// samplingFlags are the flags of every command that samples from a model.
func samplingFlags(maxTokens int) []cli.Flag {
	def := llm.DefaultSampling()
	return []cli.Flag{
		&cli.Float64Flag{Name: "temperature", Aliases: []string{"t"}, Value: float64(def.Temperature), Usage: "sampling temperature (0 = greedy)"},
		&cli.IntFlag{Name: "top-k", Value: def.TopK, Usage: "keep the K most likely tokens (0 = all)"},
		&cli.Float64Flag{Name: "top-p", Value: float64(def.TopP), Usage: "nucleus sampling mass (1 = off)"},
		&cli.Float64Flag{Name: "min-p", Value: float64(def.MinP), Usage: "drop tokens below MIN-P times the best one's probability"},
		&cli.Int64Flag{Name: "seed", Value: -1, Usage: "sampling seed (-1 = random); the same seed gives the same completions"},
		&cli.IntFlag{Name: "max-tokens", Value: maxTokens, Usage: "most tokens per completion"},
	}
}

func samplingFromFlags(c *cli.Context) llm.Sampling {
	return llm.Sampling{
		Temperature: float32(c.Float64("temperature")), TopK: c.Int("top-k"),
		TopP: float32(c.Float64("top-p")), MinP: float32(c.Float64("min-p")),
		Seed: c.Int64("seed"), MaxTokens: c.Int("max-tokens"),
	}
}

func runGenerate(c *cli.Context) error {
	s := samplingFromFlags(c)
	s.Stop = c.StringSlice("stop")
	n := c.Int("n")
	if n <= 0 {
		return fmt.Errorf("--n %d must be > 0", n)
	}
	prompts := c.StringSlice("prompt")
	l, err := openModel(c, min(max(n*len(prompts), 1), 64))
	if err != nil {
		return err
	}
	defer l.Close()
	reqs := make([]llm.GenerateRequest, len(prompts))
	for i, p := range prompts {
		if c.Bool("chat") {
			p = l.model.RenderChat(userTurn(p), true)
		}
		reqs[i] = llm.GenerateRequest{Prompt: p, N: n}
	}
	res, err := l.engine.Generate(c.Context, reqs, s, llm.CallOptions{Adapters: l.adapters})
	if err != nil {
		return err
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"model": l.model.Info().Path, "completions": res})
	}
	for i, comps := range res {
		for _, comp := range comps {
			fmt.Fprintf(c.App.Writer, "--- prompt %d, sample %d (%d tokens, %s)\n%s%s\n", i, comp.Sample, len(comp.Tokens), comp.FinishReason, prompts[i], comp.Text)
		}
	}
	return nil
}
