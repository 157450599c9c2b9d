package train

import (
	"fmt"

	"github.com/agentrl/agentrl/cgo"
)

// The compute graph of one micro-batch: B rows of T token slots, each row
// holding one or more packed sequences. Attention is masked to stay inside
// each sequence, and positions restart at 0 for each, so a packed row
// computes exactly what separate rows would.
//
// The forward pass mirrors llama.cpp's graph for the llama, qwen2 and qwen3
// architectures op for op (the same ggml kernels, in the same order), which
// is what makes its log-probabilities match llama.cpp's. The backward pass
// is written out by hand from ggml's backward operations (rms_norm_back,
// rope_ext_back, soft_max_ext_back, silu_back, get_rows_back) and matrix
// products, rather than by ggml's automatic differentiation, for three
// reasons: frozen weights need no gradient, whose computation autodiff
// cannot skip for operands of a product; ggml computes the input gradient
// of a product with out_prod, which aborts on F16 weights and is several
// times slower on the CPU than the tiled matrix product used here against
// the transposed weight; and the graph stays readable as the backward of
// each forward step.
//
// Logits are computed only for the slots whose next token has a loss
// weight (or whose log-probability was asked for), gathered before the
// output projection. Their log-softmax, and its gradient, are computed in
// the graph too; only a few numbers per logit row cross to Go and back.

// graph is a built and allocated micro-batch graph.
type graph struct {
	ctx *cgo.GraphContext
	// all holds every node and is what the allocator sees; fwd and bwd
	// split it so that the loss can be computed in Go in between.
	all, fwd, bwd *cgo.Graph

	tokens, pos, mask, outIdx cgo.Tensor // inputs
	// Causal attention in blocks of queries (see queryBlocks): the blocks
	// and the mask of each, in place of mask.
	blocks     []queryBlock
	blockMasks []cgo.Tensor
	targets    cgo.Tensor // input: the token each logit row predicts, [1, M]
	drops      []cgo.Tensor
	// Outputs, one per logit row: the target's logit, the largest logit
	// and its probability, from which log p(target) = zTarget - zMax +
	// log pMax, exact even when p(target) underflows.
	zTarget, zMax, pMax cgo.Tensor
	// Inputs of the backward pass: dL/dlog p(target) per row, and the
	// position of each row's target among the V x M logits.
	lossGrad, targetFlat cgo.Tensor
	grads                map[*param]cgo.Tensor
	order                []*param // parameters with a gradient, in graph order
}

func (g *graph) free() {
	if g.ctx != nil {
		g.ctx.Free()
		g.ctx = nil
	}
}

// builder writes the graph of one micro-batch.
type builder struct {
	n     *network
	x     *cgo.GraphContext
	g     *graph
	T, B  int // slots per row, rows
	N, M  int // slots, logit rows
	mode  graphMode
	memoT map[cgo.Tensor]cgo.Tensor
	// blas runs the F32 products through the CBLAS library (cgo.BLAS):
	// training graphs on the CPU backend when one is installed. Graphs
	// without a backward pass keep ggml's kernels, and so compute
	// log-probabilities as llama.cpp does, rounding included.
	blas bool
}

// graphMode selects what a graph computes.
type graphMode struct {
	train      bool // add the backward pass
	checkpoint bool // recompute each layer's activations in the backward pass
	dropout    bool // with dropout masks on the LoRA inputs
	base       bool // leave the LoRA adapter out (the reference model)
}

// tensorsPerLayer bounds the tensors one layer's forward and backward
// create, with room to spare, plus tensorsPerBlock for each query block
// of causal attention.
const (
	tensorsPerLayer = 320
	tensorsPerBlock = 32
)

