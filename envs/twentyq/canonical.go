package twentyq

import (
	"slices"
	"strings"

	"github.com/agentrl/agentrl/envs"
)

var _ envs.Canonicalizer = (*Env)(nil)

// unknownGuessText is the canonical form of every explicit guess of
// something the game does not know: the oracle answers them all "No." and
// learns nothing from them. It is itself such a guess.
const unknownGuessText = "Guess: unknown object"

// Canonical returns the question as the oracle understands it (see
// matcher.parse): a guess of a known object becomes its guess question ("Is
// it a cat?", whatever synonym, article, case or punctuation it was asked
// with); every explicit guess of an unknown object becomes "Guess: unknown
// object"; a query becomes the canonical questions of its propositions,
// sorted and without repeats, a negated one prefixed with "not", joined by
// " and " or " or " ("Is it an animal?", "Is it red? or Is it blue?", "not
// Is it alive?"), since the answer does not depend on their order. A
// question the oracle refuses (a wh-question, an empty guess, an unknown
// size comparison, too many or no propositions) canonicalises to itself,
// parsed and trimmed.
func (e *Env) Canonical(action string) string {
	text := strings.TrimSpace(envs.ParseAction(action)) // ParseAction may leave spaces inside quotes
	p := e.kb.matcher.parse(text)
	switch {
	case p.invalid != "":
		return text
	case p.guess >= 0:
		return e.kb.objects[p.guess].guessText()
	case p.unknownGuess != "":
		return unknownGuessText
	}
	return e.kb.queryText(p.query)
}

// queryText writes a query in canonical questions. Its terms combine with
// Kleene's and / or, which are commutative and idempotent, so they are
// sorted and de-duplicated; with one term left "and" and "or" agree.
func (k *knowledgeBase) queryText(q query) string {
	terms := slices.Clone(q.terms)
	slices.SortFunc(terms, func(a, b term) int {
		if a.prop != b.prop {
			return a.prop - b.prop
		}
		if a.negated == b.negated {
			return 0
		}
		if a.negated {
			return 1
		}
		return -1
	})
	terms = slices.Compact(terms)
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = k.props[t.prop].question
		if t.negated {
			parts[i] = "not " + parts[i]
		}
	}
	if q.or {
		return strings.Join(parts, " or ")
	}
	return strings.Join(parts, " and ")
}
