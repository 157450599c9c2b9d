package webshop

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"

	"github.com/agentrl/agentrl/envs"
)

func TestCatalogShape(t *testing.T) {
	c := theCatalog()
	if len(c.products) < 1000 {
		t.Errorf("%d products, want at least 1000", len(c.products))
	}
	if len(c.categories) < 10 {
		t.Errorf("%d categories, want at least 10", len(c.categories))
	}
	asinPattern := regexp.MustCompile(`^B0[0-9A-Z]{8}$`)
	seen := map[string]bool{}
	for i := range c.products {
		p := &c.products[i]
		if !asinPattern.MatchString(p.asin) || seen[p.asin] {
			t.Fatalf("product %d: bad or duplicate ASIN %q", i, p.asin)
		}
		seen[p.asin] = true
		if len(p.attributes) < 2 || p.title == "" || p.description == "" || len(p.bullets) < 3 || p.price <= 0 {
			t.Fatalf("product %s is incomplete: %+v", p.asin, p)
		}
		if len(p.options) == 0 {
			t.Fatalf("product %s has no options", p.asin)
		}
		var values []string
		for _, g := range p.options {
			if len(g.values) < 2 {
				t.Errorf("product %s: option %q has %d values, want at least 2", p.asin, g.name, len(g.values))
			}
			values = append(values, g.values...)
		}
		// Every value must be clickable without ambiguity.
		for j, v := range values {
			if slices.Contains(values[j+1:], v) {
				t.Errorf("product %s: option value %q appears twice", p.asin, v)
			}
		}
		for gi, g := range p.options {
			for vi := range g.values {
				for gj, h := range p.options {
					for vj := range h.values {
						if (gi != gj || vi != vj) && c.optionValueMatches(&h, vj, g.valueIDs[vi]) {
							t.Errorf("product %s: option values %q and %q are confused by the reward", p.asin, g.values[vi], h.values[vj])
						}
					}
				}
			}
		}
		for _, a := range p.attributes {
			if !p.hasAttribute[c.attributes.ids[a]] {
				t.Errorf("product %s lacks its own attribute %q", p.asin, a)
			}
		}
	}
}

func TestCatalogIsDeterministic(t *testing.T) {
	a, b := buildCatalog(catalogSeed), theCatalog()
	for i := range a.products {
		if a.products[i].asin != b.products[i].asin || a.products[i].title != b.products[i].title || a.products[i].description != b.products[i].description {
			t.Fatalf("product %d differs between two builds", i)
		}
	}
}

func TestSplitPoolsAreDisjoint(t *testing.T) {
	c := theCatalog()
	owner := map[int]envs.Split{}
	for _, split := range envs.Splits {
		pool := c.pools[split]
		if len(pool) < 100 {
			t.Errorf("split %s has %d target products", split, len(pool))
		}
		for _, i := range pool {
			if prev, dup := owner[i]; dup {
				t.Fatalf("product %d is a target of both %s and %s", i, prev, split)
			}
			owner[i] = split
			if heldOut := c.heldOut[c.products[i].category]; heldOut != (split == envs.Unseen) {
				t.Errorf("split %s has a target in category %q (held out: %v)", split, c.categories[c.products[i].category], heldOut)
			}
		}
	}
	// Train and test cover the same product types.
	types := func(split envs.Split) map[int]bool {
		m := map[int]bool{}
		for _, i := range c.pools[split] {
			m[c.products[i].typ] = true
		}
		return m
	}
	train, test := types(envs.Train), types(envs.Test)
	for typ := range test {
		if !train[typ] {
			t.Errorf("type %q has test targets but no train targets", c.types[typ].name)
		}
	}
}

func TestSearchRanksTargetFirstPage(t *testing.T) {
	c := theCatalog()
	e := New().(*Env)
	onFirstPage := 0
	const episodes = 300
	for seed := range episodes {
		if _, err := e.Reset(envs.Test, int64(seed)); err != nil {
			t.Fatal(err)
		}
		results := e.searcher.search(e.goal.query, nil)
		if i := slices.Index(results, int32(e.goal.target)); i >= 0 && i < resultsPerPage {
			onFirstPage++
		}
		if !slices.ContainsFunc(results, func(doc int32) bool { return c.products[doc].typ == e.goal.typ }) {
			t.Errorf("seed %d: no product of the goal's type among the results of %q", seed, e.goal.query)
		}
	}
	rate := float64(onFirstPage) / episodes
	t.Logf("target on the first page: %.1f%%", 100*rate)
	if rate < 0.8 {
		t.Errorf("the target is on the first page for %.0f%% of expert queries, want at least 80%%", 100*rate)
	}
}

func TestSearchOrdersByScore(t *testing.T) {
	c := theCatalog()
	s := newSearcher(c)
	results := s.search("gluten free snack bar chocolate chip", nil)
	if len(results) != maxResults {
		t.Fatalf("got %d results, want %d", len(results), maxResults)
	}
	for _, doc := range results[:5] {
		if c.types[c.products[doc].typ].name != "snack bar" {
			t.Errorf("top result %q is not a snack bar", c.products[doc].title)
		}
	}
	// Scores are not kept, so recompute them to check the order.
	score := func(doc int32) float32 {
		var sum float32
		for _, term := range []string{"gluten", "free", "snack", "bar", "chocolate", "chip"} {
			for _, p := range c.index.terms[term].postings {
				if p.doc == doc {
					sum += p.weight
				}
			}
		}
		return sum
	}
	for i := 1; i < len(results); i++ {
		if score(results[i-1]) < score(results[i]) {
			t.Fatalf("results %d and %d are out of order", i-1, i)
		}
	}
	if got := s.search("zzzz qqqq", nil); len(got) != 0 {
		t.Errorf("a query of unknown words returned %d results", len(got))
	}
	if got := s.search("gluten free snack bar chocolate chip", nil); !slices.Equal(got, results) {
		t.Error("the same query gave different results the second time")
	}
}

func TestSelectSmallest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := 1 + rng.IntN(300)
		keys := make([]uint64, n)
		for i := range keys {
			keys[i] = uint64(i)*1_000_003 + uint64(rng.IntN(1000))
		}
		if trial%3 == 0 {
			slices.Sort(keys) // sorted input
		} else {
			rng.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		}
		want := slices.Sorted(slices.Values(keys))
		k := 1 + rng.IntN(n)
		selectSmallest(keys, k)
		got := slices.Sorted(slices.Values(keys[:k]))
		if !slices.Equal(got, want[:k]) {
			t.Fatalf("n=%d k=%d: smallest %v, want %v", n, k, got, want[:k])
		}
	}
}
