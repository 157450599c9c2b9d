package bpe

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"
	"strings"
)

// TokenType is the type of a vocabulary entry, as stored in
// tokenizer.ggml.token_type.
type TokenType int32

// Token types, numbered as in llama.cpp.
const (
	TokenUndefined   TokenType = 0
	TokenNormal      TokenType = 1
	TokenUnknown     TokenType = 2
	TokenControl     TokenType = 3
	TokenUserDefined TokenType = 4
	TokenUnused      TokenType = 5
	TokenByte        TokenType = 6
)

// Tokenizer is a byte-level BPE vocabulary with ranked merges. It encodes
// text into the same token ids llama.cpp produces for a "gpt2" model with
// the PreTokenizer pre-tokenizer. It is safe for concurrent use.
type Tokenizer struct {
	tokens []string // vocabulary text as stored in the model
	types  []TokenType
	pieces []string // the bytes each token stands for
	ids    map[string]int32
	merges []string // "left right", highest priority first
	ranks  map[uint64]merge
	bytes  [256]int32 // the token of each single byte
	// specials are the tokens matched in raw text before splitting,
	// longest first, as llama.cpp orders them.
	specials []int32
}

type merge struct {
	rank   int32
	result int32
}

func pairKey(left, right int32) uint64 { return uint64(uint32(left))<<32 | uint64(uint32(right)) }

// New builds a tokenizer from a vocabulary (text and type of each token) and
// a merge list, in the form GGUF stores them: normal tokens and merges are
// written in the byte-level alphabet, merges as "left right" in priority
// order. Every byte must have a token and every merge must produce one, so
// that any text can be encoded and decoded exactly.
func New(tokens []string, types []TokenType, merges []string) (*Tokenizer, error) {
	if len(tokens) == 0 || len(tokens) > math.MaxInt32 {
		return nil, fmt.Errorf("vocabulary of %d tokens", len(tokens))
	}
	if len(types) != len(tokens) {
		return nil, fmt.Errorf("%d token types for %d tokens", len(types), len(tokens))
	}
	t := &Tokenizer{
		tokens: tokens,
		types:  types,
		pieces: make([]string, len(tokens)),
		ids:    make(map[string]int32, len(tokens)),
		merges: merges,
		ranks:  make(map[uint64]merge, len(merges)),
	}
	for b := range t.bytes {
		t.bytes[b] = -1
	}
	for i, text := range tokens {
		id := int32(i)
		if text == "" {
			return nil, fmt.Errorf("token %d is empty", id)
		}
		if prev, dup := t.ids[text]; dup {
			return nil, fmt.Errorf("tokens %d and %d are both %q", prev, id, text)
		}
		t.ids[text] = id
		switch types[i] {
		case TokenNormal:
			piece, ok := unmapBytes(text)
			if !ok {
				return nil, fmt.Errorf("normal token %d %q is not in the byte-level alphabet", id, text)
			}
			t.pieces[i] = piece
			if len(piece) == 1 && t.bytes[piece[0]] < 0 {
				t.bytes[piece[0]] = id
			}
		case TokenControl, TokenUserDefined, TokenUnknown:
			t.pieces[i] = text
			t.specials = append(t.specials, id)
		default:
			t.pieces[i] = text
		}
	}
	for b, id := range t.bytes {
		if id < 0 {
			return nil, fmt.Errorf("no token for byte %#02x", b)
		}
	}
	slices.SortStableFunc(t.specials, func(a, b int32) int {
		return cmp.Compare(len(tokens[b]), len(tokens[a]))
	})
	for rank, m := range merges {
		// llama.cpp splits at the first space after the first character.
		sep := strings.IndexByte(m[min(1, len(m)):], ' ') + 1
		if sep <= 0 {
			return nil, fmt.Errorf("merge %d %q has no separating space", rank, m)
		}
		left, right := m[:sep], m[sep+1:]
		l, okL := t.ids[left]
		r, okR := t.ids[right]
		res, okRes := t.ids[left+right]
		if !okL || !okR || !okRes {
			return nil, fmt.Errorf("merge %d %q: tokens %q, %q and %q must all be in the vocabulary", rank, m, left, right, left+right)
		}
		if _, dup := t.ranks[pairKey(l, r)]; !dup {
			t.ranks[pairKey(l, r)] = merge{rank: int32(rank), result: res}
		}
	}
	return t, nil
}

// Len is the vocabulary size.
func (t *Tokenizer) Len() int { return len(t.tokens) }

// Tokens returns the vocabulary as stored in a model (normal tokens in the
// byte-level alphabet). The slice must not be modified.
func (t *Tokenizer) Tokens() []string { return t.tokens }

// Types returns the type of each token. The slice must not be modified.
func (t *Tokenizer) Types() []TokenType { return t.types }

