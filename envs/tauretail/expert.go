package tauretail

import (
	"errors"
	"slices"
	"strings"
)

// anythingElse closes the expert's replies once a request is met.
const anythingElse = " Is there anything else I can help you with?"

// ExpertAction returns what a policy-following agent that knows the user's
// hidden goal does now: authenticate, ask for the details of the current
// request, look up what the write or the answer needs, summarise the write
// and ask for a yes, make it, then report and move on. It reads the
// conversation's progress, so it can take over an episode at any point.
func (e *Env) ExpertAction() (string, error) {
	if e.task == nil {
		return "", errors.New("tauretail: expert action before reset")
	}
	if e.done {
		return "", errors.New("tauretail: expert action after the episode ended")
	}
	c := &e.customer
	u := e.task.user
	switch {
	case c.identity == identityNone:
		return respondAction("I'd be happy to help. First I need to verify your identity: could you give me your email address, or your name and zip code?"), nil
	case !e.authenticated && c.identity == identityEmail:
		return callAction(toolFindByEmail, "email", u.Email), nil
	case !e.authenticated:
		return callAction(toolFindByNameZip, "first_name", u.FirstName, "last_name", u.LastName, "zip", u.Address.Zip), nil
	case !e.userDetailsFetched:
		return callAction(toolUserDetails, "user_id", u.ID), nil
	}

	g := c.current()
	if g == nil || c.indexOf(g) >= c.introduced {
		// The last request the user brought up is met; report it so the user
		// moves on.
		return respondAction(e.outcome(e.task.goals[c.introduced-1]) + anythingElse), nil
	}
	if !g.allRevealed() {
		return respondAction(questionsFor(g)), nil
	}
	if g.orderID != "" && !slices.Contains(e.fetchedOrders, g.orderID) {
		return callAction(toolOrderDetails, "order_id", e.nextOrderToCheck(g)), nil
	}
	for _, ch := range g.changes {
		if g.kind != goalReturn && !slices.Contains(e.fetchedProducts, ch.old.ProductID) {
			return callAction(toolProductDetails, "product_id", ch.old.ProductID), nil
		}
	}
	if g.kind == goalItemPrice {
		if !e.productsListed {
			return toolListProductTypes + "{}", nil
		}
		if !slices.Contains(e.fetchedProducts, g.product.ProductID) {
			return callAction(toolProductDetails, "product_id", g.product.ProductID), nil
		}
	}
	switch {
	case g.gold == nil:
		return respondAction(answer(g) + anythingElse), nil
	case !g.confirmed:
		return respondAction(e.summary(g)), nil
	}
	return g.gold.action(), nil
}

// nextOrderToCheck is the goal's order when the user gave its id, else the
// first of the user's orders not yet looked at: the user only named a
// product in it.
func (e *Env) nextOrderToCheck(g *goal) string {
	if g.knowsOrderID {
		return g.orderID
	}
	for _, id := range e.task.user.Orders {
		if !slices.Contains(e.fetchedOrders, id) {
			return id
		}
	}
	return g.orderID
}

// questionsFor asks, in one message, for every detail of g the user has
// not given yet.
func questionsFor(g *goal) string {
	var qs []string
	missing := g.kind.needs() &^ g.revealed
	if missing&needOrder != 0 {
		qs = append(qs, "Which order is it? Please give me the order id.")
	}
	if missing&needItems != 0 || g.itemsRevealed < len(g.changes) {
		switch g.kind {
		case goalReturn:
			qs = append(qs, "Which items would you like to return? Please list all of them.")
		case goalExchange:
			qs = append(qs, "Which items would you like to exchange, and for which options? Please list all of them.")
		default:
			qs = append(qs, "Which items would you like to change, and to which options? Please list all of them.")
		}
	}
	if missing&needReason != 0 {
		qs = append(qs, "What is the reason for the cancellation?")
	}
	if missing&needPayment != 0 {
		if g.kind == goalReturn {
			qs = append(qs, "Should the refund go to the original payment method or to a gift card?")
		} else {
			qs = append(qs, "Which payment method should pay or receive the price difference?")
		}
	}
	if missing&needAddress != 0 {
		qs = append(qs, "What is the new address?")
	}
	return "Thank you. " + strings.Join(qs, " ")
}

