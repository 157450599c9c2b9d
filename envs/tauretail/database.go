package tauretail

import (
	"slices"
	"strings"
)

// Order statuses. Only pending orders can be cancelled or modified and only
// delivered ones exchanged or returned; the write tools move an order to one
// of the last four, after which no further write applies to it.
const (
	statusPending           = "pending"
	statusProcessed         = "processed"
	statusDelivered         = "delivered"
	statusCancelled         = "cancelled"
	statusPendingModified   = "pending (item modified)"
	statusExchangeRequested = "exchange requested"
	statusReturnRequested   = "return requested"
)

// Payment method sources.
const (
	sourceCreditCard = "credit_card"
	sourceGiftCard   = "gift_card"
	sourcePaypal     = "paypal"
)

// Address is a postal address.
type Address struct {
	Address1, Address2, City, State, Country, Zip string
}

// Describe writes the address on one line: "12 Elm Street, Apt 3,
// Springfield, IL, 62704, USA" (an empty second line is left out).
func (a Address) Describe() string {
	parts := []string{a.Address1, a.Address2, a.City, a.State, a.Zip, a.Country}
	if a.Address2 == "" {
		parts = slices.Delete(parts, 1, 2)
	}
	return strings.Join(parts, ", ")
}

func (a Address) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendStringField(b, "address1", a.Address1)
	b = appendStringField(b, "address2", a.Address2)
	b = appendStringField(b, "city", a.City)
	b = appendStringField(b, "state", a.State)
	b = appendStringField(b, "country", a.Country)
	b = appendStringField(b, "zip", a.Zip)
	return append(b, '}')
}

// PaymentMethod is a credit card, a gift card or a PayPal account.
type PaymentMethod struct {
	ID       string
	Source   string
	Brand    string // credit cards
	LastFour string // credit cards
	Balance  Money  // gift cards
}

func (p PaymentMethod) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendStringField(b, "source", p.Source)
	switch p.Source {
	case sourceCreditCard:
		b = appendStringField(b, "brand", p.Brand)
		b = appendStringField(b, "last_four", p.LastFour)
	case sourceGiftCard:
		b = p.Balance.appendText(appendKey(b, "balance"))
	}
	b = appendStringField(b, "id", p.ID)
	return append(b, '}')
}

// User is a customer profile.
type User struct {
	ID                  string
	FirstName, LastName string
	Email               string
	Address             Address
	PaymentMethods      []PaymentMethod
	Orders              []string // order ids, oldest first
}

// PaymentMethod returns the user's payment method with the given id, or nil.
func (u *User) PaymentMethod(id string) *PaymentMethod {
	for i := range u.PaymentMethods {
		if u.PaymentMethods[i].ID == id {
			return &u.PaymentMethods[i]
		}
	}
	return nil
}

func (u *User) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendStringField(b, "user_id", u.ID)
	b = append(appendKey(b, "name"), '{')
	b = appendStringField(b, "first_name", u.FirstName)
	b = appendStringField(b, "last_name", u.LastName)
	b = append(b, '}')
	b = u.Address.appendJSON(appendKey(b, "address"))
	b = appendStringField(b, "email", u.Email)
	b = append(appendKey(b, "payment_methods"), '{')
	for _, p := range u.PaymentMethods {
		b = p.appendJSON(appendKey(b, p.ID))
	}
	b = append(b, '}')
	b = appendStringList(appendKey(b, "orders"), u.Orders)
	return append(b, '}')
}

// OrderItem is one item of an order, a copy of the variant at purchase.
type OrderItem struct {
	Name      string
	ProductID string
	ItemID    string
	Price     Money
	Options   Options // shared with the catalog, never modified in place
}

// Transaction is a payment or a refund.
type Transaction struct {
	Type            string // "payment" or "refund"
	Amount          Money
	PaymentMethodID string
}

// Fulfillment is a shipment of some of an order's items.
type Fulfillment struct {
	TrackingIDs []string
	ItemIDs     []string
}

// ItemExchange records a requested exchange of delivered items.
type ItemExchange struct {
	ItemIDs         []string
	NewItemIDs      []string
	PaymentMethodID string
	PriceDifference Money
}

// ItemReturn records a requested return of delivered items.
type ItemReturn struct {
	ItemIDs         []string
	PaymentMethodID string
}

// Order is a customer's order.
type Order struct {
	ID             string
	UserID         string
	Address        Address
	Items          []OrderItem
	Fulfillments   []Fulfillment
	Status         string
	PaymentHistory []Transaction
	CancelReason   string        // set by a cancellation
	Exchange       *ItemExchange // set by an exchange request
	Return         *ItemReturn   // set by a return request
}