// buildGraph builds the graph of a micro-batch of B rows of T slots with M
// logit rows. Shape errors in the graph, which ggml would abort on, come
// back as errors.
func buildGraph(n *network, T, B, M int, mode graphMode) (g *graph, err error) {
	var blocks []queryBlock
	if mode.train {
		blocks = n.trainingBlocks(T)
	}
	perLayer := tensorsPerLayer + tensorsPerBlock*len(blocks)
	if mode.checkpoint {
		perLayer += perLayer / 2 // the forward again
	}
	capacity := perLayer*(n.h.Layers+2) + 64
	size := capacity + n.leaves + 64
	sizes := []int{size}
	if mode.train {
		sizes = append(sizes, size, size)
	}
	ctx, err := cgo.NewGraphContext(capacity, sizes...)
	if err != nil {
		return nil, err
	}
	g = &graph{ctx: ctx, grads: map[*param]cgo.Tensor{}, blocks: blocks}
	defer func() {
		if r := recover(); r != nil {
			opErr, ok := r.(*cgo.OpError)
			if !ok {
				panic(r)
			}
			g.free()
			g, err = nil, fmt.Errorf("training graph: %w", opErr)
		}
	}()
	b := &builder{n: n, x: ctx, g: g, T: T, B: B, N: T * B, M: M, mode: mode, memoT: map[cgo.Tensor]cgo.Tensor{},
		blas: n.blas && mode.train}
	b.build(size)
	return g, nil
}

func (b *builder) input(name string, typ cgo.Type, shape ...int64) cgo.Tensor {
	t := b.x.NewTensor(typ, shape...).SetName(name)
	t.SetInput()
	return t
}

