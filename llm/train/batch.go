package train

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Sequence is one example: token ids and a loss weight per token.
type Sequence struct {
	Tokens []int32
	// Weights[i] weights the prediction of Tokens[i] from Tokens[:i]: 0 for
	// context (prompt, observations), 1 for targets, any real number for
	// advantage-weighted objectives. Weights[0] must be 0: nothing predicts
	// the first token. Nil weights every token but the first by 1.
	Weights []float32
	// Targets, when not nil, replaces Tokens[i] by Targets[i] as the token
	// whose log-probability is computed at position i, while the context
	// stays Tokens: a probe of the model's next-token distribution, such
	// as a critic's judgement token read at each decision point of an
	// episode. Nil predicts Tokens.
	//
	// Sequences of one micro-batch with the same context are computed
	// once (see SameContext): each keeps its own weights and targets, read
	// from the shared positions (and, when training with dropout, the same
	// dropout masks). A yes/no judgement probed as two sequences thus
	// costs one.
	Targets []int32
}

// SameContext reports whether a and b have the same tokens but perhaps
// the last: the last token is only predicted, never read, so the two
// compute the same hidden states, and the trainer computes them once
// when they are in one micro-batch.
func SameContext(a, b Sequence) bool {
	return len(a.Tokens) == len(b.Tokens) && len(a.Tokens) > 0 && slices.Equal(a.Tokens[:len(a.Tokens)-1], b.Tokens[:len(b.Tokens)-1])
}

// target is the token whose log-probability is computed at position i.
func (s Sequence) target(i int) int32 {
	if s.Targets != nil {
		return s.Targets[i]
	}
	return s.Tokens[i]
}

// Scored counts the tokens of s whose log-probability a loss reads: those
// with a non-zero weight. Each is a logit row of its micro-batch.
func (s Sequence) Scored() int {
	n := 0
	for i := 1; i < len(s.Tokens); i++ {
		if s.weight(i) != 0 {
			n++
		}
	}
	return n
}

// weight is the loss weight of token i.
func (s Sequence) weight(i int) float32 {
	if s.Weights == nil {
		if i == 0 {
			return 0
		}
		return 1
	}
	return s.Weights[i]
}

// packed is a micro-batch laid out for the graph: B rows of T slots, each
// row holding whole sequences (but their last tokens) one after another,
// then padding.
type packed struct {
	T, B   int
	tokens []int32   // per slot
	pos    []int32   // position of the slot's token in its sequence
	mask   []float32 // [B][T query][T key]: 0 where attention is allowed, -inf elsewhere
	// Logit row m predicts token outTok[m] of sequence outSeq[m] from the
	// slot out[m] holding the token before it.
	out, outSeq, outTok []int32
	target              []int32
	tokensUsed          int // tokens computed: those of the sequences but their twins
}

// slotRound is the multiple row lengths are rounded up to: row lengths
// are contraction lengths of the attention products, which ggml's tiled
// F32 product (tinyBLAS) takes only in multiples of 16 (with AVX-512), and
// rounding also makes the graph, and the allocator's buffer, come in few
// shapes.
const slotRound = 16

// roundSlots rounds n up to a multiple of slotRound.
func roundSlots(n int) int { return (n + slotRound - 1) / slotRound * slotRound }

