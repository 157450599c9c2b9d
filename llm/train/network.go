package train

import (
	"fmt"
	"math/rand/v2"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/llm/gguf"
)

// param is a trainable tensor: its value lives on the backend, with a
// master copy, the accumulated gradient and the AdamW moments in Go.
type param struct {
	name  string  // tensor name in the saved adapter or model
	shape []int64 // ggml order, as computed (a LoRA rank padded)
	t     cgo.Tensor
	value []float32
	grad  []float32
	m, v  []float32
	// decay applies weight decay: to matrices, not to norms and biases.
	decay bool
	// pad, for LoRA matrices, is the rank padding: see loraRankMultiple.
	pad *rankPad
}

// rankPad describes a LoRA matrix whose rank dimension (axis) is computed
// with padded entries instead of rank: the padding is zero and stays zero
// (its gradient is zero), and files hold only the rank entries.
type rankPad struct {
	axis         int
	rank, padded int64
}

// loraRankMultiple is the multiple LoRA ranks are padded to in the graph
// when ggml computes the products: its fast F32 matrix product
// (llamafile's tinyBLAS) needs the contraction length, which the rank is
// in B (A x), to be a multiple of 16 with AVX-512 (of 8 with AVX2), and
// otherwise falls back to a dot product per element, several times
// slower. Padding rank 8 to 16 doubles the adapter's own few FLOPs and
// makes the step about 35% faster. BLAS needs no padding.
const loraRankMultiple = 16

// fileShape is the shape the parameter has in files.
func (p *param) fileShape() []int64 {
	if p.pad == nil {
		return p.shape
	}
	s := append([]int64(nil), p.shape...)
	s[p.pad.axis] = p.pad.rank
	return s
}

// size is the number of elements in files.
func (p *param) size() int64 {
	n := int64(1)
	for _, d := range p.fileShape() {
		n *= d
	}
	return n
}

// toFile returns v (value, moment or gradient) as stored in files.
func (p *param) toFile(v []float32) []float32 {
	if p.pad == nil {
		return v
	}
	r, rp := p.pad.rank, p.pad.padded
	if p.pad.axis == 1 { // A [in, rp]: the first r columns
		return append([]float32(nil), v[:p.shape[0]*r]...)
	}
	out := make([]float32, 0, r*p.shape[1]) // B [rp, out]: r of each column's rp
	for o := range p.shape[1] {
		out = append(out, v[o*rp:o*rp+r]...)
	}
	return out
}

// fromFile copies file values src into dst, leaving the padding zero.
func (p *param) fromFile(dst, src []float32) {
	if p.pad == nil {
		copy(dst, src)
		return
	}
	clear(dst)
	r, rp := p.pad.rank, p.pad.padded
	if p.pad.axis == 1 {
		copy(dst, src)
		return
	}
	for o := range p.shape[1] {
		copy(dst[o*rp:o*rp+r], src[o*r:(o+1)*r])
	}
}

func newParam(name string, shape []int64, decay bool) *param {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return &param{name: name, shape: shape, value: make([]float32, n), grad: make([]float32, n),
		m: make([]float32, n), v: make([]float32, n), decay: decay}
}

// upload copies the master value to the backend.
func (p *param) upload() { p.t.SetFloat32(p.value, 0) }

// vec is a vector weight (norm or bias): frozen, or a parameter in full
// mode.
type vec struct {
	t cgo.Tensor
	p *param
}

// linear is a weight matrix W [in, out] applied as W x (+ bias), with an
// optional LoRA pair: y = W x + scale * B (A x).
type linear struct {
	name    string // base tensor name, e.g. blk.0.attn_q.weight
	in, out int
	w       cgo.Tensor
	wt      cgo.Tensor // frozen W transposed [out, in], for the input gradient
	wp      *param     // full mode: W is trained
	bias    *vec
	lora    *loraPair
}

// loraPair is a LoRA adapter of one matrix: A [in, r] and B [r, out] in
// llama.cpp's layout, applied with scale alpha / r.
type loraPair struct {
	a, b  *param
	scale float32
}

