package webshop

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/envtest"
)

func newEnv(t testing.TB, split envs.Split, seed int64) (*Env, string) {
	t.Helper()
	e := New().(*Env)
	obs, err := e.Reset(split, seed)
	if err != nil {
		t.Fatalf("reset %s/%d: %v", split, seed, err)
	}
	return e, obs
}

func step(t testing.TB, e *Env, action string) envs.StepResult {
	t.Helper()
	res, err := e.Step(action)
	if err != nil {
		t.Fatalf("step %q: %v", action, err)
	}
	return res
}

// runExpert plays an episode with the expert and returns its last step and
// the actions and observations seen.
func runExpert(t testing.TB, e *Env) (envs.StepResult, []string) {
	t.Helper()
	seen, last := envtest.PlayExpert(t, e)
	return last, seen
}

func TestSpec(t *testing.T) {
	spec := New().Spec()
	if spec.Name != "webshop" || spec.MaxSteps != maxSteps || spec.RewardMin != 0 || spec.RewardMax != 1 || len(spec.Splits) != 3 {
		t.Errorf("unexpected spec %+v", spec)
	}
	for _, want := range []string{"search[", "click[", "Action:", "Buy Now"} {
		if !strings.Contains(spec.Instruction, want) {
			t.Errorf("the instruction does not mention %q", want)
		}
	}
}

func TestResetIsDeterministic(t *testing.T) {
	for _, split := range envs.Splits {
		for seed := range int64(20) {
			a, obsA := newEnv(t, split, seed)
			b, obsB := newEnv(t, split, seed)
			if obsA != obsB {
				t.Fatalf("%s/%d: first observations differ", split, seed)
			}
			_, seenA := runExpert(t, a)
			_, seenB := runExpert(t, b)
			if strings.Join(seenA, "\n") != strings.Join(seenB, "\n") {
				t.Fatalf("%s/%d: episodes differ", split, seed)
			}
		}
	}
	// Reusing an instance gives the same episode as a fresh one.
	e, _ := newEnv(t, envs.Train, 3)
	runExpert(t, e)
	again, _ := e.Reset(envs.Train, 7)
	_, fresh := newEnv(t, envs.Train, 7)
	if again != fresh {
		t.Error("a reused instance and a fresh one disagree")
	}
}

func TestSeedsAndSplitsDiffer(t *testing.T) {
	const seeds = 200
	for _, split := range envs.Splits {
		seen := map[string]int64{}
		for seed := range int64(seeds) {
			_, obs := newEnv(t, split, seed)
			if prev, dup := seen[obs]; dup {
				t.Errorf("%s: seeds %d and %d give the same episode", split, prev, seed)
			}
			seen[obs] = seed
		}
	}
	for seed := range int64(50) {
		_, train := newEnv(t, envs.Train, seed)
		_, test := newEnv(t, envs.Test, seed)
		_, unseen := newEnv(t, envs.Unseen, seed)
		if train == test || train == unseen || test == unseen {
			t.Errorf("seed %d gives the same episode in two splits", seed)
		}
	}
}

func TestUnseenUsesHeldOutCategories(t *testing.T) {
	c := theCatalog()
	for seed := range int64(100) {
		for _, split := range envs.Splits {
			e, _ := newEnv(t, split, seed)
			heldOut := c.heldOut[c.types[e.goal.typ].category]
			if heldOut != (split == envs.Unseen) {
				t.Errorf("%s/%d: goal of type %q (held out: %v)", split, seed, c.types[e.goal.typ].name, heldOut)
			}
		}
	}
}

func TestResetErrors(t *testing.T) {
	e := New()
	if _, err := e.Step("search[shoes]"); err == nil {
		t.Error("stepping before Reset must fail")
	}
	if _, err := e.(envs.Expert).ExpertAction(); err == nil {
		t.Error("the expert before Reset must fail")
	}
	if _, err := e.Reset("validation", 1); err == nil {
		t.Error("an unknown split must fail")
	}
}

