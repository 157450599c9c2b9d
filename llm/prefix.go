package llm

import (
	"slices"

	"github.com/agentrl/agentrl/cgo"
)

// The prefix cache. With a KV stream per sequence (the default), every
// llama.cpp sequence id has a stream of Context cells of its own. A slot is
// one such id; when its sequence finishes, the slot keeps the cells and
// remembers their tokens and adapter set. A new sequence then takes
//
//   - a free slot that already holds a prefix of its prompt (its own
//     session's, or any entry no open session owns), cut back to the common
//     prefix, evaluating only the rest; or
//   - a copy of a longer prefix held by another slot: an active sequence
//     evaluating the same prompt (K continuations of one state, N episodes
//     with one system prompt) or another open session's entry. llama.cpp
//     copies a whole stream between streams (seq_cp across streams supports
//     only full copies), so the copy is made into an evicted slot and cut
//     back to the shared prefix; it is worth it from minCopiedPrefix tokens.
//
// Otherwise the least recently used free slot is evicted (an empty one
// first; an open session's last). Entries are matched on tokens and adapter
// set, so reuse never changes results, and eviction only costs speed.

// minCopiedPrefix is the shortest shared prefix copied from another stream
// rather than evaluated: a copy moves a whole stream of Context cells.
const minCopiedPrefix = 16

// kvSlot is one llama.cpp sequence id and, with a stream per sequence, its
// KV stream.
type kvSlot struct {
	id  int
	seq *sequence // decoding in the slot, nil when free
	// Free slots: the tokens whose cells the stream holds at positions 0 to
	// len-1, the adapter set they were computed under, and the session
	// that left them.
	tokens   []int32
	adapters []AdapterScale
	session  *Session
	lastUse  uint64 // scheduler tick of the last release
}

// clear drops the slot's cells.
func (sl *kvSlot) clear(ctx *cgo.Context) {
	ctx.SeqRemove(sl.id, -1, -1)
	sl.tokens, sl.adapters, sl.session = nil, nil, nil
}

// held is the tokens whose cells the slot holds now.
func (sl *kvSlot) held() []int32 {
	if sl.seq != nil {
		return sl.seq.held()
	}
	return sl.tokens
}

// caching reports whether cells are kept between sequences. A recurrent
// model's memory refuses to be cut back to a shared prefix
// (llama.cpp leaves it as it was), and the next decode, whose positions
// then do not follow on, would fail every sequence of its batch.
func (s *scheduler) caching() bool {
	return !s.e.opts.NoPrefixCache && !s.e.opts.SharedKV && !s.e.model.recurrent
}

// CommonPrefix is the number of leading tokens a and b have in common.
func CommonPrefix(a, b []int32) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// place gives a waiting sequence a slot, reusing or copying the longest
// cached prefix of its prompt (see the top of this file).
func (s *scheduler) place(q *sequence) {
	if !s.caching() {
		sl := s.victim(nil)
		sl.clear(s.e.ctx)
		s.take(q, sl)
		return
	}
	want := q.tokens[:q.firstOutput()]
	var reuse, src *kvSlot
	reuseLen, srcLen := 0, 0
	for _, sl := range s.slots {
		if sl.seq != nil {
			// An active sequence (under the current adapters) will hold its
			// prompt once evaluated; one waiting for cells itself is no source.
			if a := sl.seq; a.prefixFrom == nil && !a.awaitsCopy {
				if n := CommonPrefix(a.tokens, want); n > srcLen {
					src, srcLen = sl, n
				}
			}
			continue
		}
		if !sameAdapters(sl.adapters, s.adapters) {
			continue
		}
		n := CommonPrefix(sl.tokens, want)
		if n == 0 {
			continue
		}
		if sl.session.open() && sl.session != q.session {
			// Another open conversation's cells: copy, do not take.
			if n > srcLen {
				src, srcLen = sl, n
			}
			continue
		}
		if n > reuseLen || (n == reuseLen && q.session != nil && sl.session == q.session) {
			reuse, reuseLen = sl, n
		}
	}
	if reuse != nil && s.keeps(q, reuse, reuseLen) {
		// Taking the slot would drop cells a later prompt may want, and
		// another slot is the one to evict: copy the shared prefix there
		// (or, too short to copy, evaluate everything there).
		if reuseLen > srcLen {
			src, srcLen = reuse, reuseLen
		}
		reuse, reuseLen = nil, 0
	}
	if src != nil && srcLen >= reuseLen+minCopiedPrefix {
		if dst := s.victim(src); dst != nil {
			dst.clear(s.e.ctx)
			s.take(q, dst)
			q.prefixFrom, q.prefixLen = src, srcLen
			s.tick++
			src.lastUse = s.tick
			return
		}
	}
	if reuse == nil {
		reuse = s.victim(nil)
		reuse.clear(s.e.ctx)
	}
	s.take(q, reuse)
	s.e.ctx.SeqRemove(reuse.id, reuseLen, -1)
	q.fed = reuseLen
	s.e.stats.cachedTokens.Add(int64(reuseLen))
}

