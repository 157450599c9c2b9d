package tauretail

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// testDatabase is a hand-made database: one user with two credit cards and
// a gift card of 10.00, a pending order paid by gift card (two items) and
// a delivered order paid by the first credit card.
func testDatabase(t *testing.T) (*Database, *Product, *Product) {
	t.Helper()
	shirt, shoes := catalog().Products[0], catalog().Products[1]
	item := func(p *Product, v Variant) OrderItem {
		return OrderItem{Name: p.Name, ProductID: p.ProductID, ItemID: v.ItemID, Price: v.Price, Options: v.Options}
	}
	u := &User{
		ID: "ann_lee_1000", FirstName: "Ann", LastName: "Lee", Email: "ann.lee@example.com",
		Address: Address{"1 Main Street", "", "Austin", "TX", "USA", "78701"},
		PaymentMethods: []PaymentMethod{
			{ID: "credit_card_1", Source: sourceCreditCard, Brand: "visa", LastFour: "1111"},
			{ID: "credit_card_2", Source: sourceCreditCard, Brand: "amex", LastFour: "2222"},
			{ID: "gift_card_1", Source: sourceGiftCard, Balance: 1000},
		},
		Orders: []string{"#W0000001", "#W0000002"},
	}
	pending := &Order{ID: "#W0000001", UserID: u.ID, Address: u.Address, Status: statusPending,
		Items: []OrderItem{item(shirt, shirt.Variants[0]), item(shoes, shoes.Variants[0])}}
	pending.PaymentHistory = []Transaction{{"payment", pending.Total(), "gift_card_1"}}
	delivered := &Order{ID: "#W0000002", UserID: u.ID, Address: u.Address, Status: statusDelivered,
		Items: []OrderItem{item(shirt, shirt.Variants[2])}}
	delivered.PaymentHistory = []Transaction{{"payment", delivered.Total(), "credit_card_1"}}
	db := &Database{Users: map[string]*User{u.ID: u}, Orders: map[string]*Order{pending.ID: pending, delivered.ID: delivered}}
	return db, shirt, shoes
}

func TestCancelRefundsGiftCardAtOnce(t *testing.T) {
	db, _, _ := testDatabase(t)
	paid := db.Orders["#W0000001"].Total()
	if out := db.apply(&writeCall{tool: toolCancel, orderID: "#W0000001", reason: "changed my mind"}); out != "Error: invalid reason" {
		t.Errorf("invalid reason: %s", out)
	}
	out := db.apply(&writeCall{tool: toolCancel, orderID: "#W0000001", reason: reasonMistake})
	if !strings.Contains(out, `"status": "cancelled"`) || !strings.Contains(out, `"cancel_reason": "ordered by mistake"`) {
		t.Errorf("cancel: %s", out)
	}
	if got := db.Users["ann_lee_1000"].PaymentMethod("gift_card_1").Balance; got != 1000+paid {
		t.Errorf("gift card balance %v, want %v", got, 1000+paid)
	}
	if out := db.apply(&writeCall{tool: toolCancel, orderID: "#W0000001", reason: reasonMistake}); out != "Error: non-pending order cannot be cancelled" {
		t.Errorf("second cancel: %s", out)
	}
	if out := db.apply(&writeCall{tool: toolCancel, orderID: "#W9999999", reason: reasonMistake}); out != "Error: order not found" {
		t.Errorf("unknown order: %s", out)
	}
}

func TestModifyItemsOnlyOnce(t *testing.T) {
	db, shirt, _ := testDatabase(t)
	old := shirt.Variants[0]
	var cheaper, dearer *Variant
	for i := range shirt.Variants {
		v := &shirt.Variants[i]
		if v.Available && v.Price < old.Price && cheaper == nil {
			cheaper = v
		}
		if v.Available && v.Price > old.Price+1000 && dearer == nil {
			dearer = v
		}
	}
	if dearer != nil {
		out := db.apply(&writeCall{tool: toolModifyItems, orderID: "#W0000001", itemIDs: []string{old.ItemID},
			newItemIDs: []string{dearer.ItemID}, paymentMethodID: "gift_card_1"})
		if out != "Error: insufficient gift card balance to pay for the price difference" {
			t.Errorf("gift card too small: %s", out)
		}
	}
	if cheaper == nil {
		t.Skip("no cheaper available variant")
	}
	w := &writeCall{tool: toolModifyItems, orderID: "#W0000001", itemIDs: []string{old.ItemID},
		newItemIDs: []string{cheaper.ItemID}, paymentMethodID: "gift_card_1"}
	out := db.apply(w)
	if !strings.Contains(out, `"status": "pending (item modified)"`) || !strings.Contains(out, cheaper.ItemID) {
		t.Fatalf("modify: %s", out)
	}
	if got := db.Users["ann_lee_1000"].PaymentMethod("gift_card_1").Balance; got != 1000+old.Price-cheaper.Price {
		t.Errorf("gift card balance %v after a refund of the difference", got)
	}
	if out := db.apply(w); out != "Error: non-pending order cannot be modified" {
		t.Errorf("second modification: %s", out)
	}
}

