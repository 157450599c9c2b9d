package rollout

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/registry"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/initmodel"
	"github.com/agentrl/agentrl/llm/initmodel/initmodeltest"
)

func newEngine(t *testing.T, opts llm.EngineOptions) *llm.Engine {
	t.Helper()
	path := initmodeltest.Write(t, initmodel.Config{Preset: "tiny", Seed: 11})
	m, err := llm.Load(path, llm.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Threads == 0 {
		opts.Threads = 1
	}
	e, err := m.NewEngine(opts)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); m.Close(); os.Remove(path) })
	return e
}

func TestLLMPolicyDrivesTheRunner(t *testing.T) {
	e := newEngine(t, llm.EngineOptions{Parallel: 8, Context: 1024})
	factory, err := registry.Lookup("webshop")
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultActionSampling()
	s.MaxTokens, s.Seed = 16, 1
	policy := &LLMPolicy{Engine: e, Sampling: s}
	trajs, err := Run(context.Background(), Config{
		NewEnv: factory, Parallel: 4, Episodes: 4, Split: envs.Test, MaxSteps: 3,
	}, policy)
	if err != nil {
		t.Fatal(err)
	}
	if len(trajs) != 4 {
		t.Fatalf("want 4 trajectories, got %d", len(trajs))
	}
	for _, tr := range trajs {
		if tr.Error != "" || len(tr.Steps) == 0 {
			t.Fatalf("episode %d: %d steps, error %q", tr.Seed, len(tr.Steps), tr.Error)
		}
		for _, st := range tr.Steps {
			if len(st.TokenIDs) == 0 || len(st.TokenIDs) != len(st.LogProbs) {
				t.Fatalf("step without matching token ids (%d) and log-probs (%d)", len(st.TokenIDs), len(st.LogProbs))
			}
			for _, lp := range st.LogProbs {
				if lp > 0 {
					t.Fatalf("log-probability %g > 0", lp)
				}
			}
		}
	}
	if st := e.Stats(); st.GeneratedTokens == 0 {
		t.Fatal("the engine generated nothing")
	}
}

