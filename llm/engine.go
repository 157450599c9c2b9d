package llm

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentrl/agentrl/cgo"
)

// EngineOptions configure an inference engine. Zero values take the
// defaults noted.
type EngineOptions struct {
	// Parallel is the number of sequences decoded together (default 32).
	Parallel int
	// Context is the context length of each sequence in tokens (default the
	// model's training context, at most 2048).
	Context int
	// Batch is the most tokens one llama_decode call takes (default 2048);
	// UBatch is llama.cpp's physical micro-batch (default 512).
	Batch, UBatch int
	// Threads used by llama.cpp (default one per core).
	Threads int
	// FlashAttn selects flash attention: off (default), on or auto. Off
	// keeps log-probabilities the same, to float precision, whatever the
	// batch's shape (a prompt evaluated whole, or continued from cached
	// cells); llama.cpp's flash attention on the CPU does not.
	FlashAttn FlashAttn
	// SharedKV puts all sequences in one KV buffer instead of a stream
	// each. The n samples of a prompt then share its cells without a copy,
	// but every sequence attends over the span of all used cells, which
	// measured 1.3-1.9x slower at 32-64 sequences (docs/results/inference.md).
	// The prefix cache needs a stream per sequence: with SharedKV nothing is
	// kept between calls.
	SharedKV bool
	// CacheMiB is the KV cache's memory budget. It holds CacheMiB / (Context
	// x KV bytes per token) streams of Context tokens: Parallel of them
	// decode, the others keep conversations and shared prefixes between
	// calls (the prefix cache, see Session). 0 (the default) makes Streams
	// streams.
	CacheMiB int
	// Streams is the number of KV streams where CacheMiB is 0: at least
	// Parallel (0: Parallel), at most llama.cpp's limit on sequences. A
	// caller that comes back to more prompts than Parallel (a critic's
	// roles over a batch of transitions) keeps them all cached with one
	// stream each.
	Streams int
	// NoPrefixCache evaluates every prompt whole, as if nothing were cached
	// (for comparisons; results are the same either way).
	NoPrefixCache bool
}

// checkKVMemory refuses a KV cache larger than the memory that would
// hold it, before llama.cpp allocates it: past it the allocation fails
// inside llama.cpp, or the kernel kills the process while llama.cpp
// clears the cache. The cache lives in GPU memory when a GPU is present
// and layers are offloaded, else in the machine's memory; it may take at
// most nine tenths of it, the rest left to the weights and everything
// else.
func (m *Model) checkKVMemory(o EngineOptions) error {
	kv, streams := m.info.KVBytesPerToken(), o.streams(m.info)
	need := uint64(streams) * uint64(o.Context) * uint64(kv)
	var gpu, host uint64
	for _, d := range cgo.Devices() {
		switch d.Type {
		case "gpu", "igpu":
			gpu += d.MemoryFree
		case "cpu":
			host = d.MemoryTotal
		}
	}
	where, have := "the machine's memory", host
	if m.offloaded && gpu > 0 {
		where, have = "free GPU memory", gpu
	}
	if have == 0 || need <= have/10*9 {
		return nil
	}
	lower := "the parallel sequences or the context"
	if o.Streams > o.Parallel {
		lower = "the KV streams kept, the parallel sequences or the context"
	}
	if o.CacheMiB > 0 {
		lower = fmt.Sprintf("the KV cache budget (%d MiB), the parallel sequences or the context", o.CacheMiB)
	}
	seqs := fmt.Sprintf("%d sequences", streams)
	if streams == 1 {
		seqs = "1 sequence"
	}
	return fmt.Errorf("the KV cache of %s of %d tokens needs %.1f GiB (%d KiB per token), more than %s allows (%.1f GiB): lower %s",
		seqs, o.Context, float64(need)/(1<<30), kv>>10, where, float64(have)/(1<<30), lower)
}

// KVBytesPerToken is the size of one token's keys and values in the KV
// cache (F16, every layer), from the model's shape; 0 for a model that
// keeps none (a recurrent one).
func (info Info) KVBytesPerToken() int64 {
	key, value := int64(info.KeyLength), int64(info.ValueLength)
	if key == 0 {
		key = int64(info.Embedding / max(info.Heads, 1))
	}
	if value == 0 {
		value = int64(info.Embedding / max(info.Heads, 1))
	}
	return int64(info.Layers) * int64(info.HeadsKV) * (key + value) * 2
}