// block is one transformer layer.
type block struct {
	attnNorm, ffnNorm *vec
	qNorm, kNorm      *vec // qwen3
	q, k, v, o        *linear
	gate, up, down    *linear
}

// network is a model on a ggml backend: the frozen weights (in their
// stored types) or, in full mode, F32 parameters, and the LoRA parameters.
type network struct {
	h     hparams
	full  bool
	f16KV bool // round attention keys and values to F16 (Config.F16KV)
	blas  bool // train with the CBLAS library's products (cgo.BLAS)
	// attnBlock is the number of queries per block of causal attention in
	// training graphs (queryBlocks); 0 computes the whole square.
	attnBlock int
	backend   *cgo.Backend
	ctx       *cgo.GraphContext // metadata of the weights and parameters
	buf       *cgo.Buffer
	embd      *linear // token_embd.weight; its rows are the token embeddings
	outNorm   *vec
	output    *linear // the logits; W is token_embd.weight when tied
	freqs     cgo.Tensor
	layers    []block
	params    []*param // trainable, in a stable order
	leaves    int      // weight and parameter tensors
}

// attentionBlock is the queries per block of causal attention: rows of
// 256 slots compute 3/4 of the score square, of 512 slots 5/8 (a last,
// shorter block saves less). Smaller blocks skip more but make smaller,
// less efficient products.
const attentionBlock = 128

// loraTargets maps the names of LoRA targets to the base tensors.
var loraTargets = map[string]string{
	"q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output",
	"gate": "ffn_gate", "up": "ffn_up", "down": "ffn_down",
}

// DefaultTargets are the matrices LoRA adapts by default: all of them.
var DefaultTargets = []string{"q", "k", "v", "o", "gate", "up", "down"}

