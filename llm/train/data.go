package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/llm"
)

// Tokenizer is what the data readers need of a model; *llm.Model has it.
type Tokenizer interface {
	Tokenize(text string, addBOS, parseSpecial bool) ([]int32, error)
	RenderChat(msgs []chat.Message, addAssistant bool) string
	IsEOG(token int32) bool
	Info() llm.Info
}

// sftLine is one line of a supervised fine-tuning file.
type sftLine struct {
	Prompt     *string        `json:"prompt"`
	Completion *string        `json:"completion"`
	Messages   []chat.Message `json:"messages"`
}

// ReadSFTFile reads a supervised fine-tuning file; see ReadSFT.
func ReadSFTFile(path string, tok Tokenizer, maxLen int) ([]Sequence, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadSFT(f, path, tok, maxLen)
}

// ReadSFT reads supervised fine-tuning examples, one JSON object per line
// (blank lines are skipped):
//
//   - {"prompt": "...", "completion": "..."}: raw text; the prompt is
//     tokenised with BOS as the inference engine tokenises prompts, and
//     the completion, followed by the end-of-sequence token, is the
//     target;
//   - {"messages": [{"role": "...", "content": "..."}, ...]}: a chat,
//     rendered with the model's chat template as inference renders it;
//     the assistant turns, up to and including their end-of-turn token,
//     are the targets.
//
// Errors name the input and the line. Sequences longer than maxLen tokens
// are errors, not truncated.
func ReadSFT(r io.Reader, name string, tok Tokenizer, maxLen int) ([]Sequence, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 64<<20)
	var seqs []Sequence
	line := 1
	for ; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			text = bytes.TrimPrefix(text, []byte("\ufeff")) // a byte-order mark
		}
		if len(text) == 0 {
			continue
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
		}
		var ex sftLine
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ex); err != nil {
			return nil, fail("not a JSON object with prompt and completion or messages: %v", err)
		}
		if dec.More() {
			return nil, fail("more than one JSON value on the line (files joined without a newline?)")
		}
		var s Sequence
		var err error
		switch {
		case ex.Messages != nil && (ex.Prompt != nil || ex.Completion != nil):
			return nil, fail("give either messages or prompt and completion, not both")
		case ex.Messages != nil:
			s, err = ChatSequence(tok, ex.Messages)
		case ex.Prompt != nil && ex.Completion != nil:
			s, err = completionSequence(tok, *ex.Prompt, *ex.Completion)
		default:
			return nil, fail("want {\"prompt\", \"completion\"} or {\"messages\"}")
		}
		if err != nil {
			return nil, fail("%v", err)
		}
		if len(s.Tokens) > maxLen {
			return nil, fail("%d tokens exceed the context of %d", len(s.Tokens), maxLen)
		}
		seqs = append(seqs, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line, err)
	}
	if len(seqs) == 0 {
		return nil, fmt.Errorf("%s: no examples", name)
	}
	return seqs, nil
}

func completionSequence(tok Tokenizer, prompt, completion string) (Sequence, error) {
	if completion == "" {
		return Sequence{}, errors.New("empty completion")
	}
	p, err := tok.Tokenize(prompt, true, true)
	if err != nil {
		return Sequence{}, err
	}
	c, err := tok.Tokenize(completion, false, false)
	if err != nil {
		return Sequence{}, err
	}
	if eos := tok.Info().EOS; eos >= 0 {
		c = append(c, eos)
	}
	var s Sequence
	s.append(p, 0)
	s.append(c, 1)
	return s, nil
}

// ChatSequence renders a conversation as one training sequence, turn by
// turn: the text before each assistant turn (with the opening of the
// turn) is context, the turn itself target. Tokenising the pieces
// separately reproduces inference, which tokenises the rendered prompt
// and then generates the turn's tokens.
func ChatSequence(tok Tokenizer, msgs []chat.Message) (Sequence, error) {
	return chatSequence(tok, msgs, func(int) bool { return true })
}

// ChatSequenceOf is ChatSequence with only the assistant messages at the
// indices targets (into msgs) as targets; the other assistant turns are
// context, as a dataset's acknowledgements marked not to be learned are.
func ChatSequenceOf(tok Tokenizer, msgs []chat.Message, targets []int) (Sequence, error) {
	for _, i := range targets {
		if i < 0 || i >= len(msgs) || msgs[i].Role != chat.Assistant {
			return Sequence{}, fmt.Errorf("target %d is not an assistant message of the conversation", i)
		}
	}
	return chatSequence(tok, msgs, func(i int) bool { return slices.Contains(targets, i) })
}

