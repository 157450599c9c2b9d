package tauretail

import (
	"errors"
	"math"
	"strconv"
)

// maxExpressionDepth bounds the nesting of parentheses and unary signs, so
// a hostile expression cannot exhaust the stack.
const maxExpressionDepth = 64

// evaluate computes an arithmetic expression of decimal numbers, + - * /,
// unary signs and parentheses: the calculate tool.
func evaluate(expr string) (float64, error) {
	p := exprParser{s: expr}
	v, err := p.sum(0)
	if err != nil {
		return 0, err
	}
	p.skipSpaces()
	if p.i < len(p.s) {
		return 0, errors.New("unexpected " + strconv.Quote(p.s[p.i:p.i+1]))
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, errors.New("the result is not a finite number")
	}
	return v, nil
}

type exprParser struct {
	s string
	i int
}

func (p *exprParser) skipSpaces() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (p *exprParser) peek() byte {
	p.skipSpaces()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *exprParser) sum(depth int) (float64, error) {
	v, err := p.product(depth)
	for err == nil {
		op := p.peek()
		if op != '+' && op != '-' {
			break
		}
		p.i++
		var w float64
		if w, err = p.product(depth); err == nil {
			if op == '+' {
				v += w
			} else {
				v -= w
			}
		}
	}
	return v, err
}

func (p *exprParser) product(depth int) (float64, error) {
	v, err := p.factor(depth)
	for err == nil {
		op := p.peek()
		if op != '*' && op != '/' {
			break
		}
		p.i++
		var w float64
		if w, err = p.factor(depth); err == nil {
			if op == '*' {
				v *= w
			} else if w == 0 {
				err = errors.New("division by zero")
			} else {
				v /= w
			}
		}
	}
	return v, err
}

func (p *exprParser) factor(depth int) (float64, error) {
	if depth > maxExpressionDepth {
		return 0, errors.New("the expression is nested too deeply")
	}
	switch c := p.peek(); {
	case c == '-' || c == '+':
		p.i++
		v, err := p.factor(depth + 1)
		if c == '-' {
			v = -v
		}
		return v, err
	case c == '(':
		p.i++
		v, err := p.sum(depth + 1)
		if err != nil {
			return 0, err
		}
		if p.peek() != ')' {
			return 0, errors.New("missing ')'")
		}
		p.i++
		return v, nil
	case c == '.' || ('0' <= c && c <= '9'):
		start := p.i
		for p.i < len(p.s) && (p.s[p.i] == '.' || ('0' <= p.s[p.i] && p.s[p.i] <= '9')) {
			p.i++
		}
		v, err := strconv.ParseFloat(p.s[start:p.i], 64)
		if err != nil {
			return 0, errors.New("bad number " + strconv.Quote(p.s[start:p.i]))
		}
		return v, nil
	case c == 0:
		return 0, errors.New("unexpected end of expression")
	default:
		return 0, errors.New("unexpected " + strconv.Quote(string(c)))
	}
}

// formatResult rounds to cents like the original tool.
func formatResult(v float64) string {
	r := math.Round(v*100) / 100
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}
