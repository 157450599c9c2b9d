package math

import (
	"errors"
	"fmt"
	"strings"
)

// templates are the kinds of problems. Each generates 2 to 6 solution
// steps; its parameters are chosen first (so every division comes out even)
// and the steps written after. The unseen ones never appear in train or
// test.
var templates = []template{
	{name: "shopping", generate: shopping},
	{name: "wages", generate: wages},
	{name: "travel", generate: travel},
	{name: "ages", generate: ages},
	{name: "sharing", generate: sharing},
	{name: "discount", generate: discount},
	{name: "tank", generate: tank},
	{name: "savings", generate: savings},
	{name: "schedule", generate: schedule},
	{name: "inventory", generate: inventory},
	{name: "dozens", unseen: true, generate: dozens},
	{name: "fractions", unseen: true, generate: fractions},
	{name: "garden", unseen: true, generate: garden},
}

// choose calls try until it accepts its random parameters.
func (g *gen) choose(try func() bool) {
	for range 1000 {
		if try() {
			return
		}
	}
	g.fail(errors.New("no parameters satisfy the template's constraints"))
}

// nextBill is the smallest usual bill that pays more than amount.
func nextBill(amount int64) int64 {
	for _, b := range []int64{10, 20, 50, 100} {
		if b > amount {
			return b
		}
	}
	return (amount/100 + 1) * 100
}

// noun is a countable thing.
type noun struct {
	singular, plural string
}

type goods struct {
	noun
	minPrice, maxPrice int64
}

var shopGoods = []goods{
	{noun{"notebook", "notebooks"}, 2, 6}, {noun{"pen", "pens"}, 1, 3}, {noun{"book", "books"}, 5, 15},
	{noun{"toy car", "toy cars"}, 3, 9}, {noun{"T-shirt", "T-shirts"}, 6, 15}, {noun{"sandwich", "sandwiches"}, 3, 8},
	{noun{"candle", "candles"}, 2, 7}, {noun{"plant", "plants"}, 4, 12}, {noun{"comic", "comics"}, 2, 5},
	{noun{"cupcake", "cupcakes"}, 2, 4}, {noun{"ball", "balls"}, 3, 10}, {noun{"mug", "mugs"}, 4, 9},
}

// shopping: several items at a unit price, the total, the change.
func shopping(g *gen, steps int) string {
	kinds := map[int]int{2: 1, 3: 2, 4: 2, 5: 3, 6: 4}[steps]
	withChange := steps != 3
	p := g.person()
	var bought, costs []string
	var total int64
	for _, i := range g.rng.Perm(len(shopGoods))[:kinds] {
		it := shopGoods[i]
		qty, price := g.between(2, 9), g.between(it.minPrice, it.maxPrice)
		bought = append(bought, fmt.Sprintf("%d %s for $%d each", qty, it.plural, price))
		cost := g.calc("The "+it.plural+" cost %s = $%s.", fmt.Sprintf("%d*%d", qty, price))
		costs = append(costs, itoa(cost))
		total += cost
	}
	if kinds > 1 {
		total = g.calc(capital(p.they)+" spends %s = $%s in all.", strings.Join(costs, "+"))
	}
	q := fmt.Sprintf("%s buys %s.", p.name, joinAnd(bought))
	if !withChange {
		return q + fmt.Sprintf(" How much does %s spend in all?", p.they)
	}
	bill := nextBill(total)
	g.calc(capital(p.they)+" gets %s = $%s in change.", fmt.Sprintf("%d-%d", bill, total))
	return q + fmt.Sprintf(" %s pays with a $%d bill. How much change does %s get?", capital(p.they), bill, p.they)
}