func TestExpertSolvesEverySplit(t *testing.T) {
	const episodes = 300
	for _, split := range envs.Splits {
		successes, steps := 0, 0
		for seed := range int64(episodes) {
			e, _ := newEnv(t, split, seed)
			last, seen := runExpert(t, e)
			steps += len(seen) / 2
			if last.Info.Success && last.Reward == 1 && last.Info.Score == 1 {
				successes++
			} else {
				t.Errorf("%s/%d: expert scored %v: %s", split, seed, last.Reward, last.Observation)
			}
		}
		t.Logf("%s: expert success %d/%d, %.2f steps per episode", split, successes, episodes, float64(steps)/episodes)
	}
}

// TestExpertRecoversFromDetours lets a random policy act first, then the
// expert: it must steer back from wherever the episode is.
func TestExpertRecoversFromDetours(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const episodes = 300
	successes := 0
	for seed := range int64(episodes) {
		e, _ := newEnv(t, envs.Test, seed)
		for range 4 {
			actions := e.AvailableActions()
			action := actions[rng.IntN(len(actions))]
			if action == "click["+labelBuyNow+"]" {
				continue
			}
			if strings.HasPrefix(action, "search[") {
				action = "search[" + randomWords(rng, 2) + "]"
			}
			step(t, e, action)
		}
		if last, _ := runExpert(t, e); last.Info.Success {
			successes++
		}
	}
	t.Logf("expert after a random detour: success %d/%d", successes, episodes)
	if successes < episodes*98/100 {
		t.Errorf("expert after a detour succeeded %d/%d times", successes, episodes)
	}
}

// randomWords draws n words of the search index.
func randomWords(rng *rand.Rand, n int) string {
	words := searchVocabulary()
	picked := make([]string, n)
	for i := range picked {
		picked[i] = words[rng.IntN(len(words))]
	}
	return strings.Join(picked, " ")
}

var searchVocabulary = sync.OnceValue(func() []string {
	var words []string
	for w := range theCatalog().index.terms {
		words = append(words, w)
	}
	// Map order is random; sort for reproducible draws.
	slices.Sort(words)
	return words
})

func TestInstructionNamesTheGoal(t *testing.T) {
	c := theCatalog()
	for _, split := range envs.Splits {
		for seed := range int64(200) {
			e, obs := newEnv(t, split, seed)
			g := &e.goal
			text := g.instruction
			wants := []string{c.types[g.typ].name, strconv.Itoa(int(g.priceLimit))}
			for _, a := range g.attributes {
				wants = append(wants, c.attributes.words[a])
			}
			for _, o := range g.options {
				wants = append(wants, o.value)
			}
			for _, w := range wants {
				if !strings.Contains(text, w) {
					t.Errorf("%s/%d: instruction %q does not mention %q", split, seed, text, w)
				}
			}
			if target := &c.products[g.target]; target.price > g.priceLimit || g.priceLimit > target.price+40 {
				t.Errorf("%s/%d: price limit %v for a product at %v", split, seed, g.priceLimit, target.price)
			}
			if !strings.HasPrefix(obs, "Instruction: "+text+"\n") {
				t.Errorf("%s/%d: the first observation does not start with the instruction", split, seed)
			}
		}
	}
}

func TestRandomPolicyScoresLow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const episodes = 500
	var total float64
	successes := 0
	for seed := range int64(episodes) {
		e, _ := newEnv(t, envs.Train, seed)
		for {
			actions := e.AvailableActions()
			action := actions[rng.IntN(len(actions))]
			if strings.HasPrefix(action, "search[") {
				action = "search[" + randomWords(rng, 1+rng.IntN(4)) + "]"
			}
			res := step(t, e, action)
			if !res.Info.ValidAction {
				t.Fatalf("available action %q was refused: %s", action, res.Observation)
			}
			if res.Done {
				total += res.Info.Score
				if res.Info.Success {
					successes++
				}
				break
			}
		}
	}
	mean := total / episodes
	t.Logf("random policy: mean score %.3f, success %d/%d", mean, successes, episodes)
	if mean > 0.1 || successes > episodes/50 {
		t.Errorf("random policy scores %.3f with %d successes: the task is too easy", mean, successes)
	}
}

