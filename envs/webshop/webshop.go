// Package webshop simulates WebShop (Yao et al. 2022): an agent shops on a
// small web store from an instruction ("i need a gluten free snack bar in
// chocolate chip flavor, 12 count, and price lower than 30.00 dollars") by
// searching, browsing results, opening items, choosing options and buying.
//
// The catalog (1,200 products over 12 categories) is generated once from a
// fixed seed and shared read-only by every instance. Observations follow
// WebShop's text mode with clickables in [brackets]; actions are
// search[query] and click[button]. Buying ends the episode with WebShop's
// reward (see reward.go); success is a reward of 1.
package webshop

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/agentrl/agentrl/envs"
)

// maxSteps is the episode length limit, as in common WebShop setups.
const maxSteps = 15

// instructionFormat is the system prompt; %d is the step limit.
const instructionFormat = `You are shopping on WebShop, an online store, to buy the product an instruction describes.
Every observation shows the current page. Text in [brackets] is clickable.
Actions (one per turn):
- search[<query>]: search the store; only on the search page. Example: search[gluten free snack bar chocolate chip 12 count]
- click[<button>]: click a button exactly as shown on the page, without the brackets. Examples: click[B0AB12CD34] opens a product, click[chocolate chip] selects an option, click[Next >], click[< Prev], click[Back to Search], click[Description], click[Features], click[Buy Now].
On a product page, click one value of every option the instruction asks for, then click[Buy Now]. Buying ends the episode and scores 0 to 1: the product type, its attributes, the options you selected and the price are compared with the instruction; a perfect match scores 1.
You have %d actions. You may think first; then write your action on its own line after "Action:", for example:
Thought: the results show a matching snack bar.
Action: click[B0AB12CD34]`

// pageKind is the page an episode is on.
type pageKind int

const (
	pageSearch pageKind = iota
	pageResults
	pageItem
	pageDescription
	pageFeatures
)

// Env is a WebShop episode. It is not safe for concurrent use.
type Env struct {
	cat      *catalog
	searcher *searcher

	goal       goal
	page       pageKind
	results    []int32 // products of the last search, best first
	resultPage int     // zero-based page of results shown
	item       int     // product on the item pages
	chosen     []int   // per option group of item: the selected value, or -1
	steps      int
	started    bool
	done       bool

	// scratch holds option plans for the expert.
	scratch []int
}

// New returns a WebShop environment; the first call builds the shared
// catalog.
func New() envs.Env {
	c := theCatalog()
	return &Env{cat: c, searcher: newSearcher(c)}
}

// Spec describes the environment.
func (e *Env) Spec() envs.Spec {
	return envs.Spec{
		Name:        "webshop",
		Description: "WebShop: find and buy the product an instruction describes on a simulated web store (search, results, item pages, options).",
		Instruction: fmt.Sprintf(instructionFormat, maxSteps),
		MaxSteps:    maxSteps,
		RewardMin:   0,
		RewardMax:   1,
		Splits:      []envs.Split{envs.Train, envs.Test, envs.Unseen},
	}
}

// splitStreams separate the random streams of the splits, so that the
// same seed gives unrelated episodes in each.
var splitStreams = map[envs.Split]uint64{envs.Train: 0x7472, envs.Test: 0x7465, envs.Unseen: 0x756e}

// seedStride is a prime larger than any pool, hence coprime with every
// pool size.
const seedStride = 7919

// maxGoalAttempts bounds the redraws of a goal no search finds.
const maxGoalAttempts = 100

// Reset starts the episode of (split, seed) on the search page.
func (e *Env) Reset(split envs.Split, seed int64) (string, error) {
	stream, ok := splitStreams[split]
	if !ok {
		return "", fmt.Errorf("webshop reset: unknown split %q", split)
	}
	pool := e.cat.pools[split]
	rng := rand.New(rand.NewPCG(uint64(seed), stream))
	// Consecutive seeds walk the pool in a scrambled order, so that any
	// len(pool) consecutive seeds target distinct products.
	n := uint64(len(pool))
	target := pool[(seedStride*(uint64(seed)%n)+stream)%n]
	found := false
	for range maxGoalAttempts {
		e.goal = e.cat.newGoal(rng, target)
		if e.findable(&e.goal) {
			found = true
			break
		}
		target = pool[rng.IntN(len(pool))]
	}
	if !found {
		return "", fmt.Errorf("webshop reset %s/%d: no goal whose product a search finds after %d attempts", split, seed, maxGoalAttempts)
	}
	e.page = pageSearch
	e.results = e.results[:0]
	e.resultPage = 0
	e.steps = 0
	e.started = true
	e.done = false
	return e.render(), nil
}

