package tauretail

import (
	"math/rand/v2"
	"strings"
)

// stopToken ends the conversation, as the original benchmark's user does.
const stopToken = "###STOP###"

// maxStalls is how many replies in a row the user can make without
// progress before giving up.
const maxStalls = 5

// identity is how the user has identified themselves so far.
type identity int

const (
	identityNone identity = iota
	identityEmail
	identityNameZip
)

// customer is the simulated user: a rule-based stand-in for the original
// benchmark's language-model user. It opens with a request that withholds
// its details, gives each detail only when the agent's message asks for it
// (recognised by keywords), says yes only to a summary that states every
// argument of the write it wants, and ends the conversation with stopToken
// once all its requests are met or it gives up.
type customer struct {
	task       *task
	rng        *rand.Rand
	identity   identity
	introduced int // how many goals the user has brought up
	stalls     int // replies in a row without progress
}

// current is the first unmet goal, or nil when all are met.
func (c *customer) current() *goal {
	for _, g := range c.task.goals {
		if !g.done() {
			return g
		}
	}
	return nil
}

// opening is the user's first message.
func (c *customer) opening() string {
	c.introduced = 1
	return c.pick(greetings) + " " + c.request(c.task.goals[0])
}

// reply answers one agent message. lower is the message in lower case.
func (c *customer) reply(lower string) (text string, stop bool) {
	g := c.current()
	if g == nil {
		return c.pick(farewells) + " " + stopToken, true
	}
	var sb strings.Builder
	if idx := c.indexOf(g); idx >= c.introduced {
		// The previous request is met: bring up the next one.
		c.introduced = idx + 1
		c.stalls = 0
		return c.pick(nextRequestPrefixes) + c.request(g), false
	}

	if isConfirmationRequest(lower) {
		if w := c.matchingWrite(lower); w != nil {
			w.confirmed = true
			c.stalls = 0
			return c.pick(yesReplies), false
		}
		sb.WriteString(c.pick(noReplies))
		sb.WriteByte(' ')
		c.restate(&sb, g)
		return c.stall(sb.String())
	}

	c.answerIdentity(&sb, lower)
	c.answerNeeds(&sb, g, lower)
	if sb.Len() > 0 {
		c.stalls = 0
		return sb.String(), false
	}
	if g.confirmed {
		return c.stall(c.pick(goAheadReplies))
	}
	sb.WriteString(c.pick(confusedReplies))
	sb.WriteByte(' ')
	c.restate(&sb, g)
	return c.stall(sb.String())
}

// stall counts a reply without progress; too many in a row and the user
// leaves.
func (c *customer) stall(text string) (string, bool) {
	c.stalls++
	if c.stalls >= maxStalls {
		return c.pick(giveUpReplies) + " " + stopToken, true
	}
	return text, false
}

func (c *customer) indexOf(g *goal) int {
	for i, x := range c.task.goals {
		if x == g {
			return i
		}
	}
	return -1
}

// matchingWrite returns an unmet write goal whose confirmation tokens all
// appear in the message.
func (c *customer) matchingWrite(lower string) *goal {
	for _, g := range c.task.goals {
		if g.gold == nil || g.executed {
			continue
		}
		all := true
		for _, tok := range g.gold.confirmationTokens() {
			if !strings.Contains(lower, strings.ToLower(tok)) {
				all = false
				break
			}
		}
		if all {
			return g
		}
	}
	return nil
}

var (
	confirmCues = []string{"confirm", "proceed", "go ahead", "shall i", "should i", "would you like me to",
		"do you want me to", "is that correct", "is this correct", "is that right", "yes/no"}
	writeCues = []string{"cancel", "modify", "change", "exchange", "return", "update", "refund"}
)

// isConfirmationRequest recognises a request to approve a write: a
// confirmation cue together with an order id or a write verb. "Could you
// confirm your email?" is a question, not such a request.
func isConfirmationRequest(lower string) bool {
	return containsAny(lower, confirmCues) && (hasOrderID(lower) || containsAny(lower, writeCues) || mentionsPostalAddress(lower))
}

// mentionsPostalAddress reports whether "address" occurs other than in
// "email address".
func mentionsPostalAddress(lower string) bool {
	n := strings.Count(lower, "address")
	return n > strings.Count(lower, "email address")+strings.Count(lower, "e-mail address")
}

