package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/llm/gguf"
	"github.com/agentrl/agentrl/llm/train"
)

func benchTrainCommand() *cli.Command {
	return &cli.Command{
		Name:  "train",
		Usage: "training throughput (tokens/s, GFLOP/s, share of the CPU's FP32 peak), against PyTorch when available",
		Description: "Runs --steps training steps (the first --warmup untimed) on one batch of random tokens per\n" +
			"model and batch shape, and the same step in PyTorch (bench/peers/torch_lora.py, same tokens,\n" +
			"same LoRA and optimiser settings) when its script and a python3 with torch are found.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "model", Usage: "GGUF model (repeatable); default: the built-in tiny and small presets, made in a temporary folder"},
			&cli.StringFlag{Name: "shapes", Value: "4x128,8x256", Usage: "comma-separated BATCHxSEQ_LEN shapes"},
			&cli.BoolFlag{Name: "full", Usage: "also measure full-parameter training"},
			&cli.IntFlag{Name: "rank", Value: train.DefaultLoRARank, Usage: "LoRA rank"},
			&cli.IntFlag{Name: "steps", Value: 6, Usage: "training steps per measurement"},
			&cli.IntFlag{Name: "warmup", Value: 1, Usage: "untimed first steps"},
			&cli.IntFlag{Name: "threads", Usage: "CPU threads (0: one per core)"},
			&cli.BoolFlag{Name: "gpu", Usage: "train on the first GPU when a GPU backend is installed"},
			&cli.StringFlag{Name: "grad-checkpointing", Value: "off", Usage: "on: recompute the activations in the backward pass (the memory and speed it costs); off"},
			&cli.StringFlag{Name: "torch-script", Value: filepath.Join("bench", "peers", "torch_lora.py"), Usage: "the PyTorch reference (empty: skip it)"},
			&cli.StringFlag{Name: "python", Value: "/usr/bin/python3", Usage: "interpreter with torch for the reference"},
			&cli.IntFlag{Name: "profile-steps", Usage: "after the timed steps, this many more with each graph node timed: where a step's time goes, by operation"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: runBenchTrain,
	}
}

type benchShape struct{ batch, seqLen int }

func parseShapes(s string) ([]benchShape, error) {
	var shapes []benchShape
	for _, f := range strings.Split(s, ",") {
		b, l, ok := strings.Cut(strings.TrimSpace(f), "x")
		batch, err1 := strconv.Atoi(b)
		seqLen, err2 := strconv.Atoi(l)
		if !ok || err1 != nil || err2 != nil || batch <= 0 || seqLen <= 0 {
			return nil, fmt.Errorf("--shapes: %q is not BATCHxSEQ_LEN", f)
		}
		shapes = append(shapes, benchShape{batch, seqLen})
	}
	return shapes, nil
}

// trainBenchRow is one measurement and its PyTorch counterpart.
type trainBenchRow struct {
	Model      string            `json:"model"`
	Ours       train.BenchResult `json:"ours"`
	PeakShare  float64           `json:"peak_share"`
	PyTorch    json.RawMessage   `json:"pytorch,omitempty"`
	TorchError string            `json:"pytorch_skipped,omitempty"`
	// Speedup is our tokens/s divided by PyTorch's, each at its fastest
	// timed step.
	Speedup float64 `json:"speedup_vs_pytorch,omitempty"`
}

func runBenchTrain(c *cli.Context) error {
	shapes, err := parseShapes(c.String("shapes"))
	if err != nil {
		return err
	}
	if c.Int("steps") <= c.Int("warmup") || c.Int("warmup") < 0 || c.Int("rank") <= 0 || c.Int("threads") < 0 || c.Int("profile-steps") < 0 {
		return fmt.Errorf("--steps %d must exceed --warmup %d; --rank, --threads and --profile-steps must be positive", c.Int("steps"), c.Int("warmup"))
	}
	peak, err := train.MeasureCPUPeak()
	if err != nil {
		return fmt.Errorf("CPU peak: %w", err)
	}
	paths, cleanup, err := benchModels(c.StringSlice("model"))
	if err != nil {
		return err
	}
	defer cleanup()
	// The batches handed to the PyTorch reference.
	dir, err := os.MkdirTemp("", "agentrl-bench-train")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	loadGPUBackends()
	threads := c.Int("threads")
	if threads == 0 {
		threads = peak.Cores
	}
	modes := []bool{false}
	if c.Bool("full") {
		modes = append(modes, true)
	}
	var rows []trainBenchRow
	for _, path := range paths {
		vocab, err := vocabSize(path)
		if err != nil {
			return err
		}
		for _, sh := range shapes {
			tokens := randomTokens(sh, vocab, 1)
			tokFile := filepath.Join(dir, fmt.Sprintf("tokens-%dx%d.json", sh.batch, sh.seqLen))
			if err := writeJSON(tokFile, tokens); err != nil {
				return err
			}
			for _, full := range modes {
				cfg := train.BenchConfig{Full: full, Rank: c.Int("rank"), Batch: sh.batch, SeqLen: sh.seqLen,
					Steps: c.Int("steps"), Warmup: c.Int("warmup"), Threads: threads, GPU: c.Bool("gpu"), Tokens: tokens, Seed: 1,
					Checkpointing: c.String("grad-checkpointing"), ProfileSteps: c.Int("profile-steps")}
				ours, err := train.Bench(c.Context, path, cfg)
				if err != nil {
					return fmt.Errorf("bench %s %dx%d: %w", path, sh.batch, sh.seqLen, err)
				}
				row := trainBenchRow{Model: filepath.Base(path), Ours: ours, PeakShare: ours.GFLOPS / peak.GFLOPS}
				row.PyTorch, row.Speedup, row.TorchError = runTorch(c.Context, c.String("python"), c.String("torch-script"), path, tokFile, cfg, ours.BestTokensPerSecond)
				rows = append(rows, row)
				if !c.Bool("json") {
					line := fmt.Sprintf("%-10s %-4s %3dx%-4d %8.0f tok/s (best step; mean %.0f) %7.1f GFLOP/s (%4.1f%% of peak)  loss %.4f -> %.4f",
						row.Model, ours.Mode, sh.batch, sh.seqLen, ours.BestTokensPerSecond, ours.TokensPerSecond, ours.GFLOPS, 100*row.PeakShare, ours.Losses[0], ours.FinalLoss)
					if row.Speedup > 0 {
						line += fmt.Sprintf("  | PyTorch: %.2fx", row.Speedup)
					} else if row.TorchError != "" {
						line += "  | PyTorch: " + row.TorchError
					}
					fmt.Fprintln(c.App.ErrWriter, line)
					printProfile(c.App.ErrWriter, ours.Profile)
				}
			}
		}
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"system_info": cgo.SystemInfo(), "cpu_peak": peak, "threads": threads, "results": rows})
	}
	fmt.Fprintf(c.App.ErrWriter, "CPU FP32 peak %.0f GFLOP/s = %s\n", peak.GFLOPS, peak.Derivation)
	if len(rows) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "matrix products: %s (%s=off for ggml's kernels)\n", rows[0].Ours.MatrixProducts, cgo.BLASEnv)
	}
	return nil
}

