package envs

import "strings"

// Canonicalizer is implemented by environments that can tell which actions
// they treat alike. StepAgent and similar algorithms compare an agent's
// action with an expert's in the same state through Equivalent.
type Canonicalizer interface {
	// Canonical returns the form of an action (a model's raw text, parsed
	// as the environment parses it) under which two actions the
	// environment treats alike are equal: whitespace, case, argument
	// order, synonyms the environment accepts. An action the environment
	// would reject canonicalises to itself parsed and trimmed, so that two
	// different invalid actions stay different.
	Canonical(action string) string
}

// Equivalent reports whether actions a and b (raw model texts) are the same
// action for env: equal canonical forms when env is a Canonicalizer, else
// equal parsed actions (ParseAction) once runs of whitespace are collapsed
// to one space and ASCII letters are folded to lower case.
func Equivalent(env Env, a, b string) bool {
	return Canonical(env, a) == Canonical(env, b)
}

// Canonical returns env's canonical form of action, or without a
// Canonicalizer the fallback form Equivalent compares: the parsed action
// with whitespace collapsed and ASCII case folded. It is meant for display
// (logs, diagnostics); compare actions with Equivalent.
func Canonical(env Env, action string) string {
	if c, ok := env.(Canonicalizer); ok {
		return c.Canonical(action)
	}
	return asciiLower(strings.Join(strings.Fields(ParseAction(action)), " "))
}