func TestNavigation(t *testing.T) {
	e, obs := newEnv(t, envs.Train, 11)
	if !strings.HasPrefix(obs, "Instruction: "+e.goal.instruction) || !strings.Contains(obs, "search[") {
		t.Fatalf("unexpected search page:\n%s", obs)
	}
	if got := e.AvailableActions(); len(got) != 1 || got[0] != "search[<your query>]" {
		t.Errorf("search page actions = %v", got)
	}
	res := step(t, e, "Thought: let me look.\nAction:  Search[ "+e.goal.query+" ] ")
	if !res.Info.ValidAction || !strings.Contains(res.Observation, "Page 1 (Total results: 50)") || !strings.Contains(res.Observation, "[Next >]") {
		t.Fatalf("unexpected results page:\n%s", res.Observation)
	}
	firstPage := res.Observation
	res = step(t, e, "click[next >]")
	if !strings.Contains(res.Observation, "Page 2") || !strings.Contains(res.Observation, "[< Prev]") {
		t.Fatalf("unexpected second page:\n%s", res.Observation)
	}
	if res = step(t, e, "click[<prev]"); res.Observation != firstPage {
		t.Fatalf("< Prev did not return to the first page:\n%s", res.Observation)
	}

	asin := e.cat.products[e.results[0]].asin
	res = step(t, e, "click["+strings.ToLower(asin)+"]")
	p := &e.cat.products[e.results[0]]
	if !strings.Contains(res.Observation, p.title) || !strings.Contains(res.Observation, "[Buy Now]") {
		t.Fatalf("unexpected item page:\n%s", res.Observation)
	}
	value := p.options[0].values[1]
	res = step(t, e, "click["+strings.ToUpper(value)+"]")
	if !strings.Contains(res.Observation, "(selected: "+value+")") {
		t.Fatalf("the selected option is not shown:\n%s", res.Observation)
	}
	if res = step(t, e, "click[Description]"); !strings.Contains(res.Observation, p.description) {
		t.Fatalf("unexpected description page:\n%s", res.Observation)
	}
	if res = step(t, e, "click[< Prev]"); !strings.Contains(res.Observation, "(selected: "+value+")") {
		t.Fatalf("< Prev from the description lost the item page:\n%s", res.Observation)
	}
	if res = step(t, e, "click[Features]"); !strings.Contains(res.Observation, p.bullets[0]) {
		t.Fatalf("unexpected features page:\n%s", res.Observation)
	}
	step(t, e, "click[< Prev]")
	if res = step(t, e, "click[< Prev]"); res.Observation != firstPage {
		t.Fatalf("< Prev from the item did not return to the results:\n%s", res.Observation)
	}
	if res = step(t, e, "click[Back to Search]"); !strings.Contains(res.Observation, "search page") {
		t.Fatalf("Back to Search did not return to the search page:\n%s", res.Observation)
	}
	if res.Done || res.Reward != 0 {
		t.Error("browsing must neither end the episode nor pay")
	}
}

func TestBuyingEndsTheEpisode(t *testing.T) {
	e, _ := newEnv(t, envs.Train, 5)
	step(t, e, "search["+e.goal.query+"]")
	step(t, e, "click["+e.cat.products[e.results[0]].asin+"]")
	res := step(t, e, "click[Buy Now]")
	if !res.Done || res.Info.Score != res.Reward || !strings.Contains(res.Observation, "Your score") {
		t.Fatalf("buying: %+v", res)
	}
	if got := e.AvailableActions(); got != nil {
		t.Errorf("actions after the end = %v", got)
	}
	if _, err := e.Step("click[Buy Now]"); err == nil {
		t.Error("stepping after the end must fail")
	}
	if _, err := e.ExpertAction(); err == nil {
		t.Error("the expert after the end must fail")
	}
}

func TestEpisodeEndsAtMaxSteps(t *testing.T) {
	e, _ := newEnv(t, envs.Train, 2)
	step(t, e, "search["+e.goal.query+"]")
	for i := 2; i <= maxSteps; i++ {
		action := "click[Next >]"
		if i%2 == 0 {
			action = "click[< Prev]"
		}
		res := step(t, e, action)
		if res.Done != (i == maxSteps) {
			t.Fatalf("step %d: done = %v", i, res.Done)
		}
		if res.Done && (res.Reward != 0 || res.Info.Score != 0 || res.Info.Success || !strings.Contains(res.Observation, "step limit")) {
			t.Fatalf("timeout step: %+v", res)
		}
	}
	if _, err := e.Step("click[Back to Search]"); err == nil {
		t.Error("stepping after the step limit must fail")
	}
}

