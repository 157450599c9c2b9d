package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentrl/agentrl/cgo"
)

// errNonFinite fails a generation whose logits are not finite numbers.
var errNonFinite = errors.New("the model produced logits that are not finite numbers (NaN or Inf): a broken model file or adapter")

// job is one Generate or Score call inside the engine, or a control
// message run by the engine goroutine.
type job struct {
	ctx       context.Context
	adapters  []AdapterScale
	seqs      []*sequence // leaders, in request order
	remaining int         // sequences not finished
	control   func(*scheduler)
	err       error
	done      chan struct{}
}

func (j *job) finish(err error) {
	if j.err == nil {
		j.err = err
	}
	close(j.done)
}

// sequence is one prompt being scored, or one sample being generated.
type sequence struct {
	job     *job
	tokens  []int32 // prompt, or prompt + continuation when scoring
	fed     int     // tokens of tokens already in the KV cache
	slot    *kvSlot // nil before admission
	session *Session
	// prefixFrom is the slot whose cells this sequence copies, once they
	// hold prefixLen tokens of its prompt, instead of evaluating them.
	prefixFrom *kvSlot
	prefixLen  int

	// Scoring: the continuation starts at tokens[scoreFrom].
	score     *ScoreResult
	scoreFrom int

	// Generation.
	completion *Completion
	sampler    *sampler
	maxTokens  int
	stops      []string
	ignoreEOS  bool
	// followers are further samples of the same prompt; they take the
	// leader's KV cache once the prompt is evaluated instead of
	// re-evaluating it.
	followers  []*sequence
	awaitsCopy bool  // a follower whose leader's prompt is not evaluated yet
	next       int32 // sampled token to feed at the next decode
	text       []byte
}

// pos is the position of the next token fed to this sequence.
func (s *sequence) pos() int { return s.fed + len(s.completion.Tokens) - boolInt(s.generating()) }

// generating reports whether the prompt is evaluated and tokens are being
// sampled.
func (s *sequence) generating() bool {
	return s.score == nil && s.fed == len(s.tokens) && len(s.completion.Tokens) > 0
}

// held is the tokens whose KV cells the sequence's slot holds, at positions
// 0 to len-1: the prompt fed so far and every sampled token but the last.
func (s *sequence) held() []int32 {
	if !s.generating() {
		return s.tokens[:s.fed]
	}
	gen := s.completion.Tokens
	return append(s.tokens[:s.fed:s.fed], gen[:len(gen)-1]...)
}

