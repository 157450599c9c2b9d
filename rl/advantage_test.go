package rl

import (
	"math"
	"testing"
)

func near(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("%s[%d] = %.15g, want %.15g", what, i, got[i], want[i])
		}
	}
}

// TestGAE checks a three-turn episode worked by hand, terminal and cut
// off (bootstrapped), and the two limits lambda = 0 (one-step TD) and
// lambda = 1 (Monte-Carlo return minus value).
func TestGAE(t *testing.T) {
	rewards := []float64{0, 0, 1}
	values := []float64{0.5, 0.6, 0.8}
	gamma, lambda := 0.9, 0.5
	// Terminal: δ2 = 1 - 0.8 = 0.2; δ1 = 0 + 0.9*0.8 - 0.6 = 0.12;
	// δ0 = 0 + 0.9*0.6 - 0.5 = 0.04. A2 = 0.2; A1 = 0.12 + 0.45*0.2 = 0.21;
	// A0 = 0.04 + 0.45*0.21 = 0.1345.
	adv, ret, err := GAE(rewards, values, 99, true, gamma, lambda)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "terminal advantages", adv, []float64{0.1345, 0.21, 0.2})
	near(t, "terminal returns", ret, []float64{0.6345, 0.81, 1.0})

	// Cut off with V(s3) = 0.7: δ2 = 1 + 0.63 - 0.8 = 0.83; A1 = 0.12 +
	// 0.45*0.83 = 0.4935; A0 = 0.04 + 0.45*0.4935 = 0.262075.
	adv, _, err = GAE(rewards, values, 0.7, false, gamma, lambda)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "bootstrapped advantages", adv, []float64{0.262075, 0.4935, 0.83})

	adv, _, _ = GAE(rewards, values, 0, true, gamma, 0)
	near(t, "lambda 0", adv, []float64{0.04, 0.12, 0.2})
	adv, _, _ = GAE(rewards, values, 0, true, gamma, 1)
	// Monte-Carlo: G = (0.81, 0.9, 1) minus V.
	near(t, "lambda 1", adv, []float64{0.81 - 0.5, 0.9 - 0.6, 1 - 0.8})

	if _, _, err := GAE([]float64{1}, nil, 0, true, 0.9, 0.9); err == nil {
		t.Error("mismatched lengths accepted")
	}
	if _, _, err := GAE([]float64{1}, []float64{0}, 0, true, 1.5, 0.9); err == nil {
		t.Error("gamma 1.5 accepted")
	}
}

func TestGroupAdvantages(t *testing.T) {
	// Mean 0.5, sample std sqrt(1/3): (1 - 0.5) / 0.57735 = 0.866025.
	got := GroupAdvantages([]float64{1, 0, 1, 0}, 0)
	s := 0.5 / math.Sqrt(1.0/3)
	near(t, "mixed group", got, []float64{s, -s, s, -s})
	near(t, "all equal", GroupAdvantages([]float64{1, 1, 1}, 1e-6), []float64{0, 0, 0})
	near(t, "one rollout", GroupAdvantages([]float64{1}, 1e-6), []float64{0})
	near(t, "empty", GroupAdvantages(nil, 1e-6), []float64{})
}
