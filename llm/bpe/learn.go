package bpe

import (
	"container/heap"
	"errors"
	"fmt"
	"strings"
)

// LearnOptions configures Learn.
type LearnOptions struct {
	// VocabSize is the size of the finished vocabulary: the 256 byte
	// tokens, the learned tokens and the special tokens.
	VocabSize int
	// Specials are added after the learned tokens as control tokens, in
	// this order. Their text is cut out of the corpus before learning.
	Specials []string
	// MinPairCount is the fewest occurrences a pair needs to be merged;
	// below 2 it is taken as 2, so that learning stops when no pair
	// repeats.
	MinPairCount int
}

// MinVocabSize is the smallest vocabulary Learn builds: the byte tokens.
const MinVocabSize = 256

// ErrEmptyCorpus is returned by Learn when the corpus has no text.
var ErrEmptyCorpus = errors.New("corpus is empty")

// Learn learns a byte-level BPE vocabulary from a corpus. The text is
// pre-tokenized with Split, so merges never cross the boundaries llama.cpp
// will see; then the most frequent adjacent pair is merged, again and again,
// until the vocabulary is full or no pair occurs MinPairCount times. Ties go
// to the pair of lower token ids, so the result depends only on the corpus
// and the options.
//
// Token ids 0 to 255 are the single bytes, in byte order, so any byte string
// can be represented; learned tokens follow in the order they were learned,
// then the specials.
func Learn(corpus []string, opts LearnOptions) (*Tokenizer, error) {
	learned := opts.VocabSize - len(opts.Specials) // tokens before the specials
	if learned < MinVocabSize {
		return nil, fmt.Errorf("vocabulary size %d leaves no room for %d byte tokens and %d special tokens", opts.VocabSize, MinVocabSize, len(opts.Specials))
	}
	minCount := max(opts.MinPairCount, 2)
	special := map[string]bool{}
	for _, s := range opts.Specials {
		if s == "" || special[s] {
			return nil, fmt.Errorf("special token %q is empty or repeated", s)
		}
		special[s] = true
	}

	l := newLearner(corpus, opts.Specials)
	if len(l.words) == 0 {
		return nil, ErrEmptyCorpus
	}
	for len(l.tokens) < learned {
		pair, count, ok := l.best()
		if !ok || count < int64(minCount) {
			break
		}
		left, right := l.tokens[pair.left], l.tokens[pair.right]
		merged := left + right
		// A learned token that spells a special token would make the
		// vocabulary ambiguous; llama.cpp refuses duplicate tokens.
		if special[merged] {
			l.block(pair)
			continue
		}
		l.merge(pair, merged)
		l.merges = append(l.merges, left+" "+right)
	}

	tokens := append(l.tokens, opts.Specials...)
	types := make([]TokenType, len(tokens))
	for i := range types {
		types[i] = TokenNormal
		if i >= len(l.tokens) {
			types[i] = TokenControl
		}
	}
	return New(tokens, types, l.merges)
}

// learner holds the state of BPE learning: the distinct pre-tokenized words
// with their counts, each as a sequence of token ids, and the count of each
// adjacent pair over the corpus.
type learner struct {
	tokens []string // vocabulary so far, in the byte-level alphabet
	ids    map[string]int32
	merges []string

	words  [][]int32
	counts []int64
	pairs  map[pair]int64
	where  map[pair][]int32 // words a pair has occurred in (may be stale)
	queue  pairQueue
	seen   []int32 // per word: the merge step that last visited it
}

type pair struct{ left, right int32 }

