package webshop

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/agentrl/agentrl/envs"
)

// catalogSeed fixes the generated catalog: every instance of the
// environment, in every process, sees the same products.
const catalogSeed = 20220701

// productsPerType is how many products each product type gets.
const productsPerType = 20

// product is one item of the catalog.
type product struct {
	asin        string
	title       string
	category    int // index into catalog.categories
	typ         int // index into catalog.types
	attributes  []string
	options     []optionGroup
	price       float64
	bullets     []string
	description string

	// text is title, bullet points and description in lower case: the text
	// a goal attribute may be found in when the attribute list lacks it.
	text string
	// hasAttribute[i] tells whether attribute vocabulary entry i counts as
	// present for the reward (fuzzy match in the attribute list or
	// substring of text); precomputed because the expert asks it often.
	hasAttribute []bool
}

// optionGroup is one option type of a product ("color") with the values a
// shopper can click.
type optionGroup struct {
	name     string
	values   []string
	valueIDs []int // indexes into catalog.optionValues
	// selfDescribing values read well alone in an instruction.
	selfDescribing bool
}

// productType is a kind of product: goals name one, and the reward's type
// term compares the bought product's type with it.
type productType struct {
	name      string // "snack bar"
	titleNoun string
	article   string
	category  int
	// nameWords are the content words of name, for the title-overlap case
	// of the type reward.
	nameWords []string
}

// catalog is the generated shop: built once, then shared read-only by every
// environment instance.
type catalog struct {
	products   []product
	types      []productType
	categories []string
	heldOut    []bool // by category: targets of the unseen split only

	attributes   vocabulary
	optionValues vocabulary
	// optionsMatch[i][j]: option values i and j fuzzy-match.
	optionsMatch [][]bool

	byASIN map[string]int
	index  searchIndex
	// pools lists, per split, the products goals are written from.
	pools map[envs.Split][]int
}

// vocabulary interns strings as dense ids.
type vocabulary struct {
	words []string
	ids   map[string]int
}

func (v *vocabulary) id(word string) int {
	if id, ok := v.ids[word]; ok {
		return id
	}
	if v.ids == nil {
		v.ids = map[string]int{}
	}
	v.ids[word] = len(v.words)
	v.words = append(v.words, word)
	return len(v.words) - 1
}

var (
	sharedCatalogOnce sync.Once
	sharedCatalog     *catalog
)

// theCatalog returns the shared catalog, building it on first use.
func theCatalog() *catalog {
	sharedCatalogOnce.Do(func() { sharedCatalog = buildCatalog(catalogSeed) })
	return sharedCatalog
}

func buildCatalog(seed uint64) *catalog {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	c := &catalog{byASIN: map[string]int{}}
	for ci, cs := range catalogSpecs {
		c.categories = append(c.categories, cs.name)
		c.heldOut = append(c.heldOut, isHeldOut(cs.name))
		for _, a := range cs.attributes {
			c.attributes.id(a)
		}
		for _, ts := range cs.types {
			c.types = append(c.types, productType{
				name:      ts.name,
				titleNoun: ts.titleNoun,
				article:   ts.article,
				category:  ci,
				nameWords: searchTerms(ts.name, nil),
			})
			for _, a := range ts.attributes {
				c.attributes.id(a)
			}
			for _, o := range ts.options {
				for _, v := range o.values {
					c.optionValues.id(v)
				}
			}
		}
	}
	c.optionsMatch = matchMatrix(c.optionValues.words)
	attributesMatch := matchMatrix(c.attributes.words)

	typeIndex := 0
	for ci, cs := range catalogSpecs {
		for _, ts := range cs.types {
			for range productsPerType {
				p := c.generateProduct(rng, ci, typeIndex, &cs, &ts)
				c.byASIN[p.asin] = len(c.products)
				c.products = append(c.products, p)
			}
			typeIndex++
		}
	}
	for i := range c.products {
		c.products[i].hasAttribute = c.presentAttributes(&c.products[i], attributesMatch)
	}
	c.index = buildSearchIndex(c)
	c.pools = c.splitPools()
	return c
}

