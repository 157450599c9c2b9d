package train

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/gguf"
)

// DefaultLoRARank is the LoRA rank when none is given, for every command
// and run that trains an adapter: rank 16 is the rank at which one epoch
// of SFT on 48-64 WebShop demonstrations takes SmolLM2-135M from no task
// to half of the test tasks (docs/training.md), and the adapter's own work
// stays negligible next to the base model's.
const DefaultLoRARank = 16

// LoRAConfig configures the adapter trained in LoRA mode.
type LoRAConfig struct {
	Rank  int     `json:"rank"`  // default DefaultLoRARank
	Alpha float32 `json:"alpha"` // scale numerator: W x + (Alpha/Rank) B A x; default 2*Rank
	// Dropout on the input of the LoRA matrices (not of the frozen ones),
	// one mask per input, shared by the matrices that read it (q, k and
	// v; gate and up).
	Dropout float32 `json:"dropout"`
	// Targets are the adapted matrices: q, k, v, o, gate, up, down
	// (default all).
	Targets []string `json:"targets"`
}

// Config configures a Trainer. Zero values take the defaults noted.
type Config struct {
	// Full trains every weight in F32 instead of a LoRA adapter.
	Full bool `json:"full"`
	// Dequantize lets full-parameter training start from a quantised
	// model, from its weights dequantised to F32. Without it such a model
	// is refused: the result is an F32 model several times the size of
	// the input, trained from weights the quantisation already degraded.
	Dequantize bool `json:"dequantize"`
	// F16Base holds a quantised model's frozen matrices dequantised to
	// F16, so that LoRA training multiplies them with ggml's F16 matrix
	// kernels instead of its quantised dot products: about 1.4x faster on
	// the CPU (SmolLM2 Q4_1, two threads: 122-125 against 78-93 tokens/s)
	// for two bytes per weight. The log-probabilities then differ from
	// llama.cpp's on the quantised file (by up to 0.28 on SmolLM2 Q4_1,
	// which quantises activations too), as a PyTorch trainer's on the
	// dequantised weights do: fine for supervised fine-tuning, not for
	// losses that compare with the sampler's log-probabilities (PPO, GRPO).
	F16Base   bool       `json:"f16_base"`
	LoRA      LoRAConfig `json:"lora"`
	Optimizer AdamW      `json:"optimizer"`
	Schedule  Schedule   `json:"schedule"`
	// Seed drives the LoRA initialisation and the dropout masks.
	Seed uint64 `json:"seed"`
	// Adapter names the LoRA adapter New creates (default
	// DefaultAdapter); AddAdapter adds more on the same base weights.
	Adapter string `json:"adapter"`
	// Context is the longest sequence accepted (default the model's
	// training context).
	Context int `json:"context"`
	// RowTokens is the length of the rows sequences are packed into, at
	// least the longest sequence of a micro-batch (default 0: exactly
	// that). Attention work and memory grow with the row length, over
	// pairs the mask hides too, while shorter rows leave more padding; on
	// chats of a few hundred tokens rows of the longest one train about
	// 1.4x faster in two thirds of the memory of rows of 1,024. A row of
	// sequences sharing a prefix may grow to twice the length (see
	// SharedSlots).
	RowTokens int `json:"row_tokens"`
	// Threads used by the CPU backend (default one per core).
	Threads int `json:"threads"`
	// GPU trains on the first GPU when a GPU backend is loaded.
	GPU bool `json:"gpu"`
	// NoBLAS keeps the CPU's matrix products on ggml's kernels even when
	// a CBLAS library is installed (see cgo.BLAS; AGENTRL_BLAS=off does
	// the same for a whole process).
	NoBLAS bool `json:"no_blas"`
	// MemoryBudget bounds the activation memory of one micro-batch, in
	// bytes (0: no bound): a micro-batch that would need more is
	// computed with gradient checkpointing (Checkpointing "auto"), or
	// fails before allocating, asking for fewer tokens per micro-batch.
	MemoryBudget int64 `json:"memory_budget"`
	// Checkpointing is gradient checkpointing: the backward pass
	// recomputes each layer's activations from the layer's input instead
	// of keeping them from the forward pass, which holds one layer's
	// activations at a time (plus every layer's input) for one more
	// forward pass of compute. "auto" (default) uses it for a
	// micro-batch that would not fit MemoryBudget otherwise, "on" always,
	// "off" never.
	Checkpointing string `json:"checkpointing"`
	// F16KV rounds attention keys and values to F16 in the forward pass,
	// as llama.cpp's default KV cache stores them, so that the trainer's
	// log-probabilities equal the inference engine's to float precision
	// (with F32 keys and values they differ by up to about 1e-3 on F32
	// models, 1e-2 on Q8_0 ones). The backward pass treats the rounding
	// as the identity.
	F16KV bool `json:"f16_kv"`
}