// buildNetwork loads the model's weights onto the backend and makes the
// trainable parameters: every weight in full mode, else a LoRA pair for
// each target matrix.
func buildNetwork(f *gguf.File, h hparams, specs []tensorSpec, backend *cgo.Backend, cfg Config, blas bool) (*network, error) {
	n := &network{h: h, full: cfg.Full, f16KV: cfg.F16KV, blas: blas, backend: backend}
	if backend.CPU() {
		// Measured and tested on the CPU; GPU backends compute the square
		// (Metal lacks the in-place writes the blocks use).
		n.attnBlock = attentionBlock
	}
	targets := map[string]bool{}
	if !cfg.Full {
		for _, t := range cfg.LoRA.Targets {
			targets[loraTargets[t]] = true
		}
	}
	present := map[string]bool{}
	for _, s := range specs {
		if _, ok := f.Tensor(s.name); ok {
			present[s.name] = true
		}
	}
	// Tensors: every base tensor, plus two per LoRA pair and a transposed
	// copy of each matrix.
	ctx, err := cgo.NewGraphContext(len(specs) + 3*h.Layers*len(loraTargets) + 8)
	if err != nil {
		return nil, err
	}
	n.ctx = ctx
	tensors := map[string]cgo.Tensor{}
	var uploads []func() error
	for _, s := range specs {
		if !present[s.name] {
			continue
		}
		info, _ := f.Tensor(s.name)
		name := s.name
		if cfg.Full || !s.matrix {
			// F32, converted in Go.
			t := ctx.NewTensor(cgo.TypeF32, s.shape...).SetName(name)
			tensors[name] = t
			var p *param
			if cfg.Full && name != "rope_freqs.weight" {
				p = newParam(name, s.shape, s.matrix)
				p.t = t
				n.params = append(n.params, p)
			}
			uploads = append(uploads, func() error {
				values, err := baseFloat32(f, name)
				if err != nil {
					return err
				}
				if p != nil {
					copy(p.value, values)
				}
				t.SetFloat32(values, 0)
				return nil
			})
			continue
		}
		if cfg.F16Base && quantized(info.Type) {
			t := ctx.NewTensor(cgo.TypeF16, s.shape...).SetName(name)
			tensors[name] = t
			uploads = append(uploads, func() error {
				values, err := baseFloat32(f, name)
				if err != nil {
					return err
				}
				raw, err := gguf.EncodeFloat32(gguf.TensorF16, values)
				if err != nil {
					return err
				}
				t.SetBytes(raw, 0)
				return nil
			})
			continue
		}
		t := ctx.NewTensor(cgo.Type(info.Type), s.shape...).SetName(name)
		tensors[name] = t
		uploads = append(uploads, func() error {
			raw, err := f.TensorData(name)
			if err != nil {
				return err
			}
			t.SetBytes(raw, 0)
			return nil
		})
	}
	paramOf := map[string]*param{}
	for _, p := range n.params {
		paramOf[p.name] = p
	}
	vecOf := func(name string) *vec {
		t, ok := tensors[name]
		if !ok {
			return nil
		}
		return &vec{t: t, p: paramOf[name]}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, loraStream))
	lin := func(name string, bias string) *linear {
		t := tensors[name]
		l := &linear{name: name, in: int(t.Ne(0)), out: int(t.Ne(1)), w: t, wp: paramOf[name]}
		if bias != "" {
			l.bias = vecOf(bias)
		}
		return l
	}
	n.embd = lin("token_embd.weight", "")
	n.outNorm = vecOf("output_norm.weight")
	if _, ok := tensors["output.weight"]; ok {
		n.output = lin("output.weight", "output.bias")
	} else {
		n.output = &linear{name: "token_embd.weight", in: h.Embd, out: h.Vocab, w: n.embd.w, wp: n.embd.wp, bias: vecOf("output.bias")}
	}
	if t, ok := tensors["rope_freqs.weight"]; ok {
		n.freqs = t
	}
	n.layers = make([]block, h.Layers)
	for i := range n.layers {
		bn := func(s string) string { return blockName(i, s) }
		b := &n.layers[i]
		b.attnNorm, b.ffnNorm = vecOf(bn("attn_norm.weight")), vecOf(bn("ffn_norm.weight"))
		b.qNorm, b.kNorm = vecOf(bn("attn_q_norm.weight")), vecOf(bn("attn_k_norm.weight"))
		b.q = lin(bn("attn_q.weight"), bn("attn_q.bias"))
		b.k = lin(bn("attn_k.weight"), bn("attn_k.bias"))
		b.v = lin(bn("attn_v.weight"), bn("attn_v.bias"))
		b.o = lin(bn("attn_output.weight"), bn("attn_output.bias"))
		b.gate = lin(bn("ffn_gate.weight"), "")
		b.up = lin(bn("ffn_up.weight"), "")
		b.down = lin(bn("ffn_down.weight"), "")
		for _, l := range []*linear{b.q, b.k, b.v, b.o, b.gate, b.up, b.down} {
			base := l.name[len(bn("")) : len(l.name)-len(".weight")]
			if targets[base] {
				n.addLoRA(l, cfg.LoRA, rng)
			}
		}
	}
	if !cfg.Full {
		n.addTransposes()
	}
	n.leaves = ctx.Tensors()
	if n.buf, err = backend.Alloc(ctx); err != nil {
		ctx.Free()
		return nil, err
	}
	for _, up := range uploads {
		if err := up(); err != nil {
			n.free()
			return nil, err
		}
	}
	n.uploadParams()
	if err := n.fillTransposes(); err != nil {
		n.free()
		return nil, err
	}
	return n, nil
}

