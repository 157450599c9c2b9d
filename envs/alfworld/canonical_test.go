package alfworld

import (
	"regexp"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/envtest"
)

func TestCanonical(t *testing.T) {
	e := New().(*Env)
	same := map[string][]string{
		"go to cabinet 1": {"go to cabinet 1", "goto cabinet 1", "Go  To  Cabinet 1.", "goto cabinet1", "go to cabinet 01",
			"Thought: mugs are often in cabinets.\nAction: go to cabinet 1", "Action: `GOTO CABINET1!`"},
		"move apple 1 to countertop 2": {"move apple 1 to countertop 2", "put apple 1 in/on countertop 2",
			"put apple1 in countertop2", "put apple 1 on countertop 2", "put apple 1 into countertop 2", "Put Apple 1 Onto CounterTop 2"},
		"take apple 1 from countertop 2": {"take apple 1 from countertop 2", "TAKE apple1 FROM countertop 02."},
		"take apple 1":                   {"take apple 1", "take  apple1"},
		"clean plate 1 with sinkbasin 1": {"clean plate1 with sinkbasin1"},
		"heat egg 3 with microwave 1":    {"Heat Egg 3 With Microwave 1"},
		"cool tomato 1 with fridge 1":    {"cool tomato 1 with fridge 1!"},
		"use desklamp 1":                 {"USE DESKLAMP 1"},
		"examine sidetable 2":            {"examine sidetable2"},
		"open drawer 2":                  {"Open drawer 2."},
		"close drawer 2":                 {"close   drawer 2"},
		"inventory":                      {"Inventory", "INVENTORY."},
		"look":                           {"look", "Look!"},
	}
	differ := [][2]string{
		{"go to cabinet 1", "go to cabinet 2"},
		{"go to cabinet 1", "open cabinet 1"},
		// Taking from a named place fails away from it; taking without one
		// takes from wherever the agent is.
		{"take apple 1", "take apple 1 from countertop 1"},
		{"move apple 1 to countertop 1", "take apple 1 from countertop 1"},
		// Invalid commands stay themselves.
		{"go cabinet 1", "go cabinet 2"},
		{"move apple 1 into countertop 1", "move apple 1 in countertop 1"},
		{"go to cabinet 1 now", "go to cabinet 1"},
		{"look around", "look"},
	}
	envtest.CheckCanonical(t, e, same, differ)
	envtest.CheckCanonicalRejected(t, e, "go cabinet 1", "fly", "Thought: hmm\nAction:  go to cabinet 100 ", "", "go to cabinet 1"+strings.Repeat(" ", 120), "Action: ' fly '")
}

// TestCanonicalActionsActAlike plays the expert and, before each of its
// commands, steps rewritings of it in copies of the state, comparing what
// the environment does.
func TestCanonicalActionsActAlike(t *testing.T) {
	for seed := range int64(4) {
		e, _ := newEnv(t, envs.Train, seed)
		var path []string
		for !e.done {
			a, err := e.ExpertAction()
			if err != nil {
				t.Fatal(err)
			}
			path = append(path, a)
			mustStep(t, e, a)
		}
		for i, a := range path {
			for _, b := range rewriteCommand(a) {
				if !envs.Equivalent(e, a, b) {
					t.Errorf("seed %d: %q and its rewriting %q are not equivalent", seed, a, b)
					continue
				}
				x, _ := newEnv(t, envs.Train, seed)
				y, _ := newEnv(t, envs.Train, seed)
				for _, p := range path[:i] {
					mustStep(t, x, p)
					mustStep(t, y, p)
				}
				rx, ry := step(t, x, a), step(t, y, b)
				if rx.Observation != ry.Observation || rx.Info.ValidAction != ry.Info.ValidAction || rx.Reward != ry.Reward || rx.Done != ry.Done {
					t.Errorf("seed %d step %d: %q and %q act differently:\n%s\n---\n%s", seed, i, a, b, rx.Observation, ry.Observation)
				}
			}
		}
	}
}

var (
	nameRE      = regexp.MustCompile(`([a-z]+) ([0-9]+)`)
	shortNameRE = regexp.MustCompile(`([a-z]+) ([1-9])\b`)
)

// rewriteCommand gives forms of an ALFWorld command its parser accepts
// alike: other case and spacing, joined names, "goto", "put ... in/on".
func rewriteCommand(a string) []string {
	out := []string{
		strings.ToUpper(a) + ".",
		"Thought: next.\nAction:   " + strings.ReplaceAll(a, " ", "  ") + "!",
		nameRE.ReplaceAllString(a, "${1}${2}"),
		shortNameRE.ReplaceAllString(a, "${1} 0${2}"), // "cabinet 03"; "cabinet 012" is refused
	}
	if rest, ok := strings.CutPrefix(a, "go to "); ok {
		out = append(out, "goto "+rest)
	}
	if rest, ok := strings.CutPrefix(a, "move "); ok {
		for _, prep := range []string{" in/on ", " in ", " on ", " into ", " onto "} {
			out = append(out, "put "+strings.Replace(rest, " to ", prep, 1))
		}
	}
	return out
}

// FuzzCanonicalActsAlike steps a text and its canonical form in copies of an
// episode: a valid command's canonical form is a valid command with the same
// effect.
func FuzzCanonicalActsAlike(f *testing.F) {
	for _, s := range []string{"goto cabinet1", "Action: Put apple 1 in/on countertop 2.", "TAKE apple 01", "look!", "examine  fridge 1", "inventory"} {
		f.Add(int64(0), s)
	}
	f.Fuzz(func(t *testing.T, seed int64, x string) {
		seed &= 15
		a, _ := newEnv(t, envs.Train, seed)
		b, _ := newEnv(t, envs.Train, seed)
		// Go somewhere first, so that more commands are allowed.
		first := a.actions[0]
		step(t, a, first)
		step(t, b, first)
		c := a.Canonical(x)
		ra, rb := step(t, a, x), step(t, b, c)
		if ra.Info.ValidAction && (ra.Observation != rb.Observation || !rb.Info.ValidAction || ra.Reward != rb.Reward || ra.Done != rb.Done) {
			t.Fatalf("%q and its canonical form %q act differently:\n%s\n---\n%s", x, c, ra.Observation, rb.Observation)
		}
	})
}