// findable reports whether searching the goal's expert query lists a
// product that earns the full reward, so that every episode can be solved.
func (e *Env) findable(g *goal) bool {
	e.results = e.searcher.search(g.query, e.results[:0])
	for _, doc := range e.results {
		if e.cat.satisfies(&e.cat.products[doc], g, e.planScratch(len(e.cat.products[doc].options))) {
			return true
		}
	}
	return false
}

func (e *Env) planScratch(n int) []int {
	if cap(e.scratch) < n {
		e.scratch = make([]int, n)
	}
	return e.scratch[:n]
}

// Step applies one action.
func (e *Env) Step(action string) (envs.StepResult, error) {
	if !e.started {
		return envs.StepResult{}, errors.New("webshop step: Reset was not called")
	}
	if e.done {
		return envs.StepResult{}, errors.New("webshop step: the episode is over")
	}
	e.steps++
	res := e.apply(envs.ParseAction(action))
	if !e.done && e.steps >= maxSteps {
		e.done = true
		res.Done = true
		res.Reward = 0
		res.Info.Score = 0
		res.Observation += fmt.Sprintf("\nThe step limit (%d) is reached: the episode ends without a purchase.", maxSteps)
	}
	return res, nil
}

// apply runs a parsed action and renders what follows.
func (e *Env) apply(action string) envs.StepResult {
	verb, arg, ok := splitAction(action)
	switch {
	case !ok:
		return e.invalid(action, "write search[<query>] or click[<button>]")
	case verb == "search":
		if e.page != pageSearch {
			return e.invalid(action, "search is only possible on the search page; click[Back to Search] first")
		}
		if strings.TrimSpace(arg) == "" {
			return e.invalid(action, "the search query is empty")
		}
		e.results = e.searcher.search(arg, e.results[:0])
		e.resultPage = 0
		e.page = pageResults
		return e.valid()
	case verb == "click":
		return e.click(action, arg)
	}
	return e.invalid(action, fmt.Sprintf("unknown action %q; write search[<query>] or click[<button>]", verb))
}

// splitAction splits "verb[argument]" into its parts. The verb is lower
// case; whitespace around the parts and a final period are tolerated.
func splitAction(action string) (verb, arg string, ok bool) {
	action = strings.TrimRight(strings.TrimSpace(action), ".")
	open := strings.IndexByte(action, '[')
	if open < 0 || !strings.HasSuffix(action, "]") || len(action) < open+2 {
		return "", "", false
	}
	verb = strings.ToLower(strings.TrimSpace(action[:open]))
	return verb, strings.TrimSpace(action[open+1 : len(action)-1]), true
}

func (e *Env) valid() envs.StepResult {
	return envs.StepResult{Observation: e.render(), Info: envs.Info{ValidAction: true}}
}

// invalid explains why action was refused and lists the valid actions; the
// page stays as it was.
func (e *Env) invalid(action, reason string) envs.StepResult {
	const maxQuoted = 80
	quoted := action
	if len(quoted) > maxQuoted {
		quoted = strings.ToValidUTF8(quoted[:maxQuoted], "") + "..."
	}
	obs := fmt.Sprintf("Invalid action %q: %s. Valid actions are: %s.", quoted, reason, strings.Join(e.AvailableActions(), ", "))
	return envs.StepResult{Observation: obs, Info: envs.Info{ValidAction: false}}
}

