package rollout

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
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

func TestPassAtK(t *testing.T) {
	cases := []struct {
		tasks []Trials
		k     int
		want  float64
	}{
		{[]Trials{{1, 4}}, 1, 0.25},
		{[]Trials{{1, 4}}, 2, 0.5},        // 1 - C(3,2)/C(4,2) = 1 - 3/6
		{[]Trials{{1, 4}}, 3, 0.75},       // 1 - C(3,3)/C(4,3)
		{[]Trials{{1, 4}}, 4, 1},          // n - c < k
		{[]Trials{{2, 5}}, 2, 1 - 3.0/10}, // C(3,2)/C(5,2)
		{[]Trials{{0, 8}, {8, 8}}, 3, 0.5},
		{[]Trials{{60, 100}}, 1, 0.6},
	}
	for _, c := range cases {
		got, err := PassAtK(c.tasks, c.k)
		if err != nil || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("PassAtK(%v, %d) = %v, %v; want %v", c.tasks, c.k, got, err, c.want)
		}
	}
	// pass@k never falls with k, and starts where pass^k does.
	tasks := []Trials{{7, 10}, {3, 10}, {0, 10}}
	prev := -1.0
	for k := 1; k <= 10; k++ {
		p, err := PassAtK(tasks, k)
		if err != nil || p < prev {
			t.Fatalf("k=%d: %v, %v after %v", k, p, err, prev)
		}
		prev = p
	}
	// 1 - (n-c)/n and c/n can differ in the last bit.
	if at, hat := must(PassAtK(tasks, 1)), must(PassHatK(tasks, 1)); math.Abs(at-hat) > 1e-12 {
		t.Errorf("pass@1 %v, pass^1 %v", at, hat)
	}
	if _, err := PassAtK([]Trials{{1, 2}}, 3); err == nil || !strings.Contains(err.Error(), "pass@k: task 0 has 2 attempts") {
		t.Errorf("k above the attempts: %v", err)
	}
}

func must(p float64, err error) float64 {
	if err != nil {
		panic(err)
	}
	return p
}

func TestPassHatKsGroupsEpisodesByTask(t *testing.T) {
	ep := func(split string, seed int64, success bool, err string) Trajectory {
		return Trajectory{Split: envs.Split(split), Seed: seed, Success: success, Error: err}
	}
	ts := []Trajectory{
		ep("test", 1, true, ""), ep("test", 1, true, ""), ep("test", 1, false, ""),
		ep("test", 2, false, ""), ep("test", 2, true, ""), ep("test", 2, false, ""),
		// The same seed on another split is another task.
		ep("unseen", 1, true, ""), ep("unseen", 1, true, ""), ep("unseen", 1, true, ""),
		// An episode that failed with an error is no attempt.
		ep("test", 2, true, "server down"),
	}
	want := []Trials{{2, 3}, {1, 3}, {3, 3}}
	if got := TaskTrials(ts); !slices.Equal(got, want) {
		t.Fatalf("TaskTrials = %v, want %v", got, want)
	}
	got, err := PassHatKs(ts)
	if err != nil {
		t.Fatal(err)
	}
	// k = 1: (2/3 + 1/3 + 1)/3; k = 2: (1/3 + 0 + 1)/3; k = 3: (0 + 0 + 1)/3.
	wantK := []float64{2.0 / 3, 4.0 / 9, 1.0 / 3}
	if len(got) != len(wantK) {
		t.Fatalf("PassHatKs = %v, want %v", got, wantK)
	}
	for k := range wantK {
		if math.Abs(got[k]-wantK[k]) > 1e-12 {
			t.Fatalf("PassHatKs = %v, want %v", got, wantK)
		}
	}
	// A task with fewer attempts bounds k.
	if got, err := PassHatKs(append(ts, ep("test", 9, true, ""))); err != nil || len(got) != 1 || math.Abs(got[0]-3.0/4) > 1e-12 {
		t.Fatalf("with a one-attempt task: %v, %v", got, err)
	}
	if _, err := PassHatKs([]Trajectory{ep("test", 1, true, "failed")}); err == nil {
		t.Fatal("no error when every episode failed")
	}
	// pass@k of the same: k = 1 as above; k = 2: (1 + 2/3 + 1)/3; k = 3: 1, each task has a success in its 3.
	if got, err := PassAtKs(ts); err != nil || len(got) != 3 || math.Abs(got[0]-2.0/3) > 1e-12 || math.Abs(got[1]-(1+2.0/3+1)/3) > 1e-12 || got[2] != 1 {
		t.Fatalf("PassAtKs = %v, %v", got, err)
	}
}
