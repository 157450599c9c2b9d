package cgo

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSoftmaxKernelsMatchFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 3072, 151936} {
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = float32(rng.NormFloat64() * 8)
		}
		logits[n/2] = 30 // a clear winner, and values far below it underflow
		var want float32 = -math.MaxFloat32
		for _, v := range logits {
			want = max(want, v)
		}
		if got := Max(logits); got != want {
			t.Fatalf("n=%d: Max %g, want %g", n, got, want)
		}
		for _, invT := range []float32{1, 1 / 0.7} {
			probs := make([]float32, n)
			sum := Softmax(logits, want, invT, probs)
			var wantSum float64
			for i, v := range logits {
				p := math.Exp(float64((v - want) * invT))
				wantSum += p
				if d := math.Abs(float64(probs[i]) - p); d > 3e-7*p+1e-37 {
					t.Fatalf("n=%d invT=%g: probs[%d] = %g, want %g", n, invT, i, probs[i], p)
				}
			}
			if math.Abs(sum-wantSum) > 1e-5*wantSum {
				t.Fatalf("n=%d invT=%g: sum %g, want %g", n, invT, sum, wantSum)
			}
			if invT == 1 {
				if s := SumExp(logits, want); math.Abs(s-wantSum) > 1e-5*wantSum {
					t.Fatalf("n=%d: SumExp %g, want %g", n, s, wantSum)
				}
			}
		}
	}
}

func BenchmarkSoftmax3072(b *testing.B) {
	logits := make([]float32, 3072)
	for i := range logits {
		logits[i] = float32(i%97) * 0.1
	}
	probs := make([]float32, len(logits))
	for b.Loop() {
		Softmax(logits, Max(logits), 1, probs)
	}
}