// click presses the button named arg on the current page.
func (e *Env) click(action, arg string) envs.StepResult {
	switch e.page {
	case pageSearch:
		return e.invalid(action, "there is nothing to click on the search page; search first")
	case pageResults:
		switch {
		case sameLabel(arg, labelBackToSearch):
			return e.backToSearch()
		case sameLabel(arg, labelNext) && e.hasNextPage():
			e.resultPage++
			return e.valid()
		case sameLabel(arg, labelPrev) && e.resultPage > 0:
			e.resultPage--
			return e.valid()
		}
		for _, doc := range e.pageResults() {
			if sameLabel(arg, e.cat.products[doc].asin) {
				e.openItem(int(doc))
				return e.valid()
			}
		}
	case pageItem:
		switch {
		case sameLabel(arg, labelBackToSearch):
			return e.backToSearch()
		case sameLabel(arg, labelPrev):
			e.page = pageResults
			return e.valid()
		case sameLabel(arg, labelDescription):
			e.page = pageDescription
			return e.valid()
		case sameLabel(arg, labelFeatures):
			e.page = pageFeatures
			return e.valid()
		case sameLabel(arg, labelBuyNow):
			return e.buy()
		}
		p := &e.cat.products[e.item]
		for gi, g := range p.options {
			for vi, v := range g.values {
				if sameLabel(arg, v) {
					e.chosen[gi] = vi
					return e.valid()
				}
			}
		}
	case pageDescription, pageFeatures:
		switch {
		case sameLabel(arg, labelBackToSearch):
			return e.backToSearch()
		case sameLabel(arg, labelPrev):
			e.page = pageItem
			return e.valid()
		}
	}
	return e.invalid(action, fmt.Sprintf("%q is not a button on this page", arg))
}

func (e *Env) backToSearch() envs.StepResult {
	e.page = pageSearch
	e.results = e.results[:0]
	e.resultPage = 0
	return e.valid()
}

func (e *Env) openItem(doc int) {
	e.page = pageItem
	e.item = doc
	n := len(e.cat.products[doc].options)
	if cap(e.chosen) < n {
		e.chosen = make([]int, n)
	}
	e.chosen = e.chosen[:n]
	for i := range e.chosen {
		e.chosen[i] = -1
	}
}

// buy ends the episode with WebShop's reward.
func (e *Env) buy() envs.StepResult {
	p := &e.cat.products[e.item]
	r := e.cat.score(&e.goal, p, e.chosen)
	success := r.success(&e.goal)
	e.done = true
	return envs.StepResult{
		Observation: e.renderPurchase(p, r.value),
		Reward:      r.value,
		Done:        true,
		Info: envs.Info{
			Success:     success,
			ValidAction: true,
			Score:       r.value,
			Extra: map[string]any{
				"asin":               p.asin,
				"r_type":             r.typeScore,
				"attributes_matched": r.attributesMatched,
				"attributes_goal":    len(e.goal.attributes),
				"options_matched":    r.optionsMatched,
				"options_goal":       len(e.goal.options),
				"price_ok":           r.priceOK,
			},
		},
	}
}

func (e *Env) hasNextPage() bool {
	return (e.resultPage+1)*resultsPerPage < len(e.results)
}

// pageResults is the slice of results shown on the current page.
func (e *Env) pageResults() []int32 {
	start := e.resultPage * resultsPerPage
	end := min(start+resultsPerPage, len(e.results))
	if start >= end {
		return nil
	}
	return e.results[start:end]
}

// AvailableActions lists the valid actions of the current page; on the
// search page it is the placeholder "search[<your query>]".
func (e *Env) AvailableActions() []string {
	if !e.started || e.done {
		return nil
	}
	var actions []string
	clickable := func(label string) { actions = append(actions, "click["+label+"]") }
	switch e.page {
	case pageSearch:
		return []string{"search[<your query>]"}
	case pageResults:
		clickable(labelBackToSearch)
		if e.resultPage > 0 {
			clickable(labelPrev)
		}
		if e.hasNextPage() {
			clickable(labelNext)
		}
		for _, doc := range e.pageResults() {
			clickable(e.cat.products[doc].asin)
		}
	case pageItem:
		clickable(labelBackToSearch)
		clickable(labelPrev)
		for _, g := range e.cat.products[e.item].options {
			for _, v := range g.values {
				clickable(v)
			}
		}
		clickable(labelDescription)
		clickable(labelFeatures)
		clickable(labelBuyNow)
	case pageDescription, pageFeatures:
		clickable(labelBackToSearch)
		clickable(labelPrev)
	}
	return actions
}

// sameLabel compares a clicked name with a button label ignoring case and
// whitespace, without allocating.
func sameLabel(clicked, label string) bool {
	i, j := 0, 0
	for {
		for i < len(clicked) && isSpace(clicked[i]) {
			i++
		}
		for j < len(label) && isSpace(label[j]) {
			j++
		}
		if i == len(clicked) || j == len(label) {
			return i == len(clicked) && j == len(label)
		}
		if lower(clicked[i]) != lower(label[j]) {
			return false
		}
		i++
		j++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