// streams is the number of KV streams (llama.cpp sequence ids): those the
// cache budget holds, or Streams; with SharedKV it is Parallel.
func (o EngineOptions) streams(info Info) int {
	switch {
	case o.SharedKV:
		return o.Parallel
	case o.CacheMiB == 0:
		return min(max(o.Streams, o.Parallel), cgo.MaxParallelSequences())
	case info.KVBytesPerToken() == 0:
		return 0 // no KV cache for a budget to hold (validate says so)
	}
	return int(int64(o.CacheMiB) << 20 / (int64(o.Context) * info.KVBytesPerToken()))
}

// FlashAttn selects llama.cpp's flash attention.
type FlashAttn string

const (
	FlashAttnAuto FlashAttn = "auto" // llama.cpp decides per device
	FlashAttnOn   FlashAttn = "on"
	FlashAttnOff  FlashAttn = "off"
)

// mode is the cgo value of f, which validate has checked.
func (f FlashAttn) mode() cgo.FlashAttn {
	switch f {
	case FlashAttnOn:
		return cgo.FlashAttnEnabled
	case FlashAttnOff:
		return cgo.FlashAttnDisabled
	}
	return cgo.FlashAttnAuto
}

func (o EngineOptions) withDefaults(info Info) EngineOptions {
	if o.FlashAttn == "" {
		o.FlashAttn = FlashAttnOff
	}
	if o.Parallel <= 0 {
		o.Parallel = 32
	}
	if o.Context <= 0 {
		o.Context = min(max(info.ContextTrain, 256), 2048)
	}
	if o.Batch <= 0 {
		o.Batch = 2048
	}
	if o.UBatch <= 0 {
		o.UBatch = min(512, o.Batch)
	}
	if o.Threads <= 0 {
		o.Threads = DefaultThreads()
	}
	return o
}

// MaxSamples bounds the completions of one prompt in one call: each holds
// its tokens and log-probabilities until the call returns.
const MaxSamples = 1 << 16

// MaxThreads bounds the threads of the engine and the trainer: ggml's
// own limit (GGML_MAX_N_THREADS), past which a graph's compute aborts, and
// where a thread pool of that size is started for every graph.
const MaxThreads = 512

// MaxContext bounds the tokens of one sequence's context: llama.cpp holds
// it in 32 bits, and the KV cache's size in bytes must not overflow.
const MaxContext = 1 << 24

func (o EngineOptions) validate(info Info) error {
	if o.Threads > MaxThreads {
		return fmt.Errorf("threads %d: at most %d", o.Threads, MaxThreads)
	}
	if o.Context > MaxContext {
		return fmt.Errorf("context %d tokens: at most %d", o.Context, MaxContext)
	}
	streams := o.streams(info)
	switch {
	case o.CacheMiB > 0 && info.KVBytesPerToken() == 0:
		return fmt.Errorf("a KV cache budget (%d MiB) needs a model with a KV cache; %s keeps none (%d KV heads)", o.CacheMiB, info.Architecture, info.HeadsKV)
	case o.FlashAttn != FlashAttnAuto && o.FlashAttn != FlashAttnOn && o.FlashAttn != FlashAttnOff:
		return fmt.Errorf("flash attention %q: want auto, on or off", o.FlashAttn)
	case o.CacheMiB < 0:
		return fmt.Errorf("KV cache budget %d MiB must not be negative", o.CacheMiB)
	case o.Streams < 0:
		return fmt.Errorf("KV streams %d must not be negative", o.Streams)
	case o.Parallel > cgo.MaxParallelSequences():
		return fmt.Errorf("parallel sequences %d exceed llama.cpp's limit of %d", o.Parallel, cgo.MaxParallelSequences())
	case streams < 1:
		return fmt.Errorf("KV cache budget of %d MiB is too small for one sequence of %d tokens (%d KiB per token)", o.CacheMiB, o.Context, info.KVBytesPerToken()>>10)
	case streams < o.Parallel:
		return fmt.Errorf("KV cache budget of %d MiB holds %d sequences of %d tokens, fewer than the %d parallel ones", o.CacheMiB, streams, o.Context, o.Parallel)
	case streams > cgo.MaxParallelSequences():
		return fmt.Errorf("KV cache budget of %d MiB makes %d streams of %d tokens, more than llama.cpp's limit of %d sequences: lower it or raise the context", o.CacheMiB, streams, o.Context, cgo.MaxParallelSequences())
	case o.Context < 8:
		return fmt.Errorf("context %d must be at least 8 tokens", o.Context)
	case o.Batch < o.Parallel:
		return fmt.Errorf("batch %d must be at least the number of parallel sequences (%d)", o.Batch, o.Parallel)
	case o.UBatch > o.Batch:
		return fmt.Errorf("micro-batch %d must not exceed the batch %d", o.UBatch, o.Batch)
	}
	return nil
}