func newLearner(corpus []string, specials []string) *learner {
	l := &learner{ids: map[string]int32{}, pairs: map[pair]int64{}, where: map[pair][]int32{}}
	for b := range 256 {
		text := string(byteToRune[b])
		l.ids[text] = int32(b)
		l.tokens = append(l.tokens, text)
	}
	wordIndex := map[string]int32{}
	for _, doc := range corpus {
		for _, frag := range cutSpecials(doc, specials) {
			for _, w := range Split(frag) {
				i, ok := wordIndex[w]
				if !ok {
					i = int32(len(l.words))
					wordIndex[w] = i
					syms := make([]int32, len(w))
					for j := 0; j < len(w); j++ {
						syms[j] = int32(w[j])
					}
					l.words = append(l.words, syms)
					l.counts = append(l.counts, 0)
				}
				l.counts[i]++
			}
		}
	}
	for i, w := range l.words {
		for j := 1; j < len(w); j++ {
			p := pair{w[j-1], w[j]}
			l.pairs[p] += l.counts[i]
			l.where[p] = append(l.where[p], int32(i))
		}
	}
	for p, c := range l.pairs {
		l.queue = append(l.queue, queued{p, c})
	}
	heap.Init(&l.queue)
	l.seen = make([]int32, len(l.words))
	for i := range l.seen {
		l.seen[i] = -1
	}
	return l
}

// cutSpecials returns the text between occurrences of special tokens.
func cutSpecials(text string, specials []string) []string {
	frags := []string{text}
	for _, s := range specials {
		var next []string
		for _, f := range frags {
			next = append(next, strings.Split(f, s)...)
		}
		frags = next
	}
	return frags
}

// best returns the most frequent pair. Queue entries go stale as counts
// change; a stale entry is put back with the current count.
func (l *learner) best() (pair, int64, bool) {
	for l.queue.Len() > 0 {
		top := heap.Pop(&l.queue).(queued)
		current := l.pairs[top.pair]
		if current == top.count {
			return top.pair, top.count, true
		}
		if current > 0 {
			heap.Push(&l.queue, queued{top.pair, current})
		}
	}
	return pair{}, 0, false
}

// block removes a pair from consideration.
func (l *learner) block(p pair) { delete(l.pairs, p) }

// merge replaces every occurrence of p by the token merged (adding it to
// the vocabulary unless an earlier merge already made the same string) and
// updates the pair counts of the words it touched.
func (l *learner) merge(p pair, merged string) {
	id, exists := l.ids[merged]
	if !exists {
		id = int32(len(l.tokens))
		l.ids[merged] = id
		l.tokens = append(l.tokens, merged)
	}
	step := int32(len(l.merges))
	changed := map[pair]bool{}
	for _, wi := range l.where[p] {
		if l.seen[wi] == step {
			continue
		}
		l.seen[wi] = step
		w := l.words[wi]
		count := l.counts[wi]
		out := w[:0:0]
		for j := 0; j < len(w); j++ {
			if j+1 < len(w) && w[j] == p.left && w[j+1] == p.right {
				out = append(out, id)
				j++
				continue
			}
			out = append(out, w[j])
		}
		if len(out) == len(w) {
			continue // stale entry: the pair no longer occurs here
		}
		for j := 1; j < len(w); j++ {
			q := pair{w[j-1], w[j]}
			l.pairs[q] -= count
			changed[q] = true
		}
		for j := 1; j < len(out); j++ {
			q := pair{out[j-1], out[j]}
			l.pairs[q] += count
			changed[q] = true
			if out[j-1] == id || out[j] == id {
				l.where[q] = append(l.where[q], wi)
			}
		}
		l.words[wi] = out
	}
	delete(l.pairs, p)
	delete(l.where, p)
	for q := range changed {
		c := l.pairs[q]
		switch {
		case c <= 0:
			delete(l.pairs, q)
		case q != p:
			heap.Push(&l.queue, queued{q, c})
		}
	}
}

type queued struct {
	pair  pair
	count int64
}

// pairQueue is a max-heap of pair counts; ties go to the lower ids.
type pairQueue []queued

func (q pairQueue) Len() int { return len(q) }
func (q pairQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if a.count != b.count {
		return a.count > b.count
	}
	if a.pair.left != b.pair.left {
		return a.pair.left < b.pair.left
	}
	return a.pair.right < b.pair.right
}
func (q pairQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pairQueue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *pairQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