func (b *builder) build(size int) {
	x, n, h := b.x, b.n, b.n.h
	g := b.g
	g.tokens = b.input("tokens", cgo.TypeI32, int64(b.N))
	g.pos = b.input("positions", cgo.TypeI32, int64(b.N))
	for _, blk := range g.blocks {
		g.blockMasks = append(g.blockMasks, b.input("attention_mask", cgo.TypeF32, int64(blk.keys()), int64(blk.n), 1, int64(b.B)))
	}
	if g.blocks == nil {
		g.mask = b.input("attention_mask", cgo.TypeF32, int64(b.T), int64(b.T), 1, int64(b.B))
	}
	g.outIdx = b.input("output_slots", cgo.TypeI32, int64(b.M))

	cur := x.GetRows(n.embd.w, g.tokens)
	acts := make([]*layerAct, h.Layers)
	for i := range n.layers {
		cur, acts[i] = b.layerForward(&n.layers[i], cur, b.dropMasks(&n.layers[i]))
	}
	final := cur
	finalNormed := x.RMSNorm(final, h.NormEps)
	hidden := x.Mul(finalNormed, n.outNorm.t)
	selected := x.GetRows(hidden, g.outIdx)
	logits, outAct := b.linForward(n.output, selected, cgo.Tensor{})

	// The log-softmax at the targets, in the graph (multi-threaded and
	// vectorised): only three numbers per row come back to Go.
	V, M := int64(h.Vocab), int64(b.M)
	probs := x.SoftMaxExt(logits, cgo.Tensor{}, 1)
	g.targets = b.input("targets", cgo.TypeI32, 1, M)
	argmax := x.Reshape(x.ArgMax(logits), 1, M)
	columns := x.Reshape(logits, 1, V, M)
	g.zTarget = x.GetRows(columns, g.targets)
	g.zMax = x.GetRows(columns, argmax)
	probColumns := x.Reshape(probs, 1, V, M)
	g.pMax = x.GetRows(probColumns, argmax)

	g.all = x.NewGraph(size)
	for _, out := range []cgo.Tensor{g.zTarget, g.zMax, g.pMax} {
		out.SetOutput()
		g.all.Expand(out)
	}
	if !b.mode.train {
		return
	}
	nFwd := g.all.Len()

	// d log p(y) / dz_v = [v = y] - p_v, scaled by each row's dL/dlog p(y).
	g.lossGrad = b.input("loss_gradient", cgo.TypeF32, 1, M)
	g.targetFlat = b.input("target_positions", cgo.TypeI32, M)
	// The target's element is -p_y*g + g: written over the dense term
	// rather than scattered into a zero V x M tensor and added, which
	// saves that tensor, and GPU backends cannot scatter that many rows.
	negGrad := x.Scale(g.lossGrad, -1)
	atTargets := x.Add(x.Mul(x.Reshape(x.GetRows(probColumns, g.targets), 1, M), negGrad), g.lossGrad)
	dlogits := x.Reshape(x.SetRows(x.Reshape(x.Mul(probs, negGrad), 1, V*M), atTargets, g.targetFlat), V, M)

	dSelected := b.linBackward(n.output, outAct, dlogits, cgo.Tensor{})
	// A scatter that adds: sequences sharing a prefix share its slots, so
	// one slot can predict several targets.
	dHidden := x.GetRowsBack(dSelected, g.outIdx, hidden)
	dx := b.normBackward(n.outNorm, final, finalNormed, dHidden)
	for i := h.Layers - 1; i >= 0; i-- {
		act := acts[i]
		if b.mode.checkpoint {
			// Recompute the layer's activations from its input, kept from
			// the forward pass, once the layers above are done: ggml's
			// allocator then frees the forward's copies as soon as the
			// next layer has read them, and holds one layer's at a time
			// in the backward pass. Expanding the graph layer by layer
			// fixes that order.
			g.all.Expand(dx)
			_, act = b.layerForward(&n.layers[i], act.in, act.drops)
		}
		dx = b.layerBackward(&n.layers[i], act, dx)
		if b.mode.checkpoint {
			for _, p := range g.order {
				g.all.Expand(g.grads[p])
			}
			g.all.Expand(dx)
		}
	}
	if n.embd.wp != nil {
		b.addGrad(n.embd.wp, x.GetRowsBack(dx, g.tokens, n.embd.w))
	}
	for _, p := range g.order {
		t := g.grads[p]
		if t.Elements() != int64(len(p.value)) {
			panic(&cgo.OpError{Op: "gradient", Msg: fmt.Sprintf("%s: gradient %v for a parameter of shape %v", p.name, t, p.shape)})
		}
		t.SetOutput()
		g.all.Expand(t)
	}
	g.fwd = x.NewGraph(size)
	g.bwd = x.NewGraph(size)
	for i := range g.all.Len() {
		if i < nFwd {
			g.fwd.AddNode(g.all.Node(i))
		} else {
			g.bwd.AddNode(g.all.Node(i))
		}
	}
}

// mulMat is x.MulMat, through the BLAS library where the builder uses one
// and the operands allow.
func (b *builder) mulMat(a, c cgo.Tensor) cgo.Tensor {
	if b.blas && cgo.CanBLASMulMat(a, c) {
		return b.x.BLASMulMat(a, c)
	}
	return b.x.MulMat(a, c)
}

// outProd is x.OutProd, through the BLAS library like mulMat.
func (b *builder) outProd(a, c cgo.Tensor) cgo.Tensor {
	if b.blas && cgo.CanBLASOutProd(a, c) {
		return b.x.BLASOutProd(a, c)
	}
	return b.x.OutProd(a, c)
}

// mulMatT is MulMat(T(a), c): through BLAS without making the transpose,
// else with it.
func (b *builder) mulMatT(a, c cgo.Tensor) cgo.Tensor {
	if b.blas && cgo.CanBLASMulMatT(a, c) {
		return b.x.BLASMulMatT(a, c)
	}
	return b.mulMat(b.t(a), c)
}

// t is the contiguous transpose of a, made once per graph.
func (b *builder) t(a cgo.Tensor) cgo.Tensor {
	if t, ok := b.memoT[a]; ok {
		return t
	}
	t := b.x.T(a)
	b.memoT[a] = t
	return t
}

