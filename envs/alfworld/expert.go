package alfworld

import (
	"errors"
)

// ExpertAction returns the next command of a shortest-style plan computed
// from the hidden state: fetch the best goal object (fewest steps away,
// already cleaned/heated/cooled if possible), transform it with the task's
// appliance, and put it at the target, or hold it at the lamp and use the
// lamp. It replans from whatever state it is called in, so it also finishes
// episodes another policy started (putting down an unrelated object first).
func (e *Env) ExpertAction() (string, error) {
	if !e.started {
		return "", errors.New("alfworld: ExpertAction called before Reset")
	}
	if e.done {
		return "", errors.New("alfworld: ExpertAction called after the episode ended")
	}
	return e.expertAction()
}

func (w *world) expertAction() (string, error) {
	g := w.goal
	if w.held == nowhere {
		o := w.bestGoalObject()
		if o == nowhere {
			return "", errors.New("alfworld: expert found no goal object to fetch")
		}
		return w.fetch(o), nil
	}
	obj := &w.objects[w.held]
	if obj.kind != g.object {
		return w.putDown()
	}
	if g.task == lookInLight {
		if w.agentAt != w.lamp.at {
			return w.places[w.lamp.at].slot.goTo, nil
		}
		return w.lamp.use, nil
	}
	if !w.transformed(obj) {
		appliance := w.fp.slots[g.appliance][0]
		if w.agentAt != appliance {
			return w.places[appliance].slot.goTo, nil
		}
		return transformVerb[g.task] + " " + obj.name + " with " + w.places[appliance].slot.name, nil
	}
	target := w.targetPlace()
	if w.agentAt != target {
		return w.places[target].slot.goTo, nil
	}
	if pl := &w.places[target]; !pl.visible() {
		return pl.slot.open, nil
	}
	return "move " + obj.name + " to " + w.places[target].slot.name, nil
}

var transformVerb = map[taskType]string{pickClean: "clean", pickHeat: "heat", pickCool: "cool"}

// fetch moves towards taking object o: go to its place, open it, take it.
func (w *world) fetch(o int) string {
	p := w.objects[o].at
	pl := &w.places[p]
	switch {
	case w.agentAt != p:
		return pl.slot.goTo
	case !pl.visible():
		return pl.slot.open
	}
	return "take " + w.objects[o].name + " from " + pl.slot.name
}

// putDown frees the agent's hands: at a place that holds things it opens it
// if needed and puts the object there, elsewhere it goes to the first
// surface of the room.
func (w *world) putDown() (string, error) {
	name := w.objects[w.held].name
	if w.agentAt != nowhere && w.places[w.agentAt].kind.container {
		pl := &w.places[w.agentAt]
		if !pl.visible() {
			return pl.slot.open, nil
		}
		return "move " + name + " to " + pl.slot.name, nil
	}
	for i := range w.places {
		if w.places[i].kind.container && !w.places[i].kind.openable {
			return w.places[i].slot.goTo, nil
		}
	}
	return "", errors.New("alfworld: expert found no surface to put the " + name + " on")
}

// bestGoalObject picks the goal object that is cheapest to bring to the
// goal, or nowhere if none is left to fetch. For pick-two, objects already
// at the target place do not count.
func (w *world) bestGoalObject() int {
	g := w.goal
	skip := nowhere
	if g.task == pickTwo {
		skip = w.targetPlace()
	}
	best, bestCost := nowhere, 0
	for _, o := range w.byKind[g.object] {
		obj := &w.objects[o]
		if obj.at == skip {
			continue
		}
		cost := w.reachCost(obj.at)
		if !w.transformed(obj) {
			cost += 2 // go to the appliance, use it
		}
		if best == nowhere || cost < bestCost {
			best, bestCost = o, cost
		}
	}
	return best
}

// targetPlace chooses where to put the goal object: for pick-two the target
// place already holding most goal objects, otherwise (and on ties between
// places holding none) the one cheapest to reach. A tie between places
// that hold goal objects goes to the first of them, not the nearest:
// with one object in each of two, the nearest is wherever the agent
// stands, and the choice would flip at every step.
func (w *world) targetPlace() int {
	best, bestCount, bestCost := nowhere, 0, 0
	for _, p := range w.fp.slots[w.goal.target] {
		count := 0
		if w.goal.task == pickTwo {
			count = w.countGoalObjects(p)
		}
		cost := w.reachCost(p)
		if best == nowhere || count > bestCount || (count == bestCount && count == 0 && cost < bestCost) {
			best, bestCount, bestCost = p, count, cost
		}
	}
	return best
}

// reachCost counts the steps to stand at place p with its contents in view.
func (w *world) reachCost(p int) int {
	cost := 0
	if w.agentAt != p {
		cost++
	}
	if !w.places[p].visible() {
		cost++
	}
	return cost
}
