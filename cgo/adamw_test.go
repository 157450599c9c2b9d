package cgo

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdamW compares the kernel with the AdamW update written out in
// float64, over a length that leaves a tail after the vector loop.
func TestAdamW(t *testing.T) {
	const n = 1000 + 5
	rng := rand.New(rand.NewPCG(1, 1))
	w, m, v, g := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range n {
		w[i], m[i], v[i], g[i] = float32(rng.NormFloat64()), float32(0.1*rng.NormFloat64()), float32(0.01*rng.Float64()), float32(rng.NormFloat64())
	}
	const lr, beta1, beta2, eps, wd, scale, step = 1e-3, 0.9, 0.999, 1e-8, 0.01, 0.5, 3
	b1c, b2c := 1-math.Pow(beta1, step), 1-math.Pow(beta2, step)
	want := make([]float64, n)
	for i := range n {
		gi := float64(g[i]) * scale
		mi := beta1*float64(m[i]) + (1-beta1)*gi
		vi := beta2*float64(v[i]) + (1-beta2)*gi*gi
		want[i] = float64(w[i])*(1-lr*wd) - lr/b1c*mi/(math.Sqrt(vi)/math.Sqrt(b2c)+eps)
	}
	AdamW(w, m, v, g, AdamWStep{GradScale: scale, Beta1: beta1, Beta2: beta2, StepSize: float32(lr / b1c),
		SqrtB2C: float32(math.Sqrt(b2c)), Eps: eps, Decay: 1 - lr*wd})
	for i := range n {
		if d := math.Abs(float64(w[i]) - want[i]); d > 1e-6*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("parameter %d: %g, want %g", i, w[i], want[i])
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("AdamW accepted slices of different lengths")
		}
	}()
	AdamW(w, m[:3], v, g, AdamWStep{})
}
