package llm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/llm/gguf"
)

var testPrompts = []string{
	"You are in the kitchen. Action:",
	"search[red shoes]",
	"Is it an animal?",
	"12 + 30 = ",
	"The quick brown fox",
	"Observation: you see a cabinet 1 and a fridge 1.",
}

func TestTokenizerRoundTripRandomUTF8(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	ranges := [][2]rune{{0x20, 0x7e}, {0xa0, 0x2ff}, {0x400, 0x4ff}, {0x4e00, 0x4fff}, {0x1f300, 0x1f64f}, {0x09, 0x0a}}
	for trial := 0; trial < 300; trial++ {
		var b strings.Builder
		for n := rng.IntN(60); n > 0; n-- {
			r := ranges[rng.IntN(len(ranges))]
			b.WriteRune(r[0] + rune(rng.IntN(int(r[1]-r[0]+1))))
		}
		text := b.String()
		if !utf8.ValidString(text) {
			t.Fatalf("generator made invalid UTF-8")
		}
		tokens, err := testModel.Tokenize(text, false, false)
		if err != nil {
			t.Fatal(err)
		}
		back, err := testModel.Detokenize(tokens, false)
		if err != nil {
			t.Fatal(err)
		}
		if back != text {
			t.Fatalf("round trip changed %q into %q (tokens %v)", text, back, tokens)
		}
	}
}

func TestTokenizeSurvivesInvalidUTF8(t *testing.T) {
	// Sequences that decode above U+10FFFF abort llama.cpp's tokenizer.
	for _, text := range []string{"\xf5\x80\x80\x80", "a\xf4\x90\x80\x80b", "\xff\xfe", "ok\xc3"} {
		tokens, err := testModel.Tokenize(text, true, false)
		if err != nil || len(tokens) == 0 {
			t.Fatalf("tokenize %q: %v %v", text, tokens, err)
		}
	}
}

func TestSameSeedSameCompletionDifferentSeedsDiffer(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 4})
	s := Sampling{Temperature: 1, TopP: 1, Seed: 42, MaxTokens: 24, IgnoreEOS: true}
	a := generateOne(t, e, testPrompts[0], s)
	b := generateOne(t, e, testPrompts[0], s)
	if !slices.Equal(a.Tokens, b.Tokens) {
		t.Fatalf("seed 42 gave %v then %v", a.Tokens, b.Tokens)
	}
	s.Seed = 43
	c := generateOne(t, e, testPrompts[0], s)
	if slices.Equal(a.Tokens, c.Tokens) {
		t.Fatalf("seeds 42 and 43 gave the same %d tokens", len(a.Tokens))
	}
}

// checkSameOrNearTie accepts two greedy token sequences that are equal, or
// that first differ where the model's two choices are within tol of each
// other in log-probability (batched and single decoding may sum in another
// order, which can flip an exact near-tie of an untrained model).
func checkSameOrNearTie(t *testing.T, e *Engine, prompt string, got, want []int32) {
	t.Helper()
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	if i == len(got) && i == len(want) {
		return
	}
	if i == len(got) || i == len(want) {
		t.Fatalf("lengths differ: %d vs %d", len(got), len(want))
	}
	prefix, _ := testModel.Tokenize(prompt, true, true)
	prefix = append(prefix, want[:i]...)
	res, err := e.Score(context.Background(), []ScoreRequest{
		{PromptTokens: prefix, ContinuationTokens: []int32{got[i]}},
		{PromptTokens: prefix, ContinuationTokens: []int32{want[i]}},
	}, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(float64(res[0].LogProbs[0] - res[1].LogProbs[0])); d > 1e-4 {
		t.Fatalf("greedy outputs diverge at token %d (%d vs %d) with a log-prob gap of %g: not a near-tie", i, got[i], want[i], d)
	}
	t.Logf("outputs diverge at token %d at a near-tie (gap < 1e-4)", i)
}

func TestBatchedGenerationEqualsSingle(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 8})
	s := greedy(20)
	reqs := make([]GenerateRequest, len(testPrompts))
	for i, p := range testPrompts {
		reqs[i] = GenerateRequest{Prompt: p}
	}
	batched, err := e.Generate(context.Background(), reqs, s, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range testPrompts {
		single := generateOne(t, e, p, s)
		checkSameOrNearTie(t, e, p, batched[i][0].Tokens, single.Tokens)
		if batched[i][0].Prompt != i {
			t.Fatalf("completion %d reports prompt %d", i, batched[i][0].Prompt)
		}
	}
}

