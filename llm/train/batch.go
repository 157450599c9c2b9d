package train

import (
	"fmt"
	"math"
	"slices"

	"github.com/agentrl/agentrl/llm"
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
	// once (see SameContext, and SharedSlots for a shared prefix): each
	// keeps its own weights and targets, read from the shared positions
	// (and, when training with dropout, the same dropout masks). A yes/no
	// judgement probed as two sequences thus costs one.
	Targets []int32
}

// SameContext reports whether a and b have the same tokens but perhaps
// the last: the last token is only predicted, never read, so the two
// compute the same hidden states, and the trainer computes them once
// when they are in one micro-batch (a twin: SharedSlots is all of b's).
func SameContext(a, b Sequence) bool {
	return len(a.Tokens) == len(b.Tokens) && len(a.Tokens) > 0 && slices.Equal(a.Tokens[:len(a.Tokens)-1], b.Tokens[:len(b.Tokens)-1])
}

// SharedSlots is the number of leading tokens of b that the trainer reads
// from a instead of computing them, when both are in one micro-batch with
// a placed first: their common prefix, all tokens but the last of each
// (only predicted, never read), shared when it is at least half of b's,
// so that b adds no more to its row than it saves. 0 when nothing is
// shared.
//
// A causal model's hidden states over a prefix depend on the prefix
// alone, so b's tokens after it attend to a's slots for it: a DPO pair's
// two actions in one context, the samples of a group from one prompt, or
// a judgement's probes cost their own tokens only. Log-probabilities,
// loss and gradient are those of separate batches.
func SharedSlots(a, b Sequence) int {
	if len(a.Tokens) == 0 || len(b.Tokens) == 0 {
		return 0
	}
	k := llm.CommonPrefix(a.Tokens[:len(a.Tokens)-1], b.Tokens[:len(b.Tokens)-1])
	if 2*k < len(b.Tokens)-1 {
		return 0
	}
	return k
}

// AddedTokens is what s adds to a micro-batch that holds before, as the
// budget of a micro-batch counts it: its tokens, less those it shares
// with the one of before it shares most with (SharedSlots), plus a token
// for each scored position among the shared ones (a logit row each). The
// trainer packs the longest sequences first, so within a micro-batch a
// sequence may share with a later one instead; the count is the
// budget's estimate, not the packing.
func AddedTokens(s Sequence, before []Sequence) int {
	k := 0
	for _, b := range before {
		k = max(k, SharedSlots(b, s))
	}
	if k == 0 {
		return len(s.Tokens)
	}
	rows := 0
	for i := 1; i <= k; i++ {
		if s.weight(i) != 0 {
			rows++
		}
	}
	return len(s.Tokens) - k + rows
}

// target is the token whose log-probability is computed at position i.
func (s Sequence) target(i int) int32 {
	if s.Targets != nil {
		return s.Targets[i]
	}
	return s.Tokens[i]
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
	tokensUsed          int // tokens computed: those of the sequences less the prefixes they share
}

// slotRound is the multiple row lengths are rounded up to: row lengths
// are contraction lengths of the attention products, which ggml's tiled
// F32 product (tinyBLAS) takes only in multiples of 16 (with AVX-512), and
// rounding also makes the graph, and the allocator's buffer, come in few
// shapes.
const slotRound = 16

// roundSlots rounds n up to a multiple of slotRound.
func roundSlots(n int) int { return (n + slotRound - 1) / slotRound * slotRound }

// maxSharedRow bounds a row that sequences sharing a prefix grow, in
// rows of rowLen: attention work and memory grow with the square of a
// row's length.
const maxSharedRow = 2

