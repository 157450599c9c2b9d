package tauretail

import (
	"math"
	"testing"
)

func TestPassHatK(t *testing.T) {
	cases := []struct {
		tasks []Trials
		k     int
		want  float64
	}{
		{[]Trials{{4, 4}}, 4, 1},
		{[]Trials{{2, 4}}, 1, 0.5},
		{[]Trials{{2, 4}}, 2, 1.0 / 6}, // C(2,2)/C(4,2)
		{[]Trials{{3, 4}}, 2, 0.5},     // C(3,2)/C(4,2) = 3/6
		{[]Trials{{1, 4}}, 2, 0},       // c < k
		{[]Trials{{0, 8}, {8, 8}}, 3, 0.5},
		{[]Trials{{5, 8}, {2, 3}}, 2, (10.0/28 + 1.0/3) / 2},
		{[]Trials{{60, 100}}, 1, 0.6},
	}
	for _, c := range cases {
		got, err := PassHatK(c.tasks, c.k)
		if err != nil || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("PassHatK(%v, %d) = %v, %v; want %v", c.tasks, c.k, got, err, c.want)
		}
	}
	// pass^k never rises with k.
	tasks := []Trials{{7, 10}, {3, 10}, {10, 10}}
	prev := 2.0
	for k := 1; k <= 10; k++ {
		p, err := PassHatK(tasks, k)
		if err != nil || p > prev {
			t.Fatalf("k=%d: %v, %v after %v", k, p, err, prev)
		}
		prev = p
	}
	for _, bad := range []struct {
		tasks []Trials
		k     int
	}{
		{nil, 1}, {[]Trials{{1, 2}}, 0}, {[]Trials{{1, 2}}, 3}, {[]Trials{{3, 2}}, 1}, {[]Trials{{-1, 2}}, 1},
	} {
		if _, err := PassHatK(bad.tasks, bad.k); err == nil {
			t.Errorf("PassHatK(%v, %d): no error", bad.tasks, bad.k)
		}
	}
}
