package tauretail

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/agentrl/agentrl/envs"
)

var (
	firstNames = []string{"Emma", "Liam", "Olivia", "Noah", "Ava", "Mateo", "Sofia", "Ethan", "Mia", "Lucas",
		"Amelia", "Yusuf", "Harper", "Omar", "Chloe", "Daniel", "Aisha", "James", "Priya", "Leo",
		"Grace", "Hiro", "Nora", "Ivan", "Zoe", "Raj", "Lena", "Samuel", "Fatima", "Aiden"}
	lastNames = []string{"Garcia", "Smith", "Nguyen", "Johnson", "Khan", "Rossi", "Muller", "Kim", "Lopez", "Brown",
		"Silva", "Patel", "Wilson", "Moreau", "Tanaka", "Novak", "Davis", "Ahmed", "Jensen", "Hughes",
		"Santos", "Ito", "Clark", "Lee", "Martin", "Walker", "Costa", "Young", "Schmidt", "Reyes"}
	streetNames = []string{"Maple Avenue", "Oak Street", "Cedar Lane", "Elm Drive", "Pine Road", "Willow Way",
		"Lakeview Boulevard", "Hillcrest Road", "River Street", "Sunset Drive", "Park Avenue", "Chestnut Court",
		"Highland Avenue", "Meadow Lane", "Spring Street", "Forest Road"}
	secondLines = []string{"Apt 2", "Apt 14", "Suite 300", "Unit 7", "Apt 5B", "Suite 12", "Floor 3"}
	cities      = []struct{ name, state, zipPrefix string }{
		{"Springfield", "IL", "627"}, {"Austin", "TX", "787"}, {"Denver", "CO", "802"}, {"Portland", "OR", "972"},
		{"Columbus", "OH", "432"}, {"Phoenix", "AZ", "850"}, {"Seattle", "WA", "981"}, {"Boston", "MA", "021"},
		{"Nashville", "TN", "372"}, {"Charlotte", "NC", "282"}, {"San Diego", "CA", "921"}, {"Madison", "WI", "537"},
		{"Tampa", "FL", "336"}, {"Raleigh", "NC", "276"}, {"Omaha", "NE", "681"}, {"Boise", "ID", "837"},
	}
	cardBrands = []string{"visa", "mastercard", "amex", "discover"}
)

// generator draws one episode's database and hidden goal.
type generator struct {
	rng      *rand.Rand
	ids      idSet
	db       *Database
	products []*Product // the split's products, shuffled; drawn in order
	next     int
}

// generateEpisode builds the initial database and the task of one episode.
// Train and test draw goals from seenGoalKinds and orders from products
// that are not held out; unseen tasks start with a held-out goal kind and
// their orders draw from the whole catalog. ids is emptied and reused, to
// spare a map per episode.
func generateEpisode(rng *rand.Rand, split envs.Split, ids idSet) (*Database, *task) {
	clear(ids)
	g := &generator{
		rng: rng,
		ids: ids,
		db:  newDatabase(),
	}
	for _, p := range catalog().Products {
		if split == envs.Unseen || !p.HeldOut {
			g.products = append(g.products, p)
		}
	}
	rng.Shuffle(len(g.products), func(i, j int) { g.products[i], g.products[j] = g.products[j], g.products[i] })

	kinds := g.goalKinds(split)
	t := &task{knowsEmail: rng.IntN(5) != 0}
	u := g.newUser(g.pick(firstNames), g.pick(lastNames), g.newAddress(), true)
	// A relative shares the user's last name and address, so that a lookup
	// by name and zip code needs the first name too.
	relative := g.newUser(g.otherName(firstNames, u.FirstName), u.LastName, u.Address, false)
	stranger := g.newUser(g.otherName(firstNames, u.FirstName), g.otherName(lastNames, u.LastName), g.newAddress(), false)

	// One order per goal that is about an order, then one or two more.
	var orders []*Order
	for _, k := range kinds {
		if k.needs()&needOrder != 0 {
			orders = append(orders, g.newOrder(u, g.statusFor(k)))
		}
	}
	for n := 1 + rng.IntN(2); n > 0 && len(orders) < 4; n-- {
		orders = append(orders, g.newOrder(u, g.pick(orderStatuses)))
	}
	goalOrders := slices.Clone(orders)
	rng.Shuffle(len(orders), func(i, j int) { orders[i], orders[j] = orders[j], orders[i] })
	for _, o := range orders {
		u.Orders = append(u.Orders, o.ID)
	}
	for _, other := range []*User{relative, stranger} {
		o := g.newOrder(other, g.pick(orderStatuses))
		other.Orders = append(other.Orders, o.ID)
	}

	for _, k := range kinds {
		var o *Order
		if k.needs()&needOrder != 0 {
			o, goalOrders = goalOrders[0], goalOrders[1:]
		}
		t.goals = append(t.goals, g.newGoal(k, u, o))
	}
	t.user = u.clone()
	return g.db, t
}

var orderStatuses = []string{statusPending, statusProcessed, statusDelivered, statusCancelled}

