package alfworld

import (
	"math/rand/v2"

	"github.com/agentrl/agentrl/envs"
)

// nowhere marks the agent in the middle of the room (no place) and an object
// that is in the agent's hands (no place).
const nowhere = -1

// place is the episode state of one place of the floorplan.
type place struct {
	slot     *placeSlot
	kind     *placeKind
	open     bool
	contents []int // objects, in the order they arrived
}

type object struct {
	kind   int
	number int // instance number - 1: its index in world.byKind[kind]
	name   string
	at     int // place index, or nowhere when held
	clean  bool
	hot    bool
	cool   bool
}

type lamp struct {
	kind lampKind
	name string
	at   int // the place where it can be used
	on   bool
	use  string // "use desklamp 1"
}

// world is the full (hidden) state of an episode.
type world struct {
	cat      *catalog
	goal     *goalSpec
	fp       *floorplan
	goalText string
	places   []place
	objects  []object
	byKind   [][]int // objects per object kind, by instance number
	hasLamp  bool
	lamp     lamp
	agentAt  int // place index or nowhere
	held     int // object index or nowhere

	// Scratch space of generate, kept to spare allocations.
	spots   []spot
	kindBuf []int
}

// splitStreams gives each split its own random stream, so that the same
// seed draws unrelated episodes in train and test.
var splitStreams = map[envs.Split]uint64{
	envs.Train:  0x747261696e,
	envs.Test:   0x74657374,
	envs.Unseen: 0x756e7365656e,
}

// generate draws the episode of (split, seed): a task type, a goal of the
// split's pool, a floorplan where it is achievable and objects placed at
// plausible places.
func (w *world) generate(split envs.Split, seed int64) {
	c := worldCatalog()
	w.cat = c
	rng := rand.New(rand.NewPCG(uint64(seed), splitStreams[split]))
	goals := &c.goals[poolOf(split)]
	task := taskType(rng.IntN(int(numTaskTypes)))
	w.goal = &goals[task][rng.IntN(len(goals[task]))]
	w.fp = &c.floorplans[w.goal.floorplans[rng.IntN(len(w.goal.floorplans))]]

	// The previous episode's content slices are reused to spare allocations.
	previous := w.places[:cap(w.places)]
	w.places = w.places[:0]
	for i := range w.fp.places {
		slot := &w.fp.places[i]
		var contents []int
		if i < len(previous) {
			contents = previous[i].contents[:0]
		}
		w.places = append(w.places, place{slot: slot, kind: &c.placeKinds[slot.kind], contents: contents})
	}
	w.hasLamp = w.fp.hasLamp
	if w.hasLamp {
		name := lampNames[w.fp.lamp] + " 1"
		w.lamp = lamp{kind: w.fp.lamp, name: name, at: w.fp.lampSlot, use: "use " + name}
	}
	w.agentAt, w.held = nowhere, nowhere
	w.placeObjects(rng)
	w.goalText = w.goal.texts[rng.IntN(len(w.goal.texts))]
}

// placeObjects puts the goal's objects at their start places (never the
// target, so no goal is met at the start) and a handful of other object
// types anywhere plausible, then numbers the objects of each type.
func (w *world) placeObjects(rng *rand.Rand) {
	c, g, fp := w.cat, w.goal, w.fp
	goalCount := 1 + rng.IntN(maxInstances)
	if g.task == pickTwo {
		goalCount = 2 + rng.IntN(maxInstances-1)
	}
	w.kindBuf = w.kindBuf[:0]
	for _, k := range fp.objectPlaces[g.object] {
		if g.task == lookInLight || k != g.target {
			w.kindBuf = append(w.kindBuf, k)
		}
	}
	w.spots = w.spots[:0]
	for range goalCount {
		w.spots = append(w.spots, spot{g.object, w.randomSlot(rng, w.kindBuf)})
	}
	w.kindBuf = w.kindBuf[:0]
	for _, k := range fp.objectKinds {
		if k != g.object {
			w.kindBuf = append(w.kindBuf, k)
		}
	}
	others := w.kindBuf
	rng.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
	for _, k := range others[:min(len(others), 5+rng.IntN(6))] {
		for range 1 + rng.IntN(maxInstances) {
			w.spots = append(w.spots, spot{k, w.randomSlot(rng, fp.objectPlaces[k])})
		}
	}
	// Shuffled so that neither the numbering nor the order in which places
	// list their contents gives the goal objects away.
	rng.Shuffle(len(w.spots), func(i, j int) { w.spots[i], w.spots[j] = w.spots[j], w.spots[i] })

	w.objects = w.objects[:0]
	if len(w.byKind) != len(c.objectKinds) {
		w.byKind = make([][]int, len(c.objectKinds))
	}
	for k := range w.byKind {
		w.byKind[k] = w.byKind[k][:0]
	}
	for _, s := range w.spots {
		i := len(w.objects)
		number := len(w.byKind[s.kind])
		w.objects = append(w.objects, object{kind: s.kind, number: number, name: c.objectKinds[s.kind].names[number], at: s.at})
		w.byKind[s.kind] = append(w.byKind[s.kind], i)
		w.places[s.at].contents = append(w.places[s.at].contents, i)
	}
}

// spot is where generation puts an object of some kind.
type spot struct{ kind, at int }

// randomSlot picks a place kind among kinds, then one of its places.
func (w *world) randomSlot(rng *rand.Rand, kinds []int) int {
	slots := w.fp.slots[kinds[rng.IntN(len(kinds))]]
	return slots[rng.IntN(len(slots))]
}

// goalMet checks the goal against the state, as ALFWorld's PDDL goals do.
func (w *world) goalMet() bool {
	g := w.goal
	switch g.task {
	case lookInLight:
		return w.held != nowhere && w.objects[w.held].kind == g.object &&
			w.hasLamp && w.lamp.kind == g.lamp && w.lamp.on && w.agentAt == w.lamp.at
	case pickTwo:
		for _, p := range w.fp.slots[g.target] {
			if w.countGoalObjects(p) >= 2 {
				return true
			}
		}
		return false
	}
	for _, i := range w.byKind[g.object] {
		if o := &w.objects[i]; o.at != nowhere && w.places[o.at].slot.kind == g.target && w.transformed(o) {
			return true
		}
	}
	return false
}

// transformed reports whether an object has the state the task asks for.
func (w *world) transformed(o *object) bool {
	switch w.goal.task {
	case pickClean:
		return o.clean
	case pickHeat:
		return o.hot
	case pickCool:
		return o.cool
	}
	return true
}

func (w *world) countGoalObjects(p int) int {
	n := 0
	for _, i := range w.places[p].contents {
		if w.objects[i].kind == w.goal.object {
			n++
		}
	}
	return n
}

// visible reports whether the contents of a place can be seen.
func (p *place) visible() bool { return !p.kind.openable || p.open }