// wages: pay per day and week, a second job, expenses, several weeks.
func wages(g *gen, steps int) string {
	p := g.person()
	rate, hours, days := g.between(10, 25), g.between(4, 9), g.between(3, 6)
	q := fmt.Sprintf("%s earns $%d an hour at a cafe. %s works %d hours a day, %d days a week.", p.name, rate, capital(p.they), hours, days)
	daily := g.calc(p.name+" earns %s = $%s a day.", fmt.Sprintf("%d*%d", rate, hours))
	weekly := g.calc("At the cafe "+p.they+" earns %s = $%s a week.", fmt.Sprintf("%d*%d", daily, days))
	if steps >= 4 {
		sitRate, sitHours := g.between(8, 20), g.between(2, 6)
		q += fmt.Sprintf(" On Sundays %s also babysits for %d hours at $%d an hour.", p.they, sitHours, sitRate)
		sitting := g.calc("Babysitting pays %s = $%s.", fmt.Sprintf("%d*%d", sitHours, sitRate))
		weekly = g.calc("In a week "+p.they+" earns %s = $%s.", fmt.Sprintf("%d+%d", weekly, sitting))
	}
	if steps == 2 || steps == 4 {
		return q + fmt.Sprintf(" How much does %s earn in a week?", p.they)
	}
	fares := g.between(10, weekly/3)
	q += fmt.Sprintf(" %s spends $%d a week on bus fares.", capital(p.they), fares)
	weekly = g.calc(capital(p.they)+" keeps %s = $%s a week.", fmt.Sprintf("%d-%d", weekly, fares))
	if steps != 6 {
		return q + fmt.Sprintf(" How much money does %s keep each week?", p.they)
	}
	weeks := g.between(2, 5)
	g.calc("In "+itoa(weeks)+" weeks "+p.they+" keeps %s = $%s.", fmt.Sprintf("%d*%d", weekly, weeks))
	return q + fmt.Sprintf(" How much money does %s keep in %d weeks?", p.they, weeks)
}

type travelMode struct {
	verb       string
	slow, fast int64 // km per hour
	maxExtraKm int64
}

var travelModes = []travelMode{
	{verb: "drives", slow: 40, fast: 100, maxExtraKm: 250},
	{verb: "cycles", slow: 10, fast: 25, maxExtraKm: 60},
	{verb: "rides a scooter", slow: 15, fast: 40, maxExtraKm: 80},
	{verb: "sails", slow: 10, fast: 30, maxExtraKm: 90},
}

// travel: distance = speed * time over several legs, the total, what is
// left of the way.
func travel(g *gen, steps int) string {
	legs := map[int]int{2: 1, 3: 2, 4: 2, 5: 3, 6: 4}[steps]
	withRest := steps != 3
	p := g.person()
	m := pick(g, travelModes)
	leads := []string{"First", "Then", "After that", "Finally"}
	var parts, dists []string
	var total int64
	for i := range legs {
		speed, hours := g.multipleOf(5, m.slow, m.fast), g.between(1, 5)
		parts = append(parts, fmt.Sprintf("at %d km per hour for %s", speed, plural(hours, "hour", "hours")))
		lead := leads[i]
		if legs == 1 {
			lead = "So far"
		}
		d := g.calc(lead+" "+p.they+" covers %s = %s km.", fmt.Sprintf("%d*%d", speed, hours))
		dists = append(dists, itoa(d))
		total += d
	}
	q := fmt.Sprintf("%s %s %s.", p.name, m.verb, strings.Join(parts, ", then "))
	if legs > 1 {
		total = g.calc("In all "+p.they+" covers %s = %s km.", strings.Join(dists, "+"))
	}
	if !withRest {
		return q + fmt.Sprintf(" How many km does %s travel in all?", p.they)
	}
	goal := total + g.between(10, m.maxExtraKm)
	g.calc(capital(p.they)+" still has %s = %s km to go.", fmt.Sprintf("%d-%d", goal, total))
	return q + fmt.Sprintf(" %s destination is %d km from the start. How many more km does %s have to travel?", capital(p.their), goal, p.they)
}

var multiples = map[int64]string{2: "twice", 3: "three times", 4: "four times"}

