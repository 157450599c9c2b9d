package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/llm/initmodel"
	"github.com/agentrl/agentrl/llm/train"
)

func pretrainCommand() *cli.Command {
	return &cli.Command{
		Name:  "pretrain",
		Usage: "train every weight of a model on plain text (e.g. the built-in tiny model)",
		Description: "Each --corpus file is tokenised (with BOS) and cut into sequences of --seq-len tokens;\n" +
			"every token is a target. --corpus builtin is the text the built-in models' tokenizer is learned\n" +
			"from. The result is a complete GGUF model with F32 weights.",
		Flags: append(trainFlags(1e-3, 1),
			&cli.StringSliceFlag{Name: "corpus", Required: true, Usage: "text `FILE` (repeatable), or builtin"},
			&cli.IntFlag{Name: "seq-len", Value: 256, Usage: "tokens per training sequence"},
			&cli.BoolFlag{Name: "dequantize", Usage: "on a quantised model: train from its weights dequantised to F32"},
		),
		Action: runPretrain,
	}
}

func runPretrain(c *cli.Context) error {
	s, err := parseTrainFlags(c, true)
	if err != nil {
		return err
	}
	if c.Int("seq-len") < 2 {
		return fmt.Errorf("--seq-len %d must be at least 2", c.Int("seq-len"))
	}
	var texts []string
	for _, path := range c.StringSlice("corpus") {
		if path == "builtin" {
			texts = append(texts, initmodel.Corpus())
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("corpus: %w", err)
		}
		texts = append(texts, string(b))
	}
	m, tr, err := openForTraining(c.String("model"), s.cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	defer tr.Close()
	seqLen := min(c.Int("seq-len"), tr.Config().Context)
	seqs, err := train.ChunkCorpus(texts, m, seqLen)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	return fit(c, tr, seqs, s)
}
