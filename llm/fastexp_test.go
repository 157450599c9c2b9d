package llm

import (
	"math"
	"testing"
)

func TestExp32Accuracy(t *testing.T) {
	worst := 0.0
	for x := float32(-87); x < 88; x += 0.001 {
		want := math.Exp(float64(x))
		got := float64(exp32(x))
		if rel := math.Abs(got-want) / want; rel > worst {
			worst = rel
		}
	}
	if worst > 3e-7 {
		t.Fatalf("worst relative error %g", worst)
	}
	if exp32(-200) != 0 || !math.IsInf(float64(exp32(200)), 1) {
		t.Fatal("exp32 should underflow to 0 and overflow to +Inf")
	}
}

func BenchmarkExp32(b *testing.B) {
	var s float32
	for i := 0; i < b.N; i++ {
		s += exp32(float32(i%1000) * -0.01)
	}
	_ = s
}

func BenchmarkMathExp(b *testing.B) {
	var s float64
	for i := 0; i < b.N; i++ {
		s += math.Exp(float64(i%1000) * -0.01)
	}
	_ = s
}
