package envs

import "testing"

// fakeEnv is an Env without a Canonicalizer.
type fakeEnv struct{}

func (fakeEnv) Spec() Spec                                    { return Spec{Name: "fake"} }
func (fakeEnv) Reset(split Split, seed int64) (string, error) { return "", nil }
func (fakeEnv) Step(action string) (StepResult, error)        { return StepResult{}, nil }
func (fakeEnv) AvailableActions() []string                    { return nil }

// upperEnv canonicalises by the first word only.
type upperEnv struct{ fakeEnv }

func (upperEnv) Canonical(action string) string {
	a := ParseAction(action)
	for i := 0; i < len(a); i++ {
		if a[i] == ' ' {
			return a[:i]
		}
	}
	return a
}

func TestEquivalentFallback(t *testing.T) {
	var env Env = fakeEnv{}
	same := [][2]string{
		{"search[red shoes]", "search[red shoes]"},
		{"Action: Search[Red   Shoes]", "search[red shoes]"},
		{"Thought: I need shoes.\nAction: search[red\tshoes]\n", "SEARCH[RED SHOES]"},
		{"  go to cabinet 1  ", "Action: `Go To Cabinet 1`"},
		{"look", "Thought: nothing to do.\n\nlook\n"},
		{"", "   "},
	}
	for _, c := range same {
		if !Equivalent(env, c[0], c[1]) {
			t.Errorf("Equivalent(%q, %q) = false (%q, %q)", c[0], c[1], Canonical(env, c[0]), Canonical(env, c[1]))
		}
	}
	differ := [][2]string{
		{"search[red shoes]", "search[blue shoes]"},
		{"search[red shoes]", "search[redshoes]"},
		{"search[red shoes]", "search[shoes red]"}, // no argument order without the environment
		{"Thought: search[x]\nAction: look", "search[x]"},
		{"Ä", "ä"}, // only ASCII case is folded
		{"go to cabinet 1", "go to cabinet 1."},
	}
	for _, c := range differ {
		if Equivalent(env, c[0], c[1]) {
			t.Errorf("Equivalent(%q, %q) = true (%q)", c[0], c[1], Canonical(env, c[0]))
		}
	}
	if got, want := Canonical(env, "Thought: hmm.\nAction:  Go  To\tCabinet 1 "), "go to cabinet 1"; got != want {
		t.Errorf("Canonical = %q, want %q", got, want)
	}
}

func TestEquivalentUsesTheCanonicalizer(t *testing.T) {
	var env Env = upperEnv{}
	if !Equivalent(env, "Action: look around", "look at me") {
		t.Error("Equivalent ignores the environment's Canonical")
	}
	if Equivalent(env, "look", "LOOK") {
		t.Error("Equivalent folds case where the environment's Canonical does not")
	}
	if got := Canonical(env, "Thought: x\nAction: open the door"); got != "open" {
		t.Errorf("Canonical = %q, want the environment's %q", got, "open")
	}
	if !Equivalent(nil, "Look", "look") {
		t.Error("Equivalent(nil, ...) does not fall back")
	}
}
