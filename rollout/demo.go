package rollout

import (
	"strings"

	"github.com/agentrl/agentrl/chat"
)

// Demonstration is a trajectory as a supervised fine-tuning example, in the
// common chat format: {"messages": [{"role": "system", ...}, ...]}.
type Demonstration struct {
	Messages []chat.Message `json:"messages"`
}

// Conversation is the episode t as the policy played it: the instruction
// as the system message, each observation as a user message and each
// action as the assistant message the policy wrote, raw text and all, as
// the runner's history holds them. It holds every step, also those a
// policy with a short context no longer saw (Step.DroppedMessages).
func Conversation(t *Trajectory) []chat.Message {
	msgs := make([]chat.Message, 0, 1+2*len(t.Steps))
	msgs = append(msgs, chat.Message{Role: chat.System, Content: t.Instruction})
	for _, s := range t.Steps {
		msgs = append(msgs,
			chat.Message{Role: chat.User, Content: s.Observation},
			chat.Message{Role: chat.Assistant, Content: s.Action},
		)
	}
	return msgs
}

// NewDemonstration turns t into a conversation: the instruction as the
// system message, each observation as a user message and each action as an
// assistant message written "Action: <parsed action>", the format every
// environment's instruction asks for. Writing the parsed action rather
// than the raw text drops whatever else the acting policy produced, so
// demonstrations from any policy teach the same clean format. Where the
// environment reads the whole reply (t.WholeReply: math's worked
// solution), the reply is what it graded and is kept as it was.
func NewDemonstration(t *Trajectory) Demonstration {
	msgs := make([]chat.Message, 0, 1+2*len(t.Steps))
	msgs = append(msgs, chat.Message{Role: chat.System, Content: t.Instruction})
	for _, s := range t.Steps {
		action := "Action: " + s.ParsedAction
		if t.WholeReply {
			action = strings.TrimSpace(s.Action)
		}
		msgs = append(msgs,
			chat.Message{Role: chat.User, Content: s.Observation},
			chat.Message{Role: chat.Assistant, Content: action},
		)
	}
	return Demonstration{Messages: msgs}
}
