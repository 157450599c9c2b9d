package twentyq

import (
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/envtest"
)

func TestCanonical(t *testing.T) {
	e := newEnv(t)
	same := map[string][]string{
		"Is it alive?": {"Is it alive?", "IS IT ALIVE", "is it alive???", "Is it a living thing?", "Action: is it an organism?",
			"Thought: start broad.\nAction: Is it alive?", "Is it alive or alive?", "alive"},
		"not Is it bigger than a breadbox?": {"Is it smaller than a breadbox?", "Can you hold it in your hand?", "Is it small?"},
		"Is it a mammal? or Is it a bird?":  {"Is it a mammal or a bird?", "Is it a bird or a mammal?", "Is it avian or mammalian?"},
		"Is it a mammal? and Is it a bird?": {"Is it a mammal and a bird?", "Is it a bird and a mammal?", "Is it a feathered mammal?"},
		"Is it a cat?":                      {"Is it a cat?", "is it cat", "Cat?", "Guess: cat", "My guess is a kitten.", "IS IT A CAT", "Action: \"Is it a cat?\""},
		"Is it an orange?":                  {"Is it an orange?", "Guess: orange"},
		"Is it orange?":                     {"Is it orange?", "Is it orangey?"},
		unknownGuessText:                    {"Guess: unicorn", "My final guess is a dragon", unknownGuessText},
	}
	differ := [][2]string{
		{"Is it alive?", "Is it not alive?"},
		{"Is it a mammal or a bird?", "Is it a mammal and a bird?"},
		{"Is it an orange?", "Is it orange?"}, // a guess, then a colour
		{"Is it a cat?", "Is it a dog?"},
		{"Is it a cat?", "Guess: unicorn"},
		{"Is it a mammal?", "Is it a mammal and alive?"},
		// Questions the oracle refuses stay themselves.
		{"What is it?", "What is that?"},
		{"Is it a cat or a dog?", "Is it a dog or a cat?"},
		{"Is it found in Africa?", "Is it found in Asia?"},
	}
	envtest.CheckCanonical(t, e, same, differ)
	envtest.CheckCanonicalRejected(t, e, "What is it?", "Is it bigger than a cat?", "Guess:", "Thought: hmm\nAction:  Is it red, green, blue or white? ", "Action: \" What is it? \"")
}

// TestCanonicalQueriesRoundTrip parses the canonical form of every query of
// one or two propositions, plain or negated, joined by and / or, back to the
// same query: canonical forms are valid questions, so no refused question
// shares one.
func TestCanonicalQueriesRoundTrip(t *testing.T) {
	k := kb()
	check := func(q query) {
		s := k.queryText(q)
		p := k.matcher.parse(s)
		if p.invalid != "" || p.guess >= 0 || p.unknownGuess != "" || k.queryText(p.query) != s {
			t.Errorf("%q parses as %s", s, describe(k, p))
		}
	}
	for a := range k.props {
		for _, na := range []bool{false, true} {
			check(query{terms: []term{{a, na}}})
			for b := a + 1; b < len(k.props); b++ {
				for _, nb := range []bool{false, true} {
					check(query{terms: []term{{a, na}, {b, nb}}})
					check(query{terms: []term{{a, na}, {b, nb}}, or: true})
				}
			}
		}
	}
	for _, o := range k.objects {
		if got := k.matcher.parse(o.guessText()); got.guess < 0 || k.objects[got.guess].name != o.name {
			t.Errorf("%q parses as %s", o.guessText(), describe(k, got))
		}
	}
	if p := k.matcher.parse(unknownGuessText); p.unknownGuess == "" {
		t.Errorf("%q parses as %s, want an unknown guess", unknownGuessText, describe(k, p))
	}
}

// TestCanonicalActionsActAlike asks equivalent questions in copies of a game
// and compares the answers and what the expert, which keeps the objects
// consistent with the answers, asks next.
func TestCanonicalActionsActAlike(t *testing.T) {
	groups := [][]string{
		{"Is it alive?", "Is it a living thing?", "IS IT ALIVE???"},
		{"Is it a mammal or a bird?", "Is it a bird or a mammal?"},
		{"Is it a small mammal?", "Is it a mammal that is smaller than a breadbox?"},
		{"Is it a cat?", "Guess: kitten"},
		{"Guess: unicorn", "Guess: dragon"},
	}
	play := func(seed int64, action string) (envs.StepResult, string) {
		e := newEnv(t)
		if _, err := e.Reset(envs.Train, seed); err != nil {
			t.Fatal(err)
		}
		res, err := e.Step(action)
		if err != nil {
			t.Fatal(err)
		}
		next := "(over)"
		if !res.Done {
			if next, err = e.ExpertAction(); err != nil {
				t.Fatal(err)
			}
		}
		return res, next
	}
	for seed := range int64(20) {
		for _, g := range groups {
			want, wantNext := play(seed, g[0])
			for _, a := range g[1:] {
				if !envs.Equivalent(newEnv(t), g[0], a) {
					t.Fatalf("%q and %q are not equivalent", g[0], a)
				}
				got, gotNext := play(seed, a)
				if got.Observation != want.Observation || got.Reward != want.Reward || got.Done != want.Done || gotNext != wantNext {
					t.Errorf("seed %d: %q and %q act differently: %q, then %q / %q, then %q",
						seed, g[0], a, want.Observation, wantNext, got.Observation, gotNext)
				}
			}
		}
	}
}

// FuzzCanonicalActsAlike asks a text and its canonical form in copies of a
// game: a valid question's canonical form is a valid question answered
// alike, after which the expert goes on alike.
func FuzzCanonicalActsAlike(f *testing.F) {
	for _, s := range []string{"Is it a bird or a mammal?", "Guess: kitten", "Is it small and furry?", "IS IT ALIVE???", "Guess: unicorn"} {
		f.Add(int64(0), s)
	}
	f.Fuzz(func(t *testing.T, seed int64, x string) {
		a, b := newEnv(t), newEnv(t)
		for _, e := range []*Env{a, b} {
			if _, err := e.Reset(envs.Train, seed); err != nil {
				t.Fatal(err)
			}
		}
		c := a.Canonical(x)
		ra, err := a.Step(x)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Step(c)
		if err != nil {
			t.Fatal(err)
		}
		if !ra.Info.ValidAction {
			return
		}
		nextA, _ := a.ExpertAction()
		nextB, _ := b.ExpertAction()
		if ra.Observation != rb.Observation || !rb.Info.ValidAction || ra.Reward != rb.Reward || ra.Done != rb.Done || nextA != nextB {
			t.Fatalf("%q and its canonical form %q act differently: %q, then %q / %q, then %q", x, c, ra.Observation, nextA, rb.Observation, nextB)
		}
	})
}