// Total is the sum of the order's item prices.
func (o *Order) Total() Money {
	var t Money
	for _, it := range o.Items {
		t += it.Price
	}
	return t
}

func (o *Order) item(itemID string) *OrderItem {
	for i := range o.Items {
		if o.Items[i].ItemID == itemID {
			return &o.Items[i]
		}
	}
	return nil
}

func (o *Order) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendStringField(b, "order_id", o.ID)
	b = appendStringField(b, "user_id", o.UserID)
	b = o.Address.appendJSON(appendKey(b, "address"))
	b = append(appendKey(b, "items"), '[')
	for i, it := range o.Items {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '{')
		b = appendStringField(b, "name", it.Name)
		b = appendStringField(b, "product_id", it.ProductID)
		b = appendStringField(b, "item_id", it.ItemID)
		b = it.Price.appendText(appendKey(b, "price"))
		b = it.Options.appendJSON(appendKey(b, "options"))
		b = append(b, '}')
	}
	b = append(b, ']')
	b = append(appendKey(b, "fulfillments"), '[')
	for i, f := range o.Fulfillments {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '{')
		b = appendStringList(appendKey(b, "tracking_id"), f.TrackingIDs)
		b = appendStringList(appendKey(b, "item_ids"), f.ItemIDs)
		b = append(b, '}')
	}
	b = append(b, ']')
	b = appendStringField(b, "status", o.Status)
	b = append(appendKey(b, "payment_history"), '[')
	for i, t := range o.PaymentHistory {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '{')
		b = appendStringField(b, "transaction_type", t.Type)
		b = t.Amount.appendText(appendKey(b, "amount"))
		b = appendStringField(b, "payment_method_id", t.PaymentMethodID)
		b = append(b, '}')
	}
	b = append(b, ']')
	if o.CancelReason != "" {
		b = appendStringField(b, "cancel_reason", o.CancelReason)
	}
	if x := o.Exchange; x != nil {
		b = appendStringList(appendKey(b, "exchange_items"), x.ItemIDs)
		b = appendStringList(appendKey(b, "exchange_new_items"), x.NewItemIDs)
		b = appendStringField(b, "exchange_payment_method_id", x.PaymentMethodID)
		b = x.PriceDifference.appendText(appendKey(b, "exchange_price_difference"))
	}
	if r := o.Return; r != nil {
		b = appendStringList(appendKey(b, "return_items"), r.ItemIDs)
		b = appendStringField(b, "return_payment_method_id", r.PaymentMethodID)
	}
	return append(b, '}')
}

// Database is one episode's users and orders; products come from the shared
// catalog.
type Database struct {
	Users  map[string]*User
	Orders map[string]*Order
}

func newDatabase() *Database {
	return &Database{Users: make(map[string]*User, 4), Orders: make(map[string]*Order, 8)}
}

// keep stores copies of the order a write names and of its user (or of the
// user it names), unless d already holds them: the records the write may
// change, as they were before it.
func (d *Database) keep(from *Database, w *writeCall) {
	userID := w.userID
	if o := from.Orders[w.orderID]; o != nil {
		if _, ok := d.Orders[o.ID]; !ok {
			d.Orders[o.ID] = o.clone()
		}
		userID = o.UserID
	}
	if u := from.Users[userID]; u != nil {
		if _, ok := d.Users[u.ID]; !ok {
			d.Users[u.ID] = u.clone()
		}
	}
}

// clone returns a deep copy of u.
func (u *User) clone() *User {
	c := *u
	c.PaymentMethods = slices.Clone(u.PaymentMethods)
	c.Orders = slices.Clone(u.Orders)
	return &c
}

// clone returns a deep copy of o. Option lists stay shared with the
// catalog: no tool modifies one in place.
func (o *Order) clone() *Order {
	c := *o
	c.Items = slices.Clone(o.Items)
	c.Fulfillments = slices.Clone(o.Fulfillments)
	for i, f := range c.Fulfillments {
		c.Fulfillments[i] = Fulfillment{slices.Clone(f.TrackingIDs), slices.Clone(f.ItemIDs)}
	}
	c.PaymentHistory = slices.Clone(o.PaymentHistory)
	if o.Exchange != nil {
		x := *o.Exchange
		x.ItemIDs = slices.Clone(x.ItemIDs)
		x.NewItemIDs = slices.Clone(x.NewItemIDs)
		c.Exchange = &x
	}
	if o.Return != nil {
		r := *o.Return
		r.ItemIDs = slices.Clone(r.ItemIDs)
		c.Return = &r
	}
	return &c
}