func TestItemChangeChecks(t *testing.T) {
	db, shirt, shoes := testDatabase(t)
	var unavailable string
	for _, v := range shirt.Variants {
		if !v.Available {
			unavailable = v.ItemID
		}
	}
	base := writeCall{tool: toolModifyItems, orderID: "#W0000001", itemIDs: []string{shirt.Variants[0].ItemID}, paymentMethodID: "credit_card_2"}
	cases := map[string]func(w *writeCall){
		"Error: new item " + shoes.Variants[1].ItemID + " not found or available": func(w *writeCall) { w.newItemIDs = []string{shoes.Variants[1].ItemID} },
		"Error: the number of items to be exchanged should match":                 func(w *writeCall) { w.newItemIDs = nil },
		"Error: 123 not found":            func(w *writeCall) { w.itemIDs = []string{"123"}; w.newItemIDs = []string{"1"} },
		"Error: payment method not found": func(w *writeCall) { w.newItemIDs = []string{shirt.Variants[1].ItemID}; w.paymentMethodID = "paypal_9" },
		"Error: non-delivered order cannot be exchanged": func(w *writeCall) {
			w.tool = toolExchange
			w.newItemIDs = []string{shirt.Variants[1].ItemID}
		},
	}
	if unavailable != "" {
		cases["Error: new item "+unavailable+" not found or available"] = func(w *writeCall) { w.newItemIDs = []string{unavailable} }
	}
	for want, edit := range cases {
		w := base
		edit(&w)
		if out := db.apply(&w); out != want {
			t.Errorf("got %q, want %q", out, want)
		}
	}
	if db.Orders["#W0000001"].Status != statusPending {
		t.Error("a refused write changed the order")
	}
}

func TestReturnRefundRules(t *testing.T) {
	db, shirt, _ := testDatabase(t)
	item := []string{shirt.Variants[2].ItemID}
	if out := db.apply(&writeCall{tool: toolReturn, orderID: "#W0000002", itemIDs: item, paymentMethodID: "credit_card_2"}); out !=
		"Error: payment method should be either the original payment method or a gift card" {
		t.Errorf("refund to another card: %s", out)
	}
	if out := db.apply(&writeCall{tool: toolReturn, orderID: "#W0000001", itemIDs: item, paymentMethodID: "gift_card_1"}); out !=
		"Error: non-delivered order cannot be returned" {
		t.Errorf("return of a pending order: %s", out)
	}
	if out := db.apply(&writeCall{tool: toolReturn, orderID: "#W0000002", itemIDs: []string{item[0], item[0]}, paymentMethodID: "gift_card_1"}); out !=
		"Error: some item not found" {
		t.Errorf("returning an item twice: %s", out)
	}
	out := db.apply(&writeCall{tool: toolReturn, orderID: "#W0000002", itemIDs: item, paymentMethodID: "gift_card_1"})
	if !strings.Contains(out, `"status": "return requested"`) || !strings.Contains(out, `"return_payment_method_id": "gift_card_1"`) {
		t.Errorf("return: %s", out)
	}
}

func TestExchangeRecordsTheRequest(t *testing.T) {
	db, shirt, _ := testDatabase(t)
	old := shirt.Variants[2]
	var next Variant
	for _, v := range shirt.Variants {
		if v.Available && v.ItemID != old.ItemID {
			next = v
			break
		}
	}
	out := db.apply(&writeCall{tool: toolExchange, orderID: "#W0000002", itemIDs: []string{old.ItemID},
		newItemIDs: []string{next.ItemID}, paymentMethodID: "credit_card_2"})
	want := `"exchange_price_difference": ` + (next.Price - old.Price).String()
	if !strings.Contains(out, `"status": "exchange requested"`) || !strings.Contains(out, want) {
		t.Errorf("exchange: %s (want %s)", out, want)
	}
}

