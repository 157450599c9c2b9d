package tauretail

import (
	"slices"
	"strings"
)

// toolSpec describes a tool for the parser and the instruction.
type toolSpec struct {
	name   string
	params []string // argument names; all required but address2
	usage  string   // example arguments
	doc    string
}

// Names of the tools that do not change the database.
const (
	toolRespond          = "respond"
	toolFindByEmail      = "find_user_id_by_email"
	toolFindByNameZip    = "find_user_id_by_name_zip"
	toolUserDetails      = "get_user_details"
	toolOrderDetails     = "get_order_details"
	toolProductDetails   = "get_product_details"
	toolListProductTypes = "list_all_product_types"
	toolCalculate        = "calculate"
	toolThink            = "think"
	toolTransfer         = "transfer_to_human_agents"
)

var addressParams = []string{"address1", "address2", "city", "state", "country", "zip"}

var toolSpecs = []toolSpec{
	{toolRespond, []string{"content"}, `{"content": "Could you give me your email address?"}`,
		"send a message to the user; the observation is the user's reply"},
	{toolFindByEmail, []string{"email"}, `{"email": "jane.doe12@example.com"}`,
		"find a user id by email"},
	{toolFindByNameZip, []string{"first_name", "last_name", "zip"}, `{"first_name": "Jane", "last_name": "Doe", "zip": "62704"}`,
		"find a user id by first name, last name and zip code"},
	{toolUserDetails, []string{"user_id"}, `{"user_id": "jane_doe_1234"}`,
		"a user's profile: name, address, email, payment methods and order ids"},
	{toolOrderDetails, []string{"order_id"}, `{"order_id": "#W0000000"}`,
		"an order's items, status, address and payment history"},
	{toolProductDetails, []string{"product_id"}, `{"product_id": "1234567890"}`,
		"a product's variants: item ids, options, prices and availability"},
	{toolListProductTypes, nil, `{}`,
		"every product name with its product id"},
	{toolCalculate, []string{"expression"}, `{"expression": "(54.99 + 12.50) * 2"}`,
		"evaluate arithmetic with + - * / and parentheses, rounded to cents"},
	{toolThink, []string{"thought"}, `{"thought": "The order is pending, so it can be cancelled."}`,
		"write down a thought; changes nothing"},
	{toolCancel, []string{"order_id", "reason"}, `{"order_id": "#W0000000", "reason": "no longer needed"}`,
		`cancel a pending order; reason is "no longer needed" or "ordered by mistake"; the payment is refunded`},
	{toolModifyItems, []string{"order_id", "item_ids", "new_item_ids", "payment_method_id"},
		`{"order_id": "#W0000000", "item_ids": ["1008292230"], "new_item_ids": ["1008292231"], "payment_method_id": "gift_card_0000000"}`,
		"change items of a pending order to other available variants of the same products, paying or refunding the difference with the payment method; possible once per order"},
	{toolModifyAddress, slices.Concat([]string{"order_id"}, addressParams),
		`{"order_id": "#W0000000", "address1": "12 Elm Street", "address2": "Apt 3", "city": "Springfield", "state": "IL", "country": "USA", "zip": "62704"}`,
		"change the shipping address of a pending order"},
	{toolModifyPayment, []string{"order_id", "payment_method_id"}, `{"order_id": "#W0000000", "payment_method_id": "paypal_0000000"}`,
		"pay a pending order with another payment method; the old one is refunded"},
	{toolUserAddress, slices.Concat([]string{"user_id"}, addressParams),
		`{"user_id": "jane_doe_1234", "address1": "12 Elm Street", "address2": "", "city": "Springfield", "state": "IL", "country": "USA", "zip": "62704"}`,
		"change a user's default address"},
	{toolExchange, []string{"order_id", "item_ids", "new_item_ids", "payment_method_id"},
		`{"order_id": "#W0000000", "item_ids": ["1008292230"], "new_item_ids": ["1008292231"], "payment_method_id": "credit_card_0000000"}`,
		"exchange items of a delivered order for other available variants of the same products, paying or refunding the difference with the payment method; possible once per order"},
	{toolReturn, []string{"order_id", "item_ids", "payment_method_id"},
		`{"order_id": "#W0000000", "item_ids": ["1008292230"], "payment_method_id": "gift_card_0000000"}`,
		"return items of a delivered order; the refund goes to the payment method, which must be the original one or a gift card"},
	{toolTransfer, []string{"summary"}, `{"summary": "The user wants to dispute a charge."}`,
		"hand the conversation over to a human agent; ends the episode"},
}

func findTool(name string) *toolSpec {
	for i := range toolSpecs {
		if toolSpecs[i].name == name {
			return &toolSpecs[i]
		}
	}
	return nil
}

func toolNames() string {
	names := make([]string, len(toolSpecs))
	for i, t := range toolSpecs {
		names[i] = t.name
	}
	return strings.Join(names, ", ")
}

// parseWriteCall reads the arguments of a database-changing tool.
func parseWriteCall(tool string, a arguments) (*writeCall, error) {
	c := &writeCall{tool: tool}
	var err error
	if tool == toolUserAddress {
		c.userID, err = a.str("user_id")
	} else {
		c.orderID, err = a.str("order_id")
	}
	if err != nil {
		return nil, err
	}
	switch tool {
	case toolCancel:
		c.reason, err = a.str("reason")
	case toolModifyItems, toolExchange:
		if c.itemIDs, err = a.strList("item_ids"); err != nil {
			return nil, err
		}
		if c.newItemIDs, err = a.strList("new_item_ids"); err != nil {
			return nil, err
		}
		c.paymentMethodID, err = a.str("payment_method_id")
	case toolReturn:
		if c.itemIDs, err = a.strList("item_ids"); err != nil {
			return nil, err
		}
		c.paymentMethodID, err = a.str("payment_method_id")
	case toolModifyPayment:
		c.paymentMethodID, err = a.str("payment_method_id")
	case toolModifyAddress, toolUserAddress:
		c.address, err = parseAddress(a)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

func parseAddress(a arguments) (Address, error) {
	var addr Address
	fields := []*string{&addr.Address1, &addr.Address2, &addr.City, &addr.State, &addr.Country, &addr.Zip}
	for i, key := range addressParams {
		var err error
		if key == "address2" {
			*fields[i], err = a.optionalStr(key)
		} else {
			*fields[i], err = a.str(key)
		}
		if err != nil {
			return Address{}, err
		}
	}
	return addr, nil
}

func isWriteTool(name string) bool {
	switch name {
	case toolCancel, toolModifyItems, toolModifyAddress, toolModifyPayment, toolUserAddress, toolExchange, toolReturn:
		return true
	}
	return false
}