// printProfile prints where the profiled steps' time went, down to the
// operations under 1% of it.
func printProfile(w io.Writer, profile []train.OpShare) {
	for _, op := range profile {
		if op.Share < 0.01 && op.Op != train.OutsideGraphs {
			continue
		}
		fmt.Fprintf(w, "    %5.1f%% %9.1f ms %6d calls  %s\n", 100*op.Share, 1000*op.Seconds, op.Calls, op.Op)
	}
}

func vocabSize(path string) (int, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	t, ok := f.Tensor("token_embd.weight")
	if !ok || len(t.Shape) != 2 {
		return 0, fmt.Errorf("%s: no token embedding", path)
	}
	return int(t.Shape[1]), nil
}

func randomTokens(sh benchShape, vocab int, seed uint64) [][]int32 {
	rng := rand.New(rand.NewPCG(seed, 11))
	tokens := make([][]int32, sh.batch)
	for i := range tokens {
		tokens[i] = make([]int32, sh.seqLen+1)
		for k := range tokens[i] {
			tokens[i][k] = int32(rng.IntN(vocab))
		}
	}
	return tokens
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// runTorch runs the PyTorch reference on the same tokens and settings and
// returns its JSON report and our speed relative to it, or why it was
// skipped.
func runTorch(ctx context.Context, python, script, model, tokens string, cfg train.BenchConfig, ours float64) (json.RawMessage, float64, string) {
	if script == "" {
		return nil, 0, "disabled"
	}
	if _, err := os.Stat(script); err != nil {
		return nil, 0, "no " + script
	}
	if _, err := exec.LookPath(python); err != nil {
		return nil, 0, "no " + python
	}
	args := []string{script, "--model", model, "--tokens", tokens, "--steps", strconv.Itoa(cfg.Steps),
		"--warmup", strconv.Itoa(cfg.Warmup), "--threads", strconv.Itoa(cfg.Threads), "--lr", "1e-4", "--seed", "1"}
	if cfg.Full {
		args = append(args, "--full")
	} else {
		args = append(args, "--rank", strconv.Itoa(cfg.Rank), "--alpha", strconv.Itoa(cfg.Rank))
	}
	if cfg.GPU {
		args = append(args, "--device", "cuda")
	}
	cmd := exec.CommandContext(ctx, python, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return nil, 0, fmt.Sprintf("failed (%v): %s", err, msg)
	}
	var rep struct {
		StepSeconds []float64 `json:"step_seconds"`
		Tokens      int       `json:"tokens"`
		TimedSteps  int       `json:"timed_steps"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.TimedSteps <= 0 || len(rep.StepSeconds) < cfg.Warmup+rep.TimedSteps {
		return nil, 0, fmt.Sprintf("unreadable report: %v", err)
	}
	// Both sides' fastest timed step: see BenchResult.BestTokensPerSecond.
	best := slices.Min(rep.StepSeconds[cfg.Warmup:])
	torch := float64(rep.Tokens/rep.TimedSteps) / best
	return json.RawMessage(bytes.TrimSpace(stdout.Bytes())), ours / torch, ""
}
