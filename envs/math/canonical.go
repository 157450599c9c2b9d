package math

import (
	"strings"
	"unicode/utf8"

	"github.com/agentrl/agentrl/envs"
)

var _ envs.Canonicalizer = (*Env)(nil)

// Canonical returns the action as the environment grades or evaluates it.
//
// math: the whole reply is graded (not only the text after "Action:"), by
// its final answer (extractAnswer), which is compared as a normalised
// decimal; the canonical form is "#### <answer>", so "#### 1,000", "#### 1000.0",
// "\boxed{1000}" and "so it is $1,000." are alike. A reply without a number
// canonicalises to itself, trimmed.
//
// math-calc: "#### n", answer[n] and finish[n] (any case) are answer[<n>],
// with n the first number of the argument normalised as graded;
// calc[e], calculate[e] and calculator[e] are calc[<e>] with e written in
// the calculator's own tokens: no whitespace, "−" as "-", "x", "×" and "·" as
// "*", "÷" as "/", no unary "+", numbers without "$", thousands commas,
// leading zeros or trailing fractional zeros (".50" is ".5"). Expressions
// are not evaluated into their value: the observation shows the
// expression. An action the environment rejects (no brackets, an unknown
// name, an answer without a number, an expression the calculator refuses)
// canonicalises to itself, parsed and trimmed.
func (e *Env) Canonical(action string) string {
	if !e.withCalc {
		if answer, ok := extractAnswer(action); ok {
			return "#### " + answer
		}
		return strings.TrimSpace(action)
	}
	text := strings.TrimSpace(envs.ParseAction(action))
	name, arg, bracketed := splitCall(text)
	switch {
	case strings.HasPrefix(text, "####"):
		if answer, ok := firstNumber(text[len("####"):]); ok {
			return "answer[" + answer + "]"
		}
	case !bracketed:
	case name == "calc" || name == "calculate" || name == "calculator":
		if _, err := evaluate(arg); err == nil {
			return "calc[" + canonicalExpression(arg) + "]"
		}
	case name == "answer" || name == "finish":
		if answer, ok := firstNumber(arg); ok {
			return "answer[" + answer + "]"
		}
	}
	return text
}

// canonicalExpression rewrites an expression evaluate accepts in the
// calculator's tokens (see Canonical). The result is never longer, nests no
// deeper and has no more digits than expr, so the calculator accepts it too,
// with the same value.
func canonicalExpression(expr string) string {
	var b strings.Builder
	operandEnded := false // the last token ends an operand: a "+" is binary
	for i := 0; i < len(expr); {
		r, w := utf8.DecodeRuneInString(expr[i:])
		switch {
		case r == 0:
			// The calculator reads a NUL as the end of the text: whatever
			// follows a complete expression is ignored.
			return b.String()
		case r == ' ' || r == '\t' || r == '\n' || r == '$':
			i += w
			continue
		case isDigit(r) || r == '.':
			n, end := canonicalNumber(expr, i)
			b.WriteString(n)
			i = end
			operandEnded = true
			continue
		case r == '+':
			if operandEnded {
				b.WriteByte('+')
			}
			operandEnded = false
		case r == '-' || r == '−':
			b.WriteByte('-')
			operandEnded = false
		case r == '*' || r == 'x' || r == 'X' || r == '×' || r == '·':
			b.WriteByte('*')
			operandEnded = false
		case r == '/' || r == '÷':
			b.WriteByte('/')
			operandEnded = false
		case r == ')' || r == '%':
			b.WriteRune(r)
			operandEnded = true
		default: // "("
			b.WriteRune(r)
			operandEnded = false
		}
		i += w
	}
	return b.String()
}

// canonicalNumber reads the number at expr[i:] as exprParser.number does
// and writes it without thousands commas, leading zeros or trailing
// fractional zeros; it returns the index after the number.
func canonicalNumber(expr string, i int) (string, int) {
	var intPart, frac []byte
	digits, point := 0, false
	for ; i < len(expr); i++ {
		c := expr[i]
		switch {
		case isDigit(rune(c)):
			digits++
			if point {
				frac = append(frac, c)
			} else {
				intPart = append(intPart, c)
			}
		case c == ',' && digits > 0 && !point && threeDigitsAt(expr, i+1):
		case c == '.' && !point:
			point = true
		default:
			return shortNumber(intPart, frac), i
		}
	}
	return shortNumber(intPart, frac), i
}

// shortNumber writes a decimal in its shortest form: "0" for zero, ".5" for
// a half (never longer than the text it was read from).
func shortNumber(intPart, frac []byte) string {
	n := strings.TrimLeft(string(intPart), "0")
	if f := strings.TrimRight(string(frac), "0"); f != "" {
		return n + "." + f
	}
	if n == "" {
		return "0"
	}
	return n
}