func (c Config) withDefaults(h hparams) Config {
	if c.LoRA.Rank == 0 {
		c.LoRA.Rank = DefaultLoRARank
	}
	if c.LoRA.Alpha == 0 {
		c.LoRA.Alpha = 2 * float32(c.LoRA.Rank)
	}
	if c.LoRA.Targets == nil {
		c.LoRA.Targets = DefaultTargets
	}
	c.Optimizer = c.Optimizer.withDefaults()
	if c.Context == 0 {
		c.Context = h.CtxTrain
	}
	if c.Threads == 0 {
		c.Threads = runtime.NumCPU()
	}
	if c.Checkpointing == "" {
		c.Checkpointing = "auto"
	}
	return c
}

func (c Config) validate() error {
	if !c.Full {
		if c.LoRA.Rank <= 0 || c.LoRA.Rank > 4096 {
			return fmt.Errorf("LoRA rank %d out of range [1, 4096]", c.LoRA.Rank)
		}
		if !(c.LoRA.Alpha > 0) {
			return fmt.Errorf("LoRA alpha %g must be positive", c.LoRA.Alpha)
		}
		if !(c.LoRA.Dropout >= 0 && c.LoRA.Dropout < 1) {
			return fmt.Errorf("LoRA dropout %g must be in [0, 1)", c.LoRA.Dropout)
		}
		if len(c.LoRA.Targets) == 0 {
			return errors.New("no LoRA targets")
		}
		for _, t := range c.LoRA.Targets {
			if _, ok := loraTargets[t]; !ok {
				return fmt.Errorf("unknown LoRA target %q (want q, k, v, o, gate, up or down)", t)
			}
		}
	}
	if err := c.Optimizer.validate(); err != nil {
		return err
	}
	if err := c.Schedule.validate(); err != nil {
		return err
	}
	switch c.Checkpointing {
	case "auto", "on", "off":
	default:
		return fmt.Errorf("checkpointing %q: want auto, on or off", c.Checkpointing)
	}
	if c.Context < 2 || c.RowTokens < 0 || c.Threads < 0 || c.Threads > llm.MaxThreads {
		return fmt.Errorf("context %d must be at least 2, row tokens %d not negative and threads %d in [0, %d]", c.Context, c.RowTokens, c.Threads, llm.MaxThreads)
	}
	return nil
}

// Trainer trains a LoRA adapter (or every weight) of a GGUF model on a
// ggml backend. It must be used by one goroutine at a time.
type Trainer struct {
	cfg      Config
	path     string
	h        hparams
	metadata []gguf.KV // of the base model, for saving full models
	order    []string  // tensor names of the base model, in file order
	net      *network
	backend  *cgo.Backend
	alloc    *cgo.Allocator
	rng      *rand.Rand
	pcg      *rand.PCG
	step     int // optimiser steps taken
	// checkpointed counts the micro-batches computed with gradient
	// checkpointing because of the memory budget.
	checkpointed int
	accum        int // micro-batches accumulated since the last step
	// accumTargets sums their Result.Targets: Step divides the summed
	// gradients by it.
	accumTargets float64
	// adapters are the named LoRA adapters (none in full mode); the
	// network's parameters hold the active one's state.
	adapters map[string]*adapter
	active   string
	gradBuf  []float32 // a gradient read from the backend, to add
	peak     int64
	// opTimes, when set, collects the time of every graph node (timeOps).
	opTimes cgo.OpTimes
}