// splitPools assigns goal targets to splits: the held-out categories to
// unseen; of the others, one product in five to test and the rest to
// train, so that every type has targets in both.
func (c *catalog) splitPools() map[envs.Split][]int {
	pools := map[envs.Split][]int{}
	for i := range c.products {
		split := envs.Train
		switch {
		case c.heldOut[c.products[i].category]:
			split = envs.Unseen
		case i%5 == 0:
			split = envs.Test
		}
		pools[split] = append(pools[split], i)
	}
	return pools
}

func isHeldOut(category string) bool {
	for _, h := range heldOutCategories {
		if h == category {
			return true
		}
	}
	return false
}

// matchMatrix tells for every pair of words whether they fuzzy-match.
func matchMatrix(words []string) [][]bool {
	m := make([][]bool, len(words))
	for i := range m {
		m[i] = make([]bool, len(words))
	}
	for i := range words {
		m[i][i] = true
		for j := i + 1; j < len(words); j++ {
			match := fuzzyMatch(words[i], words[j])
			m[i][j], m[j][i] = match, match
		}
	}
	return m
}

// presentAttributes evaluates WebShop's attribute test for every attribute
// of the vocabulary against p.
func (c *catalog) presentAttributes(p *product, attributesMatch [][]bool) []bool {
	present := make([]bool, len(c.attributes.words))
	for g, goalAttribute := range c.attributes.words {
		for _, a := range p.attributes {
			if attributesMatch[g][c.attributes.ids[a]] {
				present[g] = true
				break
			}
		}
		if !present[g] && strings.Contains(p.text, goalAttribute) {
			present[g] = true
		}
	}
	return present
}

func (c *catalog) generateProduct(rng *rand.Rand, category, typ int, cs *categorySpec, ts *typeSpec) product {
	p := product{
		asin:     c.newASIN(rng),
		category: category,
		typ:      typ,
		price:    priceBetween(rng, ts.minPrice, ts.maxPrice),
	}
	p.attributes = pickAttributes(rng, cs, ts)
	p.options = c.pickOptions(rng, ts)

	brand := pick(rng, cs.brands)
	descriptor := pickDescriptor(rng, ts.descriptors, p.attributes[:2])
	p.title = productTitle(rng, brand, descriptor, ts.titleNoun, p.attributes, p.options)
	p.bullets = productBullets(rng, cs, ts, brand, p.attributes, p.options)
	p.description = productDescription(rng, cs, ts, brand, descriptor, p.attributes)
	p.text = strings.ToLower(p.title + "\n" + strings.Join(p.bullets, "\n") + "\n" + p.description)
	return p
}

// newASIN draws an Amazon-style id ("B0" and eight letters or digits) that
// no other product has.
func (c *catalog) newASIN(rng *rand.Rand) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for {
		b := []byte("B0........")
		for i := 2; i < len(b); i++ {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if _, taken := c.byASIN[string(b)]; !taken {
			return string(b)
		}
	}
}

// priceBetween draws a shop-like price ending in .99, .49 or .95.
func priceBetween(rng *rand.Rand, lo, hi float64) float64 {
	cents := []float64{0.99, 0.49, 0.95}
	whole := math.Floor(lo + rng.Float64()*(hi-lo))
	return whole + cents[rng.IntN(len(cents))]
}

// pickAttributes draws two to four attributes from the type's and the
// category's, none fuzzy-matching another, so that each names a distinct
// property.
func pickAttributes(rng *rand.Rand, cs *categorySpec, ts *typeSpec) []string {
	pool := append(append([]string(nil), ts.attributes...), cs.attributes...)
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	// Type attributes first half the time so that products carry the
	// specific properties shoppers ask for, not only generic ones.
	if rng.IntN(2) == 0 {
		pool = append([]string{pick(rng, ts.attributes)}, pool...)
	}
	want := 2 + rng.IntN(3)
	var chosen []string
	for _, a := range pool {
		if len(chosen) == want {
			break
		}
		if !matchesAny(a, chosen) {
			chosen = append(chosen, a)
		}
	}
	return chosen
}

