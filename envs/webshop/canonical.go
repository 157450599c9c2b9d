package webshop

import (
	"slices"
	"strings"
	"sync"

	"github.com/agentrl/agentrl/envs"
)

var _ envs.Canonicalizer = (*Env)(nil)

// noTermsQuery is the canonical form of a search that has no term the index
// knows: such searches all list no product. It is itself such a search.
const noTermsQuery = "search[-]"

// Canonical returns the action as the environment acts on it.
//
//   - search[q] becomes search[t1 t2 ...] with the query's index terms: lower
//     case, stop words dropped, plural "s" stripped, repeated terms and terms
//     no product has dropped (they add nothing to any score), so
//     search[Red  Shoes] and search[the red shoe] are alike. The order of the
//     terms is kept when there are three or more, since BM25 sums the terms'
//     float32 weights in query order and a different order may round
//     differently and swap two products of nearly equal score; one or two
//     terms are sorted, as their sum does not depend on the order. A query
//     with no such term becomes search[-].
//   - click[b] is matched as every page matches buttons: ignoring ASCII case
//     and all whitespace. It becomes click[label] with the label as pages
//     show it when some button (a fixed one, a product's ASIN or an option
//     value) matches, else click[b] in lower case without whitespace.
//   - the verb is case-insensitive and a final "." is ignored, as the parser
//     does.
//
// Text the parser rejects on every page (not verb[argument], an unknown
// verb, an empty query, an empty button) canonicalises to itself, parsed
// and trimmed.
func (e *Env) Canonical(action string) string {
	text := strings.TrimSpace(envs.ParseAction(action)) // ParseAction may leave spaces inside quotes
	verb, arg, ok := splitAction(text)
	switch {
	case !ok:
		return text
	case verb == "search":
		if strings.TrimSpace(arg) == "" {
			return text
		}
		return e.canonicalSearch(arg)
	case verb == "click":
		key := labelKey(arg)
		if key == "" {
			return text // no button has an empty label
		}
		if label, ok := e.cat.buttonLabels()[key]; ok {
			return "click[" + label + "]"
		}
		return "click[" + key + "]"
	}
	return text
}

// canonicalSearch lists the terms of query that change the search: those
// the searcher scores, in the order it adds their weights (see Canonical).
func (e *Env) canonicalSearch(query string) string {
	var terms []string
	for _, t := range searchTerms(query, nil) {
		if e.cat.index.terms[t] != nil && !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		return noTermsQuery
	}
	if len(terms) <= 2 {
		slices.Sort(terms)
	}
	return "search[" + strings.Join(terms, " ") + "]"
}

// labelKey is what sameLabel compares: the text without whitespace, ASCII
// letters in lower case.
func labelKey(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isSpace(c) {
			b = append(b, lower(c))
		}
	}
	return string(b)
}

// buttonLabelsByCatalog caches, per catalog, labelKey of every button label
// any page can show (fixed buttons, ASINs, option values) mapped to the
// label; the first label wins where two share a key.
var buttonLabelsByCatalog sync.Map // *catalog -> map[string]string

func (c *catalog) buttonLabels() map[string]string {
	if m, ok := buttonLabelsByCatalog.Load(c); ok {
		return m.(map[string]string)
	}
	m := map[string]string{}
	add := func(label string) {
		if k := labelKey(label); k != "" {
			if _, dup := m[k]; !dup {
				m[k] = label
			}
		}
	}
	for _, l := range []string{labelBackToSearch, labelNext, labelPrev, labelDescription, labelFeatures, labelBuyNow} {
		add(l)
	}
	for i := range c.products {
		add(c.products[i].asin)
	}
	for i := range c.products {
		for _, g := range c.products[i].options {
			for _, v := range g.values {
				add(v)
			}
		}
	}
	actual, _ := buttonLabelsByCatalog.LoadOrStore(c, m)
	return actual.(map[string]string)
}
