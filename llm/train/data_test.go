package train

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/llm"
)

func loadTokenizer(t *testing.T) *llm.Model {
	t.Helper()
	m, err := llm.Load(makeModel(t, "micro", microConfig(5)), llm.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// targets detokenises the runs of weighted tokens.
func targets(t *testing.T, m *llm.Model, s Sequence) []string {
	t.Helper()
	var out []string
	var run []int32
	flush := func() {
		if len(run) > 0 {
			text, err := m.Detokenize(run, true)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, text)
			run = nil
		}
	}
	for i, tok := range s.Tokens {
		if s.Weights[i] != 0 {
			run = append(run, tok)
		} else {
			flush()
		}
	}
	flush()
	return out
}

func TestReadSFTChat(t *testing.T) {
	m := loadTokenizer(t)
	data := `{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is the mug?"}, {"role": "assistant", "content": "On the table."}, {"role": "user", "content": "And the key?"}, {"role": "assistant", "content": "In the drawer."}]}

{"prompt": "Task: open the door.", "completion": " Action: open door"}
`
	seqs, err := ReadSFT(strings.NewReader(data), "data.jsonl", m, 512)
	if err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 2 {
		t.Fatalf("%d sequences, want 2", len(seqs))
	}
	got := targets(t, m, seqs[0])
	want := []string{"On the table.<|im_end|>", "In the drawer.<|im_end|>"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("chat targets %q, want %q", got, want)
	}
	// Context and targets together are the rendered conversation.
	msgs := []chat.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Where is the mug?"}, {Role: "assistant", Content: "On the table."}, {Role: "user", Content: "And the key?"}, {Role: "assistant", Content: "In the drawer."}}
	all, err := m.Detokenize(seqs[0].Tokens, true)
	if err != nil {
		t.Fatal(err)
	}
	if rendered := m.RenderChat(msgs, false); strings.TrimPrefix(all, "<s>") != rendered {
		t.Errorf("tokens render as %q, the template gives %q", all, rendered)
	}
	got = targets(t, m, seqs[1])
	if len(got) != 1 || got[0] != " Action: open door</s>" {
		t.Errorf("completion targets %q", got)
	}
}

func TestReadSFTErrors(t *testing.T) {
	m := loadTokenizer(t)
	long := strings.Repeat("word ", 400)
	for name, tc := range map[string]struct{ data, want string }{
		"empty":            {"\n\n", "no examples"},
		"malformed":        {`{"prompt": "a", "completion": "b"}` + "\n\n" + `{"prompt": "a", "completion": ` + "\n", "data.jsonl:3:"},
		"unknown field":    {`{"prompt": "a", "answer": "b"}`, "data.jsonl:1:"},
		"both formats":     {`{"prompt": "a", "completion": "b", "messages": [{"role": "user", "content": "x"}]}`, "either messages or prompt"},
		"no assistant":     {`{"messages": [{"role": "user", "content": "hello"}]}`, "no assistant message"},
		"too long":         {`{"prompt": "` + long + `", "completion": "b"}`, "exceed the context of 128"},
		"empty completion": {`{"prompt": "a", "completion": ""}`, "empty completion"},
		"two on a line":    {`{"prompt": "a", "completion": "b"}{"prompt": "c", "completion": "d"}`, "data.jsonl:1: more than one JSON value"},
	} {
		_, err := ReadSFT(strings.NewReader(tc.data), "data.jsonl", m, 128)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
	// A byte-order mark before the first line is not part of it.
	if seqs, err := ReadSFT(strings.NewReader("\ufeff"+`{"prompt": "a", "completion": "b"}`), "bom.jsonl", m, 128); err != nil || len(seqs) != 1 {
		t.Errorf("a file with a byte-order mark: %d sequences, %v", len(seqs), err)
	}
}

func TestChunkCorpus(t *testing.T) {
	m := loadTokenizer(t)
	seqs, err := ChunkCorpus([]string{strings.Repeat("the cat sat on the mat. ", 20)}, m, 16)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, s := range seqs {
		if len(s.Tokens) > 16 || (i < len(seqs)-1 && len(s.Tokens) != 16) {
			t.Fatalf("sequence %d has %d tokens", i, len(s.Tokens))
		}
		total += len(s.Tokens)
	}
	whole, _ := m.Tokenize(strings.Repeat("the cat sat on the mat. ", 20), true, false)
	if total != len(whole) || seqs[0].Tokens[0] != m.Info().BOS {
		t.Errorf("%d tokens in chunks, %d in the text", total, len(whole))
	}
	if _, err := ChunkCorpus([]string{""}, m, 16); err == nil {
		t.Error("empty corpus accepted")
	}
}

// TestAssistantTurn checks the split of a conversation into the prompt
// and the assistant's turn against the training sequence of the same
// conversation, and the action sequence built from them.
func TestAssistantTurn(t *testing.T) {
	m := loadTokenizer(t)
	msgs := []chat.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Where is the mug?"}, {Role: "assistant", Content: "On the table."}}
	prompt, turn, err := AssistantTurn(m, msgs)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := ChatSequence(m, msgs)
	if err != nil {
		t.Fatal(err)
	}
	s := ActionSequence(prompt, turn)
	// The same tokens as the conversation's training sequence, less what
	// the template puts after the end-of-turn token, and the same
	// targets.
	if len(s.Tokens) > len(whole.Tokens) {
		t.Fatalf("%d tokens, the whole conversation has %d", len(s.Tokens), len(whole.Tokens))
	}
	for i := range s.Tokens {
		if s.Tokens[i] != whole.Tokens[i] || s.Weights[i] != whole.Weights[i] {
			t.Fatalf("token %d: %d (weight %v), the conversation's %d (weight %v)", i, s.Tokens[i], s.Weights[i], whole.Tokens[i], whole.Weights[i])
		}
	}
	if got := targets(t, m, s); len(got) != 1 || got[0] != "On the table.<|im_end|>" {
		t.Errorf("targets %q", got)
	}
	if !m.IsEOG(turn[len(turn)-1]) {
		t.Error("the turn does not end with its end-of-turn token")
	}
	if _, _, err := AssistantTurn(m, msgs[:2]); err == nil || !strings.Contains(err.Error(), "does not end with an assistant message") {
		t.Errorf("a conversation ending with the user: %v", err)
	}
}

// TestChatSequenceOfLearnsOnlyItsTargets checks that an assistant turn
// left out of the targets (a dataset's "OK" marked not to be learned) is
// context: the same tokens as ChatSequence, no weight on them.
func TestChatSequenceOfLearnsOnlyItsTargets(t *testing.T) {
	m := loadTokenizer(t)
	msgs := []chat.Message{{Role: "user", Content: "Rules: be brief."}, {Role: "assistant", Content: "OK"},
		{Role: "user", Content: "Where is the mug?"}, {Role: "assistant", Content: "On the table."}}
	all, err := ChatSequence(m, msgs)
	if err != nil {
		t.Fatal(err)
	}
	some, err := ChatSequenceOf(m, msgs, []int{3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(all.Tokens, some.Tokens) {
		t.Fatal("the tokens differ from the whole conversation's")
	}
	if got := targets(t, m, all); len(got) != 2 {
		t.Fatalf("ChatSequence's targets %q", got)
	}
	if got := targets(t, m, some); len(got) != 1 || got[0] != "On the table.<|im_end|>" {
		t.Errorf("targets %q, want the last turn only", got)
	}
	for _, bad := range [][]int{{0}, {4}, {}} {
		if _, err := ChatSequenceOf(m, msgs, bad); err == nil {
			t.Errorf("targets %v: no error", bad)
		}
	}
}
