package cgo

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/agentrl/agentrl/llm/gguf"
)

// compute builds a graph with build, allocates it on the CPU and returns
// the values of the tensor build returns; set fills the inputs.
func compute(t *testing.T, build func(x *GraphContext) (out Tensor, set func()), n int) []float32 {
	t.Helper()
	return computeOn(t, 1, func(x *GraphContext) ([]Tensor, func()) {
		out, set := build(x)
		return []Tensor{out}, set
	})[0][:n]
}

// computeOn is compute with the given CPU threads and several outputs.
func computeOn(t *testing.T, threads int, build func(x *GraphContext) (outs []Tensor, set func())) [][]float32 {
	t.Helper()
	return computeWith(t, threads, (*Backend).Compute, build)
}

// computeWith is computeOn with the graph run by run.
func computeWith(t *testing.T, threads int, run func(*Backend, *Graph) error, build func(x *GraphContext) (outs []Tensor, set func())) [][]float32 {
	t.Helper()
	b, err := NewBackend(false, threads)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	x, err := NewGraphContext(64, 128)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	outs, set := build(x)
	g := x.NewGraph(128)
	for _, out := range outs {
		out.SetOutput()
		g.Expand(out)
	}
	a := b.NewAllocator()
	defer a.Free()
	if err := a.Alloc(g); err != nil {
		t.Fatal(err)
	}
	set()
	if err := run(b, g); err != nil {
		t.Fatal(err)
	}
	values := make([][]float32, len(outs))
	for i, out := range outs {
		values[i] = make([]float32, out.Elements())
		out.Float32(values[i], 0)
	}
	return values
}

func TestMulMatContractsDimensionZero(t *testing.T) {
	// a [k=3, m=2], b [k=3, n=2]: result [m, n], r[i,j] = sum_l a[l,i] b[l,j].
	av := []float32{1, 2, 3, 4, 5, 6}
	bv := []float32{1, 0, -1, 2, 1, 0}
	got := compute(t, func(x *GraphContext) (Tensor, func()) {
		a := x.NewTensor(TypeF32, 3, 2)
		b := x.NewTensor(TypeF32, 3, 2)
		a.SetInput()
		b.SetInput()
		return x.MulMat(a, b), func() { a.SetFloat32(av, 0); b.SetFloat32(bv, 0) }
	}, 4)
	want := make([]float32, 4)
	for i := range 2 {
		for j := range 2 {
			for l := range 3 {
				want[i+2*j] += av[l+3*i] * bv[l+3*j]
			}
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("mul_mat = %v, want %v", got, want)
		}
	}
}

func TestTransposeAndCast(t *testing.T) {
	v := []float32{1, 2, 3, 4, 5, 6} // [3, 2]
	got := compute(t, func(x *GraphContext) (Tensor, func()) {
		a := x.NewTensor(TypeF32, 3, 2)
		a.SetInput()
		h := x.Cast(a, TypeF16)
		return x.T(x.Cast(h, TypeF32)), func() { a.SetFloat32(v, 0) }
	}, 6)
	want := []float32{1, 4, 2, 5, 3, 6}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("transpose = %v, want %v", got, want)
		}
	}
}

func TestSoftMaxBack(t *testing.T) {
	z := []float32{0.5, -1, 2, 0.1}
	dy := []float32{1, -2, 0.5, 3}
	const scale = 0.7
	got := compute(t, func(x *GraphContext) (Tensor, func()) {
		a := x.NewTensor(TypeF32, 4)
		g := x.NewTensor(TypeF32, 4)
		a.SetInput()
		g.SetInput()
		y := x.SoftMaxExt(a, Tensor{}, scale)
		return x.SoftMaxExtBack(g, y, scale), func() { a.SetFloat32(z, 0); g.SetFloat32(dy, 0) }
	}, 4)
	// Central differences of sum(dy * softmax(scale * z)).
	f := func(z []float32) float64 {
		mx, sum := math.Inf(-1), 0.0
		for _, v := range z {
			mx = math.Max(mx, scale*float64(v))
		}
		for _, v := range z {
			sum += math.Exp(scale*float64(v) - mx)
		}
		s := 0.0
		for i, v := range z {
			s += float64(dy[i]) * math.Exp(scale*float64(v)-mx) / sum
		}
		return s
	}
	for i := range z {
		zp, zm := append([]float32(nil), z...), append([]float32(nil), z...)
		zp[i] += 1e-3
		zm[i] -= 1e-3
		fd := (f(zp) - f(zm)) / 2e-3
		if math.Abs(fd-float64(got[i])) > 1e-3 {
			t.Fatalf("soft_max_ext_back[%d] = %g, finite difference %g", i, got[i], fd)
		}
	}
}

func TestShapeErrorsPanicInGo(t *testing.T) {
	x, err := NewGraphContext(8)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	a := x.NewTensor(TypeF32, 3, 2)
	b := x.NewTensor(TypeF32, 4, 2)
	defer func() {
		r := recover()
		var opErr *OpError
		if err, ok := r.(error); !ok || !errors.As(err, &opErr) || opErr.Op != "mul_mat" {
			t.Fatalf("recovered %v, want a mul_mat *OpError", r)
		}
	}()
	x.MulMat(a, b)
}

// op applies an operation to a row input; set fills any other inputs it
// made.
type op func(x *GraphContext, in Tensor) (out Tensor, set func())

