package twentyq

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// The oracle turns a question into either a guess of an object or a query
// over propositions. Questions are normalised to tokens (lower case, no
// punctuation, digits as words, plurals stemmed, filler words dropped), and
// the longest known phrase is matched at each position, so "Is it made of
// metal?", "made of metal" and "Is it metallic" all ask the same thing.
// Several phrases in one question combine with "and" (the default) or "or";
// a "not" or "no" before a phrase negates it.

// maxQuestionBytes bounds the text the oracle reads; questions are short,
// and the bound keeps a pasted essay from costing more than a question.
const maxQuestionBytes = 2000

// maxTerms bounds the propositions one question may combine.
const maxTerms = 3

// comparisonSentinel marks a phrase that starts a size comparison with a
// reference the oracle does not know.
const comparisonSentinel = -1

var stopwords = setOf("a", "an", "the", "it", "its", "is", "are", "am", "was", "were", "be", "been", "being",
	"do", "does", "did", "can", "could", "would", "will", "should", "shall", "may", "might", "must",
	"you", "your", "yours", "u", "i", "me", "my", "we", "our", "us", "they", "them", "their", "he", "she", "him", "her",
	"this", "that", "these", "those", "of", "kind", "type", "sort", "some", "something", "someone",
	"please", "usually", "typically", "normally", "generally", "often", "commonly", "ever", "really", "mostly",
	"just", "also", "actually", "maybe", "perhaps", "possibly", "probably", "any", "ok", "okay", "so", "then",
	"well", "now", "hmm", "um", "there", "one", "question")

var articles = setOf("a", "an", "the")

var negators = setOf("not", "no", "never", "without")

var whWords = setOf("what", "which", "who", "whom", "whose", "where", "when", "why", "how")

// guessPrefixes introduce a guess; those with "guess" or "answer" are
// explicit, so that naming something the game does not know is a wrong
// guess rather than an unanswerable question.
var guessPrefixes = [][]string{
	{"my", "final", "guess", "is"}, {"my", "guess", "is"}, {"final", "guess"}, {"my", "guess"}, {"i", "guess"}, {"guess"},
	{"the", "answer", "is"}, {"answer"},
	{"is", "the", "secret", "object"}, {"is", "the", "object"}, {"is", "the", "answer"}, {"is", "the", "thing"}, {"is", "your", "object"},
	{"are", "you", "thinking", "of"}, {"could", "it", "be"}, {"might", "it", "be"}, {"would", "it", "be"}, {"can", "it", "be"},
	{"is", "it"}, {"it", "is"}, {"its"}, {"is", "this"}, {"is", "that"}, {"are", "they"}, {"are", "these"}, {"they", "are"},
}

var guessFillers = setOf("a", "an", "the", "it", "its", "is", "maybe", "perhaps", "possibly", "just", "actually", "really", "please", "then", "right", "now")

var numberWords = map[string]string{
	"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six",
	"7": "seven", "8": "eight", "9": "nine", "10": "ten", "12": "twelve", "18": "eighteen", "100": "hundred",
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// words splits text into lower-case words of letters and digits, with
// digits spelled out. Apostrophes join ("don't" is "dont"); every other
// character separates. The words share the lower-cased text's memory.
func words(text string) []string {
	lower := strings.ToLower(text)
	if strings.ContainsAny(lower, "'’") {
		lower = apostrophes.Replace(lower)
	}
	out := make([]string, 0, 16)
	start := -1
	for i, r := range lower {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = appendWord(out, lower[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = appendWord(out, lower[start:])
	}
	return out
}

var apostrophes = strings.NewReplacer("'", "", "’", "")

func appendWord(out []string, w string) []string {
	if spelled, ok := numberWords[w]; ok {
		w = spelled
	}
	return append(out, w)
}

// stem removes English plural endings, the same way for questions and
// phrases, so "wheels" matches "wheel" and "flies" matches "fly". Irregular
// plurals ("mice", "knives") are listed as synonyms instead.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") ||
		strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "zes")):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// normalize returns the tokens the phrase matcher reads: stemmed words
// without filler words.
func normalize(text string) []string { return normalizeWords(words(text)) }

func normalizeWords(ws []string) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		if !stopwords[w] {
			out = append(out, stem(w))
		}
	}
	return out
}