// goalKinds draws one or two distinct goal kinds for the split.
func (g *generator) goalKinds(split envs.Split) []goalKind {
	pool := seenGoalKinds
	var kinds []goalKind
	if split == envs.Unseen {
		kinds = append(kinds, unseenGoalKinds[g.rng.IntN(len(unseenGoalKinds))])
		pool = slices.Concat(seenGoalKinds, unseenGoalKinds)
	} else {
		kinds = append(kinds, pool[g.rng.IntN(len(pool))])
	}
	if g.rng.IntN(5) < 2 {
		for {
			k := pool[g.rng.IntN(len(pool))]
			if k != kinds[0] {
				kinds = append(kinds, k)
				break
			}
		}
	}
	return kinds
}

// statusFor is the status an order must have for a goal of kind k.
func (g *generator) statusFor(k goalKind) string {
	switch k {
	case goalCancel, goalModifyItems, goalOrderAddress:
		return statusPending
	case goalReturn, goalExchange:
		return statusDelivered
	case goalOrderTotal:
		return orderStatuses[g.rng.IntN(3)] // not cancelled
	}
	return g.pick(orderStatuses)
}

func (g *generator) pick(list []string) string {
	return list[g.rng.IntN(len(list))]
}

func (g *generator) otherName(list []string, not string) string {
	for {
		if n := g.pick(list); n != not {
			return n
		}
	}
}

func (g *generator) newAddress() Address {
	c := cities[g.rng.IntN(len(cities))]
	a := Address{
		Address1: strconv.Itoa(10+g.rng.IntN(9990)) + " " + g.pick(streetNames),
		City:     c.name,
		State:    c.state,
		Country:  "USA",
		Zip:      c.zipPrefix + strconv.Itoa(10+g.rng.IntN(90)),
	}
	if g.rng.IntN(2) == 0 {
		a.Address2 = g.pick(secondLines)
	}
	return a
}

// newUser adds a user with a fresh id and email; the user the episode is
// about (main) gets a richer set of payment methods.
func (g *generator) newUser(first, last string, addr Address, main bool) *User {
	lower := strings.ToLower(first) + "_" + strings.ToLower(last)
	u := &User{
		ID:        lower + "_" + g.ids.digits(g.rng, 4),
		FirstName: first,
		LastName:  last,
		Email:     strings.ToLower(first) + "." + strings.ToLower(last) + g.ids.digits(g.rng, 2) + "@example.com",
		Address:   addr,
	}
	cards := 1
	if main {
		cards = g.rng.IntN(3) // 0, 1 or 2 credit cards
	}
	for range cards {
		u.PaymentMethods = append(u.PaymentMethods, PaymentMethod{
			ID: sourceCreditCard + "_" + g.ids.digits(g.rng, 7), Source: sourceCreditCard,
			Brand: g.pick(cardBrands), LastFour: g.ids.digits(g.rng, 4), // unique, so cards are told apart
		})
	}
	if main && (cards == 0 || g.rng.IntN(5) < 2) {
		u.PaymentMethods = append(u.PaymentMethods, PaymentMethod{ID: sourcePaypal + "_" + g.ids.digits(g.rng, 7), Source: sourcePaypal})
	}
	if main && g.rng.IntN(2) == 0 {
		u.PaymentMethods = append(u.PaymentMethods, PaymentMethod{
			ID: sourceGiftCard + "_" + g.ids.digits(g.rng, 7), Source: sourceGiftCard,
			Balance: Money(g.rng.IntN(30000)),
		})
	}
	g.rng.Shuffle(len(u.PaymentMethods), func(i, j int) {
		u.PaymentMethods[i], u.PaymentMethods[j] = u.PaymentMethods[j], u.PaymentMethods[i]
	})
	g.db.Users[u.ID] = u
	return u
}

// newOrder adds an order of one to three products the user has not ordered
// before in this episode, so that naming a product identifies the order.
func (g *generator) newOrder(u *User, status string) *Order {
	o := &Order{
		ID:      "#W" + g.ids.digits(g.rng, 7),
		UserID:  u.ID,
		Address: u.Address,
		Status:  status,
	}
	for n := 1 + g.rng.IntN(3); n > 0; n-- {
		p := g.products[g.next%len(g.products)]
		g.next++
		v := p.Variants[g.rng.IntN(len(p.Variants))]
		o.Items = append(o.Items, OrderItem{Name: p.Name, ProductID: p.ProductID, ItemID: v.ItemID, Price: v.Price, Options: v.Options})
	}
	pm := u.PaymentMethods[g.rng.IntN(len(u.PaymentMethods))]
	o.PaymentHistory = []Transaction{{"payment", o.Total(), pm.ID}}
	switch status {
	case statusCancelled:
		o.PaymentHistory = append(o.PaymentHistory, Transaction{"refund", o.Total(), pm.ID})
		o.CancelReason = g.pick([]string{reasonNoLongerNeeded, reasonMistake})
	case statusProcessed, statusDelivered:
		f := Fulfillment{TrackingIDs: []string{g.ids.digits(g.rng, 12)}}
		for _, it := range o.Items {
			f.ItemIDs = append(f.ItemIDs, it.ItemID)
		}
		o.Fulfillments = []Fulfillment{f}
	}
	g.db.Orders[o.ID] = o
	return o
}