// addTransposes gives frozen matrices a transposed copy, made once, for
// the gradient of their input: ggml has no fast transpose (it copies a
// transposed tensor one element at a time), and one per matrix and step
// would cost more than the product it feeds. The copies are F32 for F32
// models and F16 otherwise, taking as much memory as the F32 weights or
// half of it. With BLAS, F32 matrices need none: it multiplies by the
// transpose in place.
func (n *network) addTransposes() {
	seen := map[cgo.Tensor]cgo.Tensor{}
	for _, l := range append(n.linears(), n.output) {
		if t, ok := seen[l.w]; ok {
			l.wt = t
			continue
		}
		typ := cgo.TypeF16
		if l.w.Type() == cgo.TypeF32 {
			if n.blas {
				continue
			}
			typ = cgo.TypeF32
		}
		l.wt = n.ctx.NewTensor(typ, int64(l.out), int64(l.in)).SetName(l.name + ".T")
		seen[l.w] = l.wt
	}
}

// fillTransposes computes the transposed copies, one matrix at a time.
func (n *network) fillTransposes() (err error) {
	alloc := n.backend.NewAllocator()
	defer alloc.Free()
	done := map[cgo.Tensor]bool{}
	for _, l := range append(n.linears(), n.output) {
		if !l.wt.Valid() || done[l.wt] {
			continue
		}
		done[l.wt] = true
		if err := n.transposeInto(alloc, l.w, l.wt); err != nil {
			return fmt.Errorf("transpose %s: %w", l.name, err)
		}
	}
	return nil
}

func (n *network) transposeInto(alloc *cgo.Allocator, w, dst cgo.Tensor) (err error) {
	x, err := cgo.NewGraphContext(8, 16)
	if err != nil {
		return err
	}
	defer x.Free()
	defer func() {
		if r := recover(); r != nil {
			opErr, ok := r.(*cgo.OpError)
			if !ok {
				panic(r)
			}
			err = opErr
		}
	}()
	if w.Type() != cgo.TypeF32 {
		w = x.Cast(w, cgo.TypeF32)
	}
	g := x.NewGraph(16)
	g.Expand(x.Copy(x.T(w), dst))
	if err := alloc.Alloc(g); err != nil {
		return err
	}
	return n.backend.Compute(g)
}

// addLoRA gives l a LoRA pair, initialised as PEFT does: A uniform in
// ±1/sqrt(in) (Kaiming with a = sqrt(5)), B zero, so that training starts
// from the base model.
func (n *network) addLoRA(l *linear, cfg LoRAConfig, rng *rand.Rand) {
	r := int64(cfg.Rank)
	multiple := int64(loraRankMultiple)
	if n.blas {
		multiple = 1
	}
	rp := (r + multiple - 1) / multiple * multiple
	a := newParam(l.name+".lora_a", []int64{int64(l.in), rp}, true)
	b := newParam(l.name+".lora_b", []int64{rp, int64(l.out)}, true)
	a.pad = &rankPad{axis: 1, rank: r, padded: rp}
	b.pad = &rankPad{axis: 0, rank: r, padded: rp}
	a.t = n.ctx.NewTensor(cgo.TypeF32, a.shape...).SetName(a.name)
	b.t = n.ctx.NewTensor(cgo.TypeF32, b.shape...).SetName(b.name)
	initLoRAA(a.value, a, rng)
	l.lora = &loraPair{a: a, b: b, scale: cfg.Alpha / float32(cfg.Rank)}
	n.params = append(n.params, a, b)
}

// uploadParams copies every parameter's master value to the backend.
func (n *network) uploadParams() {
	for _, p := range n.params {
		p.upload()
	}
}

func (n *network) free() {
	if n.buf != nil {
		n.buf.Free()
		n.buf = nil
	}
	if n.ctx != nil {
		n.ctx.Free()
		n.ctx = nil
	}
}

// linears lists the matrices of every layer.
func (n *network) linears() []*linear {
	var ls []*linear
	for i := range n.layers {
		b := &n.layers[i]
		ls = append(ls, b.q, b.k, b.v, b.o, b.gate, b.up, b.down)
	}
	return ls
}

func (n *network) String() string {
	return fmt.Sprintf("%s: %d layers, embedding %d, %d heads (%d KV), vocabulary %d", n.h.Arch, n.h.Layers, n.h.Embd, n.h.Heads, n.h.HeadsKV, n.h.Vocab)
}