// pack places the sequences in rows of up to rowLen slots (first fit, the
// longest first) and lists the logit rows: the tokens with a non-zero
// weight.
func pack(seqs []Sequence, rowLen, maxLen, vocab int) (*packed, error) {
	if len(seqs) == 0 {
		return nil, fmt.Errorf("empty batch")
	}
	for i, s := range seqs {
		switch {
		case len(s.Tokens) < 2:
			return nil, fmt.Errorf("sequence %d: %d tokens, need at least 2", i, len(s.Tokens))
		case len(s.Tokens) > maxLen:
			return nil, fmt.Errorf("sequence %d: %d tokens exceed the context of %d", i, len(s.Tokens), maxLen)
		case s.Weights != nil && len(s.Weights) != len(s.Tokens):
			return nil, fmt.Errorf("sequence %d: %d weights for %d tokens", i, len(s.Weights), len(s.Tokens))
		case s.Targets != nil && len(s.Targets) != len(s.Tokens):
			return nil, fmt.Errorf("sequence %d: %d targets for %d tokens", i, len(s.Targets), len(s.Tokens))
		case s.Weights != nil && s.Weights[0] != 0:
			return nil, fmt.Errorf("sequence %d: the first token has weight %g; nothing predicts it, so it must be 0", i, s.Weights[0])
		}
		for k, t := range s.Tokens {
			if t < 0 || int(t) >= vocab {
				return nil, fmt.Errorf("sequence %d: token %d at position %d outside the vocabulary of %d", i, t, k, vocab)
			}
		}
		for k, t := range s.Targets {
			if t < 0 || int(t) >= vocab {
				return nil, fmt.Errorf("sequence %d: target %d at position %d outside the vocabulary of %d", i, t, k, vocab)
			}
		}
		for k, w := range s.Weights {
			if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
				return nil, fmt.Errorf("sequence %d: weight %g at position %d", i, w, k)
			}
		}
	}
	// A sequence's last token is only predicted, never read: it takes no
	// slot.
	slots := func(s Sequence) int { return len(s.Tokens) - 1 }
	rowLen = max(rowLen, maxLenOf(seqs)-1)
	twinOf := twins(seqs)
	var order []int
	for i, t := range twinOf {
		if t < 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return slots(seqs[b]) - slots(seqs[a]) })
	var rows [][]int
	var fill []int
	for _, i := range order {
		n := slots(seqs[i])
		placed := false
		for r := range rows {
			if fill[r]+n <= rowLen {
				rows[r] = append(rows[r], i)
				fill[r] += n
				placed = true
				break
			}
		}
		if !placed {
			rows = append(rows, []int{i})
			fill = append(fill, n)
		}
	}
	T := roundSlots(slices.Max(fill))
	B := len(rows)
	p := &packed{T: T, B: B, tokens: make([]int32, T*B), pos: make([]int32, T*B), mask: make([]float32, T*T*B)}
	seg := make([]int32, T*B)
	slot := make([][]int32, len(seqs)) // slot of each token of each sequence
	for r, row := range rows {
		at := 0
		for _, i := range row {
			s := seqs[i]
			slot[i] = make([]int32, slots(s))
			for k, tok := range s.Tokens[:slots(s)] {
				j := r*T + at + k
				p.tokens[j], p.pos[j], seg[j] = tok, int32(k), int32(i)
				slot[i][k] = int32(j)
			}
			at += slots(s)
			p.tokensUsed += len(s.Tokens)
		}
		for k := at; k < T; k++ {
			seg[r*T+k] = -1 - int32(k) // each padding slot sees only itself
		}
	}
	for i, t := range twinOf {
		if t >= 0 {
			slot[i] = slot[t]
		}
	}
	inf := float32(math.Inf(-1))
	for r := range B {
		for q := range T {
			row := p.mask[(r*T+q)*T : (r*T+q+1)*T]
			for k := range T {
				if k > q || seg[r*T+k] != seg[r*T+q] {
					row[k] = inf
				}
			}
		}
	}
	for i, s := range seqs {
		for k := 1; k < len(s.Tokens); k++ {
			if s.weight(k) != 0 {
				p.out = append(p.out, slot[i][k-1])
				p.outSeq = append(p.outSeq, int32(i))
				p.outTok = append(p.outTok, int32(k))
				p.target = append(p.target, s.target(k))
			}
		}
	}
	if len(p.out) == 0 {
		return nil, fmt.Errorf("no token of the batch has a non-zero weight")
	}
	return p, nil
}

// twins maps each sequence to the first earlier one with the same
// context (SameContext), whose slots it shares, or to -1.
func twins(seqs []Sequence) []int {
	out := make([]int, len(seqs))
	first := map[string]int{}
	key := make([]byte, 0, 4*maxLenOf(seqs))
	for i, s := range seqs {
		key = key[:0]
		for _, tok := range s.Tokens[:len(s.Tokens)-1] {
			key = binary.LittleEndian.AppendUint32(key, uint32(tok))
		}
		if t, ok := first[string(key)]; ok {
			out[i] = t
			continue
		}
		first[string(key)] = i
		out[i] = -1
	}
	return out
}

func maxLenOf(seqs []Sequence) int {
	n := 0
	for _, s := range seqs {
		n = max(n, len(s.Tokens))
	}
	return n
}

// blockMask is the attention mask of a block of queries against the keys
// they can see: [B][blk.n queries][blk.keys() keys].
func (p *packed) blockMask(blk queryBlock) []float32 {
	keys := blk.keys()
	out := make([]float32, 0, p.B*blk.n*keys)
	for r := range p.B {
		for q := blk.start; q < blk.start+blk.n; q++ {
			row := (r*p.T + q) * p.T
			out = append(out, p.mask[row:row+keys]...)
		}
	}
	return out
}
