package llm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrl/agentrl/cgo"
)

// The prefix cache must never change results: every test here runs the
// same work on an engine with the cache and on one that evaluates every
// prompt whole, and compares greedy tokens exactly and log-probabilities to
// 1e-5.

const cacheTolerance = 1e-5

// cachedAndPlain makes two engines with opts, with and without the cache.
func cachedAndPlain(t *testing.T, opts EngineOptions) (cached, plain *Engine) {
	t.Helper()
	cached = newTestEngine(t, opts)
	opts.NoPrefixCache = true
	return cached, newTestEngine(t, opts)
}

func sameCompletion(t *testing.T, what string, got, want Completion) {
	t.Helper()
	if !slices.Equal(got.Tokens, want.Tokens) {
		t.Fatalf("%s: tokens %v with the cache, %v without", what, got.Tokens, want.Tokens)
	}
	if d := maxDiff(got.LogProbs, want.LogProbs); d > cacheTolerance {
		t.Fatalf("%s: log-probs differ by %g with the cache", what, d)
	}
}

// episode is a conversation of turns: each prompt is the previous prompt,
// its completion and a new observation, as an agent's history grows.
type episode struct {
	session *Session
	prompt  []int32
}

func observation(ep, turn int) string {
	return fmt.Sprintf("\nObservation %d.%d: you see a cabinet %d, a drawer %d and a mug. Action:", ep, turn, turn+1, ep+2)
}

func (ep *episode) next(t *testing.T, c Completion, obs string) {
	t.Helper()
	more, err := testModel.Tokenize(obs, false, false)
	if err != nil {
		t.Fatal(err)
	}
	ep.prompt = append(append(ep.prompt, c.Tokens...), more...)
}

