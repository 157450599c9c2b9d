package alfworld

import (
	"strings"
)

// apply carries out a parsed command. It returns ALFWorld's feedback and
// true, or, when the command is not allowed in this state, the reason and
// false (the state is then unchanged). The checks here and admissible must
// agree: a command is allowed exactly when admissible lists it (or a
// synonym of it).
func (w *world) apply(c command) (string, bool) {
	switch c.verb {
	case verbGoTo:
		return w.goTo(c.a)
	case verbOpen:
		return w.open(c.a)
	case verbClose:
		return w.close(c.a)
	case verbTake:
		return w.take(c.a, c.b)
	case verbMove:
		return w.move(c.a, c.b)
	case verbClean, verbHeat, verbCool:
		return w.transform(c.verb, c.a, c.b)
	case verbUse:
		return w.use(c.a)
	case verbExamine:
		return w.examine(c.a)
	case verbInventory:
		if w.held == nowhere {
			return "You are not carrying anything.", true
		}
		return "You are carrying: a " + w.objects[w.held].name + ".", true
	case verbLook:
		if w.agentAt == nowhere {
			return w.fp.view, true
		}
		return "You are facing the " + w.places[w.agentAt].slot.name + ". " + w.describePlace(w.agentAt), true
	}
	return "that is not a command", false
}

func (w *world) goTo(n name) (string, bool) {
	p, ok := w.findPlace(n)
	if !ok {
		return "there is no " + n.String() + " in this room", false
	}
	if p == w.agentAt {
		return "you are already at the " + n.String(), false
	}
	w.agentAt = p
	return "You arrive at " + w.places[p].slot.name + ". " + w.describePlace(p), true
}

func (w *world) open(n name) (string, bool) {
	p, reason := w.placeHere(n)
	if reason != "" {
		return reason, false
	}
	pl := &w.places[p]
	switch {
	case !pl.kind.openable:
		return "the " + pl.slot.name + " cannot be opened", false
	case pl.open:
		return "the " + pl.slot.name + " is already open", false
	}
	pl.open = true
	return "You open the " + pl.slot.name + ". " + w.describePlace(p), true
}

func (w *world) close(n name) (string, bool) {
	p, reason := w.placeHere(n)
	if reason != "" {
		return reason, false
	}
	pl := &w.places[p]
	switch {
	case !pl.kind.openable:
		return "the " + pl.slot.name + " cannot be closed", false
	case !pl.open:
		return "the " + pl.slot.name + " is already closed", false
	}
	pl.open = false
	return "You close the " + pl.slot.name + ".", true
}

// take picks an object up from the place the agent is at; from may be
// absent (number 0), meaning that place.
func (w *world) take(what, from name) (string, bool) {
	if w.isLamp(what) {
		return "the " + what.String() + " cannot be picked up", false
	}
	if w.held != nowhere {
		return "you are already carrying the " + w.objects[w.held].name + " and can hold one object at a time", false
	}
	if w.agentAt == nowhere {
		return "you need to go to where the " + what.String() + " is first", false
	}
	p := w.agentAt
	if from.number != 0 {
		var reason string
		if p, reason = w.placeHere(from); reason != "" {
			return reason, false
		}
	}
	pl := &w.places[p]
	if !pl.visible() {
		return "the " + pl.slot.name + " is closed", false
	}
	o, ok := w.findObject(what)
	if !ok || w.objects[o].at != p {
		return "you see no " + what.String() + " " + preposition(pl.kind) + " the " + pl.slot.name, false
	}
	pl.contents = remove(pl.contents, o)
	w.objects[o].at = nowhere
	w.held = o
	return "You pick up the " + w.objects[o].name + " from the " + pl.slot.name + ".", true
}

func (w *world) move(what, to name) (string, bool) {
	o, reason := w.heldObject(what)
	if reason != "" {
		return reason, false
	}
	p, reason := w.placeHere(to)
	if reason != "" {
		return reason, false
	}
	pl := &w.places[p]
	switch {
	case !pl.kind.container:
		return "you cannot put anything " + preposition(pl.kind) + " the " + pl.slot.name, false
	case !pl.visible():
		return "the " + pl.slot.name + " is closed; open it first", false
	}
	pl.contents = append(pl.contents, o)
	w.objects[o].at = p
	w.held = nowhere
	return "You move the " + w.objects[o].name + " to the " + pl.slot.name + ".", true
}