// hasOrderID reports whether s contains "w" followed by seven digits.
func hasOrderID(s string) bool {
	for i := 0; i+8 <= len(s); i++ {
		if s[i] != 'w' {
			continue
		}
		digits := 0
		for digits < 7 && s[i+1+digits] >= '0' && s[i+1+digits] <= '9' {
			digits++
		}
		if digits == 7 {
			return true
		}
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func (c *customer) answerIdentity(sb *strings.Builder, lower string) {
	askEmail := strings.Contains(lower, "email") || strings.Contains(lower, "e-mail")
	askNameZip := containsAny(lower, []string{"name", "zip", "postal"})
	if !askEmail && !askNameZip {
		return
	}
	u := c.task.user
	switch {
	case askEmail && c.task.knowsEmail:
		sb.WriteString(strings.Replace(c.pick(emailReplies), "{email}", u.Email, 1))
		c.identity = identityEmail
	case askEmail:
		sb.WriteString("I don't remember which email I used. ")
		fallthrough
	default:
		r := strings.Replace(c.pick(nameZipReplies), "{name}", u.FirstName+" "+u.LastName, 1)
		sb.WriteString(strings.Replace(r, "{zip}", u.Address.Zip, 1))
		if c.identity == identityNone {
			c.identity = identityNameZip
		}
	}
}

var (
	orderCues    = []string{"order id", "order number", "which order", "what order", "order #", "order ids"}
	itemCues     = []string{"item", "product"}
	moreItemCues = []string{"other item", "any other", "anything else", "all the item", "all item", "all of them", "additional", "more item"}
	reasonCues   = []string{"reason", "why"}
	paymentCues  = []string{"payment", "pay ", "refund", "card", "paypal", "charge"}
)

// answerNeeds gives the details of goal g that the message asks for.
func (c *customer) answerNeeds(sb *strings.Builder, g *goal, lower string) {
	needs := g.kind.needs()
	space := func() {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
	}
	if needs&needOrder != 0 && containsAny(lower, orderCues) {
		space()
		c.describeOrder(sb, g)
		g.revealed |= needOrder
	}
	if needs&needItems != 0 {
		askItems, askMore := containsAny(lower, itemCues), containsAny(lower, moreItemCues)
		if askItems || askMore {
			space()
			c.describeItems(sb, g, askMore)
			g.revealed |= needItems
		}
	}
	if needs&needReason != 0 && containsAny(lower, reasonCues) {
		space()
		sb.WriteString(c.pick(reasonIntros))
		sb.WriteString(g.reasonPhrase)
		g.revealed |= needReason
	}
	if needs&needPayment != 0 && containsAny(lower, paymentCues) {
		space()
		tmpl := paymentReplies
		if g.kind == goalReturn {
			tmpl = refundReplies
		}
		sb.WriteString(strings.Replace(c.pick(tmpl), "{method}", g.paymentPhrase, 1))
		g.revealed |= needPayment
	}
	if needs&needAddress != 0 && mentionsPostalAddress(lower) {
		space()
		sb.WriteString(strings.Replace(c.pick(addressReplies), "{address}", g.address.Describe(), 1))
		g.revealed |= needAddress
	}
}

func (c *customer) describeOrder(sb *strings.Builder, g *goal) {
	if g.knowsOrderID {
		sb.WriteString(strings.Replace(c.pick(orderIDReplies), "{id}", g.orderID, 1))
		return
	}
	sb.WriteString(strings.Replace(c.pick(orderHintReplies), "{product}", g.orderHint, 1))
}

// describeItems lists the first item the user wants handled, or all of
// them when the agent asks whether there are others: the policy asks the
// agent to make sure the list is complete before a write that can only be
// made once.
func (c *customer) describeItems(sb *strings.Builder, g *goal, all bool) {
	if g.itemsRevealed > 0 && !all {
		c.writeItems(sb, g, 0, g.itemsRevealed)
		return
	}
	upTo := 1
	if all {
		upTo = len(g.changes)
	}
	if g.itemsRevealed >= upTo {
		sb.WriteString(c.pick(noMoreItemsReplies))
		return
	}
	c.writeItems(sb, g, g.itemsRevealed, upTo)
	g.itemsRevealed = upTo
}

func (c *customer) writeItems(sb *strings.Builder, g *goal, from, to int) {
	verb := "change"
	switch g.kind {
	case goalExchange:
		verb = "exchange"
	case goalReturn:
		verb = "return"
	}
	for i := from; i < to; i++ {
		ch := g.changes[i]
		if i > from {
			sb.WriteByte(' ')
		}
		if i == 0 {
			sb.WriteString("I'd like to " + verb + " the ")
		} else {
			sb.WriteString("I also want to " + verb + " the ")
		}
		sb.WriteString(ch.old.Name + " with " + ch.old.Options.Describe())
		switch g.kind {
		case goalModifyItems:
			sb.WriteString(" to the one with " + ch.newVariant.Options.Describe())
		case goalExchange:
			sb.WriteString(" for the one with " + ch.newVariant.Options.Describe())
		}
		sb.WriteByte('.')
	}
}

// request is how the user brings up goal g.
func (c *customer) request(g *goal) string {
	r := c.pick(requestTemplates[g.kind])
	if g.kind == goalItemPrice {
		r = strings.Replace(r, "{product}", g.product.Name, 1)
		r = strings.Replace(r, "{options}", g.variant.Options.Describe(), 1)
	}
	return r
}

// restate repeats goal g with the details given so far, after a wrong
// summary or an unclear message.
func (c *customer) restate(sb *strings.Builder, g *goal) {
	if g.revealed == 0 {
		sb.WriteString(c.request(g))
		return
	}
	sb.WriteString("To be clear: ")
	n := sb.Len()
	if g.revealed&needOrder != 0 {
		c.describeOrder(sb, g)
	}
	if g.itemsRevealed > 0 {
		if sb.Len() > n {
			sb.WriteByte(' ')
		}
		c.writeItems(sb, g, 0, g.itemsRevealed)
	}
	if g.revealed&needReason != 0 {
		sb.WriteString(" I want to cancel because " + g.reasonPhrase)
	}
	if g.revealed&needPayment != 0 {
		sb.WriteString(" The payment method is " + g.paymentPhrase + ".")
	}
	if g.revealed&needAddress != 0 {
		sb.WriteString(" The new address is " + g.address.Describe() + ".")
	}
}

func (c *customer) pick(list []string) string {
	return list[c.rng.IntN(len(list))]
}

var (
	greetings = []string{"Hi!", "Hello,", "Hey there.", "Good morning.", "Hi there,", "Hello."}

	requestTemplates = [...][]string{
		goalCancel: {"I'd like to cancel an order.", "I need to cancel one of my orders.",
			"Can you help me cancel an order I placed?", "I want to cancel an order, please."},
		goalModifyItems: {"I want to change some items in an order I just placed.", "I'd like to modify an item in one of my pending orders.",
			"Can I switch an item in my order to a different option?", "I need to change the options of something I ordered."},
		goalReturn: {"I'd like to return something I received.", "I want to return an item from a delivered order.",
			"Can you help me with a return?", "I need to send back something I bought."},
		goalOrderStatus: {"Could you tell me the status of one of my orders?", "I'm wondering where my order is.",
			"Can you check on an order for me? I'd like to know its status.", "What's the status of my order?"},
		goalOrderTotal: {"How much did I pay for one of my orders?", "Can you tell me the total of an order I placed?",
			"I'd like to know how much one of my orders cost in total."},
		goalItemPrice: {"How much does the {product} with {options} cost?", "What's the price of the {product} with {options}?",
			"I'm thinking of buying the {product} with {options}. How much is it?"},
		goalExchange: {"I'd like to exchange an item I received for a different option.", "Can I exchange something from a delivered order?",
			"I want to swap an item I got for another version of it."},
		goalOrderAddress: {"I need to change the shipping address on an order.", "Can you update the delivery address for one of my orders?",
			"I'd like one of my orders shipped to a different address."},
		goalUserAddress: {"I moved and need to update the default address on my account.", "Can you change the address on my profile?",
			"I'd like to update my account's default address."},
	}

	nextRequestPrefixes = []string{"Thanks! One more thing: ", "Great. Also, ", "Thank you. There's something else: ", "Perfect. I also have another request: "}
	farewells           = []string{"Thanks, that's all.", "Great, thank you for your help.", "That's everything, thanks!", "Thanks, that's all I needed."}
	giveUpReplies       = []string{"I don't think this is getting anywhere. I'll try again later.", "Never mind, I'll contact you another time."}
	yesReplies          = []string{"Yes, please go ahead.", "Yes, that's right.", "Yes, I confirm.", "Yes, please do that."}
	noReplies           = []string{"No, that's not what I want.", "No, that's not right.", "No, that isn't correct."}
	goAheadReplies      = []string{"Yes, please go ahead with it.", "I already said yes, please do it."}
	confusedReplies     = []string{"Sorry, I'm not sure what you mean.", "I'm not sure I follow.", "Hmm, I don't understand."}
	emailReplies        = []string{"My email is {email}.", "Sure, it's {email}.", "It's {email}."}
	nameZipReplies      = []string{"My name is {name} and my zip code is {zip}.", "I'm {name}, zip code {zip}.", "{name}, and my zip code is {zip}."}
	orderIDReplies      = []string{"The order id is {id}.", "It's order {id}.", "Order {id}."}
	orderHintReplies    = []string{"I don't have the order id at hand, but it's the order with the {product}.",
		"I'm not sure of the order number. It's the one with the {product} in it."}
	noMoreItemsReplies = []string{"That's all the items.", "No, that's everything.", "Just that, nothing else."}
	reasonIntros       = []string{"Well, ", "The reason is that ", "Honestly, "}
	paymentReplies     = []string{"Please use {method} for the price difference.", "I'd like to use {method}.", "Use {method}, please."}
	refundReplies      = []string{"Please refund it to {method}.", "I'd like the refund to go to {method}."}
	addressReplies     = []string{"The new address is {address}.", "Please use {address}.", "It's {address}."}
)