// ages: a chain of "older than", "younger than", "times as old" relations,
// perhaps ending some years in the future.
func ages(g *gen, steps int) string {
	first := g.person()
	age := g.between(3, 12)
	q := fmt.Sprintf("%s is %d years old.", first.name, age)
	last := first.name
	future := g.rng.IntN(3) == 0
	relations := steps
	if future {
		relations--
	}
	for range relations {
		p := g.person()
		type relation struct {
			sentence, expr string
		}
		var options []relation
		if k := g.between(2, 12); age+k <= 80 {
			options = append(options, relation{fmt.Sprintf("%s is %d years older than %s.", p.name, k, last), fmt.Sprintf("%d+%d", age, k)})
		}
		if age >= 6 {
			k := g.between(2, age-3)
			options = append(options, relation{fmt.Sprintf("%s is %d years younger than %s.", p.name, k, last), fmt.Sprintf("%d-%d", age, k)})
		}
		if k := g.between(2, 4); age*k <= 80 {
			options = append(options, relation{fmt.Sprintf("%s is %s as old as %s.", p.name, multiples[k], last), fmt.Sprintf("%d*%d", age, k)})
		}
		if age%2 == 0 && age >= 6 {
			options = append(options, relation{fmt.Sprintf("%s is half as old as %s.", p.name, last), fmt.Sprintf("%d/2", age)})
		}
		r := pick(g, options)
		q += " " + r.sentence
		age = g.calc(p.name+" is %s = %s years old.", r.expr)
		last = p.name
	}
	if !future {
		return q + fmt.Sprintf(" How old is %s?", last)
	}
	years := g.between(2, 10)
	g.calc("In "+itoa(years)+" years "+last+" will be %s = %s years old.", fmt.Sprintf("%d+%d", age, years))
	return q + fmt.Sprintf(" How old will %s be in %d years?", last, years)
}

type shareable struct {
	items, containers, giveVerb string
}

var shareables = []shareable{
	{"cookies", "trays", "eats"}, {"muffins", "trays", "eats"}, {"pencils", "boxes", "loses"},
	{"stickers", "packs", "gives away"}, {"apples", "crates", "eats"}, {"marbles", "bags", "loses"},
}

// sharing: containers of items, perhaps more of them, some kept, the rest
// shared equally, some of each share used up.
func sharing(g *gen, steps int) string {
	twoLots, keeps, usesUp := steps >= 4, steps == 3 || steps >= 5, steps == 6
	p := g.person()
	s := pick(g, shareables)
	var per, lots, morePer, moreLots, total, friends, kept, share, used int64
	g.choose(func() bool {
		per, lots = g.between(6, 24), g.between(2, 8)
		total = per * lots
		if twoLots {
			morePer, moreLots = g.between(6, 24), g.between(2, 6)
			total += morePer * moreLots
		}
		friends = g.between(2, min(9, total/4))
		kept = 0
		if keeps {
			r := total % friends
			lo := int64(0)
			if r == 0 {
				lo = 1
			}
			kept = r + friends*g.between(lo, (total/2-r)/friends)
		}
		share = (total - kept) / friends
		return (total-kept)%friends == 0 && (!usesUp || share >= 2)
	})
	q := fmt.Sprintf("%s has %d %s of %d %s.", p.name, lots, s.containers, per, s.items)
	total = g.calc(p.name+" has %s = %s "+s.items+".", fmt.Sprintf("%d*%d", lots, per))
	if twoLots {
		q += fmt.Sprintf(" %s gets %d more %s of %d %s each.", capital(p.they), moreLots, s.containers, morePer, s.items)
		more := g.calc("The new "+s.containers+" hold %s = %s "+s.items+".", fmt.Sprintf("%d*%d", moreLots, morePer))
		total = g.calc("Now "+p.they+" has %s = %s "+s.items+".", fmt.Sprintf("%d+%d", total, more))
	}
	rest := total
	if keeps {
		q += fmt.Sprintf(" %s keeps %d for %s and shares the rest equally among %d friends.", capital(p.they), kept, p.themselves, friends)
		rest = g.calc(capital(p.they)+" shares %s = %s "+s.items+".", fmt.Sprintf("%d-%d", total, kept))
	} else {
		q += fmt.Sprintf(" %s shares them equally among %d friends.", capital(p.they), friends)
	}
	share = g.calc("Each friend gets %s = %s "+s.items+".", fmt.Sprintf("%d/%d", rest, friends))
	if !usesUp {
		return q + fmt.Sprintf(" How many %s does each friend get?", s.items)
	}
	used = g.between(1, share-1)
	g.calc("Each friend has %s = %s "+s.items+" left.", fmt.Sprintf("%d-%d", share, used))
	return q + fmt.Sprintf(" Each friend then %s %d of them. How many %s does each friend have left?", s.giveVerb, used, s.items)
}

var saleItems = []noun{
	{"jacket", "jackets"}, {"pair of shoes", "pairs of shoes"}, {"backpack", "backpacks"},
	{"lamp", "lamps"}, {"board game", "board games"}, {"watch", "watches"}, {"blender", "blenders"},
}