// firstOutput is the index of the first token whose logits the sequence
// needs: the prefix before it can come from the cache.
func (s *sequence) firstOutput() int {
	if s.score != nil {
		return s.scoreFrom - 1
	}
	return len(s.tokens) - 1
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// output records what a requested logit row of a decode is for.
type output struct {
	seq   *sequence
	index int // token index within seq.tokens, or -1 for a generated token
	row   int // position of the token in the batch
}

// scheduler is the state of the engine goroutine.
type scheduler struct {
	e        *Engine
	vocab    *vocabCache
	batch    *cgo.Batch
	slots    []*kvSlot   // one per llama.cpp sequence id
	tick     uint64      // counts releases, for least-recently-used eviction
	active   []*sequence // admitted, holding a slot, in slot order
	waiting  []*sequence // leaders waiting for slots
	jobs     []*job      // jobs with sequences in active or waiting
	deferred []*job      // jobs waiting for a different adapter set
	adapters []AdapterScale
	// adaptersChanged forces the next decode to build a new graph (see
	// cgo.Context.SetEmbeddings).
	adaptersChanged bool
	lastEmbeddings  bool // whether the last decode extracted embeddings
	outputs         []output
	draws           []draw
	batchSeqs       []batchEntry
}

// batchEntry remembers where a sequence stood before a decode, to roll its
// cache back if the decode is aborted.
type batchEntry struct {
	seq *sequence
	pos int
}

func (e *Engine) loop() {
	defer close(e.done)
	s := &scheduler{e: e, vocab: e.model.vocabulary(), batch: cgo.NewBatch(e.opts.Batch, 1)}
	defer s.batch.Free()
	for i := range e.opts.streams(e.model.info) {
		s.slots = append(s.slots, &kvSlot{id: i})
	}
	for {
		if len(s.jobs) == 0 {
			if !s.caching() {
				// Resetting the emptied cache puts new sequences back at
				// the start of the shared KV buffer: llama.cpp attends
				// over the span of used cells, and scattered leftovers
				// would widen it.
				e.ctx.MemoryClear()
			}
			if !s.takeIdle() {
				s.failAll(ErrClosed)
				return
			}
		}
		s.drainQueue()
		select {
		case <-e.quit:
			s.failAll(ErrClosed)
			return
		default:
		}
		s.dropCancelled()
		if len(s.jobs) == 0 {
			continue
		}
		start := time.Now()
		s.step()
		e.stats.busyNS.Add(int64(time.Since(start)))
	}
}

// takeIdle blocks until there is work, switching adapters for it; it
// returns false when the engine closes.
func (s *scheduler) takeIdle() bool {
	var j *job
	if len(s.deferred) > 0 {
		j, s.deferred = s.deferred[0], s.deferred[1:]
	} else {
		select {
		case j = <-s.e.jobs:
		case <-s.e.quit:
			return false
		}
	}
	if j.control != nil {
		j.control(s)
		j.finish(nil)
		return true
	}
	if err := s.setAdapters(j.adapters); err != nil {
		j.finish(err)
		return true
	}
	s.accept(j)
	// Jobs deferred earlier with the same adapters join now.
	kept := s.deferred[:0]
	for _, d := range s.deferred {
		if sameAdapters(d.adapters, s.adapters) {
			s.accept(d)
		} else {
			kept = append(kept, d)
		}
	}
	s.deferred = kept
	return true
}

// drainQueue admits newly submitted jobs that use the current adapters
// into the running batch; the others wait their turn.
func (s *scheduler) drainQueue() {
	for {
		select {
		case j := <-s.e.jobs:
			if j.control != nil {
				j.control(s)
				j.finish(nil)
			} else if sameAdapters(j.adapters, s.adapters) {
				s.accept(j)
			} else {
				s.deferred = append(s.deferred, j)
			}
		default:
			return
		}
	}
}

func (s *scheduler) accept(j *job) {
	s.jobs = append(s.jobs, j)
	s.waiting = append(s.waiting, j.seqs...)
}

// setAdapters makes adapters the active set. On failure no adapter is
// active and the caller fails the job, which must not run on the base
// model unknowingly.
func (s *scheduler) setAdapters(adapters []AdapterScale) error {
	if sameAdapters(adapters, s.adapters) {
		return nil
	}
	matrices := 0
	for _, a := range adapters {
		matrices += a.Adapter.matrices
	}
	if room := s.e.model.adapterRoom(); matrices > room {
		return fmt.Errorf("%d adapters at once change %d matrices, and llama.cpp's compute graphs of this model have room for %d (beyond, ggml aborts): activate fewer at once", len(adapters), matrices, room)
	}
	s.e.ctx.ClearAdapters()
	s.adapters, s.adaptersChanged = nil, true
	for _, a := range adapters {
		if err := s.e.ctx.SetAdapter(a.Adapter.c, a.Scale); err != nil {
			s.e.ctx.ClearAdapters()
			return fmt.Errorf("activate adapter %s: %w", a.Adapter.path, err)
		}
	}
	s.adapters = adapters
	return nil
}

func sameAdapters(a, b []AdapterScale) bool {
	return slices.Equal(a, b)
}

// dropCancelled removes the sequences of cancelled jobs.
func (s *scheduler) dropCancelled() {
	for _, j := range slices.Clone(s.jobs) {
		if err := j.ctx.Err(); err != nil {
			s.removeJob(j, err)
		}
	}
	s.deferred = slices.DeleteFunc(s.deferred, func(j *job) bool {
		if err := j.ctx.Err(); err != nil {
			j.finish(err)
			return true
		}
		return false
	})
}

func (s *scheduler) removeJob(j *job, err error) {
	s.active = slices.DeleteFunc(s.active, func(q *sequence) bool {
		if q.job == j {
			// Its cells may be part-way through a prompt: forget them.
			sl := q.slot
			s.release(q)
			sl.clear(s.e.ctx)
			return true
		}
		return false
	})
	s.waiting = slices.DeleteFunc(s.waiting, func(q *sequence) bool { return q.job == j })
	s.jobs = slices.DeleteFunc(s.jobs, func(q *job) bool { return q == j })
	j.finish(err)
}

func (s *scheduler) failAll(err error) {
	for len(s.jobs) > 0 {
		s.removeJob(s.jobs[0], err)
	}
	for _, j := range s.deferred {
		j.finish(err)
	}
	s.deferred = nil
	for {
		select {
		case j := <-s.e.jobs:
			j.finish(err)
		default:
			return
		}
	}
}

// release frees a sequence's slot. With the prefix cache on, the slot keeps
// its cells for a later sequence with the same prefix.
func (s *scheduler) release(q *sequence) {
	sl := q.slot
	if sl == nil {
		return
	}
	sl.seq, q.slot = nil, nil
	s.tick++
	sl.lastUse = s.tick
	if !s.caching() {
		sl.clear(s.e.ctx)
		return
	}
	sl.tokens = slices.Clone(q.held())
	sl.adapters = s.adapters
	// A sequence outside the slot's session has overwritten its cells.
	sl.session = q.session
}

// admit gives free slots to waiting leaders and as many of their followers
// as fit; followers that do not fit wait as a new group with its own leader.
func (s *scheduler) admit() {
	parallel := s.e.opts.Parallel
	admitted := false
	for len(s.waiting) > 0 && len(s.active) < parallel {
		q := s.next()
		s.place(q)
		n := min(len(q.followers), parallel-len(s.active))
		for _, f := range q.followers[:n] {
			s.take(f, s.victim(nil))
			f.slot.clear(s.e.ctx)
			f.awaitsCopy = true
		}
		if rest := q.followers[n:]; len(rest) > 0 {
			lead := rest[0]
			lead.followers = rest[1:]
			s.waiting = slices.Insert(s.waiting, 0, lead)
		}
		q.followers = q.followers[:n]
		admitted = true
	}
	if admitted {
		// llama.cpp splits a batch into micro-batches of sequences with
		// consecutive ids in the order the batch lists them: feeding in
		// slot order keeps that one micro-batch where the ids allow.
		slices.SortFunc(s.active, func(a, b *sequence) int { return a.slot.id - b.slot.id })
	}
}

// maxCacheScan bounds how many waiting sequences next compares with the
// free slots.
const maxCacheScan = 64

// next removes and returns the waiting sequence to admit: the one whose
// prompt a free slot holds the longest prefix of, the first on a tie
// (the first waiting when nothing is cached). Cache hits go first so that
// a call of more prompts than slots does not evict, least recently used
// first, the very cells its later prompts need: after 2P prompts on P
// slots, the same 2P again (or scored after their completions) would
// otherwise evaluate all 2P whole, and now evaluate P.
func (s *scheduler) next() *sequence {
	best, bestLen := 0, 0
	if s.caching() {
		for i, q := range s.waiting[:min(len(s.waiting), maxCacheScan)] {
			want := q.tokens[:q.firstOutput()]
			for _, sl := range s.slots {
				if sl.seq != nil || !sameAdapters(sl.adapters, s.adapters) {
					continue
				}
				if n := CommonPrefix(sl.tokens, want); n > bestLen {
					best, bestLen = i, n
				}
			}
		}
	}
	q := s.waiting[best]
	s.waiting = slices.Delete(s.waiting, best, best+1)
	return q
}

func (s *scheduler) take(q *sequence, sl *kvSlot) {
	sl.seq, q.slot = q, sl
	s.active = append(s.active, q)
}

// step fills one batch (a token from every generating sequence, then prompt
// tokens up to capacity), decodes it and consumes its logits.
func (s *scheduler) step() {
	// Copies first from slots that admission may take over, then for the
	// sequences just admitted.
	s.copyPrefixes()
	s.admit()
	s.copyPrefixes()
	s.batch.Clear()
	s.outputs = s.outputs[:0]
	s.batchSeqs = s.batchSeqs[:0]
	capacity := s.batch.Capacity()
	var nPrompt, nGen int64
	for _, q := range s.active {
		if q.generating() {
			s.batchSeqs = append(s.batchSeqs, batchEntry{q, q.pos()})
			s.outputs = append(s.outputs, output{q, -1, s.batch.Len()})
			s.batch.Add(q.next, q.pos(), q.slot.id, true)
			nGen++
		}
	}
	for _, q := range s.active {
		if q.awaitsCopy || q.prefixFrom != nil || q.fed == len(q.tokens) || s.batch.Len() == capacity {
			continue
		}
		s.batchSeqs = append(s.batchSeqs, batchEntry{q, q.fed})
		for q.fed < len(q.tokens) && s.batch.Len() < capacity {
			i := q.fed
			want := s.wantsLogits(q, i)
			if want {
				s.outputs = append(s.outputs, output{q, i, s.batch.Len()})
			}
			s.batch.Add(q.tokens[i], i, q.slot.id, want)
			q.fed++
			nPrompt++
		}
	}
	if s.batch.Len() == 0 {
		return
	}
	if s.adaptersChanged {
		// Decoding with the embeddings setting opposite to the last
		// decode's makes llama.cpp build a new graph, with the new
		// adapters; going back to no embeddings afterwards rebuilds once
		// more, also with them.
		embeddings := !s.lastEmbeddings
		s.e.ctx.SetEmbeddings(embeddings)
		s.lastEmbeddings = embeddings
		if embeddings {
			defer s.e.ctx.SetEmbeddings(false)
		}
		s.adaptersChanged = false
	} else {
		s.lastEmbeddings = false
	}
	start := time.Now()
	err := s.e.ctx.Decode(s.batch)
	s.e.stats.decodeNS.Add(int64(time.Since(start)))
	s.e.stats.decodes.Add(1)
	if err != nil {
		s.rollBack()
		if errors.Is(err, cgo.ErrAborted) {
			s.e.ctx.ClearAbort()
			return
		}
		for len(s.jobs) > 0 {
			s.removeJob(s.jobs[0], err)
		}
		return
	}
	s.e.stats.promptTokens.Add(nPrompt)
	s.e.stats.generatedTokens.Add(nGen)
	for _, b := range s.batchSeqs {
		if q := b.seq; q.completion != nil && !q.generating() {
			q.completion.EvaluatedTokens += q.fed - b.pos
		}
	}
	s.collectDraws()
	s.computeDraws()
	var failed []*job
	for i := range s.draws {
		d := &s.draws[i]
		switch {
		case slices.Contains(failed, d.seq.job):
		case d.seq.completion != nil && d.token < 0:
			failed = append(failed, d.seq.job)
			s.removeJob(d.seq.job, errNonFinite)
		default:
			s.apply(d)
		}
	}
	s.active = slices.DeleteFunc(s.active, func(q *sequence) bool { return q.slot == nil })
}

// wantsLogits reports whether the logits after tokens[i] are needed.
func (s *scheduler) wantsLogits(q *sequence, i int) bool {
	if q.score != nil {
		return i >= q.scoreFrom-1 && i < len(q.tokens)-1
	}
	return i == len(q.tokens)-1
}

// rollBack undoes a failed decode: llama.cpp keeps the micro-batches it
// finished, so every sequence in the batch is cut back to where it stood.
func (s *scheduler) rollBack() {
	for _, b := range s.batchSeqs {
		s.e.ctx.SeqRemove(b.seq.slot.id, b.pos, -1)
		if !b.seq.generating() {
			b.seq.fed = b.pos
		}
	}
}

// draw is the work one row of logits brings to one sequence: the
// log-probability of the next scored token, or a sampled token.
type draw struct {
	seq     *sequence
	logits  []float32
	index   int // scoring: the token index the row follows
	token   int32
	logprob float32
}

// collectDraws lists the draws of the last decode's outputs. A prompt whose
// evaluation just ended hands its KV cells to its followers, and every
// sample of it draws its first token from the same row.
func (s *scheduler) collectDraws() {
	s.draws = s.draws[:0]
	for _, o := range s.outputs {
		logits := s.e.ctx.Logits(o.row)
		q := o.seq
		if q.score == nil && o.index >= 0 {
			for _, f := range q.followers {
				s.copyStream(q.slot, f.slot)
				f.fed, f.awaitsCopy = len(f.tokens), false
				s.draws = append(s.draws, draw{seq: f, logits: logits})
			}
			q.followers = nil
		}
		s.draws = append(s.draws, draw{seq: q, logits: logits, index: o.index})
	}
}

// minDrawsPerWorker keeps small batches of draws on one goroutine, where
// starting others would cost more than it saves.
const minDrawsPerWorker = 4

// computeDraws samples the tokens and computes the log-probabilities of
// the draws. Each draw reads its row of logits and writes only itself and
// its sequence's sampler, so they run on as many goroutines as llama.cpp
// has threads: the cores llama.cpp computes on are otherwise idle
// between decodes, and at 32 sequences of a small vocabulary this pass
// is several percent of the engine's time.
func (s *scheduler) computeDraws() {
	workers := min(s.e.opts.Threads, len(s.draws)/minDrawsPerWorker)
	if workers <= 1 {
		computeDraws(s.draws)
		return
	}
	var wg sync.WaitGroup
	per := (len(s.draws) + workers - 1) / workers
	for from := 0; from < len(s.draws); from += per {
		part := s.draws[from:min(from+per, len(s.draws))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			computeDraws(part)
		}()
	}
	wg.Wait()
}

func computeDraws(draws []draw) {
	for i := range draws {
		d := &draws[i]
		if q := d.seq; q.score != nil {
			d.logprob = logSoftmaxAt(d.logits, q.tokens[d.index+1])
		} else {
			d.token, d.logprob = q.sampler.sample(d.logits)
		}
	}
}

// apply records a draw's result and finishes sequences that are done.
func (s *scheduler) apply(d *draw) {
	q := d.seq
	if q.score != nil {
		q.score.LogProbs[d.index+1-q.scoreFrom] = d.logprob
		if d.index+1 == len(q.tokens)-1 {
			s.done(q)
		}
		return
	}
	c := q.completion
	c.Tokens = append(c.Tokens, d.token)
	c.LogProbs = append(c.LogProbs, d.logprob)
	q.next = d.token
	switch {
	case !q.ignoreEOS && s.vocab.eog[d.token]:
		c.FinishReason = FinishEOS
	case s.appendPiece(q, d.token):
		c.FinishReason = FinishStop
	case len(c.Tokens) >= q.maxTokens:
		c.FinishReason = FinishLength
	case len(q.tokens)+len(c.Tokens) >= s.e.opts.Context:
		c.FinishReason = FinishContext
	default:
		return
	}
	c.Text = string(q.text)
	s.done(q)
}

// appendPiece adds a token's text and reports whether a stop string
// completed, cutting the text where the earliest one that did begins (a
// token can complete two).
func (s *scheduler) appendPiece(q *sequence, tok int32) bool {
	piece := s.vocab.pieces[tok]
	q.text = append(q.text, piece...)
	cut := -1
	for _, stop := range q.stops {
		from := max(0, len(q.text)-len(piece)-len(stop)+1)
		if i := bytes.Index(q.text[from:], []byte(stop)); i >= 0 && (cut < 0 || from+i < cut) {
			cut = from + i
		}
	}
	if cut < 0 {
		return false
	}
	q.text = q.text[:cut]
	return true
}

// done finishes a sequence and, with it, possibly its job.
func (s *scheduler) done(q *sequence) {
	s.release(q)
	j := q.job
	j.remaining--
	if j.remaining == 0 {
		s.jobs = slices.DeleteFunc(s.jobs, func(x *job) bool { return x == j })
		j.finish(nil)
	}
}