func TestInvalidActions(t *testing.T) {
	huge := strings.Repeat("click[", 100000) + strings.Repeat("x", 1<<20)
	actions := []string{
		"", "   ", "\n\n", "Action:", "hello", "click", "click[", "click]", "click[]", "]click[",
		"search[]", "search[   ]", "buy[now]", "click[[Buy Now]", "click[nothing here]",
		"Action: click[Buy Now", huge, "点击[立即购买]", "click[\u00e9\u00e8\u00ea]", "click[\xff\xfe]",
		"search[shoes]]", "click[B0]", "Action: search[a] Action: click[x]",
	}
	for _, action := range actions {
		for _, setup := range []string{"search", "results", "item"} {
			e, _ := newEnv(t, envs.Test, 4)
			if setup != "search" {
				step(t, e, "search["+e.goal.query+"]")
			}
			if setup == "item" {
				step(t, e, "click["+e.cat.products[e.results[0]].asin+"]")
			}
			before := e.render()
			stepsBefore := e.steps
			res := step(t, e, action)
			if res.Info.ValidAction {
				// A few of these are valid searches on the search page.
				if setup == "search" && strings.HasPrefix(envs.ParseAction(action), "search[") {
					continue
				}
				t.Errorf("%s page: %.40q was accepted", setup, action)
				continue
			}
			if !strings.HasPrefix(res.Observation, "Invalid action") || !strings.Contains(res.Observation, "Valid actions are:") {
				t.Errorf("%s page: %.40q gave %.200q", setup, action, res.Observation)
			}
			if len(res.Observation) > 4000 {
				t.Errorf("%s page: the invalid-action message is %d bytes long", setup, len(res.Observation))
			}
			if e.render() != before || e.steps != stepsBefore+1 || res.Done || res.Reward != 0 {
				t.Errorf("%s page: invalid action %.40q changed the page or was not counted", setup, action)
			}
		}
	}
	// Search is only allowed on the search page; clicks only off it.
	e, _ := newEnv(t, envs.Test, 4)
	if res := step(t, e, "click[Buy Now]"); res.Info.ValidAction {
		t.Error("clicking on the search page was accepted")
	}
	step(t, e, "search[shoes]")
	if res := step(t, e, "search[shoes]"); res.Info.ValidAction || !strings.Contains(res.Observation, "Back to Search") {
		t.Errorf("searching on the results page: %s", res.Observation)
	}
}

func TestAvailableActionsAreValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for seed := range int64(100) {
		e, _ := newEnv(t, envs.Unseen, seed)
		for !e.done {
			actions := e.AvailableActions()
			action := actions[rng.IntN(len(actions))]
			if res := step(t, e, action); !res.Info.ValidAction {
				t.Fatalf("available action %q refused: %s", action, res.Observation)
			}
		}
	}
}

func TestRewardFormula(t *testing.T) {
	c := theCatalog()
	// A product with two option groups and three attributes.
	var p *product
	for i := range c.products {
		if q := &c.products[i]; len(q.options) == 2 && len(q.attributes) >= 3 && !c.heldOut[q.category] {
			p = q
			break
		}
	}
	g := goal{typ: p.typ, priceLimit: math.Ceil(p.price) + 5}
	for _, a := range p.attributes[:3] {
		g.attributes = append(g.attributes, c.attributes.ids[a])
	}
	for _, group := range p.options {
		g.options = append(g.options, goalOption{name: group.name, value: group.values[0], valueID: group.valueIDs[0]})
	}
	right := []int{0, 0}
	const total = 3 + 2 + 1

	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-12 }
	if r := c.score(&g, p, right); !near(r.value, 1) || !r.success(&g) {
		t.Errorf("exact match: %+v, want 1", r)
	}
	if r := c.score(&g, p, []int{0, 1}); !near(r.value, 5.0/total) || r.success(&g) {
		t.Errorf("one wrong option: %+v, want 5/6", r)
	}
	if r := c.score(&g, p, []int{-1, -1}); !near(r.value, 4.0/total) {
		t.Errorf("no option selected: %+v, want 4/6", r)
	}
	over := g
	over.priceLimit = math.Floor(p.price) - 1
	if r := c.score(&over, p, right); !near(r.value, 5.0/total) || r.priceOK || r.success(&over) {
		t.Errorf("over the price limit: %+v, want 5/6", r)
	}
	missing := g
	missing.attributes = []int{g.attributes[0], attributeLackedBy(t, c, p)}
	if r := c.score(&missing, p, right); !near(r.value, 4.0/5) {
		t.Errorf("one attribute missing: %+v, want 4/5", r)
	}

	// The same purchase judged against goals of other types.
	sameCategory, otherCategory := otherTypes(c, p)
	for _, typ := range sameCategory {
		wrong := g
		wrong.typ = typ
		if r := c.score(&wrong, p, right); r.typeScore != 0.5 || !near(r.value, 0.5) {
			t.Errorf("same category, type %q: %+v, want 0.5", c.types[typ].name, r)
		}
	}
	for _, typ := range otherCategory {
		wrong := g
		wrong.typ = typ
		want := 0.0
		if titleSharesWord(p.title, c.types[typ].name) {
			want = 0.1
		}
		if r := c.score(&wrong, p, right); r.typeScore != want || !near(r.value, want) {
			t.Errorf("category %q, type %q: %+v, want %v", c.categories[c.types[typ].category], c.types[typ].name, r, want)
		}
	}
}