// discount: a percentage off, several items, sales tax, change.
func discount(g *gen, steps int) string {
	p := g.person()
	it := pick(g, saleItems)
	var price, off, count, tax int64
	g.choose(func() bool {
		price = g.multipleOf(20, 40, 300)
		off = pick(g, []int64{5, 10, 15, 20, 25, 30, 40, 50})
		count = g.between(2, 5)
		tax = pick(g, []int64{5, 10})
		sale := price - price*off/100
		return steps < 5 || (count*sale*tax)%100 == 0
	})
	q := fmt.Sprintf("A %s normally costs $%d. This week it is %d%% off.", it.singular, price, off)
	saving := g.calc("The discount is %s = $%s.", fmt.Sprintf("%d*%d/100", price, off))
	sale := g.calc("The sale price is %s = $%s.", fmt.Sprintf("%d-%d", price, saving))
	if steps == 2 {
		return q + fmt.Sprintf(" What is the sale price of the %s?", it.singular)
	}
	q += fmt.Sprintf(" %s buys %d %s at the sale price.", p.name, count, it.plural)
	total := g.calc("The "+it.plural+" cost %s = $%s.", fmt.Sprintf("%d*%d", count, sale))
	if steps >= 5 {
		q += fmt.Sprintf(" A %d%% sales tax is added to the total.", tax)
		added := g.calc("The tax is %s = $%s.", fmt.Sprintf("%d*%d/100", total, tax))
		total = g.calc(p.name+" pays %s = $%s in all.", fmt.Sprintf("%d+%d", total, added))
	}
	switch steps {
	case 3:
		return q + fmt.Sprintf(" How much does %s pay?", p.they)
	case 5:
		return q + fmt.Sprintf(" How much does %s pay in all?", p.they)
	}
	bill := nextBill(total)
	g.calc(capital(p.they)+" gets %s = $%s in change.", fmt.Sprintf("%d-%d", bill, total))
	return q + fmt.Sprintf(" %s pays with $%d. How much change does %s get?", capital(p.they), bill, p.they)
}

// tank: two pipes fill a tank that may hold some water and may leak; the
// cost of pumping or the time to drain it again.
func tank(g *gen, steps int) string {
	withStart, withLeak := steps >= 3, steps >= 4
	pipeA, pipeB, minutes := g.between(5, 30), g.between(5, 30), g.between(4, 30)
	var leak, start, drain int64
	net := pipeA + pipeB
	if withLeak {
		leak = g.between(1, net/2)
		net -= leak
	}
	// Choose the contents so that the tank's capacity is a whole number of
	// minutes of draining.
	capacity := net * minutes
	if withStart {
		start = g.multipleOf(10, 10, 200)
		if steps == 6 {
			drain = g.multipleOf(5, 10, 60)
			start = (drain-capacity%drain)%drain + drain*g.between(1, 3)
		}
		capacity += start
	}
	cents := g.between(2, 9)
	q := fmt.Sprintf("A tank holds %d liters. Pipe A fills it at %d liters per minute and pipe B at %d liters per minute.", capacity, pipeA, pipeB)
	need := capacity
	if withStart {
		q += fmt.Sprintf(" The tank already contains %d liters.", start)
		need = g.calc("The pipes must add %s = %s liters.", fmt.Sprintf("%d-%d", capacity, start))
	}
	rate := g.calc("Together the pipes add %s = %s liters per minute.", fmt.Sprintf("%d+%d", pipeA, pipeB))
	if withLeak {
		q += fmt.Sprintf(" A leak lets out %d liters per minute.", leak)
		rate = g.calc("With the leak the tank gains %s = %s liters per minute.", fmt.Sprintf("%d-%d", rate, leak))
	}
	fill := g.calc("Filling takes %s = %s minutes.", fmt.Sprintf("%d/%d", need, rate))
	switch steps {
	case 2, 3, 4:
		return q + " With both pipes open, how many minutes does it take to fill the tank?"
	case 5:
		g.calc("Pumping costs %s = %s cents.", fmt.Sprintf("%d*%d", fill, cents))
		return q + fmt.Sprintf(" Running the pipes costs %d cents per minute. How many cents does it cost to fill the tank?", cents)
	}
	emptying := g.calc("Draining the full tank takes %s = %s minutes.", fmt.Sprintf("%d/%d", capacity, drain))
	g.calc("Filling and draining take %s = %s minutes.", fmt.Sprintf("%d+%d", fill, emptying))
	return q + fmt.Sprintf(" Once full, the tank is drained at %d liters per minute until it is empty. How many minutes do the filling and the draining take together?", drain)
}

