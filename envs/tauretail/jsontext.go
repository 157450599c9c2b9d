package tauretail

import (
	"strconv"
	"unicode/utf8"
)

// Tool outputs are JSON text. They are written by hand with append-style
// helpers rather than encoding/json: objects keep their keys in a fixed,
// meaningful order (options in catalog order, payment methods in profile
// order), and a step stays free of reflection.

// Money is an amount in cents. Integer cents keep sums and database
// comparisons exact, where the original benchmark rounds floats.
type Money int64

// String formats m with two decimals and no thousands separator, e.g.
// "1234.50": the form the reward looks for in messages to the user.
func (m Money) String() string {
	return string(m.appendText(nil))
}

func (m Money) appendText(b []byte) []byte {
	if m < 0 {
		b = append(b, '-')
		m = -m
	}
	b = strconv.AppendInt(b, int64(m/100), 10)
	b = append(b, '.')
	cents := int64(m % 100)
	if cents < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, cents, 10)
}

// appendJSONString appends s as a JSON string literal. Invalid UTF-8 (which
// agent-written addresses may contain) becomes U+FFFD, as in encoding/json.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	if plainJSON(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// plainJSON reports whether s is printable ASCII without quotes or
// backslashes, which is all generated data: it goes into JSON as it is.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendKey appends `"key": ` after a comma when the object already has a
// member (b's last byte is not '{').
func appendKey(b []byte, key string) []byte {
	if len(b) > 0 && b[len(b)-1] != '{' {
		b = append(b, ", "...)
	}
	b = appendJSONString(b, key)
	return append(b, ": "...)
}

func appendStringField(b []byte, key, value string) []byte {
	return appendJSONString(appendKey(b, key), value)
}

func appendStringList(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}