func contextParams(o EngineOptions, info Info) cgo.ContextParams {
	streams := o.streams(info)
	return cgo.ContextParams{
		NCtx: o.Context * streams, NBatch: o.Batch, NUBatch: o.UBatch,
		NSeqMax: streams, Threads: o.Threads, ThreadsBatch: o.Threads,
		FlashAttn: o.FlashAttn.mode(), KVUnified: o.SharedKV,
	}
}

// Engine runs batched inference on one llama.cpp context. The context is
// owned by a single goroutine; callers submit work through Generate and
// Score, and work from concurrent callers is merged into shared batches
// (continuous batching: a finished sequence frees its slot for the next
// waiting one).
type Engine struct {
	model *Model
	ctx   *cgo.Context
	opts  EngineOptions
	jobs  chan *job
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once
	stats engineStats
}

// NewEngine creates an inference engine on the model.
func (m *Model) NewEngine(opts EngineOptions) (*Engine, error) {
	opts = opts.withDefaults(m.info)
	if err := opts.validate(m.info); err != nil {
		return nil, err
	}
	if err := m.checkKVMemory(opts); err != nil {
		return nil, err
	}
	c, err := cgo.NewContext(m.c, contextParams(opts, m.info))
	if err != nil {
		return nil, fmt.Errorf("engine for %s: %w", m.info.Path, err)
	}
	e := &Engine{model: m, ctx: c, opts: opts,
		jobs: make(chan *job, 64), quit: make(chan struct{}), done: make(chan struct{})}
	go e.loop()
	return e, nil
}

// Options returns the engine's effective options.
func (e *Engine) Options() EngineOptions { return e.opts }

// Model returns the engine's model.
func (e *Engine) Model() *Model { return e.model }

// Close stops the engine, failing work still queued, and frees the context.
func (e *Engine) Close() {
	e.once.Do(func() {
		close(e.quit)
		e.ctx.RequestAbort()
		<-e.done
		e.ctx.Free()
	})
}

// ErrClosed is returned for work submitted to or pending in a closed engine.
var ErrClosed = errors.New("inference engine closed")

// GenerateRequest is one prompt to complete.
type GenerateRequest struct {
	// Prompt is text, tokenised with the model's BOS and with special-token
	// text (e.g. a chat template's markers) parsed. Tokens, when set, is
	// used instead.
	Prompt string
	Tokens []int32
	// N is the number of completions to sample (default 1); they share one
	// evaluation of the prompt.
	N int
	// Session, when set, is the conversation the prompt continues: the
	// engine keeps its KV cells for it between calls (see Session).
	Session *Session
	// Stream selects the request's random stream: requests with the same
	// prompt, seed and stream sample the same completions, while distinct
	// streams sample independently (the G episodes of one task in a group
	// rollout). 0 is the default stream.
	Stream uint64
}

// Completion is one sampled continuation.
type Completion struct {
	Prompt int    `json:"prompt"` // index of the request
	Sample int    `json:"sample"` // index among the request's N samples
	Text   string `json:"text"`
	// Tokens are the sampled ids, including an end-of-generation token or
	// the tokens of a stop string, which Text leaves out.
	Tokens []int32 `json:"tokens"`
	// LogProbs[i] is log p(Tokens[i]) under the model's raw distribution
	// (temperature 1, before top-k/top-p/min-p), as Score computes it.
	LogProbs     []float32 `json:"logprobs"`
	FinishReason string    `json:"finish_reason"` // eos, stop, length or context
	PromptTokens int       `json:"prompt_tokens"`
	// EvaluatedTokens are the prompt tokens this sample's sequence computed;
	// the rest came from the prefix cache or from another sample of the
	// same prompt. Summed over a request's completions it is what the
	// request cost in prompt evaluation.
	EvaluatedTokens int `json:"evaluated_tokens"`
}

// Finish reasons.
const (
	FinishEOS     = "eos"
	FinishStop    = "stop"
	FinishLength  = "length"
	FinishContext = "context" // the sequence filled its context
)

// AdapterScale is a LoRA adapter applied with a scale.
type AdapterScale struct {
	Adapter *Adapter
	Scale   float32
}

