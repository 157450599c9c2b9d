package rollout

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/llm"
)

// LLMPolicy acts by sampling from a language model. Each request's
// conversation is rendered with the model's chat template; when it does not
// fit the engine's context, the oldest turns after the first observation
// (which states the task) are dropped.
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

	mu       sync.Mutex
	sessions map[int]*llm.Session // by runner slot
}

// session returns the engine session of a runner slot.
func (p *LLMPolicy) session(slot int) *llm.Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sessions == nil {
		p.sessions = map[int]*llm.Session{}
	}
	s, ok := p.sessions[slot]
	if !ok {
		s = p.Engine.NewSession()
		p.sessions[slot] = s
	}
	return s
}

// Close ends the policy's engine sessions; their cached cells become
// ordinary cache entries. The engine stays open.
func (p *LLMPolicy) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.sessions {
		s.Close()
	}
	p.sessions = nil
}

// DefaultActionSampling samples actions at temperature 1 with at most 128
// tokens each.
func DefaultActionSampling() llm.Sampling {
	s := llm.DefaultSampling()
	s.MaxTokens = 128
	return s
}

// Act implements Policy.
func (p *LLMPolicy) Act(ctx context.Context, batch []Request) ([]Response, error) {
	reqs := make([]llm.GenerateRequest, len(batch))
	type prompt struct {
		tokens  []int32
		dropped int
	}
	prompts := make([]prompt, len(batch))
	for i, r := range batch {
		tokens, dropped, err := p.Prompt(r.Messages)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Env, err)
		}
		reqs[i] = llm.GenerateRequest{Tokens: tokens, Session: p.session(r.Slot), Stream: uint64(r.Episode)}
		prompts[i] = prompt{tokens, dropped}
	}
	res, err := p.Engine.Generate(ctx, reqs, p.Sampling, llm.CallOptions{Adapters: p.Adapters})
	if err != nil {
		return nil, err
	}
	out := make([]Response, len(batch))
	for i, r := range res {
		c := r[0]
		out[i] = Response{Text: c.Text, TokenIDs: c.Tokens, LogProbs: c.LogProbs,
			PromptTokenIDs: prompts[i].tokens, DroppedMessages: prompts[i].dropped}
	}
	return out, nil
}

// Prompt renders a conversation as prompt tokens that leave room for
// Sampling.MaxTokens in the engine's context, and says how many messages
// it left out. When the whole conversation does not fit, the oldest
// exchanges between the first observation (which states the task) and the
// latest one are dropped, a pair at a time; as a last resort only the
// system message and the latest observation remain.
func (p *LLMPolicy) Prompt(msgs []chat.Message) (tokens []int32, dropped int, err error) {
	m := p.Engine.Model()
	budget := p.Engine.Options().Context - p.Sampling.MaxTokens
	render := func(kept []chat.Message) ([]int32, bool, error) {
		tokens, err := m.Tokenize(m.RenderChat(kept, true), true, true)
		return tokens, len(tokens) <= budget, err
	}
	tokens, fits, err := render(msgs)
	if err != nil || fits {
		return tokens, 0, err
	}
	// head: up to and including the first observation.
	head := 1
	if len(msgs) > 0 && msgs[0].Role == chat.System {
		head = 2
	}
	if len(msgs) > head+1 {
		last := msgs[len(msgs)-1]
		middle := msgs[head : len(msgs)-1] // assistant, user, ..., assistant
		for drop := 2; drop < len(middle); drop += 2 {
			kept := append(append(append([]chat.Message(nil), msgs[:head]...), middle[drop:]...), last)
			if tokens, fits, err = render(kept); err != nil || fits {
				return tokens, drop, err
			}
		}
		kept := append(append([]chat.Message(nil), msgs[:head-1]...), last)
		if tokens, fits, err = render(kept); err != nil || fits {
			return tokens, len(msgs) - len(kept), err
		}
	}
	return nil, 0, fmt.Errorf("the prompt takes %d tokens, more than the %d the context leaves after %d for the action", len(tokens), budget, p.Sampling.MaxTokens)
}