// pickOptions gives the product two to five values of each of its type's
// option groups. A value the reward could confuse with one already chosen
// for this product is skipped, so that every value is told apart by the
// reward and clickable without ambiguity; values of one "size" group only
// need to differ, as the reward compares sizes exactly.
func (c *catalog) pickOptions(rng *rand.Rand, ts *typeSpec) []optionGroup {
	var groups []optionGroup
	var others []string // values of the groups chosen so far
	for _, spec := range ts.options {
		pool := append([]string(nil), spec.values...)
		rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		want := 2 + rng.IntN(min(4, len(pool)-1))
		g := optionGroup{name: spec.name, selfDescribing: spec.selfDescribing}
		for _, v := range pool {
			if len(g.values) == want {
				break
			}
			sameGroupClash := slices.Contains(g.values, v) || spec.name != "size" && matchesAny(v, g.values)
			if !sameGroupClash && !matchesAny(v, others) {
				g.values = append(g.values, v)
			}
		}
		for _, v := range g.values {
			g.valueIDs = append(g.valueIDs, c.optionValues.ids[v])
		}
		others = append(others, g.values...)
		groups = append(groups, g)
	}
	return groups
}

func matchesAny(s string, others []string) bool {
	for _, o := range others {
		if s == o || fuzzyMatch(s, o) {
			return true
		}
	}
	return false
}

func pick(rng *rand.Rand, from []string) string { return from[rng.IntN(len(from))] }

// pickDescriptor draws a title descriptor that does not repeat one of the
// attributes the title shows ("Breathable ..., Breathable").
func pickDescriptor(rng *rand.Rand, descriptors, titleAttributes []string) string {
	var fitting []string
	for _, d := range descriptors {
		if !matchesAny(strings.ToLower(d), titleAttributes) {
			fitting = append(fitting, d)
		}
	}
	if len(fitting) == 0 {
		return pick(rng, descriptors)
	}
	return pick(rng, fitting)
}

func productTitle(rng *rand.Rand, brand, descriptor, noun string, attributes []string, options []optionGroup) string {
	a0 := titleCase(attributes[0])
	a1 := titleCase(attributes[1])
	variant := titleCase(options[0].values[0])
	switch rng.IntN(4) {
	case 0:
		return fmt.Sprintf("%s %s %s, %s, %s", brand, descriptor, noun, a0, a1)
	case 1:
		return fmt.Sprintf("%s %s %s %s - %s", brand, a0, descriptor, noun, variant)
	case 2:
		return fmt.Sprintf("%s %s by %s, %s and %s", descriptor, noun, brand, a0, a1)
	default:
		return fmt.Sprintf("%s %s - %s, %s, %s", brand, noun, descriptor, a0, variant)
	}
}

func productBullets(rng *rand.Rand, cs *categorySpec, ts *typeSpec, brand string, attributes []string, options []optionGroup) []string {
	benefits := append([]string(nil), cs.benefits...)
	rng.Shuffle(len(benefits), func(i, j int) { benefits[i], benefits[j] = benefits[j], benefits[i] })
	var bullets []string
	for i, a := range attributes {
		bullets = append(bullets, strings.ToUpper(a)+" - "+benefits[i%len(benefits)])
	}
	var choices []string
	for _, g := range options {
		choices = append(choices, fmt.Sprintf("%d %s options", len(g.values), g.name))
	}
	bullets = append(bullets, fmt.Sprintf("WHAT YOU GET - %s %s, available in %s.", brand, ts.titleNoun, strings.Join(choices, " and ")))
	return bullets
}

func productDescription(rng *rand.Rand, cs *categorySpec, ts *typeSpec, brand, descriptor string, attributes []string) string {
	use := pick(rng, cs.uses)
	opening := []string{
		fmt.Sprintf("The %s %s from %s is made for %s.", strings.ToLower(descriptor), ts.name, brand, use),
		fmt.Sprintf("Meet the %s %s by %s, a favorite for %s.", strings.ToLower(descriptor), ts.name, brand, use),
		fmt.Sprintf("%s brings its %s %s to %s.", brand, strings.ToLower(descriptor), ts.name, use),
	}[rng.IntN(3)]
	highlights := fmt.Sprintf("Highlights include %s.", joinAnd(attributes))
	return opening + " " + highlights + " " + pick(rng, cs.benefits) + " " + pick(rng, cs.closings)
}

// joinAnd joins items as English does: "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// acronyms stay upper case in titles.
var acronyms = map[string]bool{"bpa": true, "usb": true, "gmo": true, "spf": true, "led": true, "fda": true, "usa": true, "he": true, "xs": true, "xl": true, "xxl": true, "4k": true, "a5": true}

func titleCase(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if w == "x" { // "3 x 3 inch"
			continue
		}
		if acronyms[w] {
			words[i] = strings.ToUpper(w)
		} else {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}
