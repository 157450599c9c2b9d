package math

import (
	"strings"
)

// Final-answer extraction, as GSM8K graders do it: the number after the last
// "####"; failing that, the number in the last \boxed{...} (MATH style);
// failing that, the last number in the text. Numbers may carry a sign, a
// "$", thousands commas and decimals; they compare by value as decimals, so
// "1,200.00" matches 1200.

// extractAnswer returns the final answer written in text, normalised (see
// normalizeNumber), and whether there was one.
func extractAnswer(text string) (string, bool) {
	if i := strings.LastIndex(text, "####"); i >= 0 {
		if n, ok := firstNumber(text[i+len("####"):]); ok {
			return n, true
		}
	}
	if i := strings.LastIndex(text, `\boxed{`); i >= 0 {
		inner := text[i+len(`\boxed{`):]
		if end := strings.IndexByte(inner, '}'); end >= 0 {
			inner = inner[:end]
		}
		if n, ok := firstNumber(inner); ok {
			return n, true
		}
	}
	return lastNumber(text)
}

func firstNumber(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		if n, _, ok := numberAt(s, i); ok {
			return n, true
		}
	}
	return "", false
}

func lastNumber(s string) (string, bool) {
	all := numbers(s)
	if len(all) == 0 {
		return "", false
	}
	return all[len(all)-1], true
}

// numbers returns every number in s, in order.
func numbers(s string) []string {
	var all []string
	for i := 0; i < len(s); {
		n, end, ok := numberAt(s, i)
		if !ok {
			i++
			continue
		}
		all = append(all, n)
		i = end
	}
	return all
}

// numberAt reads a number starting at s[i] ("-", a digit, or a decimal
// point before a digit, as in ".5"; a "-" counts as a sign only where it
// cannot be a minus between operands) and returns it normalised and the
// index after it.
func numberAt(s string, i int) (string, int, bool) {
	start := i
	negative := false
	if s[i] == '-' {
		if i > 0 && (isDigitByte(s[i-1]) || isLetterByte(s[i-1])) {
			return "", 0, false
		}
		negative = true
		i++
		if i < len(s) && s[i] == '$' {
			i++
		}
	}
	if i >= len(s) {
		return "", 0, false
	}
	bareFraction := s[i] == '.' && i+1 < len(s) && isDigitByte(s[i+1])
	if !isDigitByte(s[i]) && !bareFraction {
		return "", 0, false
	}
	// A digit or a point right after a digit, or a digit right after a
	// point, continues a number read before (the point's, where no digit
	// came before it); it does not start one.
	if start > 0 && !negative && (isDigitByte(s[start-1]) || s[start-1] == '.' && !bareFraction) {
		return "", 0, false
	}
	var intPart strings.Builder
	for i < len(s) {
		switch {
		case isDigitByte(s[i]):
			intPart.WriteByte(s[i])
			i++
			continue
		case s[i] == ',' && threeDigitsAt(s, i+1):
			i++
			continue
		}
		break
	}
	frac := ""
	if i+1 < len(s) && s[i] == '.' && isDigitByte(s[i+1]) {
		j := i + 1
		for j < len(s) && isDigitByte(s[j]) {
			j++
		}
		frac, i = s[i+1:j], j
	}
	return normalizeNumber(negative, intPart.String(), frac), i, true
}

// threeDigitsAt reports whether exactly three digits start at s[i].
func threeDigitsAt(s string, i int) bool {
	n := 0
	for i+n < len(s) && isDigitByte(s[i+n]) {
		n++
	}
	return n == 3
}

// normalizeNumber writes a decimal canonically: no leading zeros, no
// trailing fractional zeros, no "-0".
func normalizeNumber(negative bool, intPart, frac string) string {
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	frac = strings.TrimRight(frac, "0")
	n := intPart
	if frac != "" {
		n += "." + frac
	}
	if negative && n != "0" {
		n = "-" + n
	}
	return n
}

func isDigitByte(c byte) bool  { return c >= '0' && c <= '9' }
func isLetterByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
