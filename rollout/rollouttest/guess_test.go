package rollouttest

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
)

func TestGuessGame(t *testing.T) {
	g := New()
	if _, err := g.Step("Action: guess[1]"); err == nil {
		t.Fatal("step before reset succeeded")
	}
	if _, err := g.Reset("dev", 1); err == nil {
		t.Fatal("unknown split accepted")
	}
	obs, err := g.Reset(envs.Train, 42)
	if err != nil || obs != "The hidden number is between 1 and 16." {
		t.Fatalf("reset: %q %v", obs, err)
	}
	target := g.Target()
	if target < 1 || target > 16 {
		t.Fatalf("target %d out of range", target)
	}
	for _, bad := range []string{"guess[0]", "guess[17]", "guess 3", "", "Action: guess[x]"} {
		res, err := g.Step(bad)
		if err != nil || res.Info.ValidAction || res.Done || res.Reward != 0 || !strings.HasPrefix(res.Observation, "Invalid action") {
			t.Fatalf("invalid action %q: %+v %v", bad, res, err)
		}
	}
	if target > 1 {
		res, _ := g.Step("Action: guess[1]")
		if res.Observation != "1 is too low." || !res.Info.ValidAction {
			t.Fatalf("low guess: %+v", res)
		}
	}
	res, err := g.Step("I am sure.\nAction: guess[" + strconv.Itoa(target) + "]")
	if err != nil || !res.Done || res.Reward != 1 || !res.Info.Success || res.Info.Score != 1 {
		t.Fatalf("right guess: %+v %v", res, err)
	}
	if _, err := g.Step("guess[1]"); err == nil {
		t.Fatal("step after the end succeeded")
	}
	if g.AvailableActions() != nil {
		t.Fatal("actions listed after the end")
	}
}

func TestGuessIsDeterministicAndSplitsDiffer(t *testing.T) {
	targets := func(split envs.Split) []int {
		var out []int
		for seed := int64(0); seed < 64; seed++ {
			g := New()
			if _, err := g.Reset(split, seed); err != nil {
				t.Fatal(err)
			}
			out = append(out, g.Target())
		}
		return out
	}
	a, b := targets(envs.Train), targets(envs.Train)
	if !slices.Equal(a, b) {
		t.Fatal("same split and seeds gave different games")
	}
	if slices.Equal(a, targets(envs.Test)) {
		t.Fatal("train and test give the same games for the same seeds")
	}
	largest := 0
	for _, x := range targets(envs.Unseen) {
		largest = max(largest, x)
	}
	if largest <= 16 {
		t.Fatalf("unseen split never goes past 16 (largest %d)", largest)
	}
}

func TestUnlistedGuessShowsExamplesOnly(t *testing.T) {
	g := NewUnlisted()
	if _, err := g.Reset(envs.Test, 3); err != nil {
		t.Fatal(err)
	}
	if g.AvailableActions() != nil || len(g.ExampleActions()) == 0 {
		t.Fatal("unlisted game lists actions or gives no examples")
	}
	listed := New()
	if _, err := listed.Reset(envs.Test, 3); err != nil {
		t.Fatal(err)
	}
	if len(listed.AvailableActions()) != 16 {
		t.Fatal("listed game does not list its 16 actions")
	}
}