// inputGrad is the gradient of a linear layer's input, W dy: through the
// frozen transposed copy, or BLAS on W itself, or a transpose made in the
// graph (of a trained weight, or cast to F32).
func (b *builder) inputGrad(l *linear, dy cgo.Tensor) cgo.Tensor {
	if l.wt.Valid() {
		return b.mulMat(l.wt, dy)
	}
	w := l.w
	if w.Type() != cgo.TypeF32 {
		t, ok := b.memoT[w]
		if !ok {
			t = b.x.T(b.x.Cast(w, cgo.TypeF32))
			b.memoT[w] = t
		}
		return b.mulMat(t, dy)
	}
	return b.mulMatT(w, dy)
}

// weightGrad is the gradient of a trained weight [in, out], in dy^T,
// contracting over the slots.
func (b *builder) weightGrad(in, dy cgo.Tensor) cgo.Tensor {
	if b.blas && cgo.CanBLASOutProd(in, dy) {
		return b.x.BLASOutProd(in, dy)
	}
	// As a tiled product of transposes: faster than ggml's out_prod for
	// wide layers.
	return b.x.MulMat(b.t(in), b.t(dy))
}

func (b *builder) addGrad(p *param, t cgo.Tensor) {
	if prev, ok := b.g.grads[p]; ok {
		t = b.x.Add(prev, t)
	} else {
		b.g.order = append(b.g.order, p)
	}
	b.g.grads[p] = t
}

// linAct keeps what the backward pass of a linear layer needs.
type linAct struct {
	in      cgo.Tensor // input x
	dropped cgo.Tensor // x with dropout, the LoRA input
	u       cgo.Tensor // A x
}

// linForward is y = W x + scale * B (A x) (+ bias). Without a backward
// pass it follows llama.cpp's order and kernels, and the LoRA products use
// the rank, not its padding, as llama.cpp does: they then round
// identically, which keeps scoring equal to inference even where a
// rounding difference would be amplified (8-bit activations of quantised
// products). Training graphs compute (scale B) (A x) instead.
func (b *builder) linForward(l *linear, in, drop cgo.Tensor) (cgo.Tensor, linAct) {
	x := b.x
	y := b.mulMat(l.w, in)
	act := linAct{in: in}
	if l.lora != nil && !b.mode.base {
		act.dropped = in
		if drop.Valid() {
			act.dropped = x.Mul(in, drop)
		}
		a, bm := l.lora.a.t, l.lora.b.t
		if !b.mode.train {
			r := l.lora.a.pad.rank
			a = x.Reshape(x.View1D(a, a.Ne(0)*r, 0), a.Ne(0), r)
			bm = x.Columns(bm, r)
		}
		act.u = b.mulMat(a, act.dropped)
		if b.mode.train {
			// Scaling B [r, out] instead of B A x [out, slots] saves a
			// pass over the layer's output.
			y = x.Add(y, b.mulMat(x.Scale(bm, l.lora.scale), act.u))
		} else {
			y = x.Add(y, x.Scale(b.mulMat(bm, act.u), l.lora.scale))
		}
	}
	if l.bias != nil {
		y = x.Add(y, l.bias.t)
	}
	return y, act
}

// linBackward adds the gradients of the layer's parameters and returns the
// gradient of its input, given dy, the gradient of its output.
func (b *builder) linBackward(l *linear, act linAct, dy, drop cgo.Tensor) cgo.Tensor {
	x := b.x
	if l.bias != nil && l.bias.p != nil {
		b.addGrad(l.bias.p, x.RepeatBack(dy, l.bias.t))
	}
	if l.wp != nil {
		b.addGrad(l.wp, b.weightGrad(act.in, dy))
	}
	dx := b.inputGrad(l, dy)
	if l.lora != nil {
		// The adapter's gradients contract over the slots, which out_prod
		// does without transposing the large activations (the transposes
		// here are of the small adapter matrices).
		s := l.lora.scale
		b.addGrad(l.lora.b, x.Scale(x.T(b.outProd(dy, act.u)), s))
		du := x.Scale(b.mulMatT(l.lora.b.t, dy), s)
		b.addGrad(l.lora.a, b.outProd(act.dropped, du))
		dxLoRA := b.mulMatT(l.lora.a.t, du)
		if drop.Valid() {
			dxLoRA = x.Mul(dxLoRA, drop)
		}
		dx = x.Add(dx, dxLoRA)
	}
	return dx
}