// pack places the sequences in rows of up to rowLen slots (first fit, the
// longest first), a sequence sharing a prefix with an earlier one
// (SharedSlots) in that one's row, after it, and lists the logit rows:
// the tokens with a non-zero weight.
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
	pl := place(seqs, rowLen)
	slot, shared, row, fill := pl.slot, pl.shared, pl.row, pl.fill
	T, B := pl.T, len(fill)
	p := &packed{T: T, B: B, tokens: make([]int32, T*B), pos: make([]int32, T*B), mask: make([]float32, T*T*B)}
	inf := float32(math.Inf(-1))
	for k := range p.mask {
		p.mask[k] = inf
	}
	for i, s := range seqs {
		base := row[i] * T
		// A query sees the slots of its sequence's tokens up to its own;
		// the shared ones' rows were written with the earlier sequence.
		for q := shared[i]; q < len(slot[i]); q++ {
			j := base + int(slot[i][q])
			p.tokens[j], p.pos[j] = s.Tokens[q], int32(q)
			mask := p.mask[j*T : (j+1)*T]
			for _, k := range slot[i][:q+1] {
				mask[k] = 0
			}
		}
		p.tokensUsed += len(s.Tokens) - shared[i]
		for k := range slot[i] {
			slot[i][k] += int32(base)
		}
	}
	for r := range B {
		for k := fill[r]; k < T; k++ {
			p.mask[((r*T)+k)*T+k] = 0 // each padding slot sees only itself
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

// placement is where pack puts the sequences: slot[i][k] is the slot of
// row row[i] holding token k of sequence i (a sequence's last token is
// only predicted, never read: it takes no slot), its own or, for its
// first shared[i] tokens, one of the earlier sequence it shares them
// with, placed before it in the same row; so every slot a query reads
// comes before it, as the causal blocks of blockMask take for granted.
// fill[r] counts the slots row r uses, T is the rows' padded length.
type placement struct {
	slot        [][]int32
	shared, row []int
	fill        []int
	T           int
}

// place lays the sequences out in rows of up to rowLen slots (at least
// the longest sequence's), the longest first, each in the first row it
// fits, or after the earlier sequence it shares most with
// (SharedSlots), in that one's row, when that makes fewer padded slots
// (rows x the longest row) than placing it whole. Such a row may grow
// to maxSharedRow x rowLen.
func place(seqs []Sequence, rowLen int) placement {
	slots := func(s Sequence) int { return max(len(s.Tokens)-1, 0) }
	rowLen = max(rowLen, maxLenOf(seqs)-1)
	order := make([]int, len(seqs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return slots(seqs[b]) - slots(seqs[a]) })
	pl := placement{slot: make([][]int32, len(seqs)), shared: make([]int, len(seqs)), row: make([]int, len(seqs))}
	longest := 0 // the longest row's fill
	for at, i := range order {
		n := slots(seqs[i])
		// Whole: the first row it fits, or a new one.
		r := slices.IndexFunc(pl.fill, func(f int) bool { return f+n <= rowLen })
		rows, length := len(pl.fill), max(longest, n)
		if r >= 0 {
			length = max(longest, pl.fill[r]+n)
		} else {
			rows++
		}
		cost := rows * length
		// After the sequence it shares most with, if that costs less.
		from, k := -1, 0
		for _, j := range order[:at] {
			if kj := SharedSlots(seqs[j], seqs[i]); kj > k && pl.fill[pl.row[j]]+n-kj <= maxSharedRow*rowLen {
				from, k = j, kj
			}
		}
		if from >= 0 && len(pl.fill)*max(longest, pl.fill[pl.row[from]]+n-k) <= cost {
			r = pl.row[from]
			pl.shared[i] = k
		} else if r < 0 {
			r = len(pl.fill)
			pl.fill = append(pl.fill, 0)
		}
		pl.slot[i] = make([]int32, n)
		if pl.shared[i] > 0 {
			copy(pl.slot[i], pl.slot[from][:k])
		}
		for q := pl.shared[i]; q < n; q++ {
			pl.slot[i][q] = int32(pl.fill[r] + q - pl.shared[i])
		}
		pl.fill[r] += n - pl.shared[i]
		pl.row[i] = r
		longest = max(longest, pl.fill[r])
	}
	pl.T = roundSlots(max(longest, 1))
	return pl
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
