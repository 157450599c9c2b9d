package tauretail

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth matches encoding/json's nesting limit.
const maxJSONDepth = 10000

// parseJSONObject decodes a JSON object into the values encoding/json
// gives an `any` (map[string]any, []any, string, float64, bool, nil),
// accepting and rejecting the same texts; a fuzz test holds it to that.
// Tool arguments are parsed at every step, and this avoids encoding/json's
// reflection and its second validation pass.
func parseJSONObject(s string) (map[string]any, error) {
	p := jsonParser{s: s}
	p.skipSpace()
	if p.i >= len(s) || s[p.i] != '{' {
		return nil, errors.New("expected a JSON object")
	}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i < len(s) {
		return nil, p.errorf("after the object")
	}
	return v.(map[string]any), nil
}

type jsonParser struct {
	s string
	i int
}

func (p *jsonParser) errorf(where string) error {
	if p.i >= len(p.s) {
		return errors.New("unexpected end of JSON input")
	}
	return errors.New("invalid character " + strconv.QuoteRune(rune(p.s[p.i])) + " " + where)
}

func (p *jsonParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value reads a value inside depth enclosing objects and arrays.
func (p *jsonParser) value(depth int) (any, error) {
	p.skipSpace()
	if p.i >= len(p.s) {
		return nil, p.errorf("")
	}
	switch c := p.s[p.i]; {
	case (c == '{' || c == '[') && depth >= maxJSONDepth:
		return nil, errors.New("JSON nested too deeply")
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	}
	for _, lit := range []struct {
		text  string
		value any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if len(p.s)-p.i >= len(lit.text) && p.s[p.i:p.i+len(lit.text)] == lit.text {
			p.i += len(lit.text)
			return lit.value, nil
		}
	}
	return nil, p.errorf("looking for the beginning of a value")
}

func (p *jsonParser) object(depth int) (any, error) {
	p.i++ // '{'
	m := map[string]any{}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, p.errorf("looking for the beginning of an object key")
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.errorf("after an object key")
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[key.(string)] = v
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, p.errorf("")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, nil
		default:
			return nil, p.errorf("after an object value")
		}
	}
}

func (p *jsonParser) array(depth int) (any, error) {
	p.i++ // '['
	list := []any{}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return list, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		list = append(list, v)
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, p.errorf("")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return list, nil
		default:
			return nil, p.errorf("after an array element")
		}
	}
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (p *jsonParser) number() (any, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && '0' <= p.s[p.i] && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, p.errorf("in numeric literal")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.errorf("after decimal point in numeric literal")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errorf("in exponent of numeric literal")
		}
	}
	f, err := strconv.ParseFloat(p.s[start:p.i], 64)
	if err != nil {
		return nil, errors.New("number " + p.s[start:p.i] + " is out of range")
	}
	return f, nil
}

// str reads a string literal. Like encoding/json it turns invalid UTF-8 and
// unpaired surrogates into U+FFFD and rejects raw control characters.
func (p *jsonParser) str() (any, error) {
	p.i++ // opening quote
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '"' {
			p.i++
			return p.s[start : p.i-1], nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.i++
	}
	b := []byte(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return string(b), nil
		case c < 0x20:
			return nil, p.errorf("in string literal")
		case c == '\\':
			if p.i+1 >= len(p.s) {
				p.i++
				return nil, p.errorf("")
			}
			p.i++
			switch esc := p.s[p.i]; esc {
			case '"', '\\', '/':
				b = append(b, esc)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(p.s, p.i+1)
				if !ok {
					return nil, errors.New("invalid \\u escape in string literal")
				}
				p.i += 4
				if utf16.IsSurrogate(r) {
					// A valid pair is consumed whole; anything else leaves
					// U+FFFD and reads the next escape on its own.
					if p.i+2 < len(p.s) && p.s[p.i+1] == '\\' && p.s[p.i+2] == 'u' {
						if r2, ok := hex4(p.s, p.i+3); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								r = dec
								p.i += 6
							} else {
								r = utf8.RuneError
							}
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				return nil, p.errorf("in string escape code")
			}
			p.i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			p.i++
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, p.s[p.i:p.i+size]...)
			}
			p.i += size
		}
	}
	return nil, p.errorf("")
}

// hex4 reads four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