// normBackward is the gradient of weight * rms_norm(in) with respect to
// in, given dy; normed is rms_norm(in). It adds the weight's gradient in
// full mode.
func (b *builder) normBackward(w *vec, in, normed, dy cgo.Tensor) cgo.Tensor {
	x := b.x
	if w.p != nil {
		b.addGrad(w.p, x.RepeatBack(x.Mul(dy, normed), w.t))
	}
	return x.RMSNormBack(x.Mul(dy, w.t), in, b.n.h.NormEps)
}

// Dropout sites: the inputs that LoRA matrices read.
const (
	dropAttnIn  = iota // q, k, v
	dropAttnOut        // o
	dropFFNIn          // gate, up
	dropFFNMid         // down
	dropSites
)

// layerAct keeps what the backward pass of a layer needs.
type layerAct struct {
	in, normed, h       cgo.Tensor
	q, k, v, o          linAct
	qPre, kPre          cgo.Tensor // qwen3: heads before their norm
	qNormed, kNormed    cgo.Tensor
	Q, K, Vp, P         cgo.Tensor   // attention operands [head, T, heads, B] and probabilities
	blockP              []cgo.Tensor // the probabilities of each query block, in place of P
	mid, midNormed, h2  cgo.Tensor   // feed-forward input
	gate, up, down      linAct
	gateOut, upOut, act cgo.Tensor // act = silu(gate)
	drops               [dropSites]cgo.Tensor
}

// dropMasks makes the dropout-mask inputs of the layer's LoRA inputs.
func (b *builder) dropMasks(l *block) (drops [dropSites]cgo.Tensor) {
	if !b.mode.train || !b.mode.dropout {
		return drops
	}
	h := b.n.h
	sites := []struct {
		site int
		dim  int
		ls   []*linear
	}{
		{dropAttnIn, h.Embd, []*linear{l.q, l.k, l.v}},
		{dropAttnOut, h.qDim(), []*linear{l.o}},
		{dropFFNIn, h.Embd, []*linear{l.gate, l.up}},
		{dropFFNMid, h.FF, []*linear{l.down}},
	}
	for _, s := range sites {
		for _, lin := range s.ls {
			if lin.lora != nil {
				drops[s.site] = b.input("dropout", cgo.TypeF32, int64(s.dim), int64(b.N))
				b.g.drops = append(b.g.drops, drops[s.site])
				break
			}
		}
	}
	return drops
}

func (b *builder) rope() cgo.Rope {
	r := b.n.h.Rope
	r.Factors = b.n.freqs
	return r
}