// checkBackward compares a backward operation with central differences of
// sum(dy * f(x)) for one input row x.
func checkBackward(t *testing.T, name string, x0, dy []float32, fwd op, back func(x *GraphContext, grad, in Tensor) (Tensor, func())) {
	t.Helper()
	n := len(x0)
	eval := func(xv []float32) []float32 {
		return compute(t, func(x *GraphContext) (Tensor, func()) {
			in := x.NewTensor(TypeF32, int64(n))
			in.SetInput()
			out, set := fwd(x, in)
			return out, func() { in.SetFloat32(xv, 0); set() }
		}, n)
	}
	got := compute(t, func(x *GraphContext) (Tensor, func()) {
		in := x.NewTensor(TypeF32, int64(n))
		g := x.NewTensor(TypeF32, int64(n))
		in.SetInput()
		g.SetInput()
		out, set := back(x, g, in)
		return out, func() {
			if in.Allocated() { // rope's backward does not read the input
				in.SetFloat32(x0, 0)
			}
			g.SetFloat32(dy, 0)
			set()
		}
	}, n)
	for i := range x0 {
		xp, xm := append([]float32(nil), x0...), append([]float32(nil), x0...)
		xp[i] += 1e-2
		xm[i] -= 1e-2
		yp, ym := eval(xp), eval(xm)
		fd := 0.0
		for k := range yp {
			fd += float64(dy[k]) * float64(yp[k]-ym[k]) / float64(xp[i]-xm[i])
		}
		if math.Abs(fd-float64(got[i])) > 2e-3*math.Max(1, math.Abs(fd)) {
			t.Fatalf("%s[%d] = %g, finite difference %g", name, i, got[i], fd)
		}
	}
}

func noInputs() {}

func TestBackwardOps(t *testing.T) {
	x0 := []float32{0.5, -1.2, 2, 0.3, -0.7, 1.1, 0.05, -0.4}
	dy := []float32{1, -0.5, 0.25, 2, -1, 0.5, 0.3, -0.2}
	checkBackward(t, "rms_norm_back", x0, dy,
		func(x *GraphContext, in Tensor) (Tensor, func()) { return x.RMSNorm(in, 1e-5), noInputs },
		func(x *GraphContext, g, in Tensor) (Tensor, func()) { return x.RMSNormBack(g, in, 1e-5), noInputs })
	checkBackward(t, "silu_back", x0, dy,
		func(x *GraphContext, in Tensor) (Tensor, func()) { return x.SiLU(in), noInputs },
		func(x *GraphContext, g, in Tensor) (Tensor, func()) { return x.SiLUBack(g, in), noInputs })
	for _, mode := range []int{RopeNormal, RopeNeoX} {
		rope := Rope{Dims: 4, Mode: mode, NCtxOrig: 128, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
		// Two tokens of one head of 4, at positions 3 and 11.
		withPos := func(x *GraphContext, in Tensor, f func(a, pos Tensor) Tensor) (Tensor, func()) {
			pos := x.NewTensor(TypeI32, 2)
			pos.SetInput()
			return x.Reshape(f(x.Reshape(in, 4, 1, 2), pos), 8, 1), func() { pos.SetInt32([]int32{3, 11}, 0) }
		}
		checkBackward(t, "rope_ext_back", x0, dy,
			func(x *GraphContext, in Tensor) (Tensor, func()) {
				return withPos(x, in, func(a, pos Tensor) Tensor { return x.RopeExt(a, pos, rope) })
			},
			func(x *GraphContext, g, in Tensor) (Tensor, func()) {
				return withPos(x, g, func(a, pos Tensor) Tensor { return x.RopeExtBack(a, pos, rope) })
			})
	}
}

// TestQuantizedDecodingMatchesGGML checks that the gguf package decodes
// quantised tensors, which the trainer reads in Go for full-parameter
// training, to exactly the values ggml computes with.
func TestQuantizedDecodingMatchesGGML(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	values := make([]float32, 4*256)
	for i := range values {
		values[i] = float32(rng.NormFloat64() * 0.3)
	}
	for _, typ := range []gguf.TensorType{gguf.TensorQ8_0, gguf.TensorQ4_K} {
		raw, err := gguf.EncodeFloat32(typ, values)
		if err != nil {
			t.Fatal(err)
		}
		want, err := gguf.DecodeFloat32(typ, raw)
		if err != nil {
			t.Fatal(err)
		}
		got := compute(t, func(x *GraphContext) (Tensor, func()) {
			q := x.NewTensor(Type(typ), 256, 4)
			q.SetInput()
			return x.Cast(q, TypeF32), func() { q.SetBytes(raw, 0) }
		}, len(values))
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s value %d: ggml decodes %g, gguf %g", typ, i, got[i], want[i])
			}
		}
	}
}

func TestComputeTimedComputesAsComputeAndTimesEachNode(t *testing.T) {
	av := []float32{1, 2, 3, 4, 5, 6}
	bv := []float32{1, 0, -1, 2, 1, 0}
	build := func(x *GraphContext) ([]Tensor, func()) {
		a, bt := x.NewTensor(TypeF32, 3, 2), x.NewTensor(TypeF32, 3, 2)
		a.SetInput()
		bt.SetInput()
		prod := x.MulMat(a, bt)
		return []Tensor{x.Add(prod, x.Mul(prod, prod))}, func() { a.SetFloat32(av, 0); bt.SetFloat32(bv, 0) }
	}
	want := computeOn(t, 1, build)[0]
	times := OpTimes{}
	got := computeWith(t, 1, func(b *Backend, g *Graph) error { return b.ComputeTimed(g, times) }, build)[0]
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("node by node: %v, all at once: %v", got, want)
		}
	}
	for _, kind := range []string{"MUL_MAT f32 x f32", "MUL f32 x f32", "ADD f32 x f32"} {
		if op := times[kind]; op == nil || op.Calls != 1 || op.Seconds <= 0 {
			t.Errorf("%s: %+v, want one timed call (all: %v)", kind, op, times)
		}
	}
	if len(times) != 3 {
		t.Errorf("%d kinds of operation timed, want 3: %v", len(times), times)
	}
}