// newGoal draws the details of a goal of kind k on order o (nil when the
// kind involves no order), with the gold write that fulfils it.
func (g *generator) newGoal(k goalKind, u *User, o *Order) *goal {
	gl := &goal{kind: k, knowsOrderID: g.rng.IntN(10) < 7}
	if o != nil {
		gl.orderID, gl.orderHint = o.ID, o.Items[0].Name
	}
	switch k {
	case goalCancel:
		gl.reason = g.pick([]string{reasonNoLongerNeeded, reasonMistake})
		gl.reasonPhrase = g.pick(reasonPhrases[gl.reason])
		gl.gold = &writeCall{tool: toolCancel, orderID: o.ID, reason: gl.reason}
	case goalModifyItems, goalExchange:
		gl.changes = g.pickItems(o, true)
		gl.orderHint = gl.changes[0].old.Name
		tool := toolModifyItems
		if k == goalExchange {
			tool = toolExchange
		}
		gl.gold = &writeCall{tool: tool, orderID: o.ID}
		var diff Money
		for _, c := range gl.changes {
			gl.gold.itemIDs = append(gl.gold.itemIDs, c.old.ItemID)
			gl.gold.newItemIDs = append(gl.gold.newItemIDs, c.newVariant.ItemID)
			diff += c.newVariant.Price - c.old.Price
		}
		pm := &u.PaymentMethods[g.rng.IntN(len(u.PaymentMethods))]
		if pm.Source == sourceGiftCard && pm.Balance < diff {
			pm.Balance = diff + Money(g.rng.IntN(10000))
		}
		gl.gold.paymentMethodID = pm.ID
		gl.paymentPhrase = describePaymentMethod(pm)
	case goalReturn:
		gl.changes = g.pickItems(o, false)
		gl.orderHint = gl.changes[0].old.Name
		gl.gold = &writeCall{tool: toolReturn, orderID: o.ID, paymentMethodID: o.PaymentHistory[0].PaymentMethodID}
		for _, c := range gl.changes {
			gl.gold.itemIDs = append(gl.gold.itemIDs, c.old.ItemID)
		}
		gl.paymentPhrase = "the original payment method"
		for _, pm := range u.PaymentMethods {
			if pm.Source == sourceGiftCard && pm.ID != gl.gold.paymentMethodID && g.rng.IntN(2) == 0 {
				gl.gold.paymentMethodID = pm.ID
				gl.paymentPhrase = "my gift card"
				break
			}
		}
	case goalOrderStatus:
		gl.output = o.Status
	case goalOrderTotal:
		gl.output = o.Total().String()
	case goalItemPrice:
		gl.product = g.products[g.rng.IntN(len(g.products))]
		gl.variant = gl.product.Variants[g.rng.IntN(len(gl.product.Variants))]
		gl.output = gl.variant.Price.String()
	case goalOrderAddress:
		gl.address = g.newAddress()
		gl.gold = &writeCall{tool: toolModifyAddress, orderID: o.ID, address: gl.address}
	case goalUserAddress:
		gl.address = g.newAddress()
		gl.gold = &writeCall{tool: toolUserAddress, userID: u.ID, address: gl.address}
	}
	return gl
}

// pickItems chooses one or more items of o; with newVariants, each gets an
// available variant of the same product that differs from the current one.
func (g *generator) pickItems(o *Order, newVariants bool) []itemChange {
	n := 1
	if len(o.Items) > 1 && g.rng.IntN(5) < 2 {
		n = 2
	}
	var changes []itemChange
	for _, i := range g.rng.Perm(len(o.Items))[:n] {
		c := itemChange{old: o.Items[i]}
		if newVariants {
			p := catalog().Product(c.old.ProductID)
			var choices []Variant
			for _, v := range p.Variants {
				if v.Available && v.ItemID != c.old.ItemID {
					choices = append(choices, v)
				}
			}
			c.newVariant = choices[g.rng.IntN(len(choices))]
		}
		changes = append(changes, c)
	}
	return changes
}

// describePaymentMethod names a payment method as its owner would.
func describePaymentMethod(pm *PaymentMethod) string {
	switch pm.Source {
	case sourceCreditCard:
		return "my " + pm.Brand + " credit card ending in " + pm.LastFour
	case sourceGiftCard:
		return "my gift card"
	}
	return "my PayPal account"
}

var reasonPhrases = map[string][]string{
	reasonNoLongerNeeded: {"I don't need it anymore.", "I no longer need it.", "it turns out I won't need it after all.", "my plans changed and I don't need it."},
	reasonMistake:        {"I ordered it by mistake.", "I placed it by accident.", "it was a mistake, I didn't mean to order it.", "I clicked order by mistake."},
}
