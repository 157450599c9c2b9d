package webshop

import (
	"fmt"
	"strconv"
	"strings"
)

// Button labels, as pages show them.
const (
	labelBackToSearch = "Back to Search"
	labelNext         = "Next >"
	labelPrev         = "< Prev"
	labelDescription  = "Description"
	labelFeatures     = "Features"
	labelBuyNow       = "Buy Now"
)

// render writes the current page in WebShop's text style: the instruction
// first, then the page, clickables in brackets.
func (e *Env) render() string {
	var b strings.Builder
	b.Grow(1024)
	b.WriteString("Instruction: ")
	b.WriteString(e.goal.instruction)
	b.WriteByte('\n')
	switch e.page {
	case pageSearch:
		b.WriteString("WebShop search page. Type your query with search[<your query>].")
	case pageResults:
		e.renderResults(&b)
	case pageItem:
		e.renderItem(&b)
	case pageDescription:
		p := &e.cat.products[e.item]
		b.WriteString("[" + labelBackToSearch + "] [" + labelPrev + "]\nDescription: ")
		b.WriteString(p.description)
	case pageFeatures:
		p := &e.cat.products[e.item]
		b.WriteString("[" + labelBackToSearch + "] [" + labelPrev + "]\nFeatures:")
		for _, bullet := range p.bullets {
			b.WriteString("\n- ")
			b.WriteString(bullet)
		}
	}
	return b.String()
}

func (e *Env) renderResults(b *strings.Builder) {
	b.WriteString("[" + labelBackToSearch + "]")
	if e.resultPage > 0 {
		b.WriteString(" [" + labelPrev + "]")
	}
	if e.hasNextPage() {
		b.WriteString(" [" + labelNext + "]")
	}
	b.WriteString("\nPage ")
	writeInt(b, e.resultPage+1)
	b.WriteString(" (Total results: ")
	writeInt(b, len(e.results))
	b.WriteString(")")
	for _, doc := range e.pageResults() {
		p := &e.cat.products[doc]
		b.WriteString("\n[")
		b.WriteString(p.asin)
		b.WriteString("] ")
		b.WriteString(p.title)
		b.WriteString(" | ")
		writePrice(b, p.price)
	}
	if len(e.results) == 0 {
		b.WriteString("\nNo products match your query.")
	}
}

func (e *Env) renderItem(b *strings.Builder) {
	p := &e.cat.products[e.item]
	b.WriteString("[" + labelBackToSearch + "] [" + labelPrev + "]")
	for gi, g := range p.options {
		b.WriteString("\n")
		b.WriteString(g.name)
		b.WriteString(":")
		for _, v := range g.values {
			b.WriteString(" [")
			b.WriteString(v)
			b.WriteString("]")
		}
		if vi := e.chosen[gi]; vi >= 0 {
			b.WriteString(" (selected: ")
			b.WriteString(g.values[vi])
			b.WriteString(")")
		}
	}
	b.WriteString("\n")
	b.WriteString(p.title)
	b.WriteString("\nPrice: ")
	writePrice(b, p.price)
	b.WriteString("\nRating: N.A.\n[" + labelDescription + "] [" + labelFeatures + "] [" + labelBuyNow + "]")
}

// writePrice writes "$12.99"; rendering runs every step, so it avoids fmt.
func writePrice(b *strings.Builder, price float64) {
	var buf [24]byte
	b.WriteByte('$')
	b.Write(strconv.AppendFloat(buf[:0], price, 'f', 2, 64))
}

func writeInt(b *strings.Builder, n int) {
	var buf [20]byte
	b.Write(strconv.AppendInt(buf[:0], int64(n), 10))
}

// renderPurchase is the page after Buy Now, with the score as WebShop
// shows it.
func (e *Env) renderPurchase(p *product, score float64) string {
	var selected []string
	for gi, vi := range e.chosen {
		if vi >= 0 {
			selected = append(selected, p.options[gi].name+": "+p.options[gi].values[vi])
		}
	}
	options := "no options selected"
	if len(selected) > 0 {
		options = strings.Join(selected, ", ")
	}
	return fmt.Sprintf("Thank you for shopping with us!\nPurchased: [%s] %s (%s) for $%.2f\nYour score (min 0.0, max 1.0): %.2f",
		p.asin, p.title, options, p.price, score)
}
