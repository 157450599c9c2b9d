package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/models"
	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rl"
)

func sftCommand() *cli.Command {
	return &cli.Command{
		Name:  "sft",
		Usage: "supervised fine-tuning: train a LoRA adapter (or every weight) on prompt/completion or chat examples",
		Description: "Each line of --data is {\"prompt\": ..., \"completion\": ...} (raw text; the completion and the\n" +
			"end-of-sequence token are learned) or {\"messages\": [{\"role\": ..., \"content\": ...}, ...]} (rendered\n" +
			"with the model's chat template; the assistant turns are learned). The adapter is written to --out\n" +
			"as a llama.cpp GGUF LoRA adapter (--full: a complete model). Ctrl-C writes a checkpoint to\n" +
			"--checkpoint-dir and stops; --resume continues from it.",
		Flags: append(trainFlags(1e-4, 1),
			&cli.StringFlag{Name: "data", Required: true, Usage: "training examples, one JSON object per line (`FILE.jsonl`)"},
			&cli.BoolFlag{Name: "full", Usage: "train every weight (F32) and write a complete model instead of an adapter"},
			&cli.BoolFlag{Name: "f16-base", Usage: "LoRA on a quantised model: hold its weights as F16, about 1.4x faster on the CPU for 2 bytes per weight (log-probs then differ from llama.cpp's on the quantised file)"},
			&cli.BoolFlag{Name: "dequantize", Usage: "with --full on a quantised model: train from its weights dequantised to F32"},
		),
		Action: runSFT,
	}
}

// trainFlags are the flags sft and pretrain share.
func trainFlags(lr float64, epochs int) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Required: true, Usage: "base model, " + modelUsage},
		&cli.StringFlag{Name: "out", Required: true, Usage: "write the result to `FILE` (GGUF)"},
		&cli.IntFlag{Name: "lora-rank", Value: train.DefaultLoRARank, Usage: "LoRA rank"},
		&cli.Float64Flag{Name: "lora-alpha", Usage: "LoRA alpha (default 2 x rank)"},
		&cli.Float64Flag{Name: "lora-dropout", Usage: "dropout on the LoRA inputs"},
		&cli.StringFlag{Name: "lora-targets", Value: strings.Join(train.DefaultTargets, ","), Usage: "adapted matrices"},
		&cli.StringFlag{Name: "init-adapter", Usage: "start from this LoRA adapter (`FILE`) instead of B = 0"},
		&cli.Float64Flag{Name: "lr", Value: lr, Usage: "peak learning rate"},
		&cli.IntFlag{Name: "epochs", Value: epochs, Usage: "passes over the data"},
		&cli.IntFlag{Name: "batch-tokens", Value: 4096, Usage: "tokens per micro-batch"},
		&cli.IntFlag{Name: "row-tokens", Usage: "pack each micro-batch's sequences into rows of this many tokens (0: of its longest sequence, the least attention work)"},
		&cli.IntFlag{Name: "accumulate", Value: 1, Usage: "micro-batches per optimiser step"},
		&cli.IntFlag{Name: "max-steps", Usage: "stop after this many optimiser steps (0: run every epoch)"},
		&cli.IntFlag{Name: "warmup", Usage: "warm-up steps"},
		&cli.StringFlag{Name: "decay", Value: "cosine", Usage: "learning-rate decay after warm-up: cosine, linear or constant"},
		&cli.Float64Flag{Name: "weight-decay", Usage: "AdamW weight decay"},
		&cli.Float64Flag{Name: "clip", Value: 1, Usage: "clip the gradient norm to this value (0: off)"},
		&cli.IntFlag{Name: "ctx", Usage: "longest sequence in tokens (0: the model's context)"},
		&cli.IntFlag{Name: "memory-budget", Usage: "bound on a micro-batch's activation memory in MiB (0: none; default on the CPU: a third of the machine's memory, or of a container's limit where lower, 2-32 GiB; 4 GiB where unknown); a micro-batch over it is recomputed with gradient checkpointing (see --grad-checkpointing) or refused before the first step"},
		&cli.StringFlag{Name: "grad-checkpointing", Value: "auto", Usage: "recompute each layer's activations in the backward pass to save memory: auto (when --memory-budget needs it), on or off"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the LoRA initialisation, dropout and shuffling"},
		&cli.IntFlag{Name: "threads", Usage: "CPU threads (0: one per core)"},
		&cli.BoolFlag{Name: "gpu", Usage: "train on the first GPU when a GPU backend is installed"},
		&cli.StringFlag{Name: "checkpoint-dir", Usage: "checkpoint `DIR` (default: OUT.checkpoint)"},
		&cli.IntFlag{Name: "checkpoint-every", Usage: "write a checkpoint every N steps (0: only when interrupted)"},
		&cli.StringFlag{Name: "resume", Usage: "continue the run checkpointed in `DIR`"},
		&cli.StringFlag{Name: "metrics", Usage: "append one JSON line per step to `FILE` (default: OUT.metrics.jsonl)"},
	}
}