// CallOptions apply to one Generate or Score call.
type CallOptions struct {
	// Adapters active for this call; none runs the base model. Calls with
	// different adapter sets are served one set at a time.
	Adapters []AdapterScale
}

// validate checks what llama.cpp would take unchecked: a NaN or infinite
// scale makes every logit NaN.
func (o CallOptions) validate() error {
	for i, a := range o.Adapters {
		if a.Adapter == nil {
			return fmt.Errorf("adapter %d: none given", i)
		}
		if f := float64(a.Scale); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("adapter %d: scale %v is not a finite number", i, a.Scale)
		}
	}
	return nil
}

// Generate samples completions for every request, all decoded together.
// The result holds, per request, its N completions in sample order.
func (e *Engine) Generate(ctx context.Context, reqs []GenerateRequest, s Sampling, opts CallOptions) ([][]Completion, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	seed := uint64(s.Seed)
	if s.Seed < 0 {
		var b [8]byte
		_, _ = crand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	j := e.newJob(ctx, opts)
	results := make([][]Completion, len(reqs))
	for i, r := range reqs {
		if err := e.checkSession(r.Session); err != nil {
			return nil, fmt.Errorf("prompt %d: %w", i, err)
		}
		tokens, err := e.promptTokens(r.Prompt, r.Tokens)
		if err != nil {
			return nil, fmt.Errorf("prompt %d: %w", i, err)
		}
		if len(tokens) >= e.opts.Context {
			return nil, fmt.Errorf("prompt %d: %d tokens do not fit the context of %d tokens per sequence (leave room to generate)", i, len(tokens), e.opts.Context)
		}
		n := r.N
		if n <= 0 {
			n = 1
		}
		if n > MaxSamples {
			return nil, fmt.Errorf("prompt %d: %d samples, at most %d a prompt", i, n, MaxSamples)
		}
		results[i] = make([]Completion, n)
		var leader *sequence
		for k := 0; k < n; k++ {
			sq := &sequence{job: j, tokens: tokens, sampler: newSampler(s, seed+r.Stream*streamStride, k),
				completion: &results[i][k], maxTokens: s.MaxTokens, stops: s.Stop, ignoreEOS: s.IgnoreEOS}
			sq.completion.Prompt, sq.completion.Sample, sq.completion.PromptTokens = i, k, len(tokens)
			if leader == nil {
				leader, sq.session = sq, r.Session
				j.seqs = append(j.seqs, sq)
			} else {
				leader.followers = append(leader.followers, sq)
			}
			j.remaining++
		}
	}
	if err := e.run(ctx, j); err != nil {
		return nil, err
	}
	return results, nil
}

// ScoreRequest is a continuation whose log-probability is wanted.
type ScoreRequest struct {
	// Prompt (with BOS, special-token text parsed) and Continuation (plain
	// text, no BOS) are tokenised separately; PromptTokens and
	// ContinuationTokens, when set, are used instead.
	Prompt             string
	Continuation       string
	PromptTokens       []int32
	ContinuationTokens []int32
	// Session, when set, is the conversation the prompt belongs to.
	Session *Session
}

// ScoreResult holds the log-probability of each continuation token.
type ScoreResult struct {
	Tokens   []int32   `json:"tokens"`
	LogProbs []float32 `json:"logprobs"`
	// Sum is the log-probability of the whole continuation.
	Sum float64 `json:"sum"`
}

// Score computes log p(continuation token | prompt, earlier tokens) for
// every request, batched.
func (e *Engine) Score(ctx context.Context, reqs []ScoreRequest, opts CallOptions) ([]ScoreResult, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	j := e.newJob(ctx, opts)
	results := make([]ScoreResult, len(reqs))
	for i, r := range reqs {
		if err := e.checkSession(r.Session); err != nil {
			return nil, fmt.Errorf("score %d: %w", i, err)
		}
		prompt, err := e.promptTokens(r.Prompt, r.PromptTokens)
		if err != nil {
			return nil, fmt.Errorf("score %d: %w", i, err)
		}
		cont := r.ContinuationTokens
		if cont == nil {
			if cont, err = e.model.Tokenize(r.Continuation, false, false); err != nil {
				return nil, fmt.Errorf("score %d: %w", i, err)
			}
		}
		if err := e.checkTokens(cont); err != nil {
			return nil, fmt.Errorf("score %d: continuation: %w", i, err)
		}
		if len(cont) == 0 {
			return nil, fmt.Errorf("score %d: empty continuation", i)
		}
		if n := len(prompt) + len(cont); n > e.opts.Context {
			return nil, fmt.Errorf("score %d: %d tokens do not fit the context of %d tokens per sequence", i, n, e.opts.Context)
		}
		all := make([]int32, 0, len(prompt)+len(cont))
		all = append(append(all, prompt...), cont...)
		results[i] = ScoreResult{Tokens: cont, LogProbs: make([]float32, len(cont))}
		j.seqs = append(j.seqs, &sequence{job: j, tokens: all, scoreFrom: len(prompt), score: &results[i], session: r.Session})
		j.remaining++
	}
	if err := e.run(ctx, j); err != nil {
		return nil, err
	}
	for i := range results {
		for _, lp := range results[i].LogProbs {
			results[i].Sum += float64(lp)
		}
	}
	return results, nil
}

func (e *Engine) promptTokens(text string, tokens []int32) ([]int32, error) {
	if tokens == nil {
		var err error
		if tokens, err = e.model.Tokenize(text, true, true); err != nil {
			return nil, err
		}
	}
	if len(tokens) == 0 {
		return nil, errors.New("empty prompt")
	}
	return tokens, e.checkTokens(tokens)
}

func (e *Engine) checkTokens(tokens []int32) error {
	n := int32(e.model.info.VocabSize)
	for i, t := range tokens {
		if t < 0 || t >= n {
			return fmt.Errorf("token %d at position %d outside the vocabulary of %d", t, i, n)
		}
	}
	return nil
}

func (e *Engine) newJob(ctx context.Context, opts CallOptions) *job {
	return &job{ctx: ctx, adapters: opts.Adapters, done: make(chan struct{})}
}

// run hands a job to the engine goroutine and waits for it.
func (e *Engine) run(ctx context.Context, j *job) error {
	for _, a := range j.adapters {
		if a.Adapter == nil || a.Adapter.model != e.model {
			return errors.New("adapter not loaded for this engine's model")
		}
	}
	if j.remaining == 0 && j.control == nil {
		return nil
	}
	select {
	case e.jobs <- j:
	case <-ctx.Done():
		return ctx.Err()
	case <-e.quit:
		return ErrClosed
	}
	select {
	case <-j.done:
		return j.err
	case <-ctx.Done():
		// The engine notices the cancellation between decodes and drops
		// the job's sequences.
		return ctx.Err()
	}
}

// Stats are cumulative counters of an engine's work.
type Stats struct {
	Decodes int64 `json:"decodes"`
	// PromptTokens were evaluated; CachedTokens were prompt tokens whose
	// KV cells came from the prefix cache instead.
	PromptTokens    int64 `json:"prompt_tokens"`
	CachedTokens    int64 `json:"cached_tokens"`
	GeneratedTokens int64 `json:"generated_tokens"`
	// StreamCopies counts copies of a KV stream into another (a shared
	// prefix handed to a second sequence).
	StreamCopies     int64         `json:"stream_copies"`
	DecodeTime       time.Duration `json:"decode_ns"`
	BusyTime         time.Duration `json:"busy_ns"` // wall time with work in flight
	OrchestrationPct float64       `json:"orchestration_pct"`
}

type engineStats struct {
	decodes, promptTokens, cachedTokens, generatedTokens, streamCopies, decodeNS, busyNS atomic.Int64
}

// Stats returns the engine's counters; OrchestrationPct is the share of
// busy time spent outside llama_decode (batching, sampling, bookkeeping).
func (e *Engine) Stats() Stats {
	s := Stats{
		Decodes: e.stats.decodes.Load(), PromptTokens: e.stats.promptTokens.Load(),
		CachedTokens: e.stats.cachedTokens.Load(), GeneratedTokens: e.stats.generatedTokens.Load(),
		StreamCopies: e.stats.streamCopies.Load(),
		DecodeTime:   time.Duration(e.stats.decodeNS.Load()), BusyTime: time.Duration(e.stats.busyNS.Load()),
	}
	if s.BusyTime > 0 {
		s.OrchestrationPct = 100 * float64(s.BusyTime-s.DecodeTime) / float64(s.BusyTime)
	}
	return s
}

// ResetStats zeroes the counters.
func (e *Engine) ResetStats() {
	for _, c := range []*atomic.Int64{&e.stats.decodes, &e.stats.promptTokens, &e.stats.cachedTokens, &e.stats.generatedTokens,
		&e.stats.streamCopies, &e.stats.decodeNS, &e.stats.busyNS} {
		c.Store(0)
	}
}