var wishes = []string{"bike", "video game", "guitar", "tablet", "skateboard", "camera", "telescope", "keyboard"}
var extras = []string{"helmet", "case", "bag", "stand", "memory card", "strap"}

// savings: weeks of saving, from an allowance and chores, to afford an item
// and perhaps an accessory.
func savings(g *gen, steps int) string {
	p := g.person()
	wish := pick(g, wishes)
	withAllowance, withChores, withExtra := steps >= 3, steps >= 5, steps == 4 || steps == 6
	var weeks, allowance, spend, perChore, chores, weekly, saved, extra, price int64
	g.choose(func() bool {
		weeks = g.between(3, 20)
		if withAllowance {
			allowance = g.between(10, 40)
			spend = g.between(2, allowance-5)
			weekly = allowance - spend
		} else {
			weekly = g.between(5, 30)
		}
		if withChores {
			perChore, chores = g.between(2, 6), g.between(2, 5)
			weekly += perChore * chores
		}
		saved = g.between(5, 100)
		total := weeks*weekly + saved
		if withExtra {
			extra = g.between(10, 60)
			if 2*extra >= total {
				return false
			}
		}
		price = total - extra
		return true
	})
	q := fmt.Sprintf("%s wants a %s that costs $%d.", p.name, wish, price)
	cost := price
	if withExtra {
		q += fmt.Sprintf(" %s also needs a %s for $%d.", capital(p.they), pick(g, extras), extra)
		cost = g.calc("Together they cost %s = $%s.", fmt.Sprintf("%d+%d", price, extra))
	}
	q += fmt.Sprintf(" %s has already saved $%d.", capital(p.they), saved)
	need := g.calc(capital(p.they)+" still needs %s = $%s.", fmt.Sprintf("%d-%d", cost, saved))
	if withAllowance {
		q += fmt.Sprintf(" Each week %s gets $%d of allowance, spends $%d of it on snacks and saves the rest.", p.they, allowance, spend)
		weekly = g.calc(capital(p.they)+" saves %s = $%s of allowance a week.", fmt.Sprintf("%d-%d", allowance, spend))
	} else {
		q += fmt.Sprintf(" %s saves $%d each week.", capital(p.they), weekly)
	}
	if withChores {
		q += fmt.Sprintf(" %s also does %d chores a week for $%d each and saves that money too.", capital(p.they), chores, perChore)
		earned := g.calc("Chores bring %s = $%s a week.", fmt.Sprintf("%d*%d", chores, perChore))
		weekly = g.calc(capital(p.they)+" saves %s = $%s a week in all.", fmt.Sprintf("%d+%d", weekly, earned))
	}
	g.calc("It takes %s = %s weeks.", fmt.Sprintf("%d/%d", need, weekly))
	return q + fmt.Sprintf(" How many weeks will it take %s to save enough?", p.them)
}