// layerForward is one transformer layer; drops are its dropout masks.
func (b *builder) layerForward(l *block, in cgo.Tensor, drops [dropSites]cgo.Tensor) (cgo.Tensor, *layerAct) {
	x, h := b.x, b.n.h
	hd, H, Hkv := int64(h.HeadDim), int64(h.Heads), int64(h.HeadsKV)
	T, B, N := int64(b.T), int64(b.B), int64(b.N)
	a := &layerAct{in: in, drops: drops}

	a.normed = x.RMSNorm(in, h.NormEps)
	a.h = x.Mul(a.normed, l.attnNorm.t)
	var q, k, v cgo.Tensor
	q, a.q = b.linForward(l.q, a.h, a.drops[dropAttnIn])
	k, a.k = b.linForward(l.k, a.h, a.drops[dropAttnIn])
	v, a.v = b.linForward(l.v, a.h, a.drops[dropAttnIn])
	q3 := x.Reshape(q, hd, H, N)
	k3 := x.Reshape(k, hd, Hkv, N)
	if h.QKNorm {
		a.qPre, a.kPre = q3, k3
		a.qNormed = x.RMSNorm(q3, h.NormEps)
		q3 = x.Mul(a.qNormed, l.qNorm.t)
		a.kNormed = x.RMSNorm(k3, h.NormEps)
		k3 = x.Mul(a.kNormed, l.kNorm.t)
	}
	r := b.rope()
	qr := x.RopeExt(q3, b.g.pos, r)
	kr := x.RopeExt(k3, b.g.pos, r)

	a.Q = x.Permute(x.Reshape(qr, hd, H, T, B), 0, 2, 1, 3)
	if b.mode.train && !b.blas {
		// A contiguous right operand lets ggml use its tiled product
		// (tinyBLAS) instead of a dot product per element. Scoring keeps
		// llama.cpp's layout, and so its rounding; BLAS takes the view.
		a.Q = x.Cont(a.Q)
	}
	a.K = x.Permute(x.Reshape(kr, hd, Hkv, T, B), 0, 2, 1, 3)
	v4 := x.Reshape(v, hd, Hkv, T, B)
	a.Vp = x.Permute(v4, 0, 2, 1, 3)
	var kq, kqv cgo.Tensor
	if b.n.f16KV {
		// As llama.cpp's F16 KV cache: K and V stored in F16, and the
		// products with them taking Q and the probabilities in F16.
		// The backward pass treats the rounding as the identity.
		kq = x.MulMat(x.Cast(a.K, cgo.TypeF16), a.Q)
		a.P = x.SoftMaxExt(kq, b.g.mask, h.KQScale)
		kqv = x.MulMat(x.Cast(x.Permute(v4, 1, 2, 0, 3), cgo.TypeF16), a.P)
	} else if b.g.blocks != nil {
		kqv = b.blockAttention(a, v4)
	} else {
		kq = b.mulMat(a.K, a.Q)
		a.P = x.SoftMaxExt(kq, b.g.mask, h.KQScale)
		kqv = b.mulMat(x.Cont(x.Permute(v4, 1, 2, 0, 3)), a.P)
	}
	merged := x.Reshape(x.Cont(x.Permute(kqv, 0, 2, 1, 3)), int64(h.qDim()), N)
	o, oAct := b.linForward(l.o, merged, a.drops[dropAttnOut])
	a.o = oAct
	a.mid = x.Add(o, in)

	a.midNormed = x.RMSNorm(a.mid, h.NormEps)
	a.h2 = x.Mul(a.midNormed, l.ffnNorm.t)
	a.upOut, a.up = b.linForward(l.up, a.h2, a.drops[dropFFNIn])
	a.gateOut, a.gate = b.linForward(l.gate, a.h2, a.drops[dropFFNIn])
	a.act = x.SiLU(a.gateOut)
	d, dAct := b.linForward(l.down, x.Mul(a.act, a.upOut), a.drops[dropFFNMid])
	a.down = dAct
	return x.Add(d, a.mid), a
}

// queryBlock is a block of n queries from slot start of each row; causal
// attention lets them see the keys up to the block's end only.
type queryBlock struct{ start, n int }

func (q queryBlock) keys() int { return q.start + q.n }

// queryBlocks cuts rows of T slots into blocks of size queries (rounded up
// to a multiple of 16), or returns one block when that saves nothing. Queries
// never attend to later slots, so block j computes its scores against the
// first keys() keys only: with k equal blocks, (k+1)/2k of the T x T square
// of scores and probabilities instead of all of it.
func queryBlocks(T, size int) []queryBlock {
	if size <= 0 || T <= size {
		return []queryBlock{{0, T}}
	}
	size = roundSlots(size)
	var blocks []queryBlock
	for start := 0; start < T; start += size {
		blocks = append(blocks, queryBlock{start, min(size, T-start)})
	}
	return blocks
}