// trainSetup is what the flags configure.
type trainSetup struct {
	cfg  train.Config
	run  train.RunOptions
	out  string
	full bool
}

func parseTrainFlags(c *cli.Context, full bool) (trainSetup, error) {
	s := trainSetup{out: c.String("out"), full: full}
	if err := checkWritable(s.out); err != nil {
		return s, err
	}
	for _, name := range []string{"lora-rank", "epochs", "batch-tokens", "accumulate"} {
		if c.Int(name) <= 0 {
			return s, fmt.Errorf("--%s %d must be positive", name, c.Int(name))
		}
	}
	for _, name := range []string{"warmup", "ctx", "row-tokens", "threads", "checkpoint-every", "max-steps", "memory-budget"} {
		if c.Int(name) < 0 {
			return s, fmt.Errorf("--%s %d must not be negative", name, c.Int(name))
		}
	}
	var targets []string
	for _, t := range strings.Split(c.String("lora-targets"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			targets = append(targets, t)
		}
	}
	s.cfg = train.Config{
		Full:       full,
		Dequantize: c.Bool("dequantize"),
		F16Base:    c.Bool("f16-base"),
		LoRA: train.LoRAConfig{Rank: c.Int("lora-rank"), Alpha: float32(c.Float64("lora-alpha")),
			Dropout: float32(c.Float64("lora-dropout")), Targets: targets},
		Optimizer:     train.AdamW{LR: c.Float64("lr"), WeightDecay: c.Float64("weight-decay"), ClipNorm: c.Float64("clip")},
		Schedule:      train.Schedule{Warmup: c.Int("warmup"), Decay: c.String("decay")},
		Seed:          c.Uint64("seed"),
		Context:       c.Int("ctx"),
		RowTokens:     c.Int("row-tokens"),
		MemoryBudget:  int64(c.Int("memory-budget")) << 20,
		Checkpointing: c.String("grad-checkpointing"),
		Threads:       c.Int("threads"),
		GPU:           c.Bool("gpu"),
	}
	if c.Float64("clip") == 0 {
		s.cfg.Optimizer.ClipNorm = -1 // flag 0 means off; the config's 0 means the default
	}
	if !c.IsSet("memory-budget") && !s.cfg.GPU {
		// A micro-batch that cannot be allocated would stop the run where
		// it comes; bounded, it is computed with gradient checkpointing,
		// or refused before the first step. The RL runs' default
		// (lora.memory_mib), so that a demonstration trains alike in both.
		s.cfg.MemoryBudget = int64(rl.DefaultMemoryMiB()) << 20
	}
	dir := c.String("checkpoint-dir")
	if c.IsSet("resume") {
		if dir != "" && dir != c.String("resume") {
			return s, errors.New("--resume and --checkpoint-dir name different directories")
		}
		dir = c.String("resume")
		if _, err := os.Stat(dir + "/" + train.CheckpointFile); err != nil {
			return s, fmt.Errorf("--resume %s: no checkpoint there (%v)", dir, err)
		}
	}
	if dir == "" {
		dir = s.out + ".checkpoint"
	}
	s.run = train.RunOptions{Epochs: c.Int("epochs"), BatchTokens: c.Int("batch-tokens"), Accumulate: c.Int("accumulate"),
		MaxSteps: c.Int("max-steps"), Seed: c.Uint64("seed"), CheckpointDir: dir, CheckpointEvery: c.Int("checkpoint-every"),
		Resume: c.IsSet("resume")}
	return s, nil
}