// TestTurnsDrawTheirOwnRandomNumbers: at a temperature that makes the
// tiny model's next-token distribution nearly uniform, two turns of one
// episode sampled with the same random numbers would pick nearly the same
// tokens; each turn must draw its own.
func TestTurnsDrawTheirOwnRandomNumbers(t *testing.T) {
	e := newEngine(t, llm.EngineOptions{Parallel: 2, Context: 512})
	const n = 24
	p := &LLMPolicy{Engine: e, Sampling: llm.Sampling{Temperature: 1000, TopP: 1, MaxTokens: n, IgnoreEOS: true, Seed: 3}}
	defer p.Close()
	msgs := []chat.Message{{Role: chat.System, Content: "Act."}, {Role: chat.User, Content: "You are in a room."}}
	first, err := p.Act(context.Background(), []Request{{Env: "test", Messages: msgs, Slot: 0, Episode: 5}})
	if err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, chat.Message{Role: chat.Assistant, Content: first[0].Text}, chat.Message{Role: chat.User, Content: "You are in a hall."})
	second, err := p.Act(context.Background(), []Request{{Env: "test", Messages: msgs, Slot: 0, Episode: 5}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := first[0].TokenIDs, second[0].TokenIDs
	if len(a) != n || len(b) != n {
		t.Fatalf("turns of %d and %d tokens, want %d each", len(a), len(b), n)
	}
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	if same > n/4 {
		t.Fatalf("%d of %d tokens of the two turns are the same: the turns drew the same random numbers", same, n)
	}
}

func TestPromptDropsOldTurnsToFit(t *testing.T) {
	e := newEngine(t, llm.EngineOptions{Parallel: 1, Context: 256})
	p := &LLMPolicy{Engine: e, Sampling: llm.Sampling{Temperature: 1, TopP: 1, MaxTokens: 32}}
	msgs := []chat.Message{{Role: chat.System, Content: "Act."}, {Role: chat.User, Content: "Task: buy socks."}}
	for i := 0; i < 30; i++ {
		msgs = append(msgs, chat.Message{Role: chat.Assistant, Content: "Action: look"},
			chat.Message{Role: chat.User, Content: "You see nothing special in the room number " + strings.Repeat("x", i)})
	}
	msgs = append(msgs, chat.Message{Role: chat.Assistant, Content: "Action: look"}, chat.Message{Role: chat.User, Content: "LATEST"})
	tokens, dropped, err := p.Prompt(msgs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) > 256-32 {
		t.Fatalf("prompt of %d tokens exceeds the budget", len(tokens))
	}
	if dropped == 0 || dropped%2 != 0 || dropped > len(msgs)-3 {
		t.Fatalf("%d messages reported dropped; want a positive even number of old exchanges", dropped)
	}
	kept := append(append([]chat.Message(nil), msgs[:2]...), msgs[2+dropped:]...)
	if want, _ := e.Model().Tokenize(e.Model().RenderChat(kept, true), true, true); !slices.Equal(tokens, want) {
		t.Fatalf("the prompt is not the conversation without its %d oldest exchanges", dropped)
	}
	text, _ := e.Model().Detokenize(tokens, true)
	for _, want := range []string{"Act.", "Task: buy socks.", "LATEST"} {
		if !strings.Contains(text, want) {
			t.Fatalf("truncated prompt lost %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "room number \n") {
		t.Fatal("the oldest exchange should have been dropped")
	}
	huge := []chat.Message{{Role: chat.System, Content: strings.Repeat("rule ", 400)}, {Role: chat.User, Content: "go"}}
	if _, _, err := p.Prompt(huge, 0); err == nil || !strings.Contains(err.Error(), "context") {
		t.Fatalf("want a context error for a system prompt that cannot fit, got %v", err)
	}
}

// TestPromptKeepsItsCutAcrossTurns plays a conversation turn by turn past
// the context: a turn keeps the previous turn's cut while it fits, so the
// kept history grows as a prefix, and a cut frees room for later turns.
func TestPromptKeepsItsCutAcrossTurns(t *testing.T) {
	const ctxTokens, maxTokens = 512, 32
	e := newEngine(t, llm.EngineOptions{Parallel: 1, Context: ctxTokens})
	p := &LLMPolicy{Engine: e, Sampling: llm.Sampling{Temperature: 1, TopP: 1, MaxTokens: maxTokens}}
	msgs := []chat.Message{{Role: chat.System, Content: "Act."}, {Role: chat.User, Content: "Task: buy socks."}}
	var kept []chat.Message
	dropped, cuts, turnsCut := 0, 0, 0
	for turn := 0; turn < 40; turn++ {
		msgs = append(msgs, chat.Message{Role: chat.Assistant, Content: fmt.Sprintf("Action: look %d", turn)},
			chat.Message{Role: chat.User, Content: fmt.Sprintf("Observation %d: a shelf of socks and a door.", turn)})
		tokens, d, err := p.Prompt(msgs, dropped)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if len(tokens) > ctxTokens-maxTokens {
			t.Fatalf("turn %d: prompt of %d tokens exceeds the budget", turn, len(tokens))
		}
		now := append(append([]chat.Message(nil), msgs[:2]...), msgs[2+d:]...)
		if want, _ := e.Model().Tokenize(e.Model().RenderChat(now, true), true, true); !slices.Equal(tokens, want) {
			t.Fatalf("turn %d: the prompt is not the conversation without its %d oldest messages", turn, d)
		}
		switch {
		case d < dropped:
			t.Fatalf("turn %d: %d messages dropped after %d: a cut never moves back", turn, d, dropped)
		case d > dropped:
			cuts++
		case d > 0:
			turnsCut++
			if !slices.Equal(now[:len(kept)], kept) {
				t.Fatalf("turn %d: the kept history is not the previous turn's plus the new exchange", turn)
			}
		}
		kept, dropped = now, d
	}
	if cuts == 0 || turnsCut < 2*cuts {
		t.Fatalf("%d cuts and %d turns that kept the previous cut: want cuts that last several turns", cuts, turnsCut)
	}
	t.Logf("%d cuts, %d turns reused the previous cut", cuts, turnsCut)
}

// TestSessionsDoNotChangeRollouts runs the same greedy rollouts with the
// engine's prefix cache and without: new episodes in a slot and histories
// cut to fit the context must leave every token unchanged.
func TestSessionsDoNotChangeRollouts(t *testing.T) {
	factory, err := registry.Lookup("webshop")
	if err != nil {
		t.Fatal(err)
	}
	const ctxTokens, maxTokens = 600, 16
	s := llm.Sampling{Temperature: 0, TopP: 1, Seed: 1, MaxTokens: maxTokens}
	run := func(noCache bool) ([]Trajectory, llm.Stats, int) {
		// One thread: two spin against each other on a busy machine.
		e := newEngine(t, llm.EngineOptions{Parallel: 2, Context: ctxTokens, NoPrefixCache: noCache, Threads: 1})
		policy := &LLMPolicy{Engine: e, Sampling: s}
		defer policy.Close()
		longest := 0 // the longest whole conversation, in tokens
		measured := PolicyFunc(func(ctx context.Context, batch []Request) ([]Response, error) {
			m := e.Model()
			for _, r := range batch {
				tokens, err := m.Tokenize(m.RenderChat(r.Messages, true), true, true)
				if err != nil {
					return nil, err
				}
				longest = max(longest, len(tokens))
			}
			return policy.Act(ctx, batch)
		})
		trajs, err := Run(context.Background(), Config{
			NewEnv: factory, Parallel: 2, Episodes: 3, Split: envs.Test, MaxSteps: 6,
		}, measured)
		if err != nil {
			t.Fatal(err)
		}
		return trajs, e.Stats(), longest
	}
	got, cached, longest := run(false)
	want, plain, _ := run(true)
	if longest <= ctxTokens-maxTokens {
		t.Fatalf("the longest conversation has %d tokens: no history was cut to fit %d", longest, ctxTokens-maxTokens)
	}
	for i := range want {
		if len(got[i].Steps) != len(want[i].Steps) {
			t.Fatalf("episode %d: %d steps with sessions, %d without", i, len(got[i].Steps), len(want[i].Steps))
		}
		for k := range want[i].Steps {
			if g, w := got[i].Steps[k].TokenIDs, want[i].Steps[k].TokenIDs; !slices.Equal(g, w) {
				t.Fatalf("episode %d step %d: %v with sessions, %v without", i, k, g, w)
			}
		}
	}
	t.Logf("prompt tokens evaluated: %d with sessions (%d reused), %d without", cached.PromptTokens, cached.CachedTokens, plain.PromptTokens)
	if cached.PromptTokens >= plain.PromptTokens/2 {
		t.Fatalf("sessions evaluated %d prompt tokens, re-evaluating %d: too little reuse", cached.PromptTokens, plain.PromptTokens)
	}
}

// wordyEnv never ends before its step limit; its observations grow with
// the step by words words each, starting at first words.
type wordyEnv struct {
	first, words, step int
}

func (w *wordyEnv) Spec() envs.Spec {
	return envs.Spec{Name: "wordy", Instruction: "Say anything.", MaxSteps: 6, RewardMax: 1, Splits: envs.Splits}
}

func (w *wordyEnv) observation() string {
	return strings.TrimSpace(strings.Repeat("word ", w.first+w.step*w.words))
}

func (w *wordyEnv) Reset(envs.Split, int64) (string, error) {
	w.step = 0
	return w.observation(), nil
}

func (w *wordyEnv) Step(string) (envs.StepResult, error) {
	w.step++
	return envs.StepResult{Observation: w.observation(), Info: envs.Info{ValidAction: true}}, nil
}

func (w *wordyEnv) AvailableActions() []string { return nil }

// TestContextFullEndsOnlyItsEpisode runs three episodes in one batch: one
// whose first prompt cannot fit the context fails, one whose observations
// outgrow it is cut short as truncated, and one that fits plays to its
// step limit.
func TestContextFullEndsOnlyItsEpisode(t *testing.T) {
	const ctxTokens = 256
	e := newEngine(t, llm.EngineOptions{Parallel: 3, Context: ctxTokens})
	s := DefaultActionSampling()
	s.MaxTokens, s.Seed = 8, 1
	policy := &LLMPolicy{Engine: e, Sampling: s}
	defer policy.Close()
	var made int
	var mu sync.Mutex
	shapes := []wordyEnv{{first: 400}, {first: 5, words: 80}, {first: 5}}
	factory := func() envs.Env {
		mu.Lock()
		defer mu.Unlock()
		made++
		w := shapes[(made-1)%len(shapes)]
		return &w
	}
	trajs, err := Run(context.Background(), Config{NewEnv: factory, Parallel: 3, Episodes: 3, Split: envs.Test}, policy)
	if err != nil {
		t.Fatalf("one episode's context should not stop the run: %v", err)
	}
	byShape := map[string]*Trajectory{}
	for i := range trajs {
		tr := &trajs[i]
		if err := tr.Validate(); err != nil {
			t.Fatalf("episode %d: %v", i, err)
		}
		switch {
		case tr.Error != "":
			byShape["first prompt too long"] = tr
		case tr.ContextFull != "":
			byShape["outgrew the context"] = tr
		default:
			byShape["fits"] = tr
		}
	}
	if len(byShape) != 3 {
		t.Fatalf("want one episode of each kind, got %v", slices.Collect(maps.Keys(byShape)))
	}
	if tr := byShape["first prompt too long"]; len(tr.Steps) != 0 || !strings.Contains(tr.Error, "step 1: wordy: the prompt takes") {
		t.Fatalf("first prompt beyond the context: %d steps, error %q", len(tr.Steps), tr.Error)
	}
	if tr := byShape["outgrew the context"]; !tr.Truncated || len(tr.Steps) == 0 || len(tr.Steps) >= 6 || tr.Success ||
		!strings.Contains(tr.ContextFull, fmt.Sprintf("step %d: wordy: the prompt takes", len(tr.Steps)+1)) {
		t.Fatalf("conversation beyond the context: %d steps, truncated %v, context_full %q", len(tr.Steps), tr.Truncated, tr.ContextFull)
	}
	if tr := byShape["fits"]; len(tr.Steps) != 6 || !tr.Truncated {
		t.Fatalf("the episode that fits played %d steps (truncated %v), want the limit of 6", len(tr.Steps), tr.Truncated)
	}
	sum := Summarize(trajs)
	if sum.Errors != 1 || sum.ContextFull != 1 || sum.Episodes != 2 || sum.SuccessRate != 0 {
		t.Fatalf("summary %+v: want 1 error, 1 cut short by the context, 2 episodes in the means", sum)
	}
}
