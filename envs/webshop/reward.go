package webshop

// The reward, WebShop's get_reward:
//
//	r = r_type * (matched attributes + matched options + 1[price <= limit])
//	    / (goal attributes + goal options + 1)
//
// A goal attribute matches when it fuzzy-matches one of the product's
// attributes (token-set ratio > 85) or occurs in its title, bullet points or
// description. A goal option matches when one of the option values the
// shopper selected fuzzy-matches it; values of a "size" option must be
// equal, as in WebShop. Only selected options count.
//
// r_type compares product types. WebShop derives it from the search query
// the product was crawled under, its category breadcrumb and the nouns
// shared by the two titles; here every product has an explicit type, so:
// 1 for the goal's type, 0.5 for another type of the same category, 0.1 for
// another category when the bought product's title shares a word with the
// goal's type name ("coffee mug" for "ground coffee"), else 0.

// reward is a scored purchase.
type reward struct {
	typeScore         float64
	attributesMatched int
	optionsMatched    int
	priceOK           bool
	value             float64
}

// success is WebShop's success: a reward of exactly 1.
func (r reward) success(g *goal) bool {
	return r.typeScore == 1 && r.priceOK &&
		r.attributesMatched == len(g.attributes) && r.optionsMatched == len(g.options)
}

// score rates buying p with the option values selected in chosen (per
// option group of p, an index into its values or -1) against g.
func (c *catalog) score(g *goal, p *product, chosen []int) reward {
	r := reward{typeScore: c.typeScore(g.typ, p), priceOK: p.price <= g.priceLimit}
	for _, a := range g.attributes {
		if p.hasAttribute[a] {
			r.attributesMatched++
		}
	}
	for _, o := range g.options {
		if c.optionSelected(p, chosen, o.valueID) {
			r.optionsMatched++
		}
	}
	matched := r.attributesMatched + r.optionsMatched
	if r.priceOK {
		matched++
	}
	r.value = r.typeScore * float64(matched) / float64(len(g.attributes)+len(g.options)+1)
	return r
}

// optionSelected reports whether a value selected on p matches the goal
// option value goalValue.
func (c *catalog) optionSelected(p *product, chosen []int, goalValue int) bool {
	for gi, vi := range chosen {
		if vi >= 0 && c.optionValueMatches(&p.options[gi], vi, goalValue) {
			return true
		}
	}
	return false
}

// optionValueMatches applies WebShop's option test to value vi of group g.
func (c *catalog) optionValueMatches(g *optionGroup, vi, goalValue int) bool {
	if g.name == "size" {
		return g.valueIDs[vi] == goalValue
	}
	return c.optionsMatch[g.valueIDs[vi]][goalValue]
}

func (c *catalog) typeScore(goalType int, p *product) float64 {
	switch {
	case p.typ == goalType:
		return 1
	case p.category == c.types[goalType].category:
		return 0.5
	}
	titleTerms := searchTerms(p.title, nil)
	for _, w := range c.types[goalType].nameWords {
		for _, t := range titleTerms {
			if t == w {
				return 0.1
			}
		}
	}
	return 0
}

// optionPlan fills chosen (one entry per option group of p) with the values
// that satisfy g's options, or -1, and reports whether every goal option
// found a value in a group of its own.
func (c *catalog) optionPlan(p *product, g *goal, chosen []int) bool {
	for i := range chosen {
		chosen[i] = -1
	}
	for _, o := range g.options {
		found := false
		for gi := range p.options {
			if chosen[gi] >= 0 {
				continue
			}
			for vi := range p.options[gi].values {
				if c.optionValueMatches(&p.options[gi], vi, o.valueID) {
					chosen[gi] = vi
					found = true
					break
				}
			}
			if found {
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// satisfies reports whether buying p with the right options earns reward 1.
// scratch must hold at least len(p.options) entries; it is left holding the
// option plan.
func (c *catalog) satisfies(p *product, g *goal, scratch []int) bool {
	if p.typ != g.typ || p.price > g.priceLimit {
		return false
	}
	for _, a := range g.attributes {
		if !p.hasAttribute[a] {
			return false
		}
	}
	chosen := scratch[:len(p.options)]
	return c.optionPlan(p, g, chosen) && c.score(g, p, chosen).success(g)
}