// schedule: minutes of lessons, breaks and lunch in a day and a week,
// converted to hours.
func schedule(g *gen, steps int) string {
	p := g.person()
	withBreaks, inHours, perWeek, early := steps >= 3, steps >= 4, steps >= 5, steps == 6
	var lessons, lessonLen, breaks, breakLen, lunch, days, earlyMin int64
	g.choose(func() bool {
		lessons, lessonLen = g.between(4, 7), pick(g, []int64{40, 45, 50, 55, 60})
		breaks, breakLen = g.between(2, 3), pick(g, []int64{5, 10, 15, 20})
		lunch, days = pick(g, []int64{30, 35, 40, 45, 50, 55, 60}), 5
		earlyMin = pick(g, []int64{15, 30, 45, 60, 75, 90})
		day := lessons*lessonLen + lunch
		if withBreaks {
			day += breaks * breakLen
		}
		switch {
		case early:
			return (day*days-earlyMin)%60 == 0
		case perWeek:
			return day*days%60 == 0
		case inHours:
			return day%60 == 0
		}
		return true
	})
	q := fmt.Sprintf("At %s's school each day has %d lessons of %d minutes", p.name, lessons, lessonLen)
	if withBreaks {
		q += fmt.Sprintf(", %d breaks of %d minutes", breaks, breakLen)
	}
	q += fmt.Sprintf(" and a %d-minute lunch.", lunch)
	teaching := g.calc("Lessons take %s = %s minutes a day.", fmt.Sprintf("%d*%d", lessons, lessonLen))
	dayExpr := fmt.Sprintf("%d+%d", teaching, lunch)
	if withBreaks {
		rest := g.calc("Breaks take %s = %s minutes.", fmt.Sprintf("%d*%d", breaks, breakLen))
		dayExpr = fmt.Sprintf("%d+%d+%d", teaching, rest, lunch)
	}
	day := g.calc("A school day lasts %s = %s minutes.", dayExpr)
	switch {
	case !inHours:
		return q + " How many minutes long is a school day?"
	case !perWeek:
		g.calc("That is %s = %s hours.", fmt.Sprintf("%d/60", day))
		return q + " How many hours long is a school day?"
	}
	q += fmt.Sprintf(" School runs %d days a week.", days)
	week := g.calc("A week of school lasts %s = %s minutes.", fmt.Sprintf("%d*%d", day, days))
	if early {
		q += fmt.Sprintf(" On Fridays school ends %d minutes early.", earlyMin)
		week = g.calc("With the early finish the week lasts %s = %s minutes.", fmt.Sprintf("%d-%d", week, earlyMin))
	}
	g.calc("That is %s = %s hours.", fmt.Sprintf("%d/60", week))
	return q + " How many hours does " + p.name + " spend at school in a week?"
}

type stockSetting struct {
	owner, goods         string
	out, in, boxes, unit string
}

var stockSettings = []stockSetting{
	{"library", "books", "lends out %d books", "gets %d books back", "buys %d boxes of %d books", "boxes"},
	{"shoe shop", "pairs of shoes", "sells %d pairs", "receives %d pairs", "orders %d crates of %d pairs", "crates"},
	{"bakery", "loaves", "sells %d loaves", "bakes %d more loaves", "bakes %d batches of %d loaves", "batches"},
	{"toy store", "toys", "sells %d toys", "gets %d toys back", "receives %d cartons of %d toys", "cartons"},
}

var weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// inventory: stock changes day by day, some by whole boxes.
func inventory(g *gen, steps int) string {
	s := pick(g, stockSettings)
	stock := g.between(100, 500)
	q := fmt.Sprintf("On Sunday evening a %s has %d %s.", s.owner, stock, s.goods)
	for day := 0; steps > 0; day++ {
		when := "On " + weekdays[day] + " it "
		after := "After " + weekdays[day] + " it has %s = %s " + s.goods + "."
		switch {
		case steps >= 2 && g.rng.IntN(2) == 0:
			n, size := g.between(2, 8), g.between(6, 24)
			q += " " + when + fmt.Sprintf(s.boxes, n, size) + "."
			added := g.calc("The "+s.unit+" hold %s = %s "+s.goods+".", fmt.Sprintf("%d*%d", n, size))
			stock = g.calc(after, fmt.Sprintf("%d+%d", stock, added))
			steps -= 2
		case g.rng.IntN(2) == 0 && stock >= 40:
			n := g.between(5, min(120, stock/2))
			q += " " + when + fmt.Sprintf(s.out, n) + "."
			stock = g.calc(after, fmt.Sprintf("%d-%d", stock, n))
			steps--
		default:
			n := g.between(5, 80)
			q += " " + when + fmt.Sprintf(s.in, n) + "."
			stock = g.calc(after, fmt.Sprintf("%d+%d", stock, n))
			steps--
		}
	}
	return q + fmt.Sprintf(" How many %s does the %s have now?", s.goods, s.owner)
}

type dozenGoods struct {
	items, pack, packs, verb, extra string
}

var dozenKinds = []dozenGoods{
	{"eggs", "carton", "cartons", "collects", "chicken feed"},
	{"donuts", "box", "boxes", "bakes", "flour"},
	{"roses", "bunch", "bunches", "grows", "fertilizer"},
	{"cupcakes", "box", "boxes", "bakes", "frosting"},
	{"tomatoes", "crate", "crates", "picks", "seeds"},
}