func runSFT(c *cli.Context) error {
	s, err := parseTrainFlags(c, c.Bool("full"))
	if err != nil {
		return err
	}
	m, tr, err := openForTraining(c.String("model"), s.cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	defer tr.Close()
	seqs, err := train.ReadSFTFile(c.String("data"), m, tr.Config().Context)
	if err != nil {
		return err
	}
	return fit(c, tr, seqs, s)
}

// fit runs the training, reports progress and writes the result.
func fit(c *cli.Context, tr *train.Trainer, seqs []train.Sequence, s trainSetup) error {
	if p := c.String("init-adapter"); p != "" {
		if s.full {
			return errors.New("--init-adapter applies to LoRA training, not --full")
		}
		if s.run.Resume {
			return errors.New("--init-adapter and --resume both set the adapter; give one")
		}
		if err := tr.LoadAdapter(p); err != nil {
			return err
		}
	}
	metricsPath := c.String("metrics")
	if metricsPath == "" {
		metricsPath = s.out + ".metrics.jsonl"
	}
	metrics, err := os.OpenFile(metricsPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	defer metrics.Close()
	tokens := 0
	for _, q := range seqs {
		tokens += len(q.Tokens)
	}
	what := fmt.Sprintf("LoRA rank %d (%d parameters)", tr.Config().LoRA.Rank, tr.Parameters())
	if s.full {
		what = fmt.Sprintf("every weight (%d parameters)", tr.Parameters())
	}
	fmt.Fprintf(c.App.ErrWriter, "training %s of %s on %s (matrix products: %s): %d sequences, %d tokens, %d epochs\n",
		what, c.String("model"), tr.Backend(), tr.MatrixProducts(), len(seqs), tokens, s.run.Epochs)
	if advice := tr.SpeedAdvice(); advice != "" {
		fmt.Fprintf(c.App.ErrWriter, "note: %s\n", advice)
	}
	enc := json.NewEncoder(metrics)
	progress := newProgressLine(c.App.ErrWriter)
	var metricsErr error
	s.run.Progress = func(p train.Progress) {
		if err := enc.Encode(p); err != nil && metricsErr == nil {
			metricsErr = fmt.Errorf("metrics %s: %w", metricsPath, err)
		}
		progress.update(fmt.Sprintf("step %d/%d  epoch %d  loss %.4f  lr %.2e  %.0f tok/s  ETA %s",
			p.Step, p.Steps, p.Epoch, p.Loss, p.LR, p.TokensPS, p.ETA.Round(time.Second)))
	}
	res, err := train.Run(c.Context, tr, seqs, s.run)
	progress.done()
	if err != nil {
		if errors.Is(err, train.ErrInterrupted) {
			return cli.Exit(fmt.Sprintf("agentrl: %v; continue with --resume %s", err, s.run.CheckpointDir), 130)
		}
		return err
	}
	if metricsErr != nil {
		return metricsErr
	}
	if s.full {
		err = tr.SaveModel(s.out)
	} else {
		err = tr.SaveAdapter(s.out)
	}
	if err != nil {
		return err
	}
	if n := tr.Checkpointed(); n > 0 {
		fmt.Fprintf(c.App.ErrWriter, "%d micro-batches used gradient checkpointing to fit --memory-budget\n", n)
	}
	fmt.Fprintf(c.App.ErrWriter, "%d steps, loss %.4f -> %.4f, %.0f tokens/s; wrote %s\n", res.Steps, res.FirstLoss, res.LastLoss, res.TokensPS, s.out)
	if !s.full {
		printAdapterUsage(c.App.ErrWriter, tr.ModelPath(), s.out)
	}
	return nil
}

// printAdapterUsage says how to run the base model with the trained
// adapter in ollama and in llama.cpp.
func printAdapterUsage(w io.Writer, base, adapter string) {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	fmt.Fprintf(w, "use the adapter:\n")
	fmt.Fprintf(w, "  agentrl:   agentrl generate --model %s --lora %s --chat --prompt ...\n", base, adapter)
	fmt.Fprintf(w, "  llama.cpp: llama-cli -m %s --lora %s\n", abs(base), abs(adapter))
	fmt.Fprintf(w, "  ollama:    a Modelfile with the two lines\n               FROM %s\n               ADAPTER %s\n", abs(base), abs(adapter))
	fmt.Fprintf(w, "             then `ollama create my-agent -f Modelfile` and `ollama run my-agent`\n")
}

// progressLine rewrites one status line on a terminal and prints a line
// every few seconds elsewhere.
type progressLine struct {
	w        io.Writer
	terminal bool
	last     time.Time
	pending  string
}

func newProgressLine(w io.Writer) *progressLine {
	p := &progressLine{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

func (p *progressLine) update(line string) {
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		return
	}
	p.pending = line
	if time.Since(p.last) >= 5*time.Second {
		fmt.Fprintln(p.w, line)
		p.last, p.pending = time.Now(), ""
	}
}

func (p *progressLine) done() {
	switch {
	case p.terminal:
		fmt.Fprintln(p.w)
	case p.pending != "":
		fmt.Fprintln(p.w, p.pending)
	}
}

// openForTraining loads the model for its tokenizer and chat template (from
// llama.cpp, so that training data is tokenised exactly as inference will
// see it) and a trainer on the same file.
func openForTraining(spec string, cfg train.Config) (*llm.Model, *train.Trainer, error) {
	path, err := models.Resolve(spec)
	if err != nil {
		return nil, nil, err
	}
	loadGPUBackends()
	m, err := llm.Load(path, llm.LoadOptions{GPULayers: 0})
	if err != nil {
		return nil, nil, err
	}
	tr, err := train.New(path, cfg)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, tr, nil
}
