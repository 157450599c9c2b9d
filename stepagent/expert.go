package stepagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/rl"
	"github.com/agentrl/agentrl/rollout"
)

// Trajectory is an expert demonstration as a conversation: an optional
// system message, then observations (user) and actions (assistant). Its
// steps are the assistant messages that are actions (Steps).
type Trajectory struct {
	// Source says where it comes from: "FILE:LINE" or "expert, train
	// seed S".
	Source   string
	Messages []chat.Message
	// Steps are the indices in Messages of the actions to inspect.
	Steps []int
}

// ReadExperts reads expert conversations from a JSONL file, one per line,
// in either format public agent datasets ship:
//
//	{"conversations": [{"from": "human"|"gpt"|"system", "value": "..."}, ...]}  (AgentInstruct, ETO)
//	{"messages": [{"role": "user"|"assistant"|"system", "content": "..."}, ...]}
//
// Other fields of a line (an id, ...) are ignored. A turn marked
// "loss": false (AgentInstruct's acknowledgements) is context, not a step.
// A malformed line is an error naming the file and line.
func ReadExperts(path string) ([]Trajectory, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("expert file: %w", err)
	}
	defer f.Close()
	return readExperts(f, path)
}

// expertLine is one line of an expert file in either format.
type expertLine struct {
	Conversations []struct {
		From  string  `json:"from"`
		Value *string `json:"value"`
		Loss  *bool   `json:"loss"`
	} `json:"conversations"`
	Messages []struct {
		Role    string  `json:"role"`
		Content *string `json:"content"`
		Loss    *bool   `json:"loss"`
	} `json:"messages"`
}

var fromRoles = map[string]string{
	"human": chat.User, "user": chat.User, "gpt": chat.Assistant, "assistant": chat.Assistant, "system": chat.System,
}

func readExperts(r io.Reader, name string) ([]Trajectory, error) {
	br := bufio.NewReader(r)
	var out []Trajectory
	for line := 1; ; line++ {
		data, err := br.ReadBytes('\n')
		if line == 1 {
			data = bytes.TrimPrefix(data, []byte("\ufeff")) // a byte-order mark
		}
		if len(bytes.TrimSpace(data)) > 0 {
			t, perr := parseExpertLine(data)
			if perr != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, line, perr)
			}
			t.Source = fmt.Sprintf("%s:%d", name, line)
			out = append(out, t)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no expert conversations", name)
	}
	return out, nil
}

func parseExpertLine(data []byte) (Trajectory, error) {
	var l expertLine
	if err := json.Unmarshal(data, &l); err != nil {
		return Trajectory{}, err
	}
	var t Trajectory
	// add appends one turn; a missing text is an error rather than an
	// empty turn, which as a step would teach the agent to say nothing.
	add := func(turn, role string, content *string, field string, loss *bool) error {
		if content == nil {
			return fmt.Errorf("%s: no %q (or it is null)", turn, field)
		}
		if role == chat.Assistant && (loss == nil || *loss) {
			if strings.TrimSpace(*content) == "" {
				return fmt.Errorf("%s: an empty action", turn)
			}
			t.Steps = append(t.Steps, len(t.Messages))
		}
		t.Messages = append(t.Messages, chat.Message{Role: role, Content: *content})
		return nil
	}
	switch {
	case len(l.Conversations) > 0 && len(l.Messages) > 0:
		return t, errors.New(`both "conversations" and "messages": want one`)
	case len(l.Conversations) > 0:
		for i, c := range l.Conversations {
			role, ok := fromRoles[c.From]
			if !ok {
				return t, fmt.Errorf("conversation turn %d: unknown speaker %q (want human, gpt or system)", i+1, c.From)
			}
			if err := add(fmt.Sprintf("conversation turn %d", i+1), role, c.Value, "value", c.Loss); err != nil {
				return t, err
			}
		}
	case len(l.Messages) > 0:
		for i, m := range l.Messages {
			role, ok := fromRoles[m.Role]
			if !ok {
				return t, fmt.Errorf("message %d: unknown role %q (want user, assistant or system)", i+1, m.Role)
			}
			if err := add(fmt.Sprintf("message %d", i+1), role, m.Content, "content", m.Loss); err != nil {
				return t, err
			}
		}
	default:
		return t, errors.New(`no "conversations" or "messages"`)
	}
	for i, m := range t.Messages {
		if m.Role == chat.System && i > 0 {
			return t, fmt.Errorf("message %d: a system message after the first", i+1)
		}
		// An agent's conversation alternates: a prefix ending with an
		// assistant turn, or two observations rendered as two user turns,
		// is a state inference never produces.
		if i > 0 && m.Role == t.Messages[i-1].Role {
			return t, fmt.Errorf("message %d: two %s turns in a row (want the user's and the assistant's turns by turns)", i+1, m.Role)
		}
	}
	if len(t.Steps) == 0 {
		return t, errors.New("no assistant turn to learn from")
	}
	if t.Messages[0].Role == chat.Assistant || (t.Messages[0].Role == chat.System && len(t.Messages) > 1 && t.Messages[1].Role == chat.Assistant) {
		return t, errors.New("the conversation begins with an assistant turn: there is no task to act on")
	}
	return t, nil
}

// builtinExperts plays the environment's expert on n train tasks from
// seed0 and returns its successful episodes as conversations.
func builtinExperts(ctx context.Context, r *rl.Run, seed0 int64, n int) ([]Trajectory, error) {
	eps, err := r.ExpertEpisodes(ctx, seed0, n)
	if err != nil {
		return nil, err
	}
	out, err := successfulExperts(eps)
	if err != nil {
		return nil, fmt.Errorf("%w (train tasks from seed %d)", err, seed0)
	}
	return out, nil
}

// successfulExperts are the expert episodes that succeeded, as expert
// trajectories.
func successfulExperts(eps []rollout.Trajectory) ([]Trajectory, error) {
	var out []Trajectory
	for i := range eps {
		e := &eps[i]
		if e.Error != "" || !e.Success {
			continue
		}
		d := rollout.NewDemonstration(e)
		t := Trajectory{Source: fmt.Sprintf("expert, train seed %d", e.Seed), Messages: d.Messages}
		for k, m := range d.Messages {
			if m.Role == chat.Assistant {
				t.Steps = append(t.Steps, k)
			}
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the expert succeeded on none of %d train tasks", len(eps))
	}
	return out, nil
}