// trainingBlocks are the query blocks of training graphs with rows of T
// slots, or nil where they compute attention as one square: with F16 keys
// and values (kept as llama.cpp computes them), on GPU backends (attnBlock
// 0) and for rows of one block.
func (n *network) trainingBlocks(T int) []queryBlock {
	if n.f16KV {
		return nil
	}
	if blocks := queryBlocks(T, n.attnBlock); len(blocks) > 1 {
		return blocks
	}
	return nil
}

// blockAttention is softmax(K^T Q * scale + mask) V block by block of
// queries, each block against the keys it can see; v4 is V [head, heads,
// T, B]. It returns the result [head, T, heads, B] and keeps each block's
// probabilities for the backward pass.
func (b *builder) blockAttention(a *layerAct, v4 cgo.Tensor) cgo.Tensor {
	x, h := b.x, b.n.h
	vt := x.Cont(x.Permute(v4, 1, 2, 0, 3)) // [T, head, heads, B]
	var out cgo.Tensor
	for i, blk := range b.g.blocks {
		scores := b.mulMat(x.Slice(a.K, 1, 0, int64(blk.keys())), x.Slice(a.Q, 1, int64(blk.start), int64(blk.n)))
		p := x.SoftMaxExt(scores, b.g.blockMasks[i], h.KQScale)
		a.blockP = append(a.blockP, p)
		out = b.writeBlock(out, b.mulMat(x.Slice(vt, 0, 0, int64(blk.keys())), p), blk)
	}
	return out
}

// writeBlock places block blk's rows r [head, n, heads, B] into out [head,
// T, heads, B], in place; the first block makes out, by padding its rows
// to T, so that out is an ordinary graph node that ggml's allocator
// places when it is first computed, not a buffer held for the whole graph.
func (b *builder) writeBlock(out, r cgo.Tensor, blk queryBlock) cgo.Tensor {
	if !out.Valid() {
		return b.x.Pad(r, [4]int64{0, int64(b.T - blk.n), 0, 0})
	}
	return b.x.WriteSlice(out, r, 1, int64(blk.start))
}

// blockAttentionBack is the backward pass of blockAttention given dO, the
// gradient of its result: the gradients of Q, K and V [head, T, heads, B]
// (K's and V's per query head, before groupSum). The last block sees every
// key; the others' key and value gradients are added into its.
func (b *builder) blockAttentionBack(a *layerAct, dO cgo.Tensor) (dQ, dK, dV cgo.Tensor) {
	x, h := b.x, b.n.h
	var dKs, dVs []cgo.Tensor
	for i, blk := range b.g.blocks {
		keys := int64(blk.keys())
		p := a.blockP[i]
		dOi := x.Slice(dO, 1, int64(blk.start), int64(blk.n))
		dP := b.mulMat(x.Slice(a.Vp, 1, 0, keys), dOi)
		dVs = append(dVs, b.outProd(dOi, p))
		dS := x.SoftMaxExtBack(dP, p, h.KQScale)
		dQ = b.writeBlock(dQ, b.mulMatT(x.Slice(a.K, 1, 0, keys), dS), blk)
		dKs = append(dKs, b.outProd(x.Slice(a.Q, 1, int64(blk.start), int64(blk.n)), dS))
	}
	last := len(b.g.blocks) - 1
	dK, dV = dKs[last], dVs[last]
	for i := range last {
		dK = x.AddSlice(dK, dKs[i], 1, 0)
		dV = x.AddSlice(dV, dVs[i], 1, 0)
	}
	return dQ, dK, dV
}

