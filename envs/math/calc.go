package math

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The calculator of the math-calc variant: + - * / with parentheses, unary
// signs, decimals and a postfix percent sign, evaluated exactly over the
// rationals, so 0.1+0.2 is 0.3 and 10/4*4 is 10. It is also the source of
// truth for the generated solutions: every step's expression is evaluated
// by it.
//
//	expr   = term { ("+" | "-" | "−") term }
//	term   = unary { ("*" | "x" | "×" | "·" | "/" | "÷") unary }
//	unary  = { "+" | "-" | "−" } postfix
//	postfix = primary [ "%" ]
//	primary = number | "(" expr ")"
//	number = digits [ "." digits ] | "." digits   (a leading "$" and thousands commas are allowed)

const (
	maxExpressionBytes = 500
	maxNesting         = 50
	// maxDigits bounds a number's digits, so a result cannot grow without
	// bound either.
	maxDigits = 30
)

// evaluate computes an expression exactly.
func evaluate(expr string) (*big.Rat, error) {
	if len(expr) > maxExpressionBytes {
		return nil, fmt.Errorf("expression longer than %d characters", maxExpressionBytes)
	}
	p := &exprParser{src: expr}
	if p.peek() == 0 {
		return nil, errors.New("empty expression")
	}
	v, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	switch c := p.peek(); c {
	case 0:
		return v, nil
	case ')':
		return nil, errors.New("unbalanced parentheses: unexpected )")
	default:
		return nil, fmt.Errorf("unexpected %q at position %d", c, p.pos+1)
	}
}

// formatNumber writes a value as an integer when it is one, else as a
// decimal rounded to six places.
func formatNumber(v *big.Rat) string {
	if v.IsInt() {
		return v.Num().String()
	}
	s := strings.TrimRight(v.FloatString(6), "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// exprParser reads an expression; pos is a byte offset into src.
type exprParser struct {
	src   string
	pos   int
	width int // of the character peek returned
}

// peek returns the next character after spaces, or 0 at the end; next
// consumes it.
func (p *exprParser) peek() rune {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n') {
		p.pos++
	}
	if p.pos == len(p.src) {
		p.width = 0
		return 0
	}
	r, w := utf8.DecodeRuneInString(p.src[p.pos:])
	p.width = w
	return r
}

func (p *exprParser) next() { p.pos += p.width }

func (p *exprParser) expr(depth int) (*big.Rat, error) {
	v, err := p.term(depth)
	if err != nil {
		return nil, err
	}
	for {
		op := p.peek()
		if op != '+' && op != '-' && op != '−' {
			return v, nil
		}
		p.next()
		w, err := p.term(depth)
		if err != nil {
			return nil, err
		}
		if op == '+' {
			v.Add(v, w)
		} else {
			v.Sub(v, w)
		}
	}
}

func (p *exprParser) term(depth int) (*big.Rat, error) {
	v, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for {
		op := p.peek()
		switch op {
		case '*', 'x', 'X', '×', '·', '/', '÷':
		default:
			return v, nil
		}
		p.next()
		w, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		if op == '/' || op == '÷' {
			if w.Sign() == 0 {
				return nil, errors.New("division by zero")
			}
			v.Quo(v, w)
		} else {
			v.Mul(v, w)
		}
		if err := checkSize(v); err != nil {
			return nil, err
		}
	}
}

func (p *exprParser) unary(depth int) (*big.Rat, error) {
	switch p.peek() {
	case '-', '−':
		p.next()
		v, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return v.Neg(v), nil
	case '+':
		p.next()
		return p.unary(depth + 1)
	}
	if depth > maxNesting {
		return nil, fmt.Errorf("more than %d nested signs or parentheses", maxNesting)
	}
	v, err := p.primary(depth)
	if err != nil {
		return nil, err
	}
	if p.peek() == '%' {
		p.next()
		v.Quo(v, big.NewRat(100, 1))
	}
	return v, nil
}

func (p *exprParser) primary(depth int) (*big.Rat, error) {
	switch c := p.peek(); {
	case c == 0:
		return nil, errors.New("expression ends where a number was expected")
	case c == '(':
		p.next()
		if depth >= maxNesting {
			return nil, fmt.Errorf("more than %d nested signs or parentheses", maxNesting)
		}
		v, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, errors.New("unbalanced parentheses: missing )")
		}
		p.next()
		return v, nil
	case c == '$':
		p.next()
		if r := p.peek(); !isDigit(r) && r != '.' {
			return nil, fmt.Errorf("expected a number after $ at position %d", p.pos+1)
		}
		return p.number()
	case isDigit(c) || c == '.':
		return p.number()
	default:
		return nil, fmt.Errorf("unexpected %q at position %d", c, p.pos+1)
	}
}

// number reads digits with optional thousands commas ("1,200") and an
// optional decimal part.
func (p *exprParser) number() (*big.Rat, error) {
	var buf [maxDigits + 2]byte
	digits, n, point := 0, 0, false
	for ; p.pos < len(p.src); p.pos++ {
		c := p.src[p.pos]
		switch {
		case isDigit(rune(c)):
			digits++
			if digits > maxDigits {
				return nil, fmt.Errorf("number with more than %d digits", maxDigits)
			}
		case c == ',' && digits > 0 && !point && p.threeDigitsFollow():
			continue // thousands separator
		case c == '.' && !point:
			point = true
		default:
			return p.finishNumber(buf[:n], digits, point)
		}
		buf[n] = c
		n++
	}
	return p.finishNumber(buf[:n], digits, point)
}

// threeDigitsFollow reports whether exactly three digits follow the comma at
// pos, as in "1,200" but not "1,20" or "f(1,2)".
func (p *exprParser) threeDigitsFollow() bool {
	n := 0
	for i := p.pos + 1; i < len(p.src) && isDigit(rune(p.src[i])); i++ {
		n++
	}
	return n == 3
}

func (p *exprParser) finishNumber(text []byte, digits int, point bool) (*big.Rat, error) {
	if digits == 0 {
		return nil, fmt.Errorf("expected a number at position %d", p.pos+1)
	}
	if !point {
		// The common case, and much cheaper than parsing a decimal.
		n, err := strconv.ParseInt(string(text), 10, 64)
		if err == nil {
			return new(big.Rat).SetInt64(n), nil
		}
	}
	s := string(text)
	if strings.HasSuffix(s, ".") {
		s += "0"
	}
	v, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("bad number %q", s)
	}
	return v, nil
}

// checkSize rejects values whose numerator or denominator outgrow what any
// word problem needs.
func checkSize(v *big.Rat) error {
	const maxBits = 400
	if v.Num().BitLen() > maxBits || v.Denom().BitLen() > maxBits {
		return errors.New("number too large")
	}
	return nil
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
