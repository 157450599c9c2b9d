package llm

import (
	"context"
	"errors"
	"sync/atomic"
)

// Session is one conversation (an episode, a state an evaluator keeps
// coming back to) whose KV cells the engine keeps between calls: each call
// passes the whole prompt as usual, and the engine evaluates only the tokens
// after the longest prefix it still holds. A session never changes results,
// only speed: the engine compares tokens, so a prompt that no longer
// extends the last one (history dropped to fit the context, a new episode)
// reuses what matches and evaluates the rest.
//
// Any prompt profits from the prefix cache, with or without a session; a
// session makes its conversation's cells the last the engine evicts while
// the session is open, and keeps other callers from taking them over (they
// copy the shared part instead). Close it when the conversation ends.
type Session struct {
	e      *Engine
	closed atomic.Bool
}

// NewSession opens a conversation on the engine.
func (e *Engine) NewSession() *Session { return &Session{e: e} }

// Close ends the session; its cells become ordinary cache entries, evicted
// least recently used first. Using a closed session is an error.
func (s *Session) Close() { s.closed.Store(true) }

func (s *Session) open() bool { return s != nil && !s.closed.Load() }

var errSessionClosed = errors.New("session used after Close")

func (e *Engine) checkSession(s *Session) error {
	switch {
	case s == nil:
		return nil
	case s.e != e:
		return errors.New("session belongs to another engine")
	case s.closed.Load():
		return errSessionClosed
	}
	return nil
}

// CacheTokens is the number of tokens the KV cache holds: one stream of
// Context tokens per sequence slot (see EngineOptions.CacheMiB).
func (e *Engine) CacheTokens() int { return e.opts.streams(e.model.info) * e.opts.Context }

// DropAdapter removes from the prefix cache every entry computed with the
// adapter active, freeing its cells. Call it when an adapter is replaced by
// an updated one (a new Adapter, which never matches the old one's
// entries), after the last call using the old one has returned.
func (e *Engine) DropAdapter(ctx context.Context, a *Adapter) error {
	j := e.newJob(ctx, CallOptions{})
	j.control = func(s *scheduler) { s.dropAdapter(a) }
	return e.run(ctx, j)
}