// runEpisodes plays n episodes of turns on e, all turns of a round in one
// Generate call, and returns every completion in order.
func runEpisodes(t *testing.T, e *Engine, n, turns int, sessions bool) []Completion {
	t.Helper()
	system := strings.Repeat("You are an agent in a house. Answer with one action. ", 3)
	eps := make([]*episode, n)
	for i := range eps {
		p, err := testModel.Tokenize(system+observation(i, 0), true, false)
		if err != nil {
			t.Fatal(err)
		}
		eps[i] = &episode{prompt: p}
		if sessions {
			eps[i].session = e.NewSession()
			defer eps[i].session.Close()
		}
	}
	var out []Completion
	for turn := 0; turn < turns; turn++ {
		reqs := make([]GenerateRequest, n)
		for i, ep := range eps {
			reqs[i] = GenerateRequest{Tokens: slices.Clone(ep.prompt), Session: ep.session}
		}
		res, err := e.Generate(context.Background(), reqs, greedy(6), CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, ep := range eps {
			out = append(out, res[i][0])
			ep.next(t, res[i][0], observation(i, turn+1))
		}
	}
	return out
}

func TestSessionsAndPrefixCacheGiveSameResults(t *testing.T) {
	// Eight streams of 512 tokens (1 MiB each for the tiny model): room
	// for the six conversations, four decoding at a time.
	opts := EngineOptions{Parallel: 4, Context: 512, CacheMiB: 8}
	cached, plain := cachedAndPlain(t, opts)
	got := runEpisodes(t, cached, 6, 4, true)
	want := runEpisodes(t, plain, 6, 4, false)
	for i := range want {
		sameCompletion(t, fmt.Sprintf("completion %d", i), got[i], want[i])
	}
	cs, ps := cached.Stats(), plain.Stats()
	t.Logf("prompt tokens evaluated: %d with the cache (%d reused), %d without", cs.PromptTokens, cs.CachedTokens, ps.PromptTokens)
	if ps.CachedTokens != 0 || cs.PromptTokens+cs.CachedTokens != ps.PromptTokens {
		t.Fatalf("evaluated + reused prompt tokens %d + %d should equal the %d evaluated without the cache", cs.PromptTokens, cs.CachedTokens, ps.PromptTokens)
	}
	if cs.PromptTokens*2 > ps.PromptTokens {
		t.Fatalf("the cache evaluated %d of %d prompt tokens: later turns were not reused", cs.PromptTokens, ps.PromptTokens)
	}
}

func TestForcedEvictionKeepsResults(t *testing.T) {
	// 1 MiB holds three streams of 160 tokens of the tiny model: nine
	// sessions take turns on two parallel slots and keep evicting each
	// other.
	opts := EngineOptions{Parallel: 2, Context: 160, CacheMiB: 1}
	cached, plain := cachedAndPlain(t, opts)
	if got := cached.CacheTokens(); got != 3*160 {
		t.Fatalf("cache of %d tokens, want 3 streams of 160", got)
	}
	got := runEpisodes(t, cached, 9, 3, true)
	want := runEpisodes(t, plain, 9, 3, false)
	for i := range want {
		sameCompletion(t, fmt.Sprintf("completion %d", i), got[i], want[i])
	}
	cs, ps := cached.Stats(), plain.Stats()
	t.Logf("prompt tokens evaluated: %d with the cache (%d reused), %d without", cs.PromptTokens, cs.CachedTokens, ps.PromptTokens)
	if cs.PromptTokens+cs.CachedTokens != ps.PromptTokens {
		t.Fatalf("evaluated + reused prompt tokens %d + %d, want %d", cs.PromptTokens, cs.CachedTokens, ps.PromptTokens)
	}
	if cs.CachedTokens == 0 {
		t.Fatal("nothing was reused")
	}
}

func TestScoringManyContinuationsEvaluatesThePrefixOnce(t *testing.T) {
	opts := EngineOptions{Parallel: 8, Context: 256}
	cached, plain := cachedAndPlain(t, opts)
	state, err := testModel.Tokenize(strings.Repeat("Observation: a mug 1, a fridge 1, a cabinet 2. ", 6)+"Action:", true, false)
	if err != nil {
		t.Fatal(err)
	}
	actions := []string{" take mug 1", " open fridge 1", " go to cabinet 2", " look", " inventory", " put mug 1 in fridge 1", " close fridge 1", " examine mug 1"}
	reqs := make([]ScoreRequest, len(actions))
	for i, a := range actions {
		reqs[i] = ScoreRequest{PromptTokens: state, Continuation: a}
	}
	got, err := cached.Score(context.Background(), reqs, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := plain.Score(context.Background(), reqs, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if d := maxDiff(got[i].LogProbs, want[i].LogProbs); d > cacheTolerance {
			t.Fatalf("action %d: log-probs differ by %g with the cache", i, d)
		}
	}
	cs, ps := cached.Stats(), plain.Stats()
	t.Logf("prompt tokens evaluated: %d with the cache (%d reused, %d stream copies), %d without", cs.PromptTokens, cs.CachedTokens, cs.StreamCopies, ps.PromptTokens)
	if wantReused := int64(len(actions)-1) * int64(len(state)-1); cs.CachedTokens != wantReused || cs.StreamCopies != int64(len(actions)-1) {
		t.Fatalf("%d tokens reused in %d copies, want the %d-token state evaluated once and copied %d times", cs.CachedTokens, cs.StreamCopies, len(state), len(actions)-1)
	}
}

// TestMorePromptsThanSlotsReuseWhatIsCached generates for twice as many
// prompts as slots, then again for the same prompts: the second call
// admits the prompts the streams still hold first and reuses them, the
// last four with a stream per slot, all eight with eight streams
// (EngineOptions.Streams; before admission took cache hits first, each
// admission evicted the cells the next prompt needed and every prompt was
// evaluated whole), with the same results as without a cache.
func TestMorePromptsThanSlotsReuseWhatIsCached(t *testing.T) {
	reqs := make([]GenerateRequest, 8)
	for i := range reqs {
		tokens, err := testModel.Tokenize(fmt.Sprintf("Task %d: you see a cabinet %d, a drawer and a mug %d. Action:", i, i+1, i*3), true, false)
		if err != nil {
			t.Fatal(err)
		}
		reqs[i] = GenerateRequest{Tokens: tokens}
	}
	for _, streams := range []int{0, 8} {
		t.Run(fmt.Sprintf("streams=%d", streams), func(t *testing.T) {
			cached, plain := cachedAndPlain(t, EngineOptions{Parallel: 4, Context: 256, Streams: streams})
			for _, e := range []*Engine{cached, plain} {
				if _, err := e.Generate(context.Background(), reqs, greedy(6), CallOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			before := cached.Stats()
			got, err := cached.Generate(context.Background(), reqs, greedy(6), CallOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := plain.Generate(context.Background(), reqs, greedy(6), CallOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				sameCompletion(t, fmt.Sprintf("prompt %d", i), got[i][0], want[i][0])
			}
			// The streams hold the last prompts (each less the token whose
			// logits it needs, fed again): four, or all eight.
			held := len(reqs) / 2
			if streams > 0 {
				held = len(reqs)
			}
			var kept, all int64
			for i, r := range reqs {
				all += int64(len(r.Tokens))
				if i >= len(reqs)-held {
					kept += int64(len(r.Tokens))
				}
			}
			after := cached.Stats()
			evaluated, reused := after.PromptTokens-before.PromptTokens, after.CachedTokens-before.CachedTokens
			t.Logf("second call: %d prompt tokens evaluated, %d reused, of %d", evaluated, reused, all)
			var told int64
			for _, c := range got {
				told += int64(c[0].EvaluatedTokens)
			}
			if told != evaluated {
				t.Fatalf("the completions say they evaluated %d prompt tokens, the engine %d", told, evaluated)
			}
			if reused < kept-int64(held) || evaluated > all-kept+int64(held) {
				t.Fatalf("second call evaluated %d and reused %d of %d prompt tokens: want the last %d prompts' %d reused", evaluated, reused, all, held, kept)
			}
		})
	}
}

// TestStreams: the engine keeps Streams KV streams, at least Parallel and
// at most llama.cpp's limit.
func TestStreams(t *testing.T) {
	for _, c := range []struct{ parallel, streams, want int }{{4, 0, 4}, {4, 2, 4}, {4, 8, 8}, {1, 1 << 20, cgo.MaxParallelSequences()}} {
		e := newTestEngine(t, EngineOptions{Parallel: c.parallel, Context: 32, Streams: c.streams})
		if got := e.CacheTokens(); got != c.want*32 {
			t.Errorf("parallel %d, streams %d: a cache of %d tokens, want %d streams of 32", c.parallel, c.streams, got, c.want)
		}
	}
	if _, err := testModel.NewEngine(EngineOptions{Parallel: 1, Streams: -1}); err == nil || !strings.Contains(err.Error(), "KV streams -1") {
		t.Errorf("negative streams: %v", err)
	}
}

func TestCacheEntriesBelongToOneAdapterSet(t *testing.T) {
	a, err := testModel.LoadAdapter(writeTestAdapter(t, testModel.Info().Architecture, false))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	opts := EngineOptions{Parallel: 2, Context: 256}
	cached, plain := cachedAndPlain(t, opts)
	prompt := strings.Repeat("Task: put a clean mug in the coffeemachine. ", 4)
	sets := [][]AdapterScale{nil, {{a, 1}}, {{a, 0.5}}, {{a, 1}}}
	session := cached.NewSession()
	defer session.Close()
	for i, set := range sets {
		req := []GenerateRequest{{Prompt: prompt, Session: session}}
		got, err := cached.Generate(context.Background(), req, greedy(8), CallOptions{Adapters: set})
		if err != nil {
			t.Fatal(err)
		}
		want, err := plain.Generate(context.Background(), []GenerateRequest{{Prompt: prompt}}, greedy(8), CallOptions{Adapters: set})
		if err != nil {
			t.Fatal(err)
		}
		sameCompletion(t, fmt.Sprintf("call %d", i), got[0][0], want[0][0])
	}
	if cached.Stats().CachedTokens == 0 {
		t.Fatal("repeated calls under one adapter set reused nothing")
	}
	// Dropping the adapter empties its entries: the next call under it
	// evaluates the whole prompt.
	if err := cached.DropAdapter(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	cached.ResetStats()
	if _, err := cached.Generate(context.Background(), []GenerateRequest{{Prompt: prompt}}, greedy(1), CallOptions{Adapters: sets[1]}); err != nil {
		t.Fatal(err)
	}
	if st := cached.Stats(); st.CachedTokens != 0 {
		t.Fatalf("%d tokens reused from a dropped adapter's entries", st.CachedTokens)
	}
}

func TestConcurrentSessions(t *testing.T) {
	opts := EngineOptions{Parallel: 4, Context: 512}
	cached, plain := cachedAndPlain(t, opts)
	want := runEpisodes(t, plain, 1, 4, false)
	// Eight callers each play the same episode in their own session, at
	// once: the engine batches their turns together.
	var wg sync.WaitGroup
	results := make([][]Completion, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runEpisodes(t, cached, 1, 4, true)
		}()
	}
	wg.Wait()
	for i, got := range results {
		for k := range want {
			sameCompletion(t, fmt.Sprintf("caller %d turn %d", i, k), got[k], want[k])
		}
	}
}

func TestBadSessionsAndBudgetsAreErrors(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 2, Context: 64})
	other := newTestEngine(t, EngineOptions{Parallel: 1, Context: 64})
	s := e.NewSession()
	s.Close()
	if _, err := e.Generate(context.Background(), []GenerateRequest{{Prompt: "x", Session: s}}, greedy(1), CallOptions{}); err == nil || !strings.Contains(err.Error(), "after Close") {
		t.Fatalf("want an error for a closed session, got %v", err)
	}
	if _, err := e.Score(context.Background(), []ScoreRequest{{Prompt: "x", Continuation: "y", Session: other.NewSession()}}, CallOptions{}); err == nil || !strings.Contains(err.Error(), "another engine") {
		t.Fatalf("want an error for another engine's session, got %v", err)
	}
	for _, o := range []EngineOptions{
		{Parallel: 1, Context: 1024, CacheMiB: 1}, // 512 tokens: not one sequence
		{Parallel: 4, Context: 256, CacheMiB: 1},  // two sequences, four wanted
		{Parallel: 1, Context: 8, CacheMiB: 8},    // 512 streams
	} {
		if _, err := testModel.NewEngine(o); err == nil || !strings.Contains(err.Error(), "KV cache budget") {
			t.Errorf("options %+v: want a KV budget error, got %v", o, err)
		}
	}
}

// TestSamplesOfAPromptWhoseHeadIsInAFreeSlot: a prompt of four samples
// whose head a free slot holds (from an earlier call) copies that head
// into its own slot while its other samples take the remaining slots, the
// free one among them: the call must finish, with the completions of an
// engine without the cache.
func TestSamplesOfAPromptWhoseHeadIsInAFreeSlot(t *testing.T) {
	cached, plain := cachedAndPlain(t, EngineOptions{Parallel: 4, Context: 256})
	head := strings.Repeat("You are in the middle of a room with a cabinet, a drawer and a mug. ", 2)
	s := Sampling{Temperature: 1, TopP: 1, Seed: 7, MaxTokens: 6, IgnoreEOS: true}
	for _, e := range []*Engine{cached, plain} {
		if _, err := e.Generate(context.Background(), []GenerateRequest{{Prompt: head + "Your task is to find the mug and look at it carefully under the desk lamp, then say what colour it is and where it stood."}}, s, CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	req := []GenerateRequest{{Prompt: head + "Your task is to open the drawer and put the mug in it.", N: 4}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := cached.Generate(ctx, req, s, CallOptions{})
	if err != nil {
		t.Fatalf("four samples of a prompt whose head a free slot holds: %v", err)
	}
	want, err := plain.Generate(context.Background(), req, s, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k := range want[0] {
		sameCompletion(t, fmt.Sprintf("sample %d", k), got[0][k], want[0][k])
	}
}
