package rollout

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/llm"
)

// LLMPolicy acts by sampling from a language model. Each request's
// conversation is rendered with the model's chat template; when it does not
// fit the engine's context, old turns are left out (see Prompt).
//
// Each runner slot's conversation is an engine session, so a turn evaluates
// only the tokens added since the previous one; the engine compares tokens,
// so a new episode in the slot or a history cut to fit the context reuses
// what still matches (the system prompt at least) and evaluates the rest.
// Close the policy when the run is over.
type LLMPolicy struct {
	Engine   *llm.Engine
	Sampling llm.Sampling
	Adapters []llm.AdapterScale

	mu    sync.Mutex
	slots map[int]*slotState // by runner slot
}

// slotState is what the policy keeps of a runner slot's conversation.
type slotState struct {
	session *llm.Session
	// episode, messages and dropped describe the slot's last prompt: its
	// episode, its number of messages and how many it left out. A longer
	// conversation of the same episode starts from the same cut.
	episode, messages, dropped int
}

// slot returns the state of a runner slot.
func (p *LLMPolicy) slot(n int) *slotState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.slots == nil {
		p.slots = map[int]*slotState{}
	}
	s, ok := p.slots[n]
	if !ok {
		s = &slotState{session: p.Engine.NewSession(), episode: -1}
		p.slots[n] = s
	}
	return s
}

// Close ends the policy's engine sessions; their cached cells become
// ordinary cache entries. The engine stays open.
func (p *LLMPolicy) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slots {
		s.session.Close()
	}
	p.slots = nil
}

// DefaultActionSampling samples actions at temperature 1 with at most 128
// tokens each.
func DefaultActionSampling() llm.Sampling {
	s := llm.DefaultSampling()
	s.MaxTokens = 128
	return s
}

// Act implements Policy. A request whose conversation cannot fit the
// context is answered with Response.ContextFull; the others are generated.
func (p *LLMPolicy) Act(ctx context.Context, batch []Request) ([]Response, error) {
	out := make([]Response, len(batch))
	reqs := make([]llm.GenerateRequest, 0, len(batch))
	served := make([]int, 0, len(batch)) // batch index of each of reqs
	for i, r := range batch {
		slot := p.slot(r.Slot)
		droppedBefore := 0
		if slot.episode == r.Episode && slot.messages < len(r.Messages) {
			droppedBefore = slot.dropped
		}
		tokens, dropped, err := p.Prompt(r.Messages, droppedBefore)
		var full *ContextFullError
		if errors.As(err, &full) {
			out[i].ContextFull = fmt.Errorf("%s: %w", r.Env, err)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Env, err)
		}
		slot.episode, slot.messages, slot.dropped = r.Episode, len(r.Messages), dropped
		reqs = append(reqs, llm.GenerateRequest{Tokens: tokens, Session: slot.session, Stream: turnStream(r.Episode, len(r.Messages))})
		served = append(served, i)
		out[i] = Response{PromptTokenIDs: tokens, DroppedMessages: dropped}
	}
	if len(reqs) == 0 {
		return out, nil
	}
	res, err := p.Engine.Generate(ctx, reqs, p.Sampling, llm.CallOptions{Adapters: p.Adapters})
	if err != nil {
		return nil, err
	}
	for k, i := range served {
		c := res[k][0]
		out[i].Text, out[i].TokenIDs, out[i].LogProbs = c.Text, c.Tokens, c.LogProbs
	}
	return out, nil
}

// ContextFullError is Prompt's error for a conversation that cannot fit
// the context even with only the system message and the latest
// observation kept.
type ContextFullError struct {
	Tokens, Budget, ActionTokens int
}

func (e *ContextFullError) Error() string {
	return fmt.Sprintf("the prompt takes %d tokens, more than the %d the context leaves after %d for the action", e.Tokens, e.Budget, e.ActionTokens)
}

// Prompt renders a conversation as prompt tokens that leave room for
// Sampling.MaxTokens in the engine's context, and says how many messages
// it left out. droppedBefore is what the previous turn of the same
// conversation left out (0 for a first turn).
//
// When the whole conversation does not fit, the oldest exchanges between
// the first observation (which states the task) and the latest one are
// left out, a pair at a time. A later turn leaves out the same messages
// as long as its prompt fits, so that the kept history stays a prefix of
// the next turn's prompt and the engine session reuses it. When it no
// longer fits, enough old exchanges go for the history to take at most
// half of the room the context leaves after the task and the latest
// exchange: the next few turns then fit without another cut. As a last
// resort only the system message and the latest observation remain.
func (p *LLMPolicy) Prompt(msgs []chat.Message, droppedBefore int) (tokens []int32, dropped int, err error) {
	m := p.Engine.Model()
	budget := p.Engine.Options().Context - p.Sampling.MaxTokens
	render := func(kept []chat.Message) ([]int32, error) {
		return m.Tokenize(m.RenderChat(kept, true), true, true)
	}
	if len(msgs) == 0 {
		return nil, 0, errors.New("empty conversation")
	}
	// head: up to and including the first observation.
	head := 1
	if msgs[0].Role == chat.System {
		head = 2
	}
	if droppedBefore < 0 || droppedBefore%2 != 0 || droppedBefore > len(msgs)-2-head {
		droppedBefore = 0
	}
	last := msgs[len(msgs)-1]
	without := func(drop int) []chat.Message {
		kept := append([]chat.Message(nil), msgs[:head]...)
		return append(append(kept, msgs[head+drop:len(msgs)-1]...), last)
	}
	if droppedBefore == 0 {
		tokens, err = render(msgs)
	} else {
		tokens, err = render(without(droppedBefore))
	}
	if err != nil || len(tokens) <= budget {
		return tokens, droppedBefore, err
	}
	if len(msgs) > head+1 {
		// The middle runs from an action to an action; keeping its last
		// action keeps the roles alternating.
		most := len(msgs) - 2 - head
		bare, err := render(without(most))
		if err != nil {
			return nil, 0, err
		}
		if len(bare) <= budget {
			target := len(bare) + (budget-len(bare))/2
			for drop := droppedBefore + 2; drop < most; drop += 2 {
				if tokens, err = render(without(drop)); err != nil || len(tokens) <= target {
					return tokens, drop, err
				}
			}
			return bare, most, nil
		}
		kept := append(append([]chat.Message(nil), msgs[:head-1]...), last)
		if tokens, err = render(kept); err != nil || len(tokens) <= budget {
			return tokens, len(msgs) - len(kept), err
		}
	}
	return nil, 0, &ContextFullError{Tokens: len(tokens), Budget: budget, ActionTokens: p.Sampling.MaxTokens}
}

// turnStream is the random stream of one turn of one episode. The engine
// starts a stream's generator afresh at every call, so one stream per
// episode gave each of its turns the same random numbers: the k-th token
// of every turn drawn with the same uniform, turns that should be
// independent draws of the policy correlated. The conversation's length
// numbers the turn.
func turnStream(episode, messages int) uint64 {
	return uint64(episode)<<20 | uint64(messages)
}
