package tauretail

import (
	"slices"
	"strings"
)

// Cancellation reasons the cancel tool accepts.
const (
	reasonNoLongerNeeded = "no longer needed"
	reasonMistake        = "ordered by mistake"
)

// Names of the tools that change the database.
const (
	toolCancel        = "cancel_pending_order"
	toolModifyItems   = "modify_pending_order_items"
	toolModifyAddress = "modify_pending_order_address"
	toolModifyPayment = "modify_pending_order_payment"
	toolExchange      = "exchange_delivered_order_items"
	toolReturn        = "return_delivered_order_items"
	toolUserAddress   = "modify_user_address"
)

// writeCall is one call of a database-changing tool with its arguments. The
// agent's write actions are parsed into it and the goal's gold actions are
// written as it, so both go through the same code.
type writeCall struct {
	tool            string
	orderID         string // every tool but modify_user_address
	userID          string // modify_user_address
	itemIDs         []string
	newItemIDs      []string
	paymentMethodID string
	reason          string
	address         Address
}

// apply runs the call on d and returns the tool's output: the changed order
// or user as JSON, or an "Error: ..." line like the original tools. Hard
// constraints (order status, same product, availability, payment rules) are
// checked here; the rest of the policy is the agent's to follow.
func (d *Database) apply(c *writeCall) string {
	switch c.tool {
	case toolCancel:
		return d.cancelPendingOrder(c.orderID, c.reason)
	case toolModifyItems:
		return d.changeItems(c, statusPending, "Error: non-pending order cannot be modified")
	case toolExchange:
		return d.changeItems(c, statusDelivered, "Error: non-delivered order cannot be exchanged")
	case toolReturn:
		return d.returnItems(c.orderID, c.itemIDs, c.paymentMethodID)
	case toolModifyAddress:
		return d.modifyOrderAddress(c.orderID, c.address)
	case toolModifyPayment:
		return d.modifyOrderPayment(c.orderID, c.paymentMethodID)
	case toolUserAddress:
		return d.modifyUserAddress(c.userID, c.address)
	}
	return "Error: unknown tool " + c.tool
}

func (d *Database) cancelPendingOrder(orderID, reason string) string {
	o := d.Orders[orderID]
	if o == nil {
		return "Error: order not found"
	}
	if o.Status != statusPending {
		return "Error: non-pending order cannot be cancelled"
	}
	if reason != reasonNoLongerNeeded && reason != reasonMistake {
		return "Error: invalid reason"
	}
	user := d.Users[o.UserID]
	for _, t := range o.PaymentHistory {
		if t.Type != "payment" {
			continue
		}
		o.PaymentHistory = append(o.PaymentHistory, Transaction{"refund", t.Amount, t.PaymentMethodID})
		// Gift cards are refunded at once; other methods take days.
		if pm := user.PaymentMethod(t.PaymentMethodID); pm != nil && pm.Source == sourceGiftCard {
			pm.Balance += t.Amount
		}
	}
	o.Status = statusCancelled
	o.CancelReason = reason
	return orderJSON(o)
}

// changeItems implements both modify_pending_order_items and
// exchange_delivered_order_items: same checks, different effects.
func (d *Database) changeItems(c *writeCall, wantStatus, statusError string) string {
	o := d.Orders[c.orderID]
	if o == nil {
		return "Error: order not found"
	}
	if o.Status != wantStatus {
		return statusError
	}
	if msg := checkItemsInOrder(o, c.itemIDs); msg != "" {
		return msg
	}
	if len(c.itemIDs) != len(c.newItemIDs) {
		return "Error: the number of items to be exchanged should match"
	}
	var diff Money
	for i, itemID := range c.itemIDs {
		item := o.item(itemID)
		v, ok := catalog().Product(item.ProductID).Variant(c.newItemIDs[i])
		if !ok || !v.Available {
			return "Error: new item " + c.newItemIDs[i] + " not found or available"
		}
		diff += v.Price - item.Price
	}
	pm := d.Users[o.UserID].PaymentMethod(c.paymentMethodID)
	if pm == nil {
		return "Error: payment method not found"
	}
	if pm.Source == sourceGiftCard && pm.Balance < diff {
		return "Error: insufficient gift card balance to pay for the price difference"
	}
	if wantStatus == statusDelivered {
		o.Status = statusExchangeRequested
		o.Exchange = &ItemExchange{
			ItemIDs:         sortedCopy(c.itemIDs),
			NewItemIDs:      sortedCopy(c.newItemIDs),
			PaymentMethodID: c.paymentMethodID,
			PriceDifference: diff,
		}
		return orderJSON(o)
	}
	kind, amount := "payment", diff
	if diff < 0 {
		kind, amount = "refund", -diff
	}
	o.PaymentHistory = append(o.PaymentHistory, Transaction{kind, amount, c.paymentMethodID})
	if pm.Source == sourceGiftCard {
		pm.Balance -= diff
	}
	// Items are matched one by one so that duplicates in the order are each
	// changed once.
	changed := make([]bool, len(o.Items))
	for i, itemID := range c.itemIDs {
		for j := range o.Items {
			if !changed[j] && o.Items[j].ItemID == itemID {
				v, _ := catalog().Product(o.Items[j].ProductID).Variant(c.newItemIDs[i])
				o.Items[j].ItemID, o.Items[j].Price, o.Items[j].Options = v.ItemID, v.Price, v.Options
				changed[j] = true
				break
			}
		}
	}
	o.Status = statusPendingModified
	return orderJSON(o)
}