func TestSamplesSharingAPromptEqualSeparateRuns(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 8})
	prompt := testPrompts[5]
	// Greedy: every shared sample equals a separate run.
	shared, err := e.Generate(context.Background(), []GenerateRequest{{Prompt: prompt, N: 5}}, greedy(16), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The prompt is evaluated once, by the first sample, for all five.
	for k, c := range shared[0] {
		want := 0
		if k == 0 {
			want = c.PromptTokens
		}
		if c.EvaluatedTokens != want {
			t.Fatalf("sample %d evaluated %d of its %d prompt tokens, want %d", k, c.EvaluatedTokens, c.PromptTokens, want)
		}
	}
	single := generateOne(t, e, prompt, greedy(16))
	for k, c := range shared[0] {
		if c.Sample != k {
			t.Fatalf("sample %d reports index %d", k, c.Sample)
		}
		checkSameOrNearTie(t, e, prompt, c.Tokens, single.Tokens)
	}
	// Sampled: sample 0 of a shared request is the same draw as a lone one,
	// and the shared samples differ from each other.
	s := Sampling{Temperature: 1, TopP: 1, Seed: 9, MaxTokens: 16, IgnoreEOS: true}
	many, err := e.Generate(context.Background(), []GenerateRequest{{Prompt: prompt, N: 4}}, s, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one := generateOne(t, e, prompt, s)
	if !slices.Equal(many[0][0].Tokens, one.Tokens) {
		t.Fatalf("sample 0 of a shared prompt %v differs from a lone run %v", many[0][0].Tokens, one.Tokens)
	}
	if slices.Equal(many[0][1].Tokens, many[0][2].Tokens) {
		t.Fatalf("two samples of a shared prompt are identical: %v", many[0][1].Tokens)
	}
}

func TestMoreSamplesThanSlots(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 3})
	s := Sampling{Temperature: 1, TopP: 1, Seed: 5, MaxTokens: 8, IgnoreEOS: true}
	before := e.Stats()
	res, err := e.Generate(context.Background(), []GenerateRequest{{Prompt: testPrompts[0], N: 7}, {Prompt: testPrompts[1], N: 2}}, s, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res[0]) != 7 || len(res[1]) != 2 {
		t.Fatalf("got %d and %d completions, want 7 and 2", len(res[0]), len(res[1]))
	}
	evaluated := 0
	for _, comps := range res {
		for _, c := range comps {
			if len(c.Tokens) != 8 || c.FinishReason != FinishLength {
				t.Fatalf("completion %d/%d: %d tokens, reason %s", c.Prompt, c.Sample, len(c.Tokens), c.FinishReason)
			}
			evaluated += c.EvaluatedTokens
		}
	}
	if want := e.Stats().PromptTokens - before.PromptTokens; int64(evaluated) != want {
		t.Fatalf("the completions evaluated %d prompt tokens, the engine %d", evaluated, want)
	}
}

// plainLogits decodes tokens in a fresh context and returns the logits
// after each position, copied.
func plainLogits(t *testing.T, tokens []int32) [][]float32 {
	t.Helper()
	c, err := cgo.NewContext(testModel.c, cgo.ContextParams{NCtx: 512, NBatch: 512, NUBatch: 512, NSeqMax: 1, Threads: 2, ThreadsBatch: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free()
	b := cgo.NewBatch(len(tokens), 1)
	defer b.Free()
	for i, tok := range tokens {
		b.Add(tok, i, 0, true)
	}
	if err := c.Decode(b); err != nil {
		t.Fatal(err)
	}
	out := make([][]float32, len(tokens))
	for i := range tokens {
		out[i] = slices.Clone(c.Logits(i))
	}
	return out
}

func logSoftmax64(logits []float32, tok int32) float64 {
	m := math.Inf(-1)
	for _, v := range logits {
		m = math.Max(m, float64(v))
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - m)
	}
	return float64(logits[tok]) - m - math.Log(sum)
}

func TestScoreEqualsLogSoftmaxOfLogits(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 4})
	prompt, _ := testModel.Tokenize("Observation: a mug 1. Action:", true, false)
	cont, _ := testModel.Tokenize(" take mug 1 from countertop 1", false, false)
	res, err := e.Score(context.Background(), []ScoreRequest{
		{PromptTokens: prompt, ContinuationTokens: cont},
		{Prompt: "Is it a cat?", Continuation: " No."},
	}, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logits := plainLogits(t, append(slices.Clone(prompt), cont...))
	var sum float64
	for k, tok := range cont {
		want := logSoftmax64(logits[len(prompt)+k-1], tok)
		if d := math.Abs(float64(res[0].LogProbs[k]) - want); d > 1e-4 {
			t.Fatalf("token %d: Score %g, log-softmax of logits %g", k, res[0].LogProbs[k], want)
		}
		sum += want
	}
	if math.Abs(res[0].Sum-sum) > 1e-3 {
		t.Fatalf("Sum %g, want %g", res[0].Sum, sum)
	}
	if len(res[1].LogProbs) == 0 || res[1].Sum >= 0 {
		t.Fatalf("second request: %+v", res[1])
	}
}

