package train

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentrl/agentrl/cgo"
)

// BenchConfig describes a training-speed measurement: Steps optimiser steps
// on one batch of Batch sequences of SeqLen+1 tokens (SeqLen predicted
// tokens each), the first Warmup of them untimed.
type BenchConfig struct {
	Full    bool
	Rank    int // LoRA rank (default DefaultLoRARank); alpha = rank
	Batch   int
	SeqLen  int
	Steps   int
	Warmup  int
	Threads int
	GPU     bool
	LR      float64 // default 1e-4
	// Tokens, when set, are the batch (Batch sequences of SeqLen+1 ids);
	// else ids are drawn uniformly with Seed.
	Tokens [][]int32
	Seed   uint64
	// Checkpointing is Config.Checkpointing: "on" measures the cost of
	// recomputing the activations.
	Checkpointing string
	// InitialAdapter, when set, is where the fresh LoRA adapter is saved
	// before the first step, so that a reference implementation can start
	// from the same A matrices.
	InitialAdapter string
	// ProfileSteps more steps, after the timed ones, run one graph node at
	// a time to measure where a step's time goes (BenchResult.Profile).
	ProfileSteps int
}

// BenchResult is the measurement.
type BenchResult struct {
	Mode            string    `json:"mode"`
	Batch           int       `json:"batch"`
	SeqLen          int       `json:"seq_len"`
	TimedSteps      int       `json:"timed_steps"`
	Losses          []float64 `json:"losses"` // before each step's update
	FinalLoss       float64   `json:"final_loss"`
	StepSeconds     []float64 `json:"step_seconds"`
	Seconds         float64   `json:"seconds"` // of the timed steps
	TokensPerSecond float64   `json:"tokens_per_second"`
	// BestTokensPerSecond is the speed of the fastest timed step: other
	// processes on the machine slow some steps down, hardly all.
	BestTokensPerSecond float64 `json:"best_tokens_per_second"`
	FLOPsPerToken       float64 `json:"flops_per_token"`
	GFLOPS              float64 `json:"gflops"` // at the best step's speed
	MatmulParameters    int64   `json:"matmul_parameters"`
	TrainableParameters int64   `json:"trainable_parameters"`
	ActivationBytes     int64   `json:"activation_bytes"`
	Backend             string  `json:"backend"`
	MatrixProducts      string  `json:"matrix_products"` // Trainer.MatrixProducts
	// Profile is where the time of the profiled steps went, the most
	// costly kinds of operation first, and last what ran outside the
	// graphs (loss, gradient read-back and the optimiser, on the host).
	Profile []OpShare `json:"profile,omitempty"`
}

// OpShare is the time of one kind of operation over the profiled steps.
type OpShare struct {
	Op      string  `json:"op"`
	Calls   int     `json:"calls"`
	Seconds float64 `json:"seconds"`
	Share   float64 `json:"share"` // of the profiled steps' wall time
}

// OutsideGraphs names, in a profile, the time spent outside graph compute.
const OutsideGraphs = "outside the graphs"

// FLOPsPerToken estimates the floating-point operations of one training
// token: 2N for the forward pass over the N weights of the matrix
// products (the output projection included), 2N for the gradient of the
// activations, and in full mode 2N more for the gradient of the weights;
// plus attention, whose products over a sequence of seqLen tokens cost
// 4 seqLen qDim per layer forward and twice that backward for the whole
// seqLen x seqLen square, times the share of it computed (queryBlocks).
func (t *Trainer) FLOPsPerToken(seqLen int) float64 {
	n := float64(t.matmulParameters())
	perN := 4.0
	if t.cfg.Full {
		perN = 6
	}
	attn := 12 * float64(t.h.Layers) * float64(seqLen) * float64(t.h.qDim()) * t.attentionShare(seqLen)
	return perN*n + attn
}

// attentionShare is the share of the score square a training graph
// computes for a row of seqLen slots.
func (t *Trainer) attentionShare(seqLen int) float64 {
	T := roundSlots(seqLen)
	blocks := t.net.trainingBlocks(T)
	if blocks == nil {
		return 1
	}
	computed := 0
	for _, b := range blocks {
		computed += b.keys() * b.n
	}
	return float64(computed) / float64(T*T)
}