func TestModifyPayment(t *testing.T) {
	db, _, _ := testDatabase(t)
	if out := db.apply(&writeCall{tool: toolModifyPayment, orderID: "#W0000001", paymentMethodID: "gift_card_1"}); !strings.HasPrefix(out, "Error: the new payment method") {
		t.Errorf("same method: %s", out)
	}
	total := db.Orders["#W0000001"].Total()
	out := db.apply(&writeCall{tool: toolModifyPayment, orderID: "#W0000001", paymentMethodID: "credit_card_1"})
	if strings.HasPrefix(out, "Error") || db.Users["ann_lee_1000"].PaymentMethod("gift_card_1").Balance != 1000+total {
		t.Errorf("payment change: %s", out)
	}
}

func TestAddressChanges(t *testing.T) {
	db, _, _ := testDatabase(t)
	a := Address{"9 Elm \"Street\"", "Apt 1", "Boston", "MA", "USA", "02110"}
	if out := db.apply(&writeCall{tool: toolModifyAddress, orderID: "#W0000002", address: a}); out != "Error: non-pending order cannot be modified" {
		t.Errorf("address of a delivered order: %s", out)
	}
	if out := db.apply(&writeCall{tool: toolModifyAddress, orderID: "#W0000001", address: a}); !strings.Contains(out, `"address1": "9 Elm \"Street\""`) {
		t.Errorf("order address: %s", out)
	}
	if out := db.apply(&writeCall{tool: toolUserAddress, userID: "ann_lee_1000", address: a}); !strings.Contains(out, `"zip": "02110"`) {
		t.Errorf("user address: %s", out)
	}
	if out := db.apply(&writeCall{tool: toolUserAddress, userID: "nobody", address: a}); out != "Error: user not found" {
		t.Errorf("unknown user: %s", out)
	}
}

func TestKeepCopiesTheRecordsAWriteTouches(t *testing.T) {
	db, shirt, _ := testDatabase(t)
	kept := newDatabase()
	w := &writeCall{tool: toolReturn, orderID: "#W0000002", itemIDs: []string{shirt.Variants[2].ItemID}, paymentMethodID: "gift_card_1"}
	kept.keep(db, w)
	if len(kept.Orders) != 1 || len(kept.Users) != 1 || !reflect.DeepEqual(kept.Orders["#W0000002"], db.Orders["#W0000002"]) {
		t.Fatalf("kept %v", kept)
	}
	db.apply(w)
	db.apply(&writeCall{tool: toolUserAddress, userID: "ann_lee_1000", address: Address{Address1: "2 Side Street"}})
	if kept.Orders["#W0000002"].Status != statusDelivered || kept.Users["ann_lee_1000"].Address.Address1 != "1 Main Street" {
		t.Error("a write changed the kept copies")
	}
	kept.keep(db, w)
	if kept.Orders["#W0000002"].Status != statusDelivered {
		t.Error("keep replaced an earlier copy")
	}
}

func TestSameEffectIgnoresItemOrder(t *testing.T) {
	a := &writeCall{tool: toolModifyItems, orderID: "#W1", itemIDs: []string{"1", "2"}, newItemIDs: []string{"3", "4"}, paymentMethodID: "p"}
	b := &writeCall{tool: toolModifyItems, orderID: "#W1", itemIDs: []string{"2", "1"}, newItemIDs: []string{"4", "3"}, paymentMethodID: "p"}
	crossed := &writeCall{tool: toolModifyItems, orderID: "#W1", itemIDs: []string{"1", "2"}, newItemIDs: []string{"4", "3"}, paymentMethodID: "p"}
	if !a.sameEffect(b) || a.sameEffect(crossed) {
		t.Error("sameEffect should match pairs, not lists")
	}
}

func TestJSONOutputIsValid(t *testing.T) {
	db, _, _ := testDatabase(t)
	db.Users["ann_lee_1000"].Address.Address1 = "bad \xff \"quote\" \\ \n\x01"
	for _, s := range []string{
		string(db.Users["ann_lee_1000"].appendJSON(nil)),
		string(db.Orders["#W0000002"].appendJSON(nil)),
		catalog().Products[3].detailsJSON,
		catalog().typesJSON,
	} {
		if !json.Valid([]byte(s)) {
			t.Errorf("invalid JSON: %s", s)
		}
	}
}
