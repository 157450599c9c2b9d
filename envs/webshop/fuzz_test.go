package webshop

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentrl/agentrl/envs"
)

// FuzzStep sends arbitrary text as an action on each kind of page: it must
// never panic, an accepted action must leave a well-formed page, and a
// refused one must explain itself.
func FuzzStep(f *testing.F) {
	for _, seed := range []string{
		"search[gluten free snack bar]", "click[Buy Now]", "click[< Prev]", "click[next >]",
		"Thought: hmm\nAction: click[Back to Search]", "click[]", "click[[x]]", "search[]]",
		"", "[", "]", "\x00", "click[\xff]", "Action:\n\nsearch[a b c]", "CLICK [ description ]",
	} {
		f.Add(seed)
	}
	e := New().(*Env)
	f.Fuzz(func(t *testing.T, action string) {
		for _, page := range []pageKind{pageSearch, pageResults, pageItem, pageFeatures} {
			if _, err := e.Reset(envs.Train, 1); err != nil {
				t.Fatal(err)
			}
			if page != pageSearch {
				e.Step("search[" + e.goal.query + "]")
			}
			if page == pageItem || page == pageFeatures {
				e.Step("click[" + e.cat.products[e.results[0]].asin + "]")
			}
			if page == pageFeatures {
				e.Step("click[Features]")
			}
			res, err := e.Step(action)
			if err != nil {
				t.Fatalf("step %q: %v", action, err)
			}
			if !res.Info.ValidAction {
				if !strings.HasPrefix(res.Observation, "Invalid action") || !strings.Contains(res.Observation, "Valid actions are:") {
					t.Fatalf("refused %q without explanation: %q", action, res.Observation)
				}
				continue
			}
			if !res.Done && !strings.HasPrefix(res.Observation, "Instruction: ") {
				t.Fatalf("accepted %q but rendered %q", action, res.Observation)
			}
			if !utf8.ValidString(res.Observation) && utf8.ValidString(action) {
				t.Fatalf("accepted %q but rendered invalid UTF-8", action)
			}
		}
	})
}