// nameKey is how object names are compared: stemmed, without articles.
func nameKey(ws []string) string {
	var b strings.Builder
	for _, w := range ws {
		if articles[w] {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(stem(w))
	}
	return b.String()
}

// phrase is a normalised wording of a proposition.
type phrase struct {
	tokens  []string
	prop    int // index into the knowledge base's propositions, or comparisonSentinel
	negated bool
}

// matcher finds propositions and object names in questions.
type matcher struct {
	byFirst   map[string][]phrase // longest first
	names     map[string]int      // nameKey → object index
	ambiguous map[string]bool     // names that are also phrases ("orange")
	mentions  map[string]bool     // names as normalised tokens, joined
	maxName   int                 // longest normalised name, in tokens
}

func newMatcher(k *knowledgeBase) (*matcher, error) {
	m := &matcher{byFirst: map[string][]phrase{}, names: map[string]int{}, ambiguous: map[string]bool{}, mentions: map[string]bool{}}
	owner := map[string]phrase{}
	add := func(text string, prop int, negated bool) error {
		tokens := normalize(text)
		if len(tokens) == 0 {
			return fmt.Errorf("phrase %q is only filler words", text)
		}
		key := strings.Join(tokens, " ")
		if prev, dup := owner[key]; dup {
			if prev.prop == prop && prev.negated == negated {
				return nil
			}
			return fmt.Errorf("phrase %q asks about two propositions (%s, %s)", text, propName(k, prev.prop), propName(k, prop))
		}
		p := phrase{tokens: tokens, prop: prop, negated: negated}
		owner[key] = p
		m.byFirst[tokens[0]] = append(m.byFirst[tokens[0]], p)
		return nil
	}
	for i, p := range k.props {
		for _, text := range append([]string{p.question}, p.phrases...) {
			if err := add(text, i, false); err != nil {
				return nil, err
			}
		}
		for _, text := range p.negated {
			if err := add(text, i, true); err != nil {
				return nil, err
			}
		}
	}
	for _, text := range comparisonWords {
		if err := add(text, comparisonSentinel, false); err != nil {
			return nil, err
		}
	}
	for _, ps := range m.byFirst {
		sort.SliceStable(ps, func(a, b int) bool { return len(ps[a].tokens) > len(ps[b].tokens) })
	}
	for i, o := range k.objects {
		for _, name := range o.names {
			ws := words(name)
			key := nameKey(ws)
			if key == "" {
				return nil, fmt.Errorf("object %s: empty name %q", o.name, name)
			}
			if prev, dup := m.names[key]; dup && prev != i {
				return nil, fmt.Errorf("name %q belongs to %s and %s", name, k.objects[prev].name, o.name)
			}
			m.names[key] = i
			tokens := normalize(name)
			if _, isPhrase := owner[strings.Join(tokens, " ")]; isPhrase {
				m.ambiguous[key] = true
			}
			m.mentions[strings.Join(tokens, " ")] = true
			m.maxName = max(m.maxName, len(tokens))
		}
	}
	return m, nil
}

func propName(k *knowledgeBase, prop int) string {
	if prop == comparisonSentinel {
		return "size comparison"
	}
	return fmt.Sprintf("%q", k.props[prop].question)
}

// term is one proposition of a query, possibly negated.
type term struct {
	prop    int
	negated bool
}

// query is the propositions a question asks about, combined by "and" or
// "or".
type query struct {
	terms []term
	or    bool
}

func (q query) eval(k *knowledgeBase, obj int) answer {
	result := yes
	if q.or {
		result = no
	}
	for _, t := range q.terms {
		a := k.answers[t.prop][obj]
		if t.negated {
			a = negate(a)
		}
		if q.or {
			result = or(result, a)
		} else {
			result = and(result, a)
		}
	}
	return result
}

func negate(a answer) answer {
	switch a {
	case yes:
		return no
	case no:
		return yes
	}
	return unknown
}

// and and or follow three-valued (Kleene) logic: unknown only when the
// known answers do not decide.
func and(a, b answer) answer {
	switch {
	case a == no || b == no:
		return no
	case a == yes && b == yes:
		return yes
	}
	return unknown
}

func or(a, b answer) answer {
	switch {
	case a == yes || b == yes:
		return yes
	case a == no && b == no:
		return no
	}
	return unknown
}

// parsed is what the oracle made of a question: exactly one of a guess of a
// known object (guess >= 0), an explicit guess of something it does not
// know (unknownGuess), a query, or a reason the question is invalid.
type parsed struct {
	guess        int
	unknownGuess string
	query        query
	invalid      string
}

const (
	msgEmpty = `Ask a yes/no question about the object, for example "Is it an animal?", or guess it with "Is it a <object>?".`
	msgWh    = `I can only answer yes/no questions, such as "Is it an animal?" or "Is it bigger than a breadbox?".`
	msgSize  = `I can compare sizes only with a coin, a breadbox, a person or a car, as in "Is it bigger than a breadbox?".`
	msgMany  = `Ask about fewer things at a time (at most three), as in "Is it an animal?".`
	msgTwo   = `Guess one object at a time, as in "Is it a cat?".`
	msgMixed = `Ask about a property or guess an object, one at a time, as in "Is it black?" or "Is it a cat?".`
	msgNone  = `I can't answer that; ask a yes/no question about what kind of thing it is (animal, plant, food, vehicle, tool...), ` +
		`its size, shape, colour or material, where it is found or what it is used for, or guess with "Is it a <object>?".`
)

func (m *matcher) parse(question string) parsed {
	if len(question) > maxQuestionBytes {
		question = question[:maxQuestionBytes]
	}
	ws := words(question)
	if len(ws) == 0 {
		return parsed{guess: -1, invalid: msgEmpty}
	}
	if whWords[ws[0]] {
		return parsed{guess: -1, invalid: msgWh}
	}
	if p, ok := m.parseGuess(ws); ok {
		return p
	}
	tokens := normalizeWords(ws)
	q, unmatched, invalid := m.match(tokens)
	if invalid != "" {
		return parsed{guess: -1, invalid: invalid}
	}
	if len(q.terms) == 0 {
		if m.mentionsObject(tokens) {
			return parsed{guess: -1, invalid: msgTwo}
		}
		return parsed{guess: -1, invalid: msgNone}
	}
	// What the phrases left over must not change what they mean: "Is it a
	// black cat?" is not "Is it black?", nor "Is it warm-blooded?" "Does
	// it get hot?".
	if m.mentionsObject(unmatched) {
		return parsed{guess: -1, invalid: msgMixed}
	}
	for _, w := range unmatched {
		if qualifiers[w] {
			return parsed{guess: -1, invalid: msgNone}
		}
	}
	return parsed{guess: -1, query: q}
}

// parseGuess recognises "Is it a cat?", "Guess: cat", "cat?" and the like.
func (m *matcher) parseGuess(ws []string) (parsed, bool) {
	rest, explicit := ws, false
	for _, prefix := range guessPrefixes {
		if hasPrefix(ws, prefix) {
			rest = ws[len(prefix):]
			for _, w := range prefix {
				explicit = explicit || w == "guess" || w == "answer"
			}
			break
		}
	}
	hadArticle := false
	for len(rest) > 0 && guessFillers[rest[0]] {
		hadArticle = hadArticle || articles[rest[0]]
		rest = rest[1:]
	}
	for len(rest) > 0 && guessFillers[rest[len(rest)-1]] {
		rest = rest[:len(rest)-1]
	}
	if len(rest) == 0 {
		if explicit {
			return parsed{guess: -1, invalid: msgEmpty}, true
		}
		return parsed{}, false
	}
	key := nameKey(rest)
	if obj, ok := m.names[key]; ok && (!m.ambiguous[key] || hadArticle || explicit) {
		return parsed{guess: obj}, true
	}
	if explicit {
		return parsed{guess: -1, unknownGuess: strings.Join(rest, " ")}, true
	}
	return parsed{}, false
}

func hasPrefix(ws, prefix []string) bool {
	if len(ws) < len(prefix) {
		return false
	}
	for i, p := range prefix {
		if ws[i] != p {
			return false
		}
	}
	return true
}

// match finds the propositions in normalised tokens, longest phrase
// first, and returns the tokens no phrase took.
func (m *matcher) match(tokens []string) (query, []string, string) {
	var q query
	var unmatched []string
	negatePending := false
	for i := 0; i < len(tokens); {
		p, ok := m.phraseAt(tokens, i)
		if !ok {
			unmatched = append(unmatched, tokens[i])
			switch tok := tokens[i]; {
			case negators[tok]:
				negatePending = true
			case tok == "or" && len(q.terms) > 0:
				q.or = true
			}
			i++
			continue
		}
		if p.prop == comparisonSentinel {
			return query{}, nil, msgSize
		}
		if len(q.terms) == maxTerms {
			return query{}, nil, msgMany
		}
		q.terms = append(q.terms, term{prop: p.prop, negated: p.negated != negatePending})
		negatePending = false
		i += len(p.tokens)
	}
	return q, unmatched, ""
}

// qualifiers are words that turn the phrase before them into another
// question ("warm-blooded", "cold-blooded"), one the phrases do not cover.
var qualifiers = map[string]bool{"blooded": true}

func (m *matcher) phraseAt(tokens []string, i int) (phrase, bool) {
candidates:
	for _, p := range m.byFirst[tokens[i]] {
		if i+len(p.tokens) > len(tokens) {
			continue
		}
		for j, t := range p.tokens {
			if tokens[i+j] != t {
				continue candidates
			}
		}
		return p, true
	}
	return phrase{}, false
}

// mentionsObject reports whether an object name appears anywhere in the
// normalised tokens; it tells "Is it a cat or a dog?" apart from a question
// the oracle cannot map.
func (m *matcher) mentionsObject(tokens []string) bool {
	for i := range tokens {
		for l := 1; l <= m.maxName && i+l <= len(tokens); l++ {
			if m.mentions[strings.Join(tokens[i:i+l], " ")] {
				return true
			}
		}
	}
	return false
}
