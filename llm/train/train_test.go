package train

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/gguf"
	"github.com/agentrl/agentrl/llm/initmodel"
)

func newMicro(t *testing.T, cfg Config) *Trainer {
	t.Helper()
	if cfg.Threads == 0 {
		cfg.Threads = 1
	}
	tr, err := New(makeModel(t, "micro", microConfig(5)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	return tr
}

// gradients runs one micro-batch and returns a copy of every parameter's
// gradient (the mean over its targets, as Step applies it), leaving none
// accumulated.
func gradients(t *testing.T, tr *Trainer, seqs []Sequence, loss Loss) (Result, [][]float32) {
	t.Helper()
	r, g := stepGradients(t, tr, [][]Sequence{seqs}, []Loss{loss})
	return r[0], g
}

// stepGradients accumulates the micro-batches, each with its loss, and
// returns their results and a copy of the gradient Step would apply
// (before clipping), leaving none accumulated.
func stepGradients(t *testing.T, tr *Trainer, batches [][]Sequence, losses []Loss) ([]Result, [][]float32) {
	t.Helper()
	tr.ZeroGrad()
	var rs []Result
	for i, b := range batches {
		r, err := tr.Accumulate(b, losses[i])
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	g := make([][]float32, len(tr.net.params))
	for i, p := range tr.net.params {
		g[i] = make([]float32, len(p.grad))
		for k, v := range p.grad {
			g[i][k] = v / float32(tr.accumTargets)
		}
	}
	tr.ZeroGrad()
	return rs, g
}

// uncounted hides a loss's Targets: its micro-batches weigh 1 each.
type uncounted struct{ Loss }

// TestAccumulationEqualsOneMicroBatch: a step over micro-batches of few
// and of many targets applies the gradient of one micro-batch holding
// them all, for each loss, not the mean of the micro-batches' means.
func TestAccumulationEqualsOneMicroBatch(t *testing.T) {
	tr := newMicro(t, Config{})
	perturb(tr, 0.05, 5)
	seqs := testSequences(tr.h.Vocab, 17)
	// The first sequence keeps one target; the second all of its own.
	few := Sequence{Tokens: seqs[0].Tokens, Weights: make([]float32, len(seqs[0].Tokens))}
	few.Weights[len(few.Weights)-1] = 1
	many := seqs[1]
	if n := normalizer([]Sequence{many}, ByWeight); n < 5 {
		t.Fatalf("the second sequence has %g targets: too few to tell the weightings apart", n)
	}
	both := []Sequence{few, many}
	sampled, err := tr.LogProbs(both)
	if err != nil {
		t.Fatal(err)
	}
	advantages := make([][]float32, len(both))
	for i, s := range both {
		advantages[i] = make([]float32, len(s.Tokens))
		for k := range advantages[i] {
			advantages[i][k] = 0.7
		}
	}
	ppo := func(from, to int) Loss {
		return PPO{Clip: 0.2, SampleLogProbs: sampled[from:to], Advantages: advantages[from:to]}
	}
	pairs := func(n int) []Pair {
		var ps []Pair
		for k := range n {
			ps = append(ps, Pair{Chosen: 2 * k, Rejected: 2*k + 1, RefChosen: -3, RefRejected: -2})
		}
		return ps
	}
	cases := []struct {
		name    string
		whole   Loss
		batches [][]Sequence
		parts   []Loss
	}{
		{"cross-entropy", CrossEntropy{}, [][]Sequence{{few}, {many}}, []Loss{CrossEntropy{}, CrossEntropy{}}},
		{"ppo", ppo(0, 2), [][]Sequence{{few}, {many}}, []Loss{ppo(0, 1), ppo(1, 2)}},
		// One pair, then two.
		{"dpo", DPO{Beta: 0.5, Pairs: pairs(3)}, [][]Sequence{{few, many}, {many, few, few, many}},
			[]Loss{DPO{Beta: 0.5, Pairs: pairs(1)}, DPO{Beta: 0.5, Pairs: pairs(2)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var all []Sequence
			for _, b := range c.batches {
				all = append(all, b...)
			}
			_, whole := stepGradients(t, tr, [][]Sequence{all}, []Loss{c.whole})
			_, split := stepGradients(t, tr, c.batches, c.parts)
			if d := maxGradDiff(whole, split); d > 1e-4 {
				t.Errorf("two micro-batches applied another gradient than one: %g", d)
			}
			// The mean of the micro-batches' means is another gradient:
			// the comparison can fail.
			var hidden []Loss
			for _, l := range c.parts {
				hidden = append(hidden, uncounted{l})
			}
			if _, meanOfMeans := stepGradients(t, tr, c.batches, hidden); maxGradDiff(whole, meanOfMeans) < 1e-2 {
				t.Errorf("the mean of means differs from the whole by only %g", maxGradDiff(whole, meanOfMeans))
			}
		})
	}
}

// maxGradDiff is the largest difference between two sets of gradients,
// relative to the largest gradient.
func maxGradDiff(a, b [][]float32) float64 {
	d, scale := 0.0, 0.0
	for i := range a {
		for k := range a[i] {
			d = math.Max(d, math.Abs(float64(a[i][k]-b[i][k])))
			scale = math.Max(scale, math.Abs(float64(a[i][k])))
		}
	}
	return d / scale
}

func TestZeroWeightTokensDoNotChangeTheGradient(t *testing.T) {
	tr := newMicro(t, Config{})
	perturb(tr, 0.05, 7)
	seqs := testSequences(tr.h.Vocab, 11)
	_, base := gradients(t, tr, seqs, CrossEntropy{})

	// Tokens after the last target, with weight 0, are read by nothing
	// that has a loss.
	longer := []Sequence{seqs[0], {Tokens: append(append([]int32{}, seqs[1].Tokens...), 5, 9, 17), Weights: append(append([]float32{}, seqs[1].Weights...), 0, 0, 0)}}
	_, g := gradients(t, tr, longer, CrossEntropy{})
	if d := maxGradDiff(base, g); d > 1e-5 {
		t.Errorf("trailing zero-weight tokens changed the gradient by %g", d)
	}
	// A whole sequence of zero weights packed with the others.
	extra := append([]Sequence{{Tokens: []int32{3, 1, 4, 1, 5, 9, 2, 6}, Weights: make([]float32, 8)}}, seqs...)
	_, g = gradients(t, tr, extra, CrossEntropy{})
	if d := maxGradDiff(base, g); d > 1e-5 {
		t.Errorf("a zero-weight sequence in the batch changed the gradient by %g", d)
	}
	// A non-zero weight where the others were zero does change it: the
	// comparison can fail.
	changed := []Sequence{seqs[0], {Tokens: seqs[1].Tokens, Weights: append([]float32{0, 0.5}, seqs[1].Weights[2:]...)}}
	_, g = gradients(t, tr, changed, CrossEntropy{})
	if d := maxGradDiff(base, g); d < 1e-3 {
		t.Errorf("giving a context token a weight changed the gradient by only %g", d)
	}
}

func TestPackingEqualsSeparateBatches(t *testing.T) {
	seqs := testSequences(300, 13)
	// A twin of the first sequence: the same context (its last token,
	// only predicted, differs) probed for other targets with other
	// weights, as a yes/no judgement pair is.
	n := len(seqs[0].Tokens)
	twin := Sequence{Tokens: slices.Clone(seqs[0].Tokens), Weights: make([]float32, n), Targets: make([]int32, n)}
	twin.Tokens[n-1] = (twin.Tokens[n-1] + 1) % 300
	for i, tok := range seqs[0].Tokens {
		twin.Targets[i] = (tok + 7) % 300
		if i%4 == 3 {
			twin.Weights[i] = 1.5
		}
	}
	// And a twin of the second as a DPO pair's other side may be: the
	// same context with another last token, predicted from its own tokens
	// (no Targets).
	m := len(seqs[1].Tokens)
	last := Sequence{Tokens: slices.Clone(seqs[1].Tokens), Weights: slices.Clone(seqs[1].Weights)}
	last.Tokens[m-1] = (last.Tokens[m-1] + 3) % 300
	last.Weights[m-1] = 1
	withTwin := append(slices.Clone(seqs), twin, last)
	// Sequences sharing a prefix, as a DPO pair's two actions in one
	// context and a group's samples from one prompt do: another ending of
	// the first sequence after 16 of its 22 context tokens, an ending of
	// that one after 19, and the first sequence cut short (all of its
	// context shared). A sequence sharing less than half of its context
	// is computed in full.
	ending := func(s Sequence, keep int, tail ...int32) Sequence {
		out := Sequence{Tokens: append(slices.Clone(s.Tokens[:keep]), tail...)}
		out.Weights = make([]float32, len(out.Tokens))
		for i := keep; i < len(out.Weights); i++ {
			out.Weights[i] = 1
		}
		return out
	}
	other := ending(seqs[0], 16, 5, 77, 140, 201, 9)
	chained := ending(other, 19, 33, 34)
	cut := ending(seqs[0], 12)
	cut.Weights[11] = 0.5
	apart := ending(seqs[0], 6, 1, 2, 3, 4, 5, 6, 7, 8)
	withPrefixes := append(slices.Clone(seqs), other, chained, cut, apart)
	for products, noBLAS := range productModes(t) {
		t.Run(products, func(t *testing.T) {
			p := testPacking(t, noBLAS, seqs)
			if p.B != 1 {
				t.Fatalf("the two sequences should share one row: %v rows", p.B)
			}
			// The twins take no slots of their own and read their
			// sequences'; a twin still counts its one token, predicted.
			if q := testPacking(t, noBLAS, withTwin); q.B != p.B || q.T != p.T || q.tokensUsed != p.tokensUsed+2 {
				t.Fatalf("with twins: %d rows of %d slots, %d tokens computed; without: %d of %d, %d", q.B, q.T, q.tokensUsed, p.B, p.T, p.tokensUsed)
			}
			// The prefixes are computed once: the sharing sequences count
			// their tokens after them (5, 2 and 1), the fourth all of its.
			q := testPacking(t, noBLAS, withPrefixes)
			if want := p.tokensUsed + 5 + 2 + 1 + len(apart.Tokens); q.tokensUsed != want {
				t.Fatalf("with shared prefixes: %d tokens computed, want %d", q.tokensUsed, want)
			}
		})
	}
}

// TestPlacementSharesWhenItPays: a sequence shares its prefix's slots
// when that makes fewer padded slots than placing it whole, not when it
// would lengthen every row.
func TestPlacementSharesWhenItPays(t *testing.T) {
	seq := func(n int, first int32) Sequence {
		s := Sequence{Tokens: make([]int32, n)}
		for i := range s.Tokens {
			s.Tokens[i] = first + int32(i)
		}
		return s
	}
	ending := func(s Sequence, keep, n int, first int32) Sequence {
		out := Sequence{Tokens: slices.Clone(s.Tokens[:keep])}
		for i := range n {
			out.Tokens = append(out.Tokens, first+int32(i))
		}
		return out
	}
	// A state and four actions after it, as StepAgent's step-DPO pairs:
	// one row of 100 + 4 x 9 slots instead of five of 100 (the last
	// token of each is only predicted).
	state := seq(101, 0)
	seqs := []Sequence{state}
	for k := range int32(4) {
		seqs = append(seqs, ending(state, 91, 10, 9000+100*k))
	}
	if pl := place(seqs, 0); len(pl.fill) != 1 || pl.fill[0] != 136 {
		t.Errorf("actions after one state: rows filled %v, want one of 136 slots", pl.fill)
	}
	// Eight full rows of 100 slots and a sequence sharing 49 of its 100:
	// a ninth row (900 slots) beats eight rows of 151 (1,208).
	seqs = nil
	for k := range 8 {
		seqs = append(seqs, seq(101, int32(1000*k)))
	}
	seqs = append(seqs, ending(seqs[0], 49, 52, 9000))
	if pl := place(seqs, 0); len(pl.fill) != 9 || pl.shared[8] != 0 {
		t.Errorf("a short shared prefix beside full rows: rows filled %v, %d slots shared; want 9 rows, none shared", pl.fill, pl.shared[8])
	}
}

// testPacking checks that the loss, log-probabilities and gradients of
// seqs in one micro-batch of 64-slot rows equal those of each sequence in
// a micro-batch of its own, and returns the packed layout.
func testPacking(t *testing.T, noBLAS bool, seqs []Sequence) *packed {
	packed := newMicro(t, Config{RowTokens: 64, NoBLAS: noBLAS})
	perturb(packed, 0.05, 3)
	rp, gp := gradients(t, packed, seqs, CrossEntropy{})
	p, err := pack(seqs, 64, 128, 300)
	if err != nil {
		t.Fatal(err)
	}

	separate := newMicro(t, Config{RowTokens: 1, NoBLAS: noBLAS})
	perturb(separate, 0.05, 3)
	z := make([]float64, len(seqs))
	zAll := 0.0
	for i := range seqs {
		z[i] = normalizer(seqs[i:i+1], ByWeight)
		zAll += z[i]
	}
	var want float64
	wantGrad := make([][]float32, len(gp))
	for i := range seqs {
		r, g := gradients(t, separate, seqs[i:i+1], CrossEntropy{})
		want += r.Loss * z[i] / zAll
		for k := range g {
			if wantGrad[k] == nil {
				wantGrad[k] = make([]float32, len(g[k]))
			}
			for j := range g[k] {
				wantGrad[k][j] += g[k][j] * float32(z[i]/zAll)
			}
		}
		// Log-probabilities are equal token for token.
		for k, lp := range r.LogProbs[0] {
			if d := math.Abs(float64(lp - rp.LogProbs[i][k])); d > 1e-5 {
				t.Fatalf("sequence %d token %d: log-prob %g packed, %g alone", i, k, rp.LogProbs[i][k], lp)
			}
		}
	}
	if d := math.Abs(rp.Loss - want); d > 1e-5 {
		t.Errorf("packed loss %g, separate batches %g", rp.Loss, want)
	}
	if d := maxGradDiff(wantGrad, gp); d > 1e-4 {
		t.Errorf("packed gradient differs from the separate batches' by %g", d)
	}
	t.Logf("%d sequences: packed loss %.6f, separate %.6f", len(seqs), rp.Loss, want)
	return p
}

// fixedText is a text of 96 distinct tokens, split in two sequences;
// reversed, it is a different text over the same tokens.
func fixedText(vocab int, reversed bool) []Sequence {
	text := make([]int32, 96)
	for i := range text {
		k := i
		if reversed {
			k = 95 - i
		}
		text[i] = int32((k*37 + 11) % vocab)
	}
	return []Sequence{{Tokens: text[:48]}, {Tokens: text[48:]}}
}

// memorise trains on seqs and returns the first and last losses.
func memorise(t *testing.T, tr *Trainer, seqs []Sequence, steps int) (first, last float64) {
	t.Helper()
	for s := range steps {
		r, err := tr.Accumulate(seqs, CrossEntropy{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
		if s == 0 {
			first = r.Loss
		}
		last = r.Loss
	}
	return first, last
}

// TestMemorisation trains on a small fixed text until the loss has fallen
// by 90%: every weight of the micro model from its random initialisation,
// then a LoRA adapter of the result on the text reversed. (LoRA alone
// cannot do it from the random model: with its output embeddings frozen
// at their initial scale, no logit can grow large enough.)
func TestMemorisation(t *testing.T) {
	full := newMicro(t, Config{Full: true, Optimizer: AdamW{LR: 3e-3}})
	first, last := memorise(t, full, fixedText(full.h.Vocab, false), 150)
	t.Logf("full, 150 steps: loss %.3f -> %.4f (%.1f%% lower)", first, last, 100*(1-last/first))
	if last > 0.1*first {
		t.Errorf("full: loss fell from %.3f to %.3f, less than 90%%", first, last)
	}
	base := filepath.Join(t.TempDir(), "memorised.gguf")
	if err := full.SaveModel(base); err != nil {
		t.Fatal(err)
	}
	lora, err := New(base, Config{Threads: 1, LoRA: LoRAConfig{Rank: 16}, Optimizer: AdamW{LR: 3e-3}})
	if err != nil {
		t.Fatal(err)
	}
	defer lora.Close()
	first, last = memorise(t, lora, fixedText(lora.h.Vocab, true), 150)
	t.Logf("LoRA, 150 steps: loss %.3f -> %.4f (%.1f%% lower)", first, last, 100*(1-last/first))
	if last > 0.1*first {
		t.Errorf("LoRA: loss fell from %.3f to %.3f, less than 90%%", first, last)
	}
}

// TestAdapterRoundTrip saves a trained adapter, loads it into the
// inference engine and compares the engine's log-probabilities with the
// trainer's; the merged model saved as a whole GGUF must agree as well.
func TestAdapterRoundTrip(t *testing.T) {
	for _, tc := range parityCases() {
		// Models whose products round activations to 8 bits.
		quantizedBase := map[string]bool{"tiny-q8_0": true, "tiny-q4_k": true, "tiny-q4_1": true, "tiny-q5_k_m": true}
		if !quantizedBase[tc.name] && tc.name != "tiny" && tc.name != "qwen2-micro" && tc.name != "qwen3-micro" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t)
			tr, err := New(path, Config{Threads: 1, F16KV: true, LoRA: LoRAConfig{Rank: 4, Alpha: 16}})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			perturb(tr, 0.05, 9)
			dir := t.TempDir()
			adapter := filepath.Join(dir, "adapter.gguf")
			if err := tr.SaveAdapter(adapter); err != nil {
				t.Fatal(err)
			}
			reqs, base := engineScores(t, path, "", func(m *llm.Model) []llm.ScoreRequest { return scoreRequests(t, m) })
			_, with := engineScores(t, path, adapter, func(m *llm.Model) []llm.ScoreRequest { return scoreRequests(t, m) })
			lp, err := tr.LogProbs(asSequences(reqs))
			if err != nil {
				t.Fatal(err)
			}
			if d := maxScoreDiff(reqs, base, lp); d < 1e-2 {
				t.Fatalf("the adapter changes log-probs by only %g: the comparison would prove nothing", d)
			}
			d := maxScoreDiff(reqs, with, lp)
			t.Logf("engine with the saved adapter vs trainer: max diff %.2e", d)
			tolerance := 1e-4
			if quantizedBase[tc.name] && tc.name != "tiny-q8_0" {
				// Q4_K products round each activation row to 8 bits
				// against one scale per 256 values (Q4_1 per 32): with an adapter of
				// this size a last-bit difference in a LoRA sum can flip
				// some roundings (2.2e-3 when both sequences shared one
				// row; 1e-6 as packed now, or with an adapter five
				// times smaller).
				tolerance = 5e-3
			}
			if d > tolerance {
				t.Errorf("engine with the adapter differs from the trainer by %g", d)
			}

			// Loading the adapter back into a fresh trainer restores it.
			again, err := New(path, Config{Threads: 1, F16KV: true, LoRA: LoRAConfig{Rank: 4, Alpha: 16}})
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if err := again.LoadAdapter(adapter); err != nil {
				t.Fatal(err)
			}
			lp2, err := again.LogProbs(asSequences(reqs))
			if err != nil {
				t.Fatal(err)
			}
			for i := range lp {
				for k := range lp[i] {
					if lp[i][k] != lp2[i][k] {
						t.Fatalf("reloaded adapter: log-prob %g, want %g", lp2[i][k], lp[i][k])
					}
				}
			}

			if quantizedBase[tc.name] {
				// Merged into F32 weights, the model no longer rounds
				// its activations to 8 bits as quantised products do.
				return
			}
			merged := filepath.Join(dir, "merged.gguf")
			if err := tr.SaveModel(merged); err != nil {
				t.Fatal(err)
			}
			_, res := engineScores(t, merged, "", func(m *llm.Model) []llm.ScoreRequest { return reqs })
			d = maxScoreDiff(reqs, res, lp)
			t.Logf("merged model vs trainer: max diff %.2e", d)
			if d > 2e-3 {
				t.Errorf("merged model differs from the trainer by %g", d)
			}

		})
	}
}

func TestFullModelSavedLoadsInLlamaCpp(t *testing.T) {
	path := makeModel(t, "micro", microConfig(5))
	tr := newMicro(t, Config{Full: true, F16KV: true, Optimizer: AdamW{LR: 1e-3}})
	memorise(t, tr, fixedText(tr.h.Vocab, false), 5)
	out := filepath.Join(t.TempDir(), "trained.gguf")
	if err := tr.SaveModel(out); err != nil {
		t.Fatal(err)
	}
	reqs, base := engineScores(t, path, "", func(m *llm.Model) []llm.ScoreRequest { return scoreRequests(t, m) })
	_, res := engineScores(t, out, "", func(m *llm.Model) []llm.ScoreRequest { return reqs })
	lp, err := tr.LogProbs(asSequences(reqs))
	if err != nil {
		t.Fatal(err)
	}
	if d := maxScoreDiff(reqs, base, lp); d < 1e-3 {
		t.Fatalf("training changed log-probs by only %g", d)
	}
	if d := maxScoreDiff(reqs, res, lp); d > 1e-5 {
		t.Errorf("saved model differs from the trainer by %g", d)
	}
}

// TestEMA checks the average's arithmetic and that it saves as an adapter.
func TestEMA(t *testing.T) {
	tr := newMicro(t, Config{})
	ema := tr.NewEMA()
	start := make([][]float32, len(tr.net.params))
	for i, p := range tr.net.params {
		start[i] = append([]float32(nil), p.value...)
	}
	perturb(tr, 0.05, 5)
	if err := ema.Update(0.25); err != nil {
		t.Fatal(err)
	}
	for i, p := range tr.net.params {
		for k := range p.value {
			want := 0.75*float64(start[i][k]) + 0.25*float64(p.value[k])
			if d := math.Abs(float64(ema.values[i][k]) - want); d > 1e-7 {
				t.Fatalf("%s[%d]: average %g, want %g", p.name, k, ema.values[i][k], want)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "ema.gguf")
	if err := ema.SaveAdapter(path); err != nil {
		t.Fatal(err)
	}
	other := newMicro(t, Config{})
	if err := other.LoadAdapter(path); err != nil {
		t.Fatal(err)
	}
	for i, p := range other.net.params {
		for k := range p.value {
			if p.value[k] != ema.values[i][k] {
				t.Fatalf("%s[%d]: saved average %g, loaded %g", p.name, k, ema.values[i][k], p.value[k])
			}
		}
	}
	// A resumed run reads the average back into a fresh trainer's EMA.
	back := other.NewEMA()
	perturb(other, 0.05, 6)
	if err := back.LoadAdapter(path); err != nil {
		t.Fatal(err)
	}
	for i := range back.values {
		if !slices.Equal(back.values[i], ema.values[i]) {
			t.Fatalf("parameter %d: the average read back differs from the one saved", i)
		}
	}
	if err := ema.Update(1.5); err == nil {
		t.Error("rate 1.5 accepted")
	}
}

func TestBaseLogProbsLeaveTheAdapterOut(t *testing.T) {
	seqs := testSequences(300, 17)
	fresh := newMicro(t, Config{})
	want, err := fresh.LogProbs(seqs)
	if err != nil {
		t.Fatal(err)
	}
	tr := newMicro(t, Config{})
	perturb(tr, 0.05, 8)
	base, err := tr.BaseLogProbs(seqs)
	if err != nil {
		t.Fatal(err)
	}
	with, err := tr.LogProbs(seqs)
	if err != nil {
		t.Fatal(err)
	}
	maxDiff := func(a, b [][]float32) float64 {
		d := 0.0
		for i := range a {
			for k := range a[i] {
				d = math.Max(d, math.Abs(float64(a[i][k]-b[i][k])))
			}
		}
		return d
	}
	if d := maxDiff(base, want); d != 0 {
		t.Errorf("base log-probs differ from the model without an adapter by %g", d)
	}
	if d := maxDiff(with, want); d < 1e-3 {
		t.Errorf("the adapter changed log-probs by only %g", d)
	}
	if _, err := newMicro(t, Config{Full: true}).BaseLogProbs(seqs); err == nil {
		t.Error("base log-probs in full mode accepted")
	}
}

// TestLoRAOnQuantizedBases trains an adapter of quantised models, whose
// input gradients go through dequantised transposed copies: the loss on a
// fixed text falls as it does on the F32 model.
func TestLoRAOnQuantizedBases(t *testing.T) {
	for _, typ := range []gguf.TensorType{gguf.TensorF32, gguf.TensorQ8_0, gguf.TensorQ4_K} {
		path := makeModel(t, "tiny-"+strings.ToLower(typ.String()), initmodel.Config{Preset: "tiny", Seed: 3, Type: typ})
		tr, err := New(path, Config{Threads: 1, LoRA: LoRAConfig{Rank: 8}, Optimizer: AdamW{LR: 1e-2}, Schedule: Schedule{Decay: "constant"}})
		if err != nil {
			t.Fatal(err)
		}
		first, last := memorise(t, tr, fixedText(tr.h.Vocab, false), 30)
		tr.Close()
		t.Logf("%s: loss %.3f -> %.3f in 30 LoRA steps", typ, first, last)
		if last > first-0.3 {
			t.Errorf("%s: loss %.3f -> %.3f in 30 LoRA steps", typ, first, last)
		}
	}
}

// TestBlockAttentionEqualsTheSquare checks that causal attention computed
// block by block of queries, each against the keys it can see, gives the
// loss and gradients of the whole score square, with packed rows of
// several sequences and rows of different lengths.
func TestBlockAttentionEqualsTheSquare(t *testing.T) {
	seqs := append(testSequences(300, 21), fixedText(300, false)...)
	// and an ending of the first after 15 of its tokens, reading them
	// from its slots (SharedSlots)
	seqs = append(seqs, Sequence{Tokens: append(slices.Clone(seqs[0].Tokens[:15]), 7, 8, 9)})
	for _, full := range []bool{false, true} {
		square := newMicro(t, Config{Full: full, RowTokens: 96})
		perturb(square, 0.05, 5)
		square.net.attnBlock = 0
		rs, gs := gradients(t, square, seqs, CrossEntropy{})

		blocks := newMicro(t, Config{Full: full, RowTokens: 96, Threads: 2}) // threads splitting the blocks too
		perturb(blocks, 0.05, 5)
		blocks.net.attnBlock = 32
		p, err := pack(seqs, 96, 128, 300)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(queryBlocks(p.T, 32)); n < 3 {
			t.Fatalf("rows of %d slots make %d blocks: the test would not cut attention", p.T, n)
		}
		if want := 23 + 14 + 48 + 48 + 3; p.tokensUsed != want {
			t.Fatalf("%d tokens computed, want %d: the last sequence should share its prefix", p.tokensUsed, want)
		}
		rb, gb := gradients(t, blocks, seqs, CrossEntropy{})
		if d := math.Abs(rs.Loss - rb.Loss); d > 1e-5 {
			t.Errorf("full %v: loss %g in blocks, %g as a square", full, rb.Loss, rs.Loss)
		}
		if d := maxGradDiff(gs, gb); d > 1e-5 {
			t.Errorf("full %v: gradients in blocks differ from the square's by %g", full, d)
		}
	}
}

// TestFullTrainingDequantizes starts full-parameter training from a
// quantised model when asked to: the weights it trains are ggml's
// dequantised values (saved unchanged before any step), and training
// lowers the loss.
func TestFullTrainingDequantizes(t *testing.T) {
	path := quantizeModel(t, makeModel(t, "micro", microConfig(5)), "q4_1")
	tr, err := New(path, Config{Threads: 1, Full: true, Dequantize: true, Optimizer: AdamW{LR: 1e-3}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	saved := filepath.Join(t.TempDir(), "f32.gguf")
	if err := tr.SaveModel(saved); err != nil {
		t.Fatal(err)
	}
	src, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out, err := gguf.Open(saved)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	const name = "blk.0.attn_q.weight"
	if ti, _ := src.Tensor(name); ti.Type != gguf.TensorQ4_1 {
		t.Fatalf("%s is %s in the quantised model, want q4_1", name, ti.Type)
	}
	raw, _ := src.TensorData(name)
	want, err := cgo.Dequantize(cgo.Type(gguf.TensorQ4_1), raw)
	if err != nil {
		t.Fatal(err)
	}
	got, err := out.TensorFloat32(name)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the saved F32 %s is not the dequantised weight", name)
	}
	first, last := memorise(t, tr, fixedText(tr.h.Vocab, false), 10)
	t.Logf("full from dequantised Q4_1, 10 steps: loss %.3f -> %.3f", first, last)
	if !(last < first) {
		t.Errorf("loss %.3f -> %.3f did not fall", first, last)
	}
}