// Merges returns the merge list, highest priority first, as stored in a
// model. The slice must not be modified.
func (t *Tokenizer) Merges() []string { return t.merges }

// Lookup returns the id of a token given its vocabulary text.
func (t *Tokenizer) Lookup(text string) (int32, bool) {
	id, ok := t.ids[text]
	return id, ok
}

// Piece returns the bytes a token stands for; for special tokens, their text.
func (t *Tokenizer) Piece(id int32) (string, error) {
	if id < 0 || int(id) >= len(t.pieces) {
		return "", fmt.Errorf("token id %d out of range [0, %d)", id, len(t.pieces))
	}
	return t.pieces[id], nil
}

// Encode tokenizes text like llama_tokenize without added BOS/EOS. With
// parseSpecial, the text of control tokens (e.g. "<|im_end|>") becomes those
// tokens; without it, only user-defined tokens are matched and the rest is
// ordinary text.
func (t *Tokenizer) Encode(text string, parseSpecial bool) []int32 {
	var out []int32
	for _, f := range t.partition(text, parseSpecial) {
		if f.token >= 0 {
			out = append(out, f.token)
			continue
		}
		for _, word := range Split(f.text) {
			out = t.encodeWord(word, out)
		}
	}
	return out
}

// Decode turns tokens back into text, special tokens included, so that
// Decode(Encode(s, p)) == s for valid UTF-8.
func (t *Tokenizer) Decode(tokens []int32) (string, error) {
	var b strings.Builder
	for _, id := range tokens {
		piece, err := t.Piece(id)
		if err != nil {
			return "", err
		}
		b.WriteString(piece)
	}
	return b.String(), nil
}

// fragment is a stretch of text still to be tokenized, or a special token
// (token >= 0) already found in it.
type fragment struct {
	text  string
	token int32
}

// partition cuts special-token text out of raw text, longest special
// first, leftmost occurrence first, like llama.cpp.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{text: text, token: -1}}
	for _, id := range t.specials {
		if !parseSpecial && t.types[id] != TokenUserDefined {
			continue
		}
		special := t.tokens[id]
		var next []fragment
		for _, f := range frags {
			if f.token >= 0 {
				next = append(next, f)
				continue
			}
			rest := f.text
			for {
				i := strings.Index(rest, special)
				if i < 0 {
					break
				}
				if i > 0 {
					next = append(next, fragment{text: rest[:i], token: -1})
				}
				next = append(next, fragment{token: id})
				rest = rest[i+len(special):]
			}
			if rest != "" {
				next = append(next, fragment{text: rest, token: -1})
			}
		}
		frags = next
	}
	return frags
}

// encodeWord appends the tokens of one pre-tokenized piece: starting from
// single bytes, it repeatedly applies the merge of lowest rank, leftmost
// first, as llama.cpp's bigram queue does.
func (t *Tokenizer) encodeWord(word string, out []int32) []int32 {
	n := len(word)
	if n == 1 {
		return append(out, t.bytes[word[0]])
	}
	syms := make([]symbol, n)
	for i := range syms {
		syms[i] = symbol{id: t.bytes[word[i]], prev: int32(i) - 1, next: int32(i) + 1}
	}
	syms[n-1].next = -1
	q := bigramQueue{}
	push := func(left, right int32) {
		if left < 0 || right < 0 {
			return
		}
		m, ok := t.ranks[pairKey(syms[left].id, syms[right].id)]
		if !ok {
			return
		}
		heap.Push(&q, bigram{rank: m.rank, left: left, right: right, leftID: syms[left].id, rightID: syms[right].id, result: m.result})
	}
	for i := 1; i < n; i++ {
		push(int32(i-1), int32(i))
	}
	for q.Len() > 0 {
		bg := heap.Pop(&q).(bigram)
		l, r := &syms[bg.left], &syms[bg.right]
		// Skip pairs that an earlier merge changed.
		if l.id != bg.leftID || r.id != bg.rightID {
			continue
		}
		l.id = bg.result
		r.id = -1
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = bg.left
		}
		push(l.prev, bg.left)
		push(bg.left, l.next)
	}
	for i := int32(0); i >= 0; i = syms[i].next {
		out = append(out, syms[i].id)
	}
	return out
}

type symbol struct {
	id         int32 // -1 once merged into its left neighbour
	prev, next int32
}

type bigram struct {
	rank, left, right       int32
	leftID, rightID, result int32
}

// bigramQueue orders candidate merges by rank, then by position.
type bigramQueue []bigram

func (q bigramQueue) Len() int { return len(q) }
func (q bigramQueue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].left < q[j].left
}
func (q bigramQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *bigramQueue) Push(x any)   { *q = append(*q, x.(bigram)) }
func (q *bigramQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