// transform cleans, heats or cools the held object with an appliance.
// Heating and cooling undo each other, as a warm apple put in the fridge is
// no longer warm.
func (w *world) transform(v verb, what, with name) (string, bool) {
	o, reason := w.heldObject(what)
	if reason != "" {
		return reason, false
	}
	p, reason := w.placeHere(with)
	if reason != "" {
		return reason, false
	}
	obj, pl := &w.objects[o], &w.places[p]
	kind := &w.cat.objectKinds[obj.kind]
	switch v {
	case verbClean:
		if !pl.kind.cleans {
			return "the " + pl.slot.name + " cannot clean anything", false
		}
		if !kind.cleanable {
			return "the " + obj.name + " cannot be cleaned", false
		}
		obj.clean = true
		return "You clean the " + obj.name + " using the " + pl.slot.name + ".", true
	case verbHeat:
		if !pl.kind.heats {
			return "the " + pl.slot.name + " cannot heat anything", false
		}
		if !kind.heatable {
			return "the " + obj.name + " cannot be heated", false
		}
		obj.hot, obj.cool = true, false
		return "You heat the " + obj.name + " using the " + pl.slot.name + ".", true
	default:
		if !pl.kind.cools {
			return "the " + pl.slot.name + " cannot cool anything", false
		}
		if !kind.coolable {
			return "the " + obj.name + " cannot be cooled", false
		}
		obj.cool, obj.hot = true, false
		return "You cool the " + obj.name + " using the " + pl.slot.name + ".", true
	}
}

func (w *world) use(n name) (string, bool) {
	if !w.isLamp(n) {
		return "the " + n.String() + " is not something you can use", false
	}
	if w.agentAt != w.lamp.at {
		return "you need to go to the " + n.String() + " first", false
	}
	if w.lamp.on {
		return "The " + w.lamp.name + " is already on.", true
	}
	w.lamp.on = true
	return "You turn on the " + w.lamp.name + ".", true
}

func (w *world) examine(n name) (string, bool) {
	if p, ok := w.findPlace(n); ok && p == w.agentAt {
		return w.describePlace(p), true
	}
	if o, ok := w.findObject(n); ok && o == w.held {
		obj := &w.objects[o]
		var states []string
		for _, s := range []struct {
			on   bool
			word string
		}{{obj.clean, "clean"}, {obj.hot, "hot"}, {obj.cool, "cool"}} {
			if s.on {
				states = append(states, s.word)
			}
		}
		if len(states) == 0 {
			return "There's nothing special about " + obj.name + ".", true
		}
		return "The " + obj.name + " is " + strings.Join(states, " and ") + ".", true
	}
	return "you can examine the place you are at and the object you carry, not the " + n.String(), false
}

// admissible lists the commands allowed in the current state, in ALFWorld's
// words, into dst.
func (w *world) admissible(dst []string) []string {
	for i := range w.places {
		if i != w.agentAt {
			dst = append(dst, w.places[i].slot.goTo)
		}
	}
	if w.agentAt != nowhere {
		pl := &w.places[w.agentAt]
		if pl.kind.openable {
			if pl.open {
				dst = append(dst, pl.slot.close)
			} else {
				dst = append(dst, pl.slot.open)
			}
		}
		if w.held == nowhere && pl.visible() {
			for _, o := range pl.contents {
				dst = append(dst, "take "+w.objects[o].name+" from "+pl.slot.name)
			}
		}
		if w.held != nowhere {
			obj := &w.objects[w.held]
			kind := &w.cat.objectKinds[obj.kind]
			if pl.kind.container && pl.visible() {
				dst = append(dst, "move "+obj.name+" to "+pl.slot.name)
			}
			if pl.kind.cleans && kind.cleanable {
				dst = append(dst, "clean "+obj.name+" with "+pl.slot.name)
			}
			if pl.kind.heats && kind.heatable {
				dst = append(dst, "heat "+obj.name+" with "+pl.slot.name)
			}
			if pl.kind.cools && kind.coolable {
				dst = append(dst, "cool "+obj.name+" with "+pl.slot.name)
			}
		}
		if w.hasLamp && w.lamp.at == w.agentAt {
			dst = append(dst, w.lamp.use)
		}
		dst = append(dst, pl.slot.examine)
	}
	if w.held != nowhere {
		obj := &w.objects[w.held]
		dst = append(dst, w.cat.objectKinds[obj.kind].examines[obj.number])
	}
	return append(dst, "inventory", "look")
}

