package cgo

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
)

// requireBLAS skips the test where no CBLAS library is installed.
func requireBLAS(t *testing.T) {
	t.Helper()
	name, err := BLAS()
	if err != nil {
		t.Fatal(err)
	}
	if name == "" {
		t.Skipf("no CBLAS library installed (or %s=off): the BLAS products are unused", BLASEnv)
	}
}

// computePair computes two tensors of the same shape on the CPU with the
// given threads, the inputs filled with random values.
func computePair(t *testing.T, threads int, build func(x *GraphContext, input func(...int64) Tensor) (Tensor, Tensor)) (got, want []float32) {
	t.Helper()
	values := computeOn(t, threads, func(x *GraphContext) ([]Tensor, func()) {
		var inputs []Tensor
		input := func(shape ...int64) Tensor {
			in := x.NewTensor(TypeF32, shape...)
			in.SetInput()
			inputs = append(inputs, in)
			return in
		}
		first, second := build(x, input)
		if first.Shape() != second.Shape() {
			t.Fatalf("shapes %v and %v differ", first, second)
		}
		return []Tensor{first, second}, func() {
			rng := rand.New(rand.NewPCG(1, 2))
			for _, in := range inputs {
				v := make([]float32, in.Elements())
				for i := range v {
					v[i] = float32(rng.NormFloat64())
				}
				in.SetFloat32(v, 0)
			}
		}
	})
	return values[0], values[1]
}

// TestBLASProductsMatchGGML checks each BLAS product against ggml's own
// operation on odd shapes, broadcast heads, permuted views (rows with a
// stride) and with more threads than products and fewer.
func TestBLASProductsMatchGGML(t *testing.T) {
	requireBLAS(t)
	cases := []struct {
		name  string
		build func(x *GraphContext, input func(...int64) Tensor) (Tensor, Tensor)
	}{
		{"mul_mat broadcast", func(x *GraphContext, input func(...int64) Tensor) (Tensor, Tensor) {
			a, b := input(37, 19, 2, 1), input(37, 23, 4, 3)
			return x.BLASMulMat(a, b), x.MulMat(a, b)
		}},
		{"mul_mat broadcast over dimension 3", func(x *GraphContext, input func(...int64) Tensor) (Tensor, Tensor) {
			a, b := input(37, 19, 1, 2), input(37, 23, 3, 4)
			return x.BLASMulMat(a, b), x.MulMat(a, b)
		}},
		{"mul_mat permuted views", func(x *GraphContext, input func(...int64) Tensor) (Tensor, Tensor) {
			// [head, heads, slots] viewed as [head, slots, heads], as
			// attention reads its keys and queries.
			k := x.Permute(input(16, 2, 29), 0, 2, 1, 3)
			q := x.Permute(input(16, 4, 29), 0, 2, 1, 3)
			return x.BLASMulMat(k, q), x.MulMat(x.Cont(k), x.Cont(q))
		}},
		{"mul_mat_t", func(x *GraphContext, input func(...int64) Tensor) (Tensor, Tensor) {
			a, b := input(19, 37, 2, 3), input(37, 23, 4, 3)
			return x.BLASMulMatT(a, b), x.MulMat(x.T(a), b)
		}},
		{"mul_mat_t permuted", func(x *GraphContext, input func(...int64) Tensor) (Tensor, Tensor) {
			k := x.Permute(input(16, 2, 29), 0, 2, 1, 3) // [16, 29, 2]
			s := input(29, 31, 4)
			return x.BLASMulMatT(k, s), x.MulMat(x.T(x.Cont(k)), s)
		}},
		{"out_prod", func(x *GraphContext, input func(...int64) Tensor) (Tensor, Tensor) {
			a, b := input(19, 37, 2, 2), input(23, 37, 4, 6)
			return x.BLASOutProd(a, b), x.OutProd(a, b)
		}},
		{"out_prod permuted", func(x *GraphContext, input func(...int64) Tensor) (Tensor, Tensor) {
			q := x.Permute(input(16, 4, 29), 0, 2, 1, 3) // [16, 29, 4]
			s := input(31, 29, 4)
			return x.BLASOutProd(q, s), x.OutProd(x.Cont(q), s)
		}},
	}
	for _, c := range cases {
		for _, threads := range []int{1, 3, 40} {
			got, want := computePair(t, threads, c.build)
			worst := 0.0
			for i := range want {
				worst = math.Max(worst, math.Abs(float64(got[i]-want[i]))/(1+math.Abs(float64(want[i]))))
			}
			if worst > 1e-5 {
				t.Errorf("%s, %d threads: BLAS differs from ggml by %.3g (relative)", c.name, threads, worst)
			}
		}
	}
}

func TestBLASRefusesWhatItCannotCompute(t *testing.T) {
	requireBLAS(t)
	x, err := NewGraphContext(16)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	a := x.NewTensor(TypeF32, 8, 4)
	half := x.NewTensor(TypeF16, 8, 4)
	other := x.NewTensor(TypeF32, 7, 4)
	square := x.NewTensor(TypeF32, 8, 8) // its transpose has the shape but not unit-stride rows
	if !CanBLASMulMat(a, a) || !CanBLASOutProd(a, a) || !CanBLASMulMatT(x.NewTensor(TypeF32, 4, 8), a) {
		t.Fatal("BLAS refuses plain F32 matrices")
	}
	if CanBLASMulMat(half, a) || CanBLASMulMat(a, other) || CanBLASOutProd(a, x.NewTensor(TypeF32, 8, 5)) ||
		CanBLASMulMatT(a, a) || CanBLASMulMat(x.Transpose(square), square) {
		t.Fatal("BLAS accepts an F16 operand, mismatched shapes or a transposed view")
	}
	defer func() {
		var opErr *OpError
		if err, ok := recover().(error); !ok || !errors.As(err, &opErr) || opErr.Op != "blas mul_mat" {
			t.Fatalf("recovered %v, want a blas mul_mat *OpError", err)
		}
	}()
	x.BLASMulMat(a, other)
}

func TestOpenBLASErrors(t *testing.T) {
	if err := openBLAS("/nonexistent/libopenblas.so.0"); err == nil || !strings.Contains(err.Error(), "/nonexistent/libopenblas.so.0") {
		t.Errorf("opening a missing library: %v", err)
	}
	if runtime.GOOS == "linux" {
		if err := openBLAS("libc.so.6"); err == nil || !strings.Contains(err.Error(), "no cblas_sgemm") {
			t.Errorf("opening a library without CBLAS: %v", err)
		}
	}
}

// TestOpenBLASRunsTheChosenKernels checks that the kernel family chosen
// for this CPU (or set by the user) is the one OpenBLAS runs: the choice
// must be made before the library loads.
func TestOpenBLASRunsTheChosenKernels(t *testing.T) {
	requireBLAS(t)
	got := BLASKernels()
	if got == "" {
		t.Skip("the library does not name its kernels (not OpenBLAS)")
	}
	want := os.Getenv(openBLASCoreType)
	if want == "" {
		t.Skipf("no kernel family to choose on this CPU (%s)", runtime.GOARCH)
	}
	if !strings.EqualFold(got, want) {
		t.Fatalf("OpenBLAS runs its %s kernels, but %s=%s", got, openBLASCoreType, want)
	}
}