// summary states g's write with all its arguments and asks for a yes.
func (e *Env) summary(g *goal) string {
	w := g.gold
	var sb strings.Builder
	sb.WriteString("To confirm: ")
	switch w.tool {
	case toolCancel:
		sb.WriteString("I will cancel order " + w.orderID + ` with the reason "` + w.reason + `".`)
	case toolModifyItems, toolExchange:
		verb, preposition := "change", "to"
		if w.tool == toolExchange {
			verb, preposition = "exchange", "for"
		}
		sb.WriteString("in order " + w.orderID + ", I will " + verb + " ")
		var diff Money
		for i, ch := range g.changes {
			if i > 0 {
				sb.WriteString(", and ")
			}
			sb.WriteString("item " + ch.old.ItemID + " (" + ch.old.Name + ", " + ch.old.Options.Describe() + ") " + preposition + " item " +
				ch.newVariant.ItemID + " (" + ch.newVariant.Options.Describe() + ")")
			diff += ch.newVariant.Price - ch.old.Price
		}
		if diff >= 0 {
			sb.WriteString(". The price difference of " + diff.String() + " will be charged to ")
		} else {
			sb.WriteString(". The price difference of " + (-diff).String() + " will be refunded to ")
		}
		sb.WriteString("payment method " + w.paymentMethodID + ".")
	case toolReturn:
		sb.WriteString("I will return ")
		var refund Money
		for i, ch := range g.changes {
			if i > 0 {
				sb.WriteString(" and ")
			}
			sb.WriteString("item " + ch.old.ItemID + " (" + ch.old.Name + ", " + ch.old.Options.Describe() + ")")
			refund += ch.old.Price
		}
		sb.WriteString(" from order " + w.orderID + ", and the refund of " + refund.String() + " will go to payment method " + w.paymentMethodID + ".")
	case toolModifyAddress:
		sb.WriteString("I will change the shipping address of order " + w.orderID + " to " + w.address.Describe() + ".")
	case toolUserAddress:
		sb.WriteString("I will update your default address to " + w.address.Describe() + ".")
	}
	sb.WriteString(" Do you want me to proceed (yes/no)?")
	return sb.String()
}

// outcome reports a met write request.
func (e *Env) outcome(g *goal) string {
	switch g.kind {
	case goalCancel:
		return "Order " + g.orderID + " has been cancelled and its payment will be refunded."
	case goalModifyItems:
		return "The items of order " + g.orderID + " have been changed."
	case goalExchange:
		return "The exchange for order " + g.orderID + " has been requested; you will get an email explaining how to send the items back."
	case goalReturn:
		return "The return for order " + g.orderID + " has been requested; you will get an email explaining how to send the items back."
	case goalOrderAddress:
		return "The shipping address of order " + g.orderID + " has been updated."
	case goalUserAddress:
		return "Your default address has been updated."
	}
	return answer(g)
}

// answer tells the information a question goal asks for.
func answer(g *goal) string {
	switch g.kind {
	case goalOrderStatus:
		return "Order " + g.orderID + " is currently " + g.output + "."
	case goalOrderTotal:
		return "The total of order " + g.orderID + " is " + g.output + "."
	}
	return "The " + g.product.Name + " with " + g.variant.Options.Describe() + " (item " + g.variant.ItemID + ") costs " + g.variant.Price.String() + "."
}

// action writes the call as the agent would.
func (c *writeCall) action() string {
	b := []byte(c.tool + "{")
	if c.tool == toolUserAddress {
		b = appendStringField(b, "user_id", c.userID)
	} else {
		b = appendStringField(b, "order_id", c.orderID)
	}
	switch c.tool {
	case toolCancel:
		b = appendStringField(b, "reason", c.reason)
	case toolModifyItems, toolExchange, toolReturn:
		b = appendStringList(appendKey(b, "item_ids"), c.itemIDs)
		if c.tool != toolReturn {
			b = appendStringList(appendKey(b, "new_item_ids"), c.newItemIDs)
		}
		b = appendStringField(b, "payment_method_id", c.paymentMethodID)
	case toolModifyPayment:
		b = appendStringField(b, "payment_method_id", c.paymentMethodID)
	case toolModifyAddress, toolUserAddress:
		a := c.address
		for i, v := range []string{a.Address1, a.Address2, a.City, a.State, a.Country, a.Zip} {
			b = appendStringField(b, addressParams[i], v)
		}
	}
	return string(append(b, '}'))
}

func respondAction(content string) string {
	return callAction(toolRespond, "content", content)
}

// callAction writes tool{"k1": "v1", ...} from key, value pairs.
func callAction(tool string, kv ...string) string {
	n := len(tool) + 2
	for _, s := range kv {
		n += len(s) + 6
	}
	b := append(make([]byte, 0, n), tool...)
	b = append(b, '{')
	for i := 0; i+1 < len(kv); i += 2 {
		b = appendStringField(b, kv[i], kv[i+1])
	}
	return string(append(b, '}'))
}