// checkItemsInOrder returns an error line unless every id in itemIDs is in
// the order (as many times as it is listed).
func checkItemsInOrder(o *Order, itemIDs []string) string {
	for _, id := range itemIDs {
		inOrder := 0
		for _, it := range o.Items {
			if it.ItemID == id {
				inOrder++
			}
		}
		if countOf(itemIDs, id) > inOrder {
			return "Error: " + id + " not found"
		}
	}
	return ""
}

func (d *Database) returnItems(orderID string, itemIDs []string, paymentMethodID string) string {
	o := d.Orders[orderID]
	if o == nil {
		return "Error: order not found"
	}
	if o.Status != statusDelivered {
		return "Error: non-delivered order cannot be returned"
	}
	pm := d.Users[o.UserID].PaymentMethod(paymentMethodID)
	if pm == nil {
		return "Error: payment method not found"
	}
	if pm.Source != sourceGiftCard && paymentMethodID != o.PaymentHistory[0].PaymentMethodID {
		return "Error: payment method should be either the original payment method or a gift card"
	}
	if checkItemsInOrder(o, itemIDs) != "" {
		return "Error: some item not found"
	}
	o.Status = statusReturnRequested
	o.Return = &ItemReturn{ItemIDs: sortedCopy(itemIDs), PaymentMethodID: paymentMethodID}
	return orderJSON(o)
}

func (d *Database) modifyOrderAddress(orderID string, a Address) string {
	o := d.Orders[orderID]
	if o == nil {
		return "Error: order not found"
	}
	if o.Status != statusPending {
		return "Error: non-pending order cannot be modified"
	}
	o.Address = a
	return orderJSON(o)
}

// modifyOrderPayment moves the whole payment of a pending order to another
// method: the new method pays and the old one is refunded.
func (d *Database) modifyOrderPayment(orderID, paymentMethodID string) string {
	o := d.Orders[orderID]
	if o == nil {
		return "Error: order not found"
	}
	if o.Status != statusPending {
		return "Error: non-pending order cannot be modified"
	}
	user := d.Users[o.UserID]
	pm := user.PaymentMethod(paymentMethodID)
	if pm == nil {
		return "Error: payment method not found"
	}
	if len(o.PaymentHistory) != 1 || o.PaymentHistory[0].Type != "payment" {
		return "Error: there should be exactly one payment for a pending order"
	}
	old := o.PaymentHistory[0]
	if old.PaymentMethodID == paymentMethodID {
		return "Error: the new payment method should be different from the current one"
	}
	if pm.Source == sourceGiftCard && pm.Balance < old.Amount {
		return "Error: insufficient gift card balance to pay for the order"
	}
	o.PaymentHistory = append(o.PaymentHistory,
		Transaction{"payment", old.Amount, paymentMethodID},
		Transaction{"refund", old.Amount, old.PaymentMethodID})
	if pm.Source == sourceGiftCard {
		pm.Balance -= old.Amount
	}
	if oldPM := user.PaymentMethod(old.PaymentMethodID); oldPM != nil && oldPM.Source == sourceGiftCard {
		oldPM.Balance += old.Amount
	}
	return orderJSON(o)
}

func (d *Database) modifyUserAddress(userID string, a Address) string {
	u := d.Users[userID]
	if u == nil {
		return "Error: user not found"
	}
	u.Address = a
	return string(u.appendJSON(make([]byte, 0, 1024)))
}

// orderJSON renders a changed order, the output of the write tools.
func orderJSON(o *Order) string {
	return string(o.appendJSON(make([]byte, 0, 2048)))
}

// sameEffect reports whether c and o are the same call up to the order of
// the items listed, i.e. whether they change the database the same way.
func (c *writeCall) sameEffect(o *writeCall) bool {
	if c.tool != o.tool || c.orderID != o.orderID || c.userID != o.userID ||
		c.paymentMethodID != o.paymentMethodID || c.reason != o.reason || c.address != o.address ||
		len(c.itemIDs) != len(o.itemIDs) || len(c.newItemIDs) != len(o.newItemIDs) {
		return false
	}
	return slices.Equal(itemPairs(c), itemPairs(o))
}

// itemPairs lists "old>new" for each changed item (or the item ids alone),
// sorted.
func itemPairs(c *writeCall) []string {
	pairs := make([]string, len(c.itemIDs))
	for i, id := range c.itemIDs {
		pairs[i] = id
		if i < len(c.newItemIDs) {
			pairs[i] += ">" + c.newItemIDs[i]
		}
	}
	slices.Sort(pairs)
	return pairs
}

// confirmationTokens are the argument values that a request for
// confirmation of this call must state for the user to recognise it,
// lowercased. Order ids are given without their '#'.
func (c *writeCall) confirmationTokens() []string {
	var toks []string
	if c.orderID != "" {
		toks = append(toks, strings.ToLower(strings.TrimPrefix(c.orderID, "#")))
	}
	toks = append(toks, c.itemIDs...)
	toks = append(toks, c.newItemIDs...)
	if c.paymentMethodID != "" {
		toks = append(toks, c.paymentMethodID)
	}
	if c.reason != "" {
		toks = append(toks, c.reason)
	}
	if c.address.Address1 != "" {
		toks = append(toks, strings.ToLower(c.address.Address1), strings.ToLower(c.address.City), c.address.Zip)
	}
	return toks
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
