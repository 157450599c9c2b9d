package webshop

import (
	"math"
	"slices"
	"strings"
)

// The search engine: BM25 over each product's title, type, category,
// attributes and option values, which is what the real WebShop indexes with
// Pyserini (minus the long description, whose boilerplate only adds noise).

const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// maxResults is how many results a search returns, as in WebShop.
	maxResults = 50
	// resultsPerPage is how many results a page shows.
	resultsPerPage = 10
)

// searchIndex is an inverted index whose postings carry the product's
// whole BM25 weight for the term, so a query only sums weights.
type searchIndex struct {
	terms map[string]*indexTerm
}

type indexTerm struct {
	postings []posting
}

type posting struct {
	doc    int32
	weight float32
}

func buildSearchIndex(c *catalog) searchIndex {
	termFreqs := make([]map[string]int, len(c.products))
	docLens := make([]int, len(c.products))
	totalLen := 0
	var tokens []string
	for i := range c.products {
		p := &c.products[i]
		tokens = searchTerms(p.title, tokens[:0])
		tokens = searchTerms(c.types[p.typ].name, tokens)
		tokens = searchTerms(c.categories[p.category], tokens)
		for _, a := range p.attributes {
			tokens = searchTerms(a, tokens)
		}
		for _, g := range p.options {
			for _, v := range g.values {
				tokens = searchTerms(v, tokens)
			}
		}
		tf := map[string]int{}
		for _, t := range tokens {
			tf[t]++
		}
		termFreqs[i] = tf
		docLens[i] = len(tokens)
		totalLen += len(tokens)
	}
	avgLen := float64(totalLen) / float64(len(c.products))
	docFreq := map[string]int{}
	for _, tf := range termFreqs {
		for t := range tf {
			docFreq[t]++
		}
	}
	n := float64(len(c.products))
	index := searchIndex{terms: make(map[string]*indexTerm, len(docFreq))}
	// Products in catalog order give postings sorted by document.
	for doc, tf := range termFreqs {
		for t, f := range tf {
			df := float64(docFreq[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			norm := bm25K1 * (1 - bm25B + bm25B*float64(docLens[doc])/avgLen)
			weight := idf * float64(f) * (bm25K1 + 1) / (float64(f) + norm)
			term := index.terms[t]
			if term == nil {
				term = &indexTerm{}
				index.terms[t] = term
			}
			term.postings = append(term.postings, posting{doc: int32(doc), weight: float32(weight)})
		}
	}
	return index
}

// stopWords carry no meaning for product search.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "in": true, "is": true, "it": true, "of": true, "on": true, "or": true,
	"that": true, "the": true, "this": true, "to": true, "with": true, "i": true, "me": true, "my": true,
}

// searchTerms appends the index terms of text to dst: lower-case runs of
// ASCII letters and digits, stop words dropped, a plural "s" stripped.
func searchTerms(text string, dst []string) []string {
	start := -1
	for i := 0; i <= len(text); i++ {
		alnum := i < len(text) && isAlnum(text[i])
		if alnum && start < 0 {
			start = i
		}
		if !alnum && start >= 0 {
			if t := normalizeTerm(text[start:i]); t != "" {
				dst = append(dst, t)
			}
			start = -1
		}
	}
	return dst
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func normalizeTerm(word string) string {
	t := strings.ToLower(word)
	if stopWords[t] {
		return ""
	}
	return stem(t)
}

// stem strips a plural "s" ("bars" -> "bar") but leaves "glass", "xs" and
// short words alone; the same rule applies to index and query, so it only
// needs to be consistent, not linguistically right.
func stem(t string) string {
	if len(t) > 3 && t[len(t)-1] == 's' && t[len(t)-2] != 's' && t[len(t)-2] != 'u' && t[len(t)-2] != 'i' {
		return t[:len(t)-1]
	}
	return t
}

// searcher runs queries against a shared index with scratch space of its
// own, so that searching allocates almost nothing.
type searcher struct {
	index   *searchIndex
	scores  []float32
	touched []int32
	ranked  []uint64
	terms   []string
	seen    []*indexTerm

	// The last query and its results: Reset checks a goal by searching its
	// query, which the expert's first action then repeats.
	lastQuery   string
	lastResults []int32
}

func newSearcher(c *catalog) *searcher {
	return &searcher{index: &c.index, scores: make([]float32, len(c.products))}
}

// search returns up to maxResults products ranked by BM25 score (ties by
// catalog order), appended to dst. Products sharing no term with the query
// are not returned.
func (s *searcher) search(query string, dst []int32) []int32 {
	if query == s.lastQuery && s.lastResults != nil {
		return append(dst, s.lastResults...)
	}
	s.terms = searchTerms(query, s.terms[:0])
	s.seen = s.seen[:0]
	for _, t := range s.terms {
		term := s.index.terms[t]
		if term == nil || containsTerm(s.seen, term) {
			continue
		}
		s.seen = append(s.seen, term)
		for _, p := range term.postings {
			if s.scores[p.doc] == 0 {
				s.touched = append(s.touched, p.doc)
			}
			s.scores[p.doc] += p.weight
		}
	}

	// Rank by one integer key: ascending keys are descending scores, ties
	// broken by ascending document.
	s.ranked = s.ranked[:0]
	for _, doc := range s.touched {
		key := uint64(math.Float32bits(s.scores[doc]))<<32 | uint64(^uint32(doc))
		s.ranked = append(s.ranked, ^key)
		s.scores[doc] = 0
	}
	s.touched = s.touched[:0]
	top := s.ranked
	if len(top) > maxResults {
		selectSmallest(top, maxResults)
		top = top[:maxResults]
	}
	slices.Sort(top)
	s.lastResults = s.lastResults[:0]
	for _, key := range top {
		s.lastResults = append(s.lastResults, int32(^uint32(^key)))
	}
	s.lastQuery = query
	return append(dst, s.lastResults...)
}

func containsTerm(terms []*indexTerm, t *indexTerm) bool {
	for _, x := range terms {
		if x == t {
			return true
		}
	}
	return false
}

// selectSmallest reorders keys so that its k smallest come first, in any
// order (quickselect; keys are distinct).
func selectSmallest(keys []uint64, k int) {
	lo, hi := 0, len(keys)-1
	for lo < hi {
		// Median of three as pivot keeps sorted inputs linear.
		mid := lo + (hi-lo)/2
		pivot := max(min(keys[lo], keys[mid]), min(max(keys[lo], keys[mid]), keys[hi]))
		i, j := lo, hi
		for i <= j {
			for keys[i] < pivot {
				i++
			}
			for keys[j] > pivot {
				j--
			}
			if i <= j {
				keys[i], keys[j] = keys[j], keys[i]
				i++
				j--
			}
		}
		// Now keys[lo..j] <= pivot <= keys[i..hi].
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}