// describePlace says what the agent sees at a place, as ALFWorld does on
// arrival: whether it is closed, and if not what is in or on it.
func (w *world) describePlace(p int) string {
	pl := &w.places[p]
	if !pl.kind.container {
		state := "off"
		if w.lamp.on {
			state = "on"
		}
		return "The " + pl.slot.name + " is " + state + "."
	}
	var b strings.Builder
	switch {
	case pl.kind.openable && !pl.open:
		return "The " + pl.slot.name + " is closed."
	case pl.kind.openable:
		b.WriteString("The " + pl.slot.name + " is open. In it, you see ")
	default:
		b.WriteString("On the " + pl.slot.name + ", you see ")
	}
	n := len(pl.contents)
	lampHere := w.hasLamp && w.lamp.at == p && w.lamp.kind == desklamp
	if lampHere {
		n++
	}
	if n == 0 {
		b.WriteString("nothing")
	}
	i := 0
	if lampHere {
		writeListItem(&b, w.lamp.name, i, n)
		i++
	}
	for _, o := range pl.contents {
		writeListItem(&b, w.objects[o].name, i, n)
		i++
	}
	b.WriteString(".")
	return b.String()
}

// writeListItem writes item i of n in ALFWorld's list style: "a apple 1",
// "a apple 1, and a mug 2", "a apple 1, a mug 2, and a cup 1" (always "a",
// as ALFWorld writes it).
func writeListItem(b *strings.Builder, item string, i, n int) {
	switch {
	case i == 0:
	case i == n-1:
		b.WriteString(", and ")
	default:
		b.WriteString(", ")
	}
	b.WriteString("a ")
	b.WriteString(item)
}

func (w *world) findPlace(n name) (int, bool) {
	k, ok := w.cat.placeIndex[n.kind]
	if !ok || n.number > len(w.fp.slots[k]) {
		return 0, false
	}
	return w.fp.slots[k][n.number-1], true
}

func (w *world) findObject(n name) (int, bool) {
	k, ok := w.cat.objectIndex[n.kind]
	if !ok || n.number > len(w.byKind[k]) {
		return 0, false
	}
	return w.byKind[k][n.number-1], true
}

func (w *world) isLamp(n name) bool {
	return w.hasLamp && n.number == 1 && n.kind == lampNames[w.lamp.kind]
}

// placeHere resolves a place the agent must be at; the reason is empty when
// it is there.
func (w *world) placeHere(n name) (int, string) {
	p, ok := w.findPlace(n)
	switch {
	case !ok:
		return 0, "there is no " + n.String() + " in this room"
	case p != w.agentAt:
		return 0, "you need to go to the " + n.String() + " first"
	}
	return p, ""
}

// heldObject resolves the object the agent must be carrying; the reason is
// empty when it carries it.
func (w *world) heldObject(n name) (int, string) {
	if w.held == nowhere {
		return 0, "you are not carrying anything"
	}
	if o, ok := w.findObject(n); !ok || o != w.held {
		return 0, "you are not carrying the " + n.String() + " but the " + w.objects[w.held].name
	}
	return w.held, ""
}

func preposition(k *placeKind) string {
	if k.inside {
		return "in"
	}
	return "on"
}

func remove(list []int, x int) []int {
	for i, v := range list {
		if v == x {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}
