package rollout

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/registry"
	"github.com/agentrl/agentrl/envs/runner"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/initmodel"
)

func newEngine(t *testing.T, opts llm.EngineOptions) *llm.Engine {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if _, err := initmodel.Write(path, initmodel.Config{Preset: "tiny", Seed: 11}); err != nil {
		t.Fatal(err)
	}
	m, err := llm.Load(path, llm.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opts.Threads = 2
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
	trajs, err := runner.Run(context.Background(), runner.Config{
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

func TestPromptDropsOldTurnsToFit(t *testing.T) {
	e := newEngine(t, llm.EngineOptions{Parallel: 1, Context: 256})
	p := &LLMPolicy{Engine: e, Sampling: llm.Sampling{Temperature: 1, TopP: 1, MaxTokens: 32}}
	msgs := []chat.Message{{Role: chat.System, Content: "Act."}, {Role: chat.User, Content: "Task: buy socks."}}
	for i := 0; i < 30; i++ {
		msgs = append(msgs, chat.Message{Role: chat.Assistant, Content: "Action: look"},
			chat.Message{Role: chat.User, Content: "You see nothing special in the room number " + strings.Repeat("x", i)})
	}
	msgs = append(msgs, chat.Message{Role: chat.Assistant, Content: "Action: look"}, chat.Message{Role: chat.User, Content: "LATEST"})
	tokens, err := p.Prompt(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) > 256-32 {
		t.Fatalf("prompt of %d tokens exceeds the budget", len(tokens))
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
	if _, err := p.Prompt(huge); err == nil || !strings.Contains(err.Error(), "context") {
		t.Fatalf("want a context error for a system prompt that cannot fit, got %v", err)
	}
}