// dozens (held out): counts in dozens, packed, sold, minus costs.
func dozens(g *gen, steps int) string {
	p := g.person()
	k := pick(g, dozenKinds)
	twoDays, broken := steps >= 5, steps == 6
	d1, d2 := g.between(3, 20), g.between(3, 20)
	size := pick(g, []int64{3, 4, 6, 12})
	price := g.between(2, 9)
	q := fmt.Sprintf("%s %s %d dozen %s", p.name, k.verb, d1, k.items)
	dz := d1
	if twoDays {
		q += fmt.Sprintf(" on Monday and %d dozen on Tuesday", d2)
		dz = g.calc("That is %s = %s dozen.", fmt.Sprintf("%d+%d", d1, d2))
	}
	q += "."
	count := g.calc("A dozen is 12, so there are %s = %s "+k.items+".", fmt.Sprintf("%d*12", dz))
	if broken {
		lost := size * g.between(1, 2)
		q += fmt.Sprintf(" %d of them are damaged and thrown away.", lost)
		count = g.calc("%s = %s are left.", fmt.Sprintf("%d-%d", count, lost))
	}
	q += fmt.Sprintf(" The %s are packed in %s of %d.", k.items, k.packs, size)
	packs := g.calc("That makes %s = %s "+k.packs+".", fmt.Sprintf("%d/%d", count, size))
	if steps == 2 {
		return q + fmt.Sprintf(" How many %s are filled?", k.packs)
	}
	q += fmt.Sprintf(" Each %s sells for $%d.", k.pack, price)
	income := g.calc("They sell for %s = $%s.", fmt.Sprintf("%d*%d", packs, price))
	if steps == 3 {
		return q + fmt.Sprintf(" How much money does %s get for them?", p.they)
	}
	cost := g.between(1, income-1)
	q += fmt.Sprintf(" The %s cost %s $%d.", k.extra, p.them, cost)
	g.calc("The profit is %s = $%s.", fmt.Sprintf("%d-%d", income, cost))
	return q + fmt.Sprintf(" How much profit does %s make after paying for the %s?", p.they, k.extra)
}

var fractionWords = map[int64]string{2: "half", 3: "a third", 4: "a quarter", 5: "a fifth"}

type collection struct {
	items, place       string
	kinds              [3]string
	minGrams, maxGrams int64
	container          string
}

var collections = []collection{
	{"marbles", "in a jar", [3]string{"red", "blue", "green"}, 3, 10, "jar"},
	{"beads", "in a box", [3]string{"glass", "wooden", "plastic"}, 2, 5, "box"},
	{"coins", "in a piggy bank", [3]string{"silver", "gold", "copper"}, 2, 9, "piggy bank"},
}

// fractions (held out): fractions of a collection and of the rest, then
// weights.
func fractions(g *gen, steps int) string {
	c := pick(g, collections)
	d1, d2 := g.between(2, 5), g.between(2, 5)
	var total int64
	switch steps {
	case 2:
		total = d1 * g.between(4, 30)
	case 3:
		g.choose(func() bool {
			d2 = g.between(2, 5)
			return d1 != d2 && d1*d2 > d1+d2
		})
		total = d1 * d2 * g.between(2, 12)
	default:
		total = d1 * d2 * g.between(2, 12)
	}
	a, b, rest := c.kinds[0], c.kinds[1], c.kinds[2]
	q := fmt.Sprintf("%s has %d %s %s. %s of them are %s.", g.person().name, total, c.items, c.place, capital(fractionWords[d1]), a)
	first := g.calc("There are %s = %s "+a+" "+c.items+".", fmt.Sprintf("%d/%d", total, d1))
	if steps == 2 {
		g.calc("So %s = %s are not "+a+".", fmt.Sprintf("%d-%d", total, first))
		return q + fmt.Sprintf(" How many %s are not %s?", c.items, a)
	}
	if steps == 3 {
		q += fmt.Sprintf(" %s of them are %s and the rest are %s.", capital(fractionWords[d2]), b, rest)
		second := g.calc("There are %s = %s "+b+" "+c.items+".", fmt.Sprintf("%d/%d", total, d2))
		g.calc("So %s = %s are "+rest+".", fmt.Sprintf("%d-%d-%d", total, first, second))
		return q + fmt.Sprintf(" How many %s are %s?", c.items, rest)
	}
	q += fmt.Sprintf(" %s of the others are %s and the rest are %s.", capital(fractionWords[d2]), b, rest)
	others := g.calc("The others number %s = %s.", fmt.Sprintf("%d-%d", total, first))
	second := g.calc("There are %s = %s "+b+" "+c.items+".", fmt.Sprintf("%d/%d", others, d2))
	last := g.calc("So %s = %s are "+rest+".", fmt.Sprintf("%d-%d", others, second))
	if steps == 4 {
		return q + fmt.Sprintf(" How many %s are %s?", c.items, rest)
	}
	grams := g.between(c.minGrams, c.maxGrams)
	q += fmt.Sprintf(" Each %s one weighs %d grams.", rest, grams)
	weight := g.calc("They weigh %s = %s grams.", fmt.Sprintf("%d*%d", last, grams))
	if steps == 5 {
		return q + fmt.Sprintf(" How many grams do the %s %s weigh in all?", rest, c.items)
	}
	empty := g.between(50, 400)
	q += fmt.Sprintf(" The empty %s weighs %d grams.", c.container, empty)
	g.calc("Together with the "+c.container+" that is %s = %s grams.", fmt.Sprintf("%d+%d", weight, empty))
	return q + fmt.Sprintf(" How many grams do the %s %s and the %s weigh together?", rest, c.items, c.container)
}