func chatSequence(tok Tokenizer, msgs []chat.Message, target func(i int) bool) (Sequence, error) {
	var s Sequence
	done := ""
	learned := false
	for i, m := range msgs {
		if m.Role == "" {
			return s, fmt.Errorf("message %d has no role", i)
		}
		if m.Role != chat.Assistant {
			continue
		}
		prompt := tok.RenderChat(msgs[:i], true)
		full := tok.RenderChat(msgs[:i+1], false)
		if !strings.HasPrefix(prompt, done) || !strings.HasPrefix(full, prompt) {
			return s, errNotTurnByTurn
		}
		ctx, err := tok.Tokenize(prompt[len(done):], done == "", true)
		if err != nil {
			return s, err
		}
		turn, err := tok.Tokenize(full[len(prompt):], false, true)
		if err != nil {
			return s, err
		}
		s.append(ctx, 0)
		end := turnEnd(tok, turn)
		weight := float32(0)
		if target(i) {
			weight, learned = 1, true
		}
		s.append(turn[:end], weight)
		s.append(turn[end:], 0)
		done = full
	}
	if !learned {
		return s, errors.New("no assistant message to learn from")
	}
	return s, nil
}

// errNotTurnByTurn is the error of a chat template whose rendering of a
// conversation does not extend its rendering of the conversation's start.
var errNotTurnByTurn = errors.New("the chat template does not render the conversation turn by turn; cannot tell the assistant's tokens apart")

// turnEnd is the length of an assistant turn's tokens through its
// end-of-turn token: what the template puts after it (a newline) is never
// generated.
func turnEnd(tok Tokenizer, turn []int32) int {
	for k, t := range turn {
		if tok.IsEOG(t) {
			return k + 1
		}
	}
	return len(turn)
}

// AssistantTurn splits a conversation that ends with an assistant
// message into the prompt a model would be given (the conversation
// before it and the turn's opening, BOS first) and the tokens it would
// generate (the message through its end-of-turn token), each tokenised
// as inference does.
func AssistantTurn(tok Tokenizer, msgs []chat.Message) (prompt, turn []int32, err error) {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != chat.Assistant {
		return nil, nil, errors.New("the conversation does not end with an assistant message")
	}
	promptText := tok.RenderChat(msgs[:len(msgs)-1], true)
	full := tok.RenderChat(msgs, false)
	if !strings.HasPrefix(full, promptText) {
		return nil, nil, errNotTurnByTurn
	}
	if prompt, err = tok.Tokenize(promptText, true, true); err != nil {
		return nil, nil, err
	}
	if turn, err = tok.Tokenize(full[len(promptText):], false, true); err != nil {
		return nil, nil, err
	}
	return prompt, turn[:turnEnd(tok, turn)], nil
}

// ActionSequence is a prompt followed by an action's tokens, the loss on
// the action: a term of -log pi(action | prompt).
func ActionSequence(prompt, action []int32) Sequence {
	s := Sequence{Tokens: make([]int32, 0, len(prompt)+len(action)), Weights: make([]float32, len(prompt)+len(action))}
	s.Tokens = append(append(s.Tokens, prompt...), action...)
	for i := len(prompt); i < len(s.Tokens); i++ {
		s.Weights[i] = 1
	}
	return s
}

func (s *Sequence) append(tokens []int32, weight float32) {
	for _, t := range tokens {
		w := weight
		if len(s.Tokens) == 0 {
			w = 0 // nothing predicts the first token
		}
		s.Tokens = append(s.Tokens, t)
		s.Weights = append(s.Weights, w)
	}
}

// ChunkCorpus tokenises texts for pre-training and cuts them into
// sequences of up to seqLen tokens, every token but the first of each a
// target. Each text starts with BOS.
func ChunkCorpus(texts []string, tok Tokenizer, seqLen int) ([]Sequence, error) {
	if seqLen < 2 {
		return nil, fmt.Errorf("sequence length %d must be at least 2", seqLen)
	}
	var seqs []Sequence
	for i, text := range texts {
		tokens, err := tok.Tokenize(text, true, false)
		if err != nil {
			return nil, fmt.Errorf("text %d: %w", i, err)
		}
		for start := 0; start+1 < len(tokens); start += seqLen {
			seqs = append(seqs, Sequence{Tokens: tokens[start:min(start+seqLen, len(tokens))]})
		}
	}
	if len(seqs) == 0 {
		return nil, errors.New("the corpus has no text")
	}
	return seqs, nil
}