func (t *Trainer) matmulParameters() int64 {
	h := t.h
	perLayer := int64(h.Embd)*int64(2*h.qDim()+2*h.kvDim()) + 3*int64(h.Embd)*int64(h.FF)
	return int64(h.Layers)*perLayer + int64(h.Vocab)*int64(h.Embd)
}

// Bench measures the training speed of the model at path; it stops early
// when ctx is cancelled.
func Bench(ctx context.Context, path string, c BenchConfig) (BenchResult, error) {
	if c.Rank == 0 {
		c.Rank = DefaultLoRARank
	}
	if c.LR == 0 {
		c.LR = 1e-4
	}
	if c.Batch <= 0 || c.SeqLen <= 0 || c.Steps <= c.Warmup || c.Warmup < 0 {
		return BenchResult{}, fmt.Errorf("bench: batch %d, sequence length %d, steps %d and warm-up %d", c.Batch, c.SeqLen, c.Steps, c.Warmup)
	}
	// As the PyTorch reference: alpha = rank, constant rate, no clipping,
	// each sequence in its own row.
	tr, err := New(path, Config{Full: c.Full, LoRA: LoRAConfig{Rank: c.Rank, Alpha: float32(c.Rank)},
		Optimizer: AdamW{LR: c.LR, ClipNorm: -1}, Schedule: Schedule{Decay: "constant"},
		Threads: c.Threads, GPU: c.GPU, RowTokens: c.SeqLen + 1, Context: c.SeqLen + 1, Seed: c.Seed, Checkpointing: c.Checkpointing})
	if err != nil {
		return BenchResult{}, err
	}
	defer tr.Close()
	if c.InitialAdapter != "" && !c.Full {
		if err := tr.SaveAdapter(c.InitialAdapter); err != nil {
			return BenchResult{}, fmt.Errorf("bench: initial adapter: %w", err)
		}
	}
	seqs := make([]Sequence, c.Batch)
	rng := rand.New(rand.NewPCG(c.Seed, 7))
	for i := range seqs {
		if c.Tokens != nil {
			if len(c.Tokens) != c.Batch || len(c.Tokens[i]) != c.SeqLen+1 {
				return BenchResult{}, fmt.Errorf("bench: want %d token sequences of %d", c.Batch, c.SeqLen+1)
			}
			seqs[i].Tokens = c.Tokens[i]
			continue
		}
		seqs[i].Tokens = make([]int32, c.SeqLen+1)
		for k := range seqs[i].Tokens {
			seqs[i].Tokens[k] = int32(rng.IntN(tr.h.Vocab))
		}
	}
	res := BenchResult{Mode: "lora", Batch: c.Batch, SeqLen: c.SeqLen, TimedSteps: c.Steps - c.Warmup,
		MatmulParameters: tr.matmulParameters(), TrainableParameters: tr.Parameters(),
		FLOPsPerToken: tr.FLOPsPerToken(c.SeqLen), Backend: tr.Backend(), MatrixProducts: tr.MatrixProducts()}
	if c.Full {
		res.Mode = "full"
	}
	var timed time.Duration
	best := time.Duration(1 << 62)
	for s := range c.Steps {
		start := time.Now()
		r, err := benchStep(ctx, tr, seqs)
		if err != nil {
			return res, err
		}
		d := time.Since(start)
		res.StepSeconds = append(res.StepSeconds, d.Seconds())
		if s >= c.Warmup {
			timed += d
			best = min(best, d)
		}
		res.Losses = append(res.Losses, r.Loss)
	}
	if c.ProfileSteps > 0 {
		if res.Profile, err = profileSteps(ctx, tr, seqs, c.ProfileSteps); err != nil {
			return res, err
		}
	}
	lp, err := tr.LogProbs(seqs)
	if err != nil {
		return res, err
	}
	n := 0
	for i := range seqs {
		for _, v := range lp[i][1:] {
			res.FinalLoss -= float64(v)
			n++
		}
	}
	res.FinalLoss /= float64(n)
	res.Seconds = timed.Seconds()
	res.TokensPerSecond = float64(c.Batch*c.SeqLen*res.TimedSteps) / res.Seconds
	res.BestTokensPerSecond = float64(c.Batch*c.SeqLen) / best.Seconds()
	res.GFLOPS = res.BestTokensPerSecond * res.FLOPsPerToken / 1e9
	res.ActivationBytes = tr.ActivationBytes()
	return res, nil
}