// keeps reports whether q, sharing n tokens with free slot sl, should
// leave sl's cells alone: sl holds more than the shared prefix (another
// prompt's tail, not q's own conversation's last turn), and least recently
// used eviction would take another slot. Several prompts with a common
// head (the roles of one transition, the candidates of one state) then
// each keep their cells while the streams last, instead of cutting back
// each other's.
func (s *scheduler) keeps(q *sequence, sl *kvSlot, n int) bool {
	if q.session != nil && sl.session == q.session {
		return false
	}
	if len(sl.tokens)-n < minCopiedPrefix {
		return false
	}
	return s.victim(nil) != sl
}

// victim is the free slot to evict: an empty one (lowest id first, which
// keeps active ids dense), else the least recently used, an open session's
// last; a slot whose cells a placed sequence is still to copy (its
// prefixFrom) only when no other is free. exclude is never chosen; nil
// means no free slot is left.
func (s *scheduler) victim(exclude *kvSlot) *kvSlot {
	var best, source *kvSlot
	for _, sl := range s.slots {
		switch {
		case sl.seq != nil || sl == exclude:
		case s.copySource(sl):
			if source == nil || evictsBefore(sl, source) {
				source = sl
			}
		case best == nil || evictsBefore(sl, best):
			best = sl
		}
	}
	if best == nil {
		return source
	}
	return best
}

// copySource reports whether an active sequence is to copy sl's cells.
func (s *scheduler) copySource(sl *kvSlot) bool {
	return slices.ContainsFunc(s.active, func(q *sequence) bool { return q.prefixFrom == sl })
}

func evictsBefore(a, b *kvSlot) bool {
	if ae, be := len(a.tokens) == 0, len(b.tokens) == 0; ae != be {
		return ae
	}
	if ao, bo := a.session.open(), b.session.open(); ao != bo {
		return bo
	}
	if a.lastUse != b.lastUse && len(a.tokens) > 0 {
		return a.lastUse < b.lastUse
	}
	return a.id < b.id
}

// copyPrefixes gives the sequences waiting for a prefix held by another slot
// their copy once that slot holds it. A source that will not hold it (its
// slot was evicted or taken over) yields what it still shares, or nothing.
func (s *scheduler) copyPrefixes() {
	for _, q := range s.active {
		src := q.prefixFrom
		if src == nil {
			continue
		}
		want := q.tokens[:q.firstOutput()]
		// A sequence that took the source over and will evaluate the
		// prefix is waited for, unless it waits for cells itself: a
		// sample of q's own prompt, given the source when no other slot
		// was free, waits for q, and q would wait for it for ever.
		if a := src.seq; a != nil && !a.generating() && a.fed < q.prefixLen && CommonPrefix(a.tokens, want) >= q.prefixLen &&
			!a.awaitsCopy && a.prefixFrom == nil {
			continue // still evaluating the prefix
		}
		n := 0
		if src.seq != nil || sameAdapters(src.adapters, s.adapters) {
			n = min(CommonPrefix(src.held(), want), q.prefixLen)
		}
		q.prefixFrom, q.prefixLen = nil, 0
		if n < minCopiedPrefix {
			continue
		}
		s.copyStream(src, q.slot)
		s.e.ctx.SeqRemove(q.slot.id, n, -1)
		q.fed = n
		s.e.stats.cachedTokens.Add(int64(n))
	}
}

// copyStream makes dst hold src's cells. Across streams llama.cpp queues a
// copy of the whole stream, made at the start of the next decode, before
// that decode writes any cell, so the copy is what src holds now.
func (s *scheduler) copyStream(src, dst *kvSlot) {
	s.e.ctx.SeqCopy(src.id, dst.id, -1, -1)
	if !s.e.opts.SharedKV {
		s.e.stats.streamCopies.Add(1)
	}
}

// dropAdapter empties the free slots computed with a.
func (s *scheduler) dropAdapter(a *Adapter) {
	for _, sl := range s.slots {
		if sl.seq == nil && slices.ContainsFunc(sl.adapters, func(x AdapterScale) bool { return x.Adapter == a }) {
			sl.clear(s.e.ctx)
		}
	}
}