func TestGenerateLogProbsMatchScore(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 4})
	s := Sampling{Temperature: 0.8, TopK: 50, TopP: 0.95, MinP: 0.01, Seed: 3, MaxTokens: 12, IgnoreEOS: true}
	c := generateOne(t, e, testPrompts[3], s)
	prompt, _ := testModel.Tokenize(testPrompts[3], true, true)
	res, err := e.Score(context.Background(), []ScoreRequest{{PromptTokens: prompt, ContinuationTokens: c.Tokens}}, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k := range c.Tokens {
		if d := math.Abs(float64(c.LogProbs[k] - res[0].LogProbs[k])); d > 1e-3 {
			t.Fatalf("token %d: Generate says %g, Score %g", k, c.LogProbs[k], res[0].LogProbs[k])
		}
	}
}

func TestStopStringsAndMaxTokens(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 2})
	free := generateOne(t, e, testPrompts[4], greedy(30))
	if free.FinishReason != FinishLength || len(free.Tokens) != 30 {
		t.Fatalf("want 30 tokens ending by length, got %d (%s)", len(free.Tokens), free.FinishReason)
	}
	// Stop at a piece of text the greedy completion is known to produce.
	text := free.Text
	if len(text) < 6 {
		t.Skipf("greedy completion too short to pick a stop string: %q", text)
	}
	stop := text[len(text)/2 : len(text)/2+3]
	s := greedy(30)
	s.Stop = []string{stop}
	c := generateOne(t, e, testPrompts[4], s)
	if c.FinishReason != FinishStop {
		t.Fatalf("want a stop at %q in %q, got %s with %q", stop, text, c.FinishReason, c.Text)
	}
	if !strings.HasPrefix(text, c.Text) || strings.Contains(c.Text, stop) {
		t.Fatalf("stopped text %q should be the prefix of %q before %q", c.Text, text, stop)
	}
}

// TestStopStringsCutAtTheEarliest: a token that completes two stop
// strings cuts the text where the earlier one begins, whatever their
// order in the list.
func TestStopStringsCutAtTheEarliest(t *testing.T) {
	s := &scheduler{vocab: &vocabCache{pieces: [][]byte{[]byte("Observation"), []byte(":\n\n")}}}
	q := &sequence{stops: []string{"\n\n", "Observation:"}, text: []byte("Action: look\n")}
	if s.appendPiece(q, 0) {
		t.Fatal("a stop before either string was complete")
	}
	if !s.appendPiece(q, 1) || string(q.text) != "Action: look\n" {
		t.Fatalf("text %q after both stops completed, want %q", q.text, "Action: look\n")
	}
}

func TestContextLimits(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 2, Context: 32})
	long := strings.Repeat("word ", 100)
	if _, err := e.Generate(context.Background(), []GenerateRequest{{Prompt: long}}, greedy(4), CallOptions{}); err == nil || !strings.Contains(err.Error(), "context") {
		t.Fatalf("want a context error for a long prompt, got %v", err)
	}
	if _, err := e.Score(context.Background(), []ScoreRequest{{Prompt: "a", Continuation: long}}, CallOptions{}); err == nil || !strings.Contains(err.Error(), "context") {
		t.Fatalf("want a context error for a long continuation, got %v", err)
	}
	c := generateOne(t, e, "hello", greedy(100))
	if c.FinishReason != FinishContext || c.PromptTokens+len(c.Tokens) != 32 {
		t.Fatalf("want the sequence to fill its 32-token context, got %d+%d (%s)", c.PromptTokens, len(c.Tokens), c.FinishReason)
	}
	if _, err := e.Generate(context.Background(), []GenerateRequest{{Tokens: []int32{1, 1 << 30}}}, greedy(4), CallOptions{}); err == nil {
		t.Fatal("want an error for a token outside the vocabulary")
	}
}