// groupSum sums the gradients of the query heads that share a key/value
// head: t [head, T, heads, B] becomes [head, T, kv heads, B]. Query head h
// reads key/value head h / group, so each group is adjacent.
func (b *builder) groupSum(t cgo.Tensor) cgo.Tensor {
	h := b.n.h
	group := int64(h.Heads / h.HeadsKV)
	if group == 1 {
		return t
	}
	hd, T, Hkv, B := int64(h.HeadDim), int64(b.T), int64(h.HeadsKV), int64(b.B)
	shape := b.x.NewTensor(cgo.TypeF32, hd*T, 1, Hkv*B)
	sum := b.x.RepeatBack(b.x.Reshape(t, hd*T, group, Hkv*B), shape)
	return b.x.Reshape(sum, hd, T, Hkv, B)
}

func (b *builder) layerBackward(l *block, a *layerAct, dOut cgo.Tensor) cgo.Tensor {
	x, h := b.x, b.n.h
	hd, H, Hkv := int64(h.HeadDim), int64(h.Heads), int64(h.HeadsKV)
	T, B, N := int64(b.T), int64(b.B), int64(b.N)

	// Feed-forward: out = mid + down(silu(gate(h2)) * up(h2)).
	dProd := b.linBackward(l.down, a.down, dOut, a.drops[dropFFNMid])
	dGate := x.SiLUBack(x.Mul(dProd, a.upOut), a.gateOut)
	dUp := x.Mul(dProd, a.act)
	dh2 := x.Add(b.linBackward(l.gate, a.gate, dGate, a.drops[dropFFNIn]), b.linBackward(l.up, a.up, dUp, a.drops[dropFFNIn]))
	dMid := x.Add(dOut, b.normBackward(l.ffnNorm, a.mid, a.midNormed, dh2))

	// Attention: mid = in + o(softmax(K^T Q * scale + mask) V).
	dMerged := b.linBackward(l.o, a.o, dMid, a.drops[dropAttnOut])
	dKQV := x.Cont(x.Permute(x.Reshape(dMerged, hd, H, T, B), 0, 2, 1, 3))
	var dQ, dK, dV cgo.Tensor
	if a.blockP != nil {
		dQ, dK, dV = b.blockAttentionBack(a, dKQV)
	} else {
		dP := b.mulMat(a.Vp, dKQV)
		dV = b.outProd(dKQV, a.P)
		dS := x.SoftMaxExtBack(dP, a.P, h.KQScale)
		dQ = b.mulMatT(a.K, dS)
		dK = b.outProd(a.Q, dS)
	}
	dV, dK = b.groupSum(dV), b.groupSum(dK)

	r := b.rope()
	dq3 := x.RopeExtBack(x.Reshape(x.Cont(x.Permute(dQ, 0, 2, 1, 3)), hd, H, N), b.g.pos, r)
	dk3 := x.RopeExtBack(x.Reshape(x.Cont(x.Permute(dK, 0, 2, 1, 3)), hd, Hkv, N), b.g.pos, r)
	if h.QKNorm {
		dq3 = b.normBackward(l.qNorm, a.qPre, a.qNormed, dq3)
		dk3 = b.normBackward(l.kNorm, a.kPre, a.kNormed, dk3)
	}
	dq := x.Reshape(dq3, int64(h.qDim()), N)
	dk := x.Reshape(dk3, int64(h.kvDim()), N)
	dv := x.Reshape(x.Cont(x.Permute(dV, 0, 2, 1, 3)), int64(h.kvDim()), N)
	dh := b.linBackward(l.q, a.q, dq, a.drops[dropAttnIn])
	dh = x.Add(dh, b.linBackward(l.k, a.k, dk, a.drops[dropAttnIn]))
	dh = x.Add(dh, b.linBackward(l.v, a.v, dv, a.drops[dropAttnIn]))
	return x.Add(dMid, b.normBackward(l.attnNorm, a.in, a.normed, dh))
}