// attributeLackedBy finds an attribute of the vocabulary that p lacks.
func attributeLackedBy(t *testing.T, c *catalog, p *product) int {
	for id := range c.attributes.words {
		if !p.hasAttribute[id] {
			return id
		}
	}
	t.Fatal("the product has every attribute")
	return -1
}

func otherTypes(c *catalog, p *product) (sameCategory, otherCategory []int) {
	for typ := range c.types {
		switch {
		case typ == p.typ:
		case c.types[typ].category == p.category:
			sameCategory = append(sameCategory, typ)
		default:
			otherCategory = append(otherCategory, typ)
		}
	}
	return sameCategory, otherCategory
}

func titleSharesWord(title, typeName string) bool {
	for _, w := range searchTerms(typeName, nil) {
		for _, t := range searchTerms(title, nil) {
			if w == t {
				return true
			}
		}
	}
	return false
}

func TestTypeRewardTitleOverlap(t *testing.T) {
	c := theCatalog()
	coffee, mug := typeNamed(t, c, "ground coffee"), typeNamed(t, c, "coffee mug")
	for i := range c.products {
		if p := &c.products[i]; p.typ == mug {
			if got := c.typeScore(coffee, p); got != 0.1 {
				t.Errorf("a coffee mug bought for ground coffee: r_type %v, want 0.1", got)
			}
			if got := c.typeScore(typeNamed(t, c, "yoga mat"), p); got != 0 {
				t.Errorf("a coffee mug bought for a yoga mat: r_type %v, want 0", got)
			}
			return
		}
	}
}

func typeNamed(t *testing.T, c *catalog, name string) int {
	for i, typ := range c.types {
		if typ.name == name {
			return i
		}
	}
	t.Fatalf("no type %q", name)
	return -1
}

func TestAttributeFoundInText(t *testing.T) {
	c := theCatalog()
	// Attributes missing from the list but present in the text count, as in
	// WebShop; find such a case in the catalog.
	for i := range c.products {
		p := &c.products[i]
		for id, word := range c.attributes.words {
			if p.hasAttribute[id] && !matchesAny(word, p.attributes) {
				if !strings.Contains(p.text, word) {
					t.Fatalf("product %s has %q without listing or mentioning it", p.asin, word)
				}
				return
			}
		}
	}
	t.Skip("no product mentions an attribute it does not list")
}

func TestSizeOptionsMatchExactly(t *testing.T) {
	c := theCatalog()
	for i := range c.products {
		p := &c.products[i]
		for _, group := range p.options {
			if group.name != "size" {
				continue
			}
			for vi, v := range group.values {
				for wi, w := range group.values {
					if vi != wi && fuzzyMatch(v, w) {
						// Fuzzy alike, but the reward must tell them apart.
						if c.optionValueMatches(&group, vi, group.valueIDs[wi]) {
							t.Fatalf("size %q accepted for %q", v, w)
						}
						return
					}
				}
			}
		}
	}
	t.Fatal("no product has two fuzzy-alike sizes; the exact rule is untested")
}

// BenchmarkSteps: 64 instances stepped in parallel by their experts.
func BenchmarkSteps(b *testing.B) {
	envtest.Benchmark(b, New)
}