// benchStep is one step of the benchmark: the cross-entropy of the whole
// batch, then the optimiser's update.
func benchStep(ctx context.Context, tr *Trainer, seqs []Sequence) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	r, err := tr.Accumulate(seqs, CrossEntropy{})
	if err != nil {
		return r, err
	}
	_, err = tr.Step()
	return r, err
}

// profileSteps takes n training steps with the nodes of their graphs timed
// one by one, and returns where the time went.
func profileSteps(ctx context.Context, tr *Trainer, seqs []Sequence, n int) ([]OpShare, error) {
	times := cgo.OpTimes{}
	tr.timeOps(times)
	defer tr.timeOps(nil)
	start := time.Now()
	for range n {
		if _, err := benchStep(ctx, tr, seqs); err != nil {
			return nil, err
		}
	}
	wall := time.Since(start).Seconds()
	var shares []OpShare
	inGraphs := 0.0
	for op, t := range times {
		shares = append(shares, OpShare{Op: op, Calls: t.Calls, Seconds: t.Seconds, Share: t.Seconds / wall})
		inGraphs += t.Seconds
	}
	slices.SortFunc(shares, func(a, b OpShare) int { return cmp.Compare(b.Seconds, a.Seconds) })
	outside := max(wall-inGraphs, 0)
	return append(shares, OpShare{Op: OutsideGraphs, Calls: n, Seconds: outside, Share: outside / wall}), nil
}

// CPUPeak is the FP32 peak of this machine's CPUs and how it was derived.
type CPUPeak struct {
	Model          string  `json:"model"`
	Cores          int     `json:"cores"`
	ClockGHz       float64 `json:"clock_ghz"`
	VectorBits     int     `json:"vector_bits"` // width of one FMA unit
	FMAUnits       int     `json:"fma_units"`
	FLOPsPerCycle  int     `json:"flops_per_cycle_per_core"`
	GFLOPS         float64 `json:"gflops"`
	Derivation     string  `json:"derivation"`
	ClockSource    string  `json:"clock_source"`
	InstructionSet string  `json:"instruction_set"`
}

// MeasureCPUPeak derives the FP32 peak from /proc/cpuinfo: cores x FMA
// units x lanes x 2 (multiply and add) x clock. AMD cores up to Zen 4
// execute AVX-512 on two 256-bit FMA units, so their lanes are 8 either
// way; Intel cores with AVX-512 are taken to have two 512-bit units. The
// clock is the "cpu MHz" the kernel reports (the nominal clock on a
// virtual machine), not the turbo clock.
func MeasureCPUPeak() (CPUPeak, error) {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return CPUPeak{}, err
	}
	info := string(raw)
	field := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `\s*:\s*(.*)$`).FindStringSubmatch(info)
		if m == nil {
			return ""
		}
		return strings.TrimSpace(m[1])
	}
	p := CPUPeak{Model: field("model name"), Cores: runtime.NumCPU(), FMAUnits: 2, ClockSource: "/proc/cpuinfo cpu MHz"}
	mhz, err := strconv.ParseFloat(field("cpu MHz"), 64)
	if err != nil {
		return p, fmt.Errorf("cpu MHz: %w", err)
	}
	p.ClockGHz = mhz / 1000
	flags := " " + field("flags") + " "
	switch {
	case strings.Contains(flags, " avx512f ") && field("vendor_id") != "AuthenticAMD":
		p.VectorBits, p.InstructionSet = 512, "AVX-512 FMA"
	case strings.Contains(flags, " avx512f "):
		p.VectorBits, p.InstructionSet = 256, "AVX-512 FMA on 256-bit units (AMD)"
	case strings.Contains(flags, " fma ") && strings.Contains(flags, " avx2 "):
		p.VectorBits, p.InstructionSet = 256, "AVX2 FMA"
	default:
		p.VectorBits, p.FMAUnits, p.InstructionSet = 128, 1, "SSE (no FMA)"
	}
	lanes := p.VectorBits / 32
	p.FLOPsPerCycle = p.FMAUnits * lanes * 2
	p.GFLOPS = float64(p.Cores*p.FLOPsPerCycle) * p.ClockGHz
	p.Derivation = fmt.Sprintf("%d cores x %d FMA units x %d lanes x 2 FLOP x %.3f GHz", p.Cores, p.FMAUnits, lanes, p.ClockGHz)
	return p, nil
}