// garden (held out): perimeter and fencing, or area and seed bags.
func garden(g *gen, steps int) string {
	p := g.person()
	var length, width, gate, perMeter, patio, bagArea, bagPrice, fee int64
	g.choose(func() bool {
		length, width = g.between(6, 30), g.between(4, 20)
		if width > length {
			length, width = width, length
		}
		gate, perMeter = g.between(1, 3), g.between(3, 12)
		patio = g.between(2, width-1)
		bagArea, bagPrice, fee = pick(g, []int64{2, 3, 4, 5, 10}), g.between(4, 15), g.between(5, 25)
		return steps < 5 || (length*width-patio*patio)%bagArea == 0
	})
	q := fmt.Sprintf("%s's garden is a rectangle %d meters long and %d meters wide.", p.name, length, width)
	if steps <= 4 {
		half := g.calc("Half the way around is %s = %s meters.", fmt.Sprintf("%d+%d", length, width))
		fence := g.calc("The whole way around is %s = %s meters.", fmt.Sprintf("%d*2", half))
		if steps == 2 {
			return q + fmt.Sprintf(" How many meters of fence does %s need to go all the way around it?", p.they)
		}
		if steps == 4 {
			q += fmt.Sprintf(" %s leaves a %d-meter gap for a gate.", capital(p.they), gate)
			fence = g.calc(capital(p.they)+" needs %s = %s meters of fence.", fmt.Sprintf("%d-%d", fence, gate))
		}
		g.calc("The fence costs %s = $%s.", fmt.Sprintf("%d*%d", fence, perMeter))
		return q + fmt.Sprintf(" Fencing costs $%d per meter. How much does %s spend on fencing the garden?", perMeter, p.they)
	}
	q += fmt.Sprintf(" %s lays a square patio %d meters on each side and sows grass seed on the rest.", capital(p.they), patio)
	q += fmt.Sprintf(" A bag of seed covers %d square meters and costs $%d.", bagArea, bagPrice)
	area := g.calc("The garden covers %s = %s square meters.", fmt.Sprintf("%d*%d", length, width))
	tiles := g.calc("The patio covers %s = %s square meters.", fmt.Sprintf("%d*%d", patio, patio))
	lawn := g.calc("The grass covers %s = %s square meters.", fmt.Sprintf("%d-%d", area, tiles))
	bags := g.calc(capital(p.they)+" needs %s = %s bags.", fmt.Sprintf("%d/%d", lawn, bagArea))
	seed := g.calc("The seed costs %s = $%s.", fmt.Sprintf("%d*%d", bags, bagPrice))
	if steps == 5 {
		return q + fmt.Sprintf(" How much does %s spend on seed?", p.they)
	}
	q += fmt.Sprintf(" Delivery costs $%d.", fee)
	g.calc("With delivery "+p.they+" pays %s = $%s.", fmt.Sprintf("%d+%d", seed, fee))
	return q + fmt.Sprintf(" How much does %s pay in all?", p.they)
}