// New loads the model at path for training.
func New(path string, cfg Config) (*Trainer, error) {
	f, h, specs, err := openModel(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cfg = cfg.withDefaults(h)
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	if cfg.Context > h.CtxTrain {
		return nil, fmt.Errorf("trainer: context %d exceeds the model's training context %d", cfg.Context, h.CtxTrain)
	}
	if cfg.Full && cfg.F16Base {
		return nil, errors.New("trainer: F16 base weights apply to LoRA training; full-parameter training holds every weight in F32")
	}
	if cfg.Full && !cfg.Dequantize {
		for _, ti := range f.Tensors {
			if quantized(ti.Type) {
				return nil, fmt.Errorf("model %s: tensor %s is %s: full-parameter training needs F32, F16 or BF16 weights; train a LoRA adapter instead, or ask for the weights to be dequantised to F32 (--dequantize)", path, ti.Name, ti.Type)
			}
		}
	}
	backend, err := cgo.NewBackend(cfg.GPU, cfg.Threads)
	if err != nil {
		return nil, err
	}
	if !backend.CPU() {
		if cfg.Full && h.Vocab > gpuScatterRows {
			backend.Free()
			return nil, fmt.Errorf("model %s: full-parameter training on a GPU scatters the embedding gradient into at most %d rows, and the vocabulary has %d: train a LoRA adapter, or on the CPU", path, gpuScatterRows, h.Vocab)
		}
		for _, ti := range f.Tensors {
			if cpuOnlyWeightTypes[ti.Type] {
				backend.Free()
				return nil, fmt.Errorf("model %s: tensor %s is %s, which the trainer reads on the CPU only (ggml's GPU backends cannot gather or dequantise it): train without --gpu", path, ti.Name, ti.Type)
			}
		}
	}
	blasLib := ""
	if backend.CPU() && !cfg.NoBLAS {
		if blasLib, err = cgo.BLAS(); err != nil {
			backend.Free()
			return nil, fmt.Errorf("trainer: %w", err)
		}
	}
	net, err := buildNetwork(f, h, specs, backend, cfg, blasLib != "")
	if err != nil {
		backend.Free()
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	pcg := rand.NewPCG(cfg.Seed, 0x64726f70) // "drop"
	t := &Trainer{cfg: cfg, path: path, h: h, metadata: slices.Clone(f.Metadata), net: net, backend: backend,
		alloc: backend.NewAllocator(), pcg: pcg, rng: rand.New(pcg)}
	for _, ti := range f.Tensors {
		t.order = append(t.order, ti.Name)
	}
	if !cfg.Full {
		t.active = cmp.Or(cfg.Adapter, DefaultAdapter)
		n := len(net.params)
		t.adapters = map[string]*adapter{t.active: {
			value: make([][]float32, n), grad: make([][]float32, n), m: make([][]float32, n), v: make([][]float32, n),
		}}
		t.storeActive()
	}
	return t, nil
}

// Close frees the trainer's memory.
func (t *Trainer) Close() {
	if t.alloc != nil {
		t.alloc.Free()
		t.alloc = nil
	}
	if t.net != nil {
		t.net.free()
		t.net = nil
	}
	if t.backend != nil {
		t.backend.Free()
		t.backend = nil
	}
}

// Config is the trainer's configuration with defaults filled in.
func (t *Trainer) Config() Config { return t.cfg }

// ModelPath is the base model's file.
func (t *Trainer) ModelPath() string { return t.path }

// StepCount is the number of optimiser steps taken.
func (t *Trainer) StepCount() int { return t.step }

// Parameters is the number of trainable parameters.
func (t *Trainer) Parameters() int64 {
	n := int64(0)
	for _, p := range t.net.params {
		n += p.size()
	}
	return n
}

// ModelParameters is the number of weights of the base model.
func (t *Trainer) ModelParameters() int64 {
	h := t.h
	perLayer := int64(2*h.Embd) + int64(h.Embd)*int64(2*h.qDim()+2*h.kvDim()) + 3*int64(h.Embd)*int64(h.FF)
	n := int64(h.Vocab)*int64(h.Embd) + int64(h.Layers)*perLayer + int64(h.Embd)
	if t.net.output.w != t.net.embd.w {
		n += int64(h.Vocab) * int64(h.Embd)
	}
	return n
}

// ActivationBytes is the size of the graph allocator's buffer: the largest
// micro-batch's activations and temporaries so far.
func (t *Trainer) ActivationBytes() int64 { return t.peak }

// MatrixProducts names what computes the matrix products of training: the
// CBLAS library (cgo.BLAS) on the CPU when one is installed, else ggml.
func (t *Trainer) MatrixProducts() string {
	if t.net.blas {
		name, _ := cgo.BLAS()
		if k := cgo.BLASKernels(); k != "" {
			name += " (" + k + " kernels)"
		}
		return name
	}
	return "ggml"
}

// SpeedAdvice is what to install for faster training on this machine, or
// "": on the CPU without a CBLAS library (and without Config.NoBLAS), how
// to get one (cgo.BLASAdvice).
func (t *Trainer) SpeedAdvice() string {
	if !t.backend.CPU() || t.net.blas || t.cfg.NoBLAS {
		return ""
	}
	return cgo.BLASAdvice()
}

// Checkpointed is the number of micro-batches so far that were computed
// with gradient checkpointing to fit the memory budget (Config.Checkpointing
// "auto").
func (t *Trainer) Checkpointed() int { return t.checkpointed }

// Backend is the name of the compute backend, e.g. "CPU".
func (t *Trainer) Backend() string { return t.backend.Name() }

// LogProbs computes log p(Tokens[i] | Tokens[:i]) for every token of every
// sequence with a non-zero weight (every token but the first when Weights
// is nil), with the adapter applied; other entries are 0. No gradient is
// computed.
func (t *Trainer) LogProbs(seqs []Sequence) ([][]float32, error) {
	r, err := t.run(seqs, nil, false)
	if err != nil {
		return nil, err
	}
	return r.logp, nil
}

// BaseLogProbs is LogProbs of the base model, without the adapter: the
// reference of DPO and of KL penalties.
func (t *Trainer) BaseLogProbs(seqs []Sequence) ([][]float32, error) {
	if t.cfg.Full {
		return nil, errors.New("base log-probabilities: in full-parameter mode the base weights are the trained ones")
	}
	r, err := t.run(seqs, nil, true)
	if err != nil {
		return nil, err
	}
	return r.logp, nil
}

// Result is the outcome of one micro-batch.
type Result struct {
	Loss    float64            `json:"loss"`
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Targets is what the micro-batch weighs in its step: the number of
	// targets its loss averages over where the loss is Counted, else 1.
	Targets float64 `json:"targets"`
	// Tokens counts the tokens computed (a sequence sharing a prefix with
	// another of the micro-batch counts its tokens after it: see
	// SharedSlots);
	// Scored the tokens whose log-probability entered the loss.
	Tokens int `json:"tokens"`
	Scored int `json:"scored"`
	// LogProbs are the token log-probabilities the loss saw.
	LogProbs [][]float32 `json:"-"`
}

// Accumulate runs the forward and backward pass of a micro-batch and adds
// the loss's gradients, weighted by the micro-batch's targets (see
// Counted), to the accumulated ones; Step applies them.
func (t *Trainer) Accumulate(seqs []Sequence, loss Loss) (Result, error) {
	if loss == nil {
		return Result{}, errors.New("accumulate: no loss")
	}
	r, err := t.run(seqs, loss, false)
	if err != nil {
		return Result{}, err
	}
	t.accum++
	t.accumTargets += r.targets
	return Result{Loss: r.loss, Metrics: r.metrics, Targets: r.targets, Tokens: r.tokens, Scored: r.scored, LogProbs: r.logp}, nil
}

// StepResult describes an optimiser step.
type StepResult struct {
	Step     int     `json:"step"` // steps taken, this one included
	LR       float64 `json:"lr"`
	GradNorm float64 `json:"grad_norm"` // before clipping
}

// Step applies one AdamW update with the gradients accumulated since the
// last step and clears them. The gradient is their mean over the targets
// of all the micro-batches, each weighing its Result.Targets: for Counted
// losses, the gradient of the loss over every target of the step, as one
// micro-batch holding them all would give, however they were split.
func (t *Trainer) Step() (StepResult, error) {
	if t.accum == 0 {
		return StepResult{}, errors.New("step: no gradients accumulated")
	}
	params := t.net.params
	scale := 1 / t.accumTargets
	norm := gradNorm(params) * scale
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		t.ZeroGrad()
		return StepResult{}, fmt.Errorf("step %d: gradient norm is %g; the update was skipped", t.step+1, norm)
	}
	if c := t.cfg.Optimizer.ClipNorm; c > 0 && norm > c {
		scale *= c / norm
	}
	lr := t.cfg.Optimizer.LR * t.cfg.Schedule.Factor(t.step)
	t.step++
	adamStep(params, t.cfg.Optimizer, lr, scale, t.step)
	t.ZeroGrad()
	t.net.uploadParams()
	return StepResult{Step: t.step, LR: lr, GradNorm: norm}, nil
}

// ZeroGrad discards the accumulated gradients.
func (t *Trainer) ZeroGrad() {
	for _, p := range t.net.params {
		clear(p.grad)
	}
	t.accum = 0
	t.accumTargets = 0
}

// runResult is the outcome of one graph evaluation.
type runResult struct {
	logp           [][]float32
	loss           float64
	metrics        map[string]float64
	targets        float64 // see Result.Targets
	tokens, scored int
}

// run evaluates a micro-batch: forward only when loss is nil, else forward,
// loss in Go, and backward with the gradients added to the parameters'.
// base leaves the adapter out of a forward-only pass.
func (t *Trainer) run(seqs []Sequence, loss Loss, base bool) (*runResult, error) {
	train := loss != nil
	p, g, err := t.microBatchGraph(seqs, train, base)
	if err != nil {
		return nil, err
	}
	defer g.free()
	if err := t.alloc.Alloc(g.all); err != nil {
		return nil, fmt.Errorf("micro-batch of %d x %d tokens: %w", p.B, p.T, err)
	}
	t.peak = max(t.peak, t.alloc.Size())
	g.tokens.SetInt32(p.tokens, 0)
	g.pos.SetInt32(p.pos, 0)
	if g.blocks == nil {
		g.mask.SetFloat32(p.mask, 0)
	} else {
		for i, blk := range g.blocks {
			g.blockMasks[i].SetFloat32(p.blockMask(blk), 0)
		}
	}
	g.outIdx.SetInt32(p.out, 0)
	t.fillDropout(g.drops) // none unless training with dropout
	g.targets.SetInt32(p.target, 0)
	first := g.all
	if train {
		first = g.fwd
	}
	if err := t.compute(first); err != nil {
		return nil, err
	}
	M := len(p.out)
	zTarget, zMax, pMax := make([]float32, M), make([]float32, M), make([]float32, M)
	g.zTarget.Float32(zTarget, 0)
	g.zMax.Float32(zMax, 0)
	g.pMax.Float32(pMax, 0)
	res := &runResult{logp: make([][]float32, len(seqs)), tokens: p.tokensUsed, scored: M}
	for i, s := range seqs {
		res.logp[i] = make([]float32, len(s.Tokens))
	}
	for m := range p.out {
		lp := float64(zTarget[m]) - float64(zMax[m]) + math.Log(float64(pMax[m]))
		res.logp[p.outSeq[m]][p.outTok[m]] = float32(lp)
	}
	if !train {
		return res, nil
	}
	grad := make([][]float32, len(seqs))
	for i, s := range seqs {
		grad[i] = make([]float32, len(s.Tokens))
	}
	res.loss, res.metrics, err = loss.Eval(seqs, res.logp, grad)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(res.loss) || math.IsInf(res.loss, 0) {
		return nil, fmt.Errorf("loss is %g", res.loss)
	}
	if res.targets, err = targetsOf(loss, seqs); err != nil {
		return nil, err
	}
	// The loss's gradient is that of its mean over the micro-batch's
	// targets; times their number it is that of their sum, which Step
	// divides by the step's targets.
	coef := make([]float32, M)
	flat := make([]int32, M)
	for m := range p.out {
		coef[m] = grad[p.outSeq[m]][p.outTok[m]] * float32(res.targets)
		flat[m] = int32(m*t.h.Vocab) + p.target[m]
	}
	g.lossGrad.SetFloat32(coef, 0)
	g.targetFlat.SetInt32(flat, 0)
	if err := t.compute(g.bwd); err != nil {
		return nil, err
	}
	for _, prm := range g.order {
		if t.accum == 0 {
			// The gradients are zero after a step: read into them.
			g.grads[prm].Float32(prm.grad, 0)
			continue
		}
		t.gradBuf = slices.Grow(t.gradBuf[:0], len(prm.grad))[:len(prm.grad)]
		g.grads[prm].Float32(t.gradBuf, 0)
		for i, v := range t.gradBuf {
			prm.grad[i] += v
		}
	}
	return res, nil
}

// CheckMemory builds the training graph of the micro-batch seqs, as
// Accumulate would, and returns the error Accumulate would give for its
// memory (over the budget even with gradient checkpointing) without
// computing anything: a run can find a micro-batch that does not fit
// before it has trained for an hour.
func (t *Trainer) CheckMemory(seqs []Sequence) error {
	defer func(computed int) { t.checkpointed = computed }(t.checkpointed) // nothing was computed
	_, g, err := t.microBatchGraph(seqs, true, false)
	if err != nil {
		return err
	}
	g.free()
	return nil
}

// timeOps makes the trainer run its graphs one node at a time and add
// each node's time to times, until it is called with nil. The steps are
// slower while it does: it is for finding where their time goes.
func (t *Trainer) timeOps(times cgo.OpTimes) { t.opTimes = times }

func (t *Trainer) compute(g *cgo.Graph) error {
	if t.opTimes != nil {
		return t.backend.ComputeTimed(g, t.opTimes)
	}
	return t.backend.Compute(g)
}

// gpuScatterRows is the most rows ggml's CUDA get_rows_back writes: one
// block row of its launch grid per row, and a grid has at most 65535.
const gpuScatterRows = 65535

// microBatchGraph packs the micro-batch seqs and builds its graph for
// training (train) or log-probabilities, of the base alone (base) or
// with the adapter, within the memory budget.
func (t *Trainer) microBatchGraph(seqs []Sequence, train, base bool) (*packed, *graph, error) {
	p, err := pack(seqs, t.cfg.RowTokens, t.cfg.Context, t.h.Vocab)
	if err != nil {
		return nil, nil, err
	}
	if int64(len(p.out))*int64(t.h.Vocab) > math.MaxInt32 {
		// ggml indexes the logits with 32-bit integers.
		return nil, nil, fmt.Errorf("%d scored tokens x a vocabulary of %d exceed 2^31 logits: split the micro-batch", len(p.out), t.h.Vocab)
	}
	// Only the backward pass scatters; log-probabilities need no limit.
	if rows := p.B * p.T; train && !t.backend.CPU() && rows > gpuScatterRows {
		return nil, nil, fmt.Errorf("a micro-batch of %d token slots: on a GPU the trainer scatters the output gradient into at most %d; lower the tokens per micro-batch", rows, gpuScatterRows)
	}
	dropout := train && !t.cfg.Full && t.cfg.LoRA.Dropout > 0
	g, err := t.fittingGraph(p, graphMode{train: train, checkpoint: train && t.cfg.Checkpointing == "on", dropout: dropout, base: base})
	return p, g, err
}

// fittingGraph builds the graph of micro-batch p in the given mode and,
// when a memory budget is set, checks that its activations fit, switching
// to gradient checkpointing where that is allowed and makes them fit.
func (t *Trainer) fittingGraph(p *packed, mode graphMode) (*graph, error) {
	g, err := buildGraph(t.net, p.T, p.B, len(p.out), mode)
	budget := t.cfg.MemoryBudget
	if err != nil || budget <= 0 {
		return g, err
	}
	need := t.backend.MeasureGraph(g.all)
	if need <= budget {
		return g, nil
	}
	g.free()
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	msg := fmt.Sprintf("a micro-batch of %d x %d tokens needs %.1f MiB of activations, over the budget of %.1f MiB", p.B, p.T, mib(need), mib(budget))
	if !mode.train || mode.checkpoint || t.cfg.Checkpointing != "auto" {
		return nil, fmt.Errorf("%s: give fewer tokens per micro-batch (and accumulate more of them)", msg)
	}
	mode.checkpoint = true
	if g, err = buildGraph(t.net, p.T, p.B, len(p.out), mode); err != nil {
		return nil, err
	}
	if recomputed := t.backend.MeasureGraph(g.all); recomputed > budget {
		g.free()
		return nil, fmt.Errorf("%s, %.1f MiB with gradient checkpointing: give fewer tokens per micro-batch (and accumulate more of them)", msg, mib(recomputed))
	}
	t.checkpointed++
	return g, nil
}

// fillDropout draws the dropout masks: each element is 0 with probability
// p, else 1/(1-p), so the expected input is unchanged.
func (t *Trainer) fillDropout(masks []cgo.Tensor) {
	p := t.cfg.LoRA.Dropout
	keep := 1 / (1 - p)
	for _, m := range masks {
		values := make([]float32, m.Elements())
		for i := range values {
			if t.rng.Float32() >= p {
				values[i] = keep
			}
		}
		m.SetFloat32(values, 0)
	}
}
