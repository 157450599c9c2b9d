package webshop

import (
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/envtest"
)

func TestCanonical(t *testing.T) {
	e := New().(*Env)
	for _, term := range []string{"red", "shoe", "running", "snack", "bar"} {
		if e.cat.index.terms[term] == nil {
			t.Fatalf("the index has no term %q; the cases below assume it", term)
		}
	}
	if e.cat.index.terms["xyzzyq"] != nil {
		t.Fatal("the index has the term xyzzyq")
	}
	same := map[string][]string{
		"search[red shoe]": {
			"search[red shoes]", "search[Red  Shoes]", "Action: SEARCH [ red shoes ].",
			"Thought: the goal asks for red shoes.\nAction: search[red shoes]",
			"search[shoes red]", "search[the red shoes for me]", "search[red red shoe]",
			"search[red shoes xyzzyq]", "`search[RED\tSHOES]`",
		},
		"search[red running shoe]": {"search[red running shoes]", "search[Red, running; shoes!]"},
		"search[-]":                {"search[the]", "search[xyzzyq]", "search[!!!]", "search[-]"},
		"click[Buy Now]":           {"click[Buy Now]", "click[buy now]", "click[BuyNow]", "Click [ b u y  n o w ].", "Action: click[BUY NOW]"},
		"click[Next >]":            {"click[Next >]", "click[next>]"},
		"click[< Prev]":            {"click[< Prev]", "click[<prev]"},
		"click[Back to Search]":    {"click[back to search]", "click[BacktoSearch]"},
		"click[notabutton]":        {"click[Not A Button]", "click[not a button]"},
	}
	differ := [][2]string{
		{"search[red shoes]", "search[blue shoes]"},
		// Three terms or more keep their order: BM25's float32 sum may round
		// differently in another order.
		{"search[red running shoes]", "search[shoes running red]"},
		{"search[the]", "search[]"},
		{"click[Buy Now]", "click[Back to Search]"},
		{"click[Buy Now]", "search[buy now]"},
		// Invalid actions stay themselves, so two of them differ.
		{"buy[now]", "buy[it]"},
		{"search[]", "search[ ]"},
		{"click[]", "click[ ]"},
		{"search red shoes", "search[red shoes"},
	}
	envtest.CheckCanonical(t, e, same, differ)
	envtest.CheckCanonicalRejected(t, e, "buy[now]", "search[]", "click[ ]", "search red shoes", "Thought: hmm\nAction:  dance[now] ", "Action: \" dance[now] \"")
}

// TestCanonicalActionsActAlike steps actions with equal canonical forms from
// the same state and compares what the environment does.
func TestCanonicalActionsActAlike(t *testing.T) {
	for seed := range int64(5) {
		expertPath := func() (*Env, []string) {
			e, _ := newEnv(t, envs.Train, seed)
			var actions []string
			for !e.done && len(actions) < 6 {
				a, err := e.ExpertAction()
				if err != nil {
					t.Fatal(err)
				}
				actions = append(actions, a)
				step(t, e, a)
			}
			return e, actions
		}
		_, path := expertPath()
		// Replay the expert's path and, before each of its actions, try
		// rewritings of it in two copies of the state.
		for i, a := range path {
			for _, b := range rewrite(a) {
				if envs.Canonical(New(), a) != envs.Canonical(New(), b) {
					t.Errorf("seed %d: %q and its rewriting %q are not equivalent", seed, a, b)
					continue
				}
				x, _ := newEnv(t, envs.Train, seed)
				y, _ := newEnv(t, envs.Train, seed)
				for _, p := range path[:i] {
					step(t, x, p)
					step(t, y, p)
				}
				rx, ry := step(t, x, a), step(t, y, b)
				if rx.Observation != ry.Observation || rx.Info.ValidAction != ry.Info.ValidAction || rx.Reward != ry.Reward || rx.Done != ry.Done {
					t.Errorf("seed %d step %d: %q and %q act differently:\n%s\n---\n%s", seed, i, a, b, rx.Observation, ry.Observation)
				}
			}
		}
	}
}

// rewrite gives forms of a webshop action that the environment accepts
// alike: another case, extra spaces, a thought first, stop words.
func rewrite(a string) []string {
	open := strings.IndexByte(a, '[')
	verb, arg := a[:open], a[open+1:len(a)-1]
	out := []string{
		strings.ToUpper(verb) + " [ " + strings.ToUpper(arg) + " ]",
		"Thought: this is the next step.\nAction: " + verb + "[" + strings.ReplaceAll(arg, " ", "   ") + "].",
	}
	if verb == "search" {
		out = append(out, verb+"[the "+arg+" for me]")
	}
	return out
}

// FuzzCanonicalActsAlike steps a text and its canonical form in copies of an
// episode, on the search page or on the expert's results or item page: a
// valid action's canonical form is a valid action with the same effect.
func FuzzCanonicalActsAlike(f *testing.F) {
	for _, s := range []string{"search[Red  Shoes]", "SEARCH [the snack bars]", "click[buy now]", "click[next>]", "click[ b a c k  to search ]."} {
		for page := range uint8(3) {
			f.Add(page, s)
		}
	}
	f.Fuzz(func(t *testing.T, page uint8, x string) {
		a, _ := newEnv(t, envs.Train, 1)
		b, _ := newEnv(t, envs.Train, 1)
		for range page % 3 {
			p, err := a.ExpertAction()
			if err != nil {
				t.Fatal(err)
			}
			step(t, a, p)
			step(t, b, p)
		}
		if x != "" {
			// Also try the page's own buttons, which the fuzzer will not guess.
			if avail := a.AvailableActions(); len(avail) > 0 && x[0]%4 == 0 {
				x = strings.ToUpper(avail[int(x[0])%len(avail)])
			}
		}
		c := a.Canonical(x)
		ra, rb := step(t, a, x), step(t, b, c)
		if ra.Info.ValidAction && (ra.Observation != rb.Observation || !rb.Info.ValidAction || ra.Reward != rb.Reward || ra.Done != rb.Done) {
			t.Fatalf("%q and its canonical form %q act differently:\n%s\n---\n%s", x, c, ra.Observation, rb.Observation)
		}
	})
}