func TestInvalidSampling(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 1})
	for _, s := range []Sampling{
		{Temperature: -1, TopP: 1, MaxTokens: 1},
		{Temperature: 1, TopP: 0, MaxTokens: 1},
		{Temperature: 1, TopP: 1, MaxTokens: 0},
		{Temperature: 1, TopP: 1, MinP: 1, MaxTokens: 1},
		{Temperature: 1, TopP: 1, TopK: -2, MaxTokens: 1},
		{Temperature: 1e-39, TopP: 1, MaxTokens: 1}, // its inverse overflows
		{Temperature: float32(math.Inf(1)), TopP: 1, MaxTokens: 1},
	} {
		if _, err := e.Generate(context.Background(), []GenerateRequest{{Prompt: "x"}}, s, CallOptions{}); err == nil {
			t.Errorf("sampling %+v accepted", s)
		}
	}
	// An adapter scale that is not a finite number would make every logit
	// NaN: refused before llama.cpp sees it.
	for _, scale := range []float64{math.NaN(), math.Inf(1)} {
		opts := CallOptions{Adapters: []AdapterScale{{Adapter: &Adapter{}, Scale: float32(scale)}}}
		if _, err := e.Generate(context.Background(), []GenerateRequest{{Prompt: "x"}}, greedy(1), opts); err == nil || !strings.Contains(err.Error(), "not a finite number") {
			t.Errorf("adapter scale %v: %v", scale, err)
		}
		if _, err := e.Score(context.Background(), []ScoreRequest{{Prompt: "x", Continuation: "y"}}, opts); err == nil {
			t.Errorf("adapter scale %v accepted for scoring", scale)
		}
	}
}

// TestBrokenWeightsFailTheGeneration: a model file whose final norm is
// NaN (a bit-flipped file) gives NaN logits; the generation fails with an
// error saying so, greedy or sampled, and the engine serves the next call.
func TestBrokenWeightsFailTheGeneration(t *testing.T) {
	data, err := os.ReadFile(testModelPath)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(testModelPath)
	if err != nil {
		t.Fatal(err)
	}
	var norm gguf.TensorInfo
	for _, ti := range f.Tensors {
		if ti.Name == "output_norm.weight" {
			norm = ti
		}
	}
	f.Close()
	if norm.Name == "" || norm.Type != gguf.TensorF32 {
		t.Fatalf("the test model's output norm: %+v", norm)
	}
	at := f.DataOffset + norm.Offset
	for i := int64(0); i < norm.Size; i += 4 {
		binary.LittleEndian.PutUint32(data[at+i:], math.Float32bits(float32(math.NaN())))
	}
	path := filepath.Join(t.TempDir(), "nan.gguf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e, err := m.NewEngine(EngineOptions{Parallel: 2, Context: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, s := range []Sampling{greedy(4), {Temperature: 1, TopP: 1, MinP: 0.05, Seed: 1, MaxTokens: 4}} {
		_, err := e.Generate(context.Background(), []GenerateRequest{{Prompt: "x", N: 2}}, s, CallOptions{})
		if err == nil || !strings.Contains(err.Error(), "not finite") {
			t.Fatalf("temperature %v: %v, want the generation failed for non-finite logits", s.Temperature, err)
		}
	}
}

// TestNonFiniteLogitsLeaveNoToken: logits that are not finite (a broken
// model or adapter) give no token to draw, greedy or sampled, and the
// engine fails the generation instead of indexing an empty list.
func TestNonFiniteLogitsLeaveNoToken(t *testing.T) {
	nan := float32(math.NaN())
	for _, temp := range []float32{0, 1, 0.7} {
		s := newSampler(Sampling{Temperature: temp, TopP: 1, MinP: 0.05, MaxTokens: 1}, 1, 0)
		if tok, _ := s.sample([]float32{nan, nan, nan}); tok != -1 {
			t.Errorf("temperature %v: token %d from NaN logits", temp, tok)
		}
		if tok, lp := s.sample([]float32{0, nan, 1}); tok != -1 {
			t.Errorf("temperature %v: token %d (log-probability %v) from logits with one NaN", temp, tok, lp)
		}
		if tok, _ := s.sample([]float32{0, 1, 0.5}); tok < 0 {
			t.Errorf("temperature %v: no token from finite logits", temp)
		}
	}
}

