package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/llm/initmodel"
)

func initModelCommand() *cli.Command {
	return &cli.Command{
		Name:  "init-model",
		Usage: "write a new llama-architecture GGUF model with random weights and a tokenizer learned from a corpus",
		Description: "The model loads in llama.cpp like any Llama model. Without --corpus, the tokenizer is\n" +
			"learned from a built-in corpus of agent-style English. The same flags and seed give the same file.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Required: true, Usage: "write the model to `FILE`"},
			&cli.StringFlag{Name: "preset", Value: "tiny", Usage: "model shape: " + strings.Join(initmodel.PresetNames(), " or ")},
			&cli.StringSliceFlag{Name: "corpus", Usage: "learn the tokenizer from text `FILE` (repeatable)"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed of the random weights"},
			&cli.StringFlag{Name: "type", Value: "f32", Usage: "type of the weight matrices: f32, f16, bf16, q8_0 or q4_k (q8_0 for matrices whose rows are not multiples of 256)"},
			&cli.IntFlag{Name: "vocab-size", DefaultText: "the preset's", Usage: fmt.Sprintf("target vocabulary size, %d to %d", initmodel.MinVocabSize, initmodel.MaxVocabSize)},
			&cli.BoolFlag{Name: "separate-output", Usage: "give the model its own output projection instead of reusing the token embedding"},
			&cli.StringFlag{Name: "name", Usage: "model name stored in the file (default: agentrl-PRESET)"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON"},
		},
		Action: runInitModel,
	}
}

func runInitModel(c *cli.Context) error {
	typ, err := initmodel.ParseType(c.String("type"))
	if err != nil {
		return err
	}
	cfg := initmodel.Config{
		Preset:         c.String("preset"),
		Name:           c.String("name"),
		Seed:           c.Uint64("seed"),
		Type:           typ,
		SeparateOutput: c.Bool("separate-output"),
		VocabSize:      c.Int("vocab-size"),
	}
	// Zero means "the preset's" to Config, not to the flag.
	if c.IsSet("vocab-size") && cfg.VocabSize <= 0 {
		return fmt.Errorf("--vocab-size %d out of range [%d, %d]", cfg.VocabSize, initmodel.MinVocabSize, initmodel.MaxVocabSize)
	}
	// Check the flags and the output path before the slow part.
	if _, err := cfg.Resolve(); err != nil {
		return err
	}
	if cfg.Corpus, err = readCorpus(c.StringSlice("corpus")); err != nil {
		return err
	}
	out := c.String("out")
	if err := checkWritable(out); err != nil {
		return err
	}
	summary, err := initmodel.Write(out, cfg)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(summary)
	}
	output := "tied to the token embedding"
	if !summary.TiedOutput {
		output = "separate"
	}
	w := c.App.Writer
	fmt.Fprintf(w, "wrote %s: %s, llama architecture, %s weights\n", summary.Path, summary.Name, summary.Type)
	fmt.Fprintf(w, "  parameters  %d (%.2f M)\n", summary.Parameters, float64(summary.Parameters)/1e6)
	fmt.Fprintf(w, "  vocabulary  %d tokens (%d merges)\n", summary.VocabSize, summary.Merges)
	fmt.Fprintf(w, "  layers      %d: embedding %d, %d heads (%d KV), feed-forward %d\n",
		summary.Layers, summary.EmbeddingLength, summary.HeadCount, summary.HeadCountKV, summary.FeedForwardLength)
	fmt.Fprintf(w, "  context     %d tokens\n", summary.ContextLength)
	fmt.Fprintf(w, "  output      %s\n", output)
	fmt.Fprintf(w, "  file size   %d bytes (%.1f MiB)\n", summary.FileSize, float64(summary.FileSize)/(1<<20))
	return nil
}

// readCorpus reads the corpus files; none means the built-in corpus.
func readCorpus(paths []string) ([]string, error) {
	var corpus []string
	total := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read corpus: %w", err)
		}
		total += len(strings.TrimSpace(string(b)))
		corpus = append(corpus, string(b))
	}
	if len(paths) > 0 && total == 0 {
		return nil, fmt.Errorf("corpus %s is empty", strings.Join(paths, ", "))
	}
	return corpus, nil
}

// checkWritable reports whether a file can be created at path.
func checkWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("--out %s is a directory", path)
	}
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot write %s: directory %s does not exist", path, dir)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".check-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// partFile is an output file written beside its final name, as NAME.part,
// and renamed into place when the command is done: an interrupted command
// leaves a file of that name as it was, and its own whole lines so far in
// NAME.part.
type partFile struct {
	*os.File
	final string
}

func createPart(path string) (*partFile, error) {
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	f, err := os.Create(path + ".part")
	if err != nil {
		return nil, err
	}
	return &partFile{File: f, final: path}, nil
}

// done closes the file (its writer flushed) and renames it into place;
// after failed, the error of the command, it leaves it as NAME.part and
// says so.
func (p *partFile) done(failed error) error {
	err := errors.Join(failed, p.Close())
	if err == nil {
		return os.Rename(p.Name(), p.final)
	}
	return fmt.Errorf("%w (the output so far is in %s; %s is as it was)", err, p.Name(), p.final)
}
