package webshop

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// goal is a shopping task: what the instruction asks for, written from a
// target product, and what the reward checks.
type goal struct {
	target      int // the product the goal was written from
	typ         int
	attributes  []int // attribute vocabulary ids
	options     []goalOption
	priceLimit  float64
	instruction string
	// query is what the expert searches for.
	query string
}

type goalOption struct {
	name           string // option type, e.g. "flavor"
	value          string
	valueID        int // option vocabulary id
	selfDescribing bool
}

// newGoal writes a goal from product target: one to three of its
// attributes, a value for some of its option groups and a price limit above
// its price, phrased in one of several ways.
func (c *catalog) newGoal(rng *rand.Rand, target int) goal {
	p := &c.products[target]
	g := goal{target: target, typ: p.typ}

	attributes := append([]string(nil), p.attributes...)
	rng.Shuffle(len(attributes), func(i, j int) { attributes[i], attributes[j] = attributes[j], attributes[i] })
	attributes = attributes[:1+rng.IntN(min(3, len(attributes)))]
	for _, a := range attributes {
		g.attributes = append(g.attributes, c.attributes.ids[a])
	}

	// Each option group is asked for three times in four, at least one.
	must := rng.IntN(len(p.options))
	for gi, group := range p.options {
		if gi != must && rng.IntN(4) == 0 {
			continue
		}
		vi := rng.IntN(len(group.values))
		g.options = append(g.options, goalOption{name: group.name, value: group.values[vi], valueID: group.valueIDs[vi], selfDescribing: group.selfDescribing})
	}

	g.priceLimit = priceLimit(rng, p.price)
	g.instruction = c.phrase(rng, &g, attributes)
	g.query = c.expertQuery(&g, attributes)
	return g
}

// priceLimit follows WebShop: of the first four multiples of ten above the
// price, two are drawn and the larger is the limit.
func priceLimit(rng *rand.Rand, price float64) float64 {
	first := (int(price)/10 + 1) * 10
	a, b := rng.IntN(4), rng.IntN(3)
	if b >= a {
		b++
	}
	return float64(first + 10*max(a, b))
}

// inOptions read well as "in <value> <option>": "in black color".
var inOptions = map[string]bool{"color": true, "flavor": true, "scent": true, "shade": true, "pattern": true, "style": true}

// phrase writes the instruction text.
func (c *catalog) phrase(rng *rand.Rand, g *goal, attributes []string) string {
	t := &c.types[g.typ]
	// Adjectives go before the noun, "with ..." and "for ..." after it:
	// "a dishwasher safe frying pan", "a yoga mat with carrying strap".
	var before, after []string
	for _, a := range attributes {
		if strings.HasPrefix(a, "with ") || strings.HasPrefix(a, "for ") {
			after = append(after, a)
		} else {
			before = append(before, a)
		}
	}
	noun := t.name
	if len(after) > 0 {
		noun += " " + joinAnd(after)
	}
	withAttributes := withArticle(t, strings.TrimSpace(joinAnd(before)+" "+noun))
	thatIs := withAttributes
	if len(before) > 0 {
		be := "is"
		if strings.HasSuffix(t.name, "s") {
			be = "are"
		}
		thatIs = withArticle(t, noun) + " that " + be + " " + joinAnd(before)
	}

	var optionText string
	if rng.IntN(3) == 0 {
		// WebShop's own synthetic phrasing.
		parts := make([]string, len(g.options))
		for i, o := range g.options {
			parts[i] = o.name + ": " + o.value
		}
		optionText = " with " + strings.Join(parts, ", and ")
		if len(after) > 0 {
			optionText = "," + optionText // "a mat with strap, with color: red"
		}
	} else {
		parts := make([]string, len(g.options))
		for i, o := range g.options {
			parts[i] = naturalOption(rng, o)
		}
		optionText = ", " + joinAnd(parts)
	}

	limit := fmt.Sprintf("%.2f", g.priceLimit)
	whole := fmt.Sprintf("%d", int(g.priceLimit))
	switch rng.IntN(8) {
	case 0:
		return "i need " + withAttributes + optionText + ", and price lower than " + limit + " dollars"
	case 1:
		return "i'm looking for " + withAttributes + optionText + ", and price lower than " + limit + " dollars"
	case 2:
		return "i want " + thatIs + optionText + ", under " + whole + " dollars"
	case 3:
		return "find me " + withAttributes + optionText + ", priced below " + limit + " dollars"
	case 4:
		return "i would like to buy " + withAttributes + optionText + " for less than " + whole + " dollars"
	case 5:
		return "can you get me " + thatIs + optionText + "? it should cost no more than " + whole + " dollars"
	case 6:
		return "please find " + withAttributes + optionText + ", with a budget of " + whole + " dollars"
	default:
		return "shopping for " + thatIs + optionText + "; my price limit is " + limit + " dollars"
	}
}

// naturalOption phrases one goal option inside a sentence.
func naturalOption(rng *rand.Rand, o goalOption) string {
	switch {
	case o.selfDescribing:
		return o.value
	case inOptions[o.name] && rng.IntN(2) == 0:
		return "in " + o.value + " " + o.name
	case rng.IntN(2) == 0:
		return "in " + o.name + " " + o.value
	default:
		return o.name + " " + o.value
	}
}

// withArticle puts t's article before phrase, which starts with t's name or
// with words describing it; an indefinite article agrees with the first
// word ("an organic", "a usb c").
func withArticle(t *productType, phrase string) string {
	article := t.article
	if (article == "a" || article == "an") && !strings.HasPrefix(phrase, t.name) {
		article = indefiniteArticle(strings.Fields(phrase)[0])
	}
	return article + " " + phrase
}

// Initialisms whose spoken first letter decides the article.
var (
	anInitialisms = map[string]bool{"hdmi": true, "he": true, "fda": true, "spf": true, "led": true}
	aInitialisms  = map[string]bool{"usb": true, "uv": true}
)

func indefiniteArticle(word string) string {
	switch {
	case anInitialisms[word]:
		return "an"
	case aInitialisms[word]:
		return "a"
	case strings.ContainsRune("aeiou", rune(word[0])):
		return "an"
	}
	return "a"
}

// expertQuery is the search a careful shopper types: the goal's attributes,
// its product type and the option values it asks for.
func (c *catalog) expertQuery(g *goal, attributes []string) string {
	words := append([]string(nil), attributes...)
	words = append(words, c.types[g.typ].name)
	for _, o := range g.options {
		words = append(words, o.value)
	}
	return strings.Join(words, " ")
}