// TestDrawNeverFallsPastTheCandidates: where the kernel's float32 total
// exceeds the candidates' sum, a draw near its top falls past the last
// candidate; it draws again instead of taking the last token of the
// vocabulary.
func TestDrawNeverFallsPastTheCandidates(t *testing.T) {
	probs := []float32{0.5, 0.25, 0.25}
	if tok, ok := drawCandidate([]int32{0, 1, 2}, probs, 0.6); !ok || tok != 1 {
		t.Errorf("draw at 0.6: token %d (%v), want 1", tok, ok)
	}
	if _, ok := drawCandidate([]int32{0, 1, 2}, probs, 1.0000001); ok {
		t.Error("a draw past the candidates' sum reported a token")
	}
	// 49,152 logits, one at 0 and the rest far below it: the kernel's
	// total in float32 lanes runs above the float64 sum, and before the
	// redraw about 17 in 100,000 draws gave token 49,151.
	logits := make([]float32, 49152)
	for i := 1; i < len(logits); i++ {
		logits[i] = -16.55
	}
	s := newSampler(Sampling{Temperature: 1, TopP: 1, MaxTokens: 1}, 3, 0)
	last := 0
	for range 100000 {
		if tok, _ := s.sample(logits); tok == int32(len(logits)-1) {
			last++
		}
	}
	// Its fair share: p = exp(-16.55) / total, about 6.5e-8 a draw.
	if last > 2 {
		t.Errorf("the last token drawn %d times in 100,000, its fair share about 0.007", last)
	}
}

func TestCancellation(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := e.Generate(ctx, []GenerateRequest{{Prompt: "x"}}, Sampling{Temperature: 1, TopP: 1, Seed: 1, MaxTokens: 1 << 20, IgnoreEOS: true}, CallOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want deadline exceeded, got %v", err)
	}
	// The engine is still usable afterwards.
	if c := generateOne(t, e, "x", greedy(3)); len(c.Tokens) != 3 {
		t.Fatalf("engine unusable after a cancellation: %+v", c)
	}
}

func TestConcurrentCallersShareTheEngine(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 8})
	want := make([][]int32, len(testPrompts))
	for i, p := range testPrompts {
		want[i] = generateOne(t, e, p, greedy(10)).Tokens
	}
	errs := make(chan error, len(testPrompts))
	got := make([][]int32, len(testPrompts))
	for i, p := range testPrompts {
		go func() {
			res, err := e.Generate(context.Background(), []GenerateRequest{{Prompt: p}}, greedy(10), CallOptions{})
			if err == nil {
				got[i] = res[0][0].Tokens
			}
			errs <- err
		}()
	}
	for range testPrompts {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range testPrompts {
		checkSameOrNearTie(t, e, p, got[i], want[i])
	}
	if st := e.Stats(); st.GeneratedTokens == 0 || st.Decodes == 0 {
		t.Fatalf("stats not counted: %+v", st)
	}
}

// TestKVCacheLargerThanMemoryIsRefused asks for a KV cache twice the
// machine's memory: the engine refuses it with the sizes before llama.cpp
// allocates anything.
func TestKVCacheLargerThanMemoryIsRefused(t *testing.T) {
	var host uint64
	for _, d := range cgo.Devices() {
		if d.Type == "cpu" {
			host = d.MemoryTotal
		}
	}
	if host == 0 {
		t.Skip("ggml reports no memory size for the CPU")
	}
	const parallel = 64
	kv := uint64(testModel.Info().KVBytesPerToken())
	ctx := int(2 * host / parallel / kv)
	_, err := testModel.NewEngine(EngineOptions{Parallel: parallel, Context: ctx, Threads: 1})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the KV cache of 64 sequences of %d tokens needs", ctx)) ||
		!strings.Contains(err.Error(), "lower the parallel sequences or the context") {
		t.Fatalf("a KV cache of twice the memory: %v", err)
	}
}

// TestKVBytesPerTokenReadsTheHeadSizes: a model whose attention heads
// are larger than its embedding over its heads (Qwen3-0.6B: 1,024 over
// 16 heads, heads of 128) counts its own; one that keeps no KV cache
// refuses a budget for it instead of dividing by zero.
func TestKVBytesPerTokenReadsTheHeadSizes(t *testing.T) {
	qwen := Info{Architecture: "qwen3", Layers: 28, Heads: 16, HeadsKV: 8, Embedding: 1024, KeyLength: 128, ValueLength: 128}
	if got, want := qwen.KVBytesPerToken(), int64(28*8*(128+128)*2); got != want {
		t.Errorf("qwen3: %d bytes a token, want %d", got, want)
	}
	plain := Info{Layers: 30, Heads: 9, HeadsKV: 3, Embedding: 576} // SmolLM2-135M
	if got, want := plain.KVBytesPerToken(), int64(30*3*(64+64)*2); got != want {
		t.Errorf("no head sizes given: %d bytes a token, want %d", got, want)
	}
	recurrent := Info{Architecture: "mamba", Layers: 24, Embedding: 768}
	err := EngineOptions{Parallel: 1, Context: 512, Batch: 512, CacheMiB: 64}.validate(recurrent)
	if err == nil || !strings.Contains(err.Error(), "mamba keeps none") {
		t.Errorf("a cache budget for a model without a KV cache: %v", err)
	}
}
