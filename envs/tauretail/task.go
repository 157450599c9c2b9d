package tauretail

import "strings"

// goalKind is one kind of request a simulated user can come with.
type goalKind int

const (
	goalCancel goalKind = iota
	goalModifyItems
	goalReturn
	goalOrderStatus
	goalOrderTotal
	goalItemPrice
	goalExchange
	goalOrderAddress
	goalUserAddress
)

var goalKindNames = [...]string{
	goalCancel:       "cancel",
	goalModifyItems:  "modify_items",
	goalReturn:       "return",
	goalOrderStatus:  "order_status",
	goalOrderTotal:   "order_total",
	goalItemPrice:    "item_price",
	goalExchange:     "exchange",
	goalOrderAddress: "order_address",
	goalUserAddress:  "user_address",
}

func (k goalKind) String() string { return goalKindNames[k] }

// seenGoalKinds make up train and test tasks. unseenGoalKinds are held out:
// every unseen task has one of them, and no train or test task has any.
var (
	seenGoalKinds   = []goalKind{goalCancel, goalModifyItems, goalReturn, goalOrderStatus, goalOrderTotal, goalItemPrice}
	unseenGoalKinds = []goalKind{goalExchange, goalOrderAddress, goalUserAddress}
)

// need is a detail of a request that the user gives only when asked.
type need uint8

const (
	needOrder need = 1 << iota
	needItems
	needReason
	needPayment
	needAddress
)

// needs lists what the agent must ask for to carry out a request of kind k.
func (k goalKind) needs() need {
	switch k {
	case goalCancel:
		return needOrder | needReason
	case goalModifyItems, goalExchange, goalReturn:
		return needOrder | needItems | needPayment
	case goalOrderStatus, goalOrderTotal:
		return needOrder
	case goalOrderAddress:
		return needOrder | needAddress
	case goalUserAddress:
		return needAddress
	}
	return 0
}

// itemChange is an item the user wants changed (to newVariant) or returned.
type itemChange struct {
	old        OrderItem
	newVariant Variant // zero for returns
}

// goal is one request of the user's hidden goal, with what the user knows
// about it and how far the conversation has taken it.
type goal struct {
	kind goalKind

	orderID       string // "" when no order is involved
	knowsOrderID  bool   // else the user names a product of the order instead
	orderHint     string // the product the user names
	changes       []itemChange
	reason        string // cancellation reason, as the tool takes it
	reasonPhrase  string // the reason in the user's words
	paymentPhrase string // the payment method in the user's words
	address       Address
	product       *Product // item_price: the product asked about
	variant       Variant  // item_price: the variant asked about

	// gold is the write that fulfils the request, nil for questions.
	gold *writeCall
	// output must appear in a message to the user (questions only).
	output string

	revealed      need
	itemsRevealed int  // how many of changes the user has listed
	confirmed     bool // the user said yes to a summary of gold
	executed      bool // a call with gold's effect ran
	told          bool // output was said to the user
}

func (g *goal) done() bool {
	if g.gold != nil {
		return g.executed
	}
	return g.told
}

// allRevealed reports whether the user has given every detail the request
// needs.
func (g *goal) allRevealed() bool {
	return g.revealed&g.kind.needs() == g.kind.needs() && g.itemsRevealed == len(g.changes)
}

// task is an episode's hidden goal: who the user is and what they want.
type task struct {
	user       *User // a copy of the user's initial record: what the user knows
	knowsEmail bool  // else the user identifies with name and zip code
	goals      []*goal
}

// kinds lists the task's goal kinds in order.
func (t *task) kinds() []goalKind {
	ks := make([]goalKind, len(t.goals))
	for i, g := range t.goals {
		ks[i] = g.kind
	}
	return ks
}

// describe names the task's goal kinds, e.g. "cancel+item_price".
func (t *task) describe() string {
	var sb strings.Builder
	for i, k := range t.kinds() {
		if i > 0 {
			sb.WriteByte('+')
		}
		sb.WriteString(k.String())
	}
	return sb.String()
}
