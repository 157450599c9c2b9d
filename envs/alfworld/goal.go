package alfworld

import (
	"strings"

	"github.com/agentrl/agentrl/envs"
)

// taskType is one of ALFWorld's six task families.
type taskType int

const (
	pickAndPlace taskType = iota
	pickTwo
	pickClean
	pickHeat
	pickCool
	lookInLight
	numTaskTypes
)

// taskNames are ALFWorld's names of the task types, reported in Info.Extra.
var taskNames = [numTaskTypes]string{
	"pick_and_place_simple",
	"pick_two_obj_and_place",
	"pick_clean_then_place_in_recep",
	"pick_heat_then_place_in_recep",
	"pick_cool_then_place_in_recep",
	"look_at_obj_in_light",
}

// goalTemplates are the phrasings of each task type (ALFWorld draws one of a
// few per type); %o is the object type, %p the preposition and %r the
// receptacle type or the lamp.
var goalTemplates = [numTaskTypes][]string{
	pickAndPlace: {"put a %o %p %r.", "put some %o %p %r."},
	pickTwo:      {"put two %o %p %r.", "find two %o and put them %p %r."},
	pickClean:    {"put a clean %o %p %r.", "clean some %o and put it %p %r."},
	pickHeat:     {"put a hot %o %p %r.", "heat some %o and put it %p %r."},
	pickCool:     {"put a cool %o %p %r.", "cool some %o and put it %p %r."},
	lookInLight:  {"look at %o under the %r.", "examine the %o with the %r."},
}

// A pool is the set of goals and floorplans a split draws from: train and
// test share the seen pool, the unseen split has its own.
type pool int

const (
	seenPool pool = iota
	unseenPool
	numPools
)

func poolOf(split envs.Split) pool {
	if split == envs.Unseen {
		return unseenPool
	}
	return seenPool
}

// heldOutPairs are the (object type, target) combinations only the unseen
// split asks for, whatever the task type; target is a receptacle type or, for
// look_at_obj_in_light, a lamp. Every task type has at least one of them.
// Train and test never set these goals, though the objects and receptacles
// appear there in other roles.
var heldOutPairs = map[[2]string]bool{
	{"apple", "diningtable"}:      true,
	{"lettuce", "countertop"}:     true,
	{"egg", "countertop"}:         true,
	{"soapbar", "cabinet"}:        true,
	{"spraybottle", "toilet"}:     true,
	{"cellphone", "bed"}:          true,
	{"remotecontrol", "armchair"}: true,
	{"keychain", "dresser"}:       true,
	{"cup", "countertop"}:         true,
	{"cloth", "countertop"}:       true,
	{"vase", "coffeetable"}:       true,
	{"pen", "desk"}:               true,
	{"alarmclock", "floorlamp"}:   true,
	{"pencil", "shelf"}:           true,
	{"cd", "desklamp"}:            true,
	{"pillow", "floorlamp"}:       true,
}

// goalSpec is a goal an episode can be given, with the floorplans of its
// pool where it is achievable.
type goalSpec struct {
	task   taskType
	room   roomType
	object int // object kind
	// target is the place kind the object must end in; for
	// look_at_obj_in_light it is unused and lamp names the lamp.
	target int
	lamp   lampKind
	// appliance is the place kind that cleans, heats or cools the object,
	// or nowhere for the tasks that need none.
	appliance  int
	floorplans []int    // indices into catalog.floorplans
	texts      []string // the task in words, one per template
}

// buildGoals enumerates every (task type, room, object, target) goal, and
// keeps in each pool those achievable in at least one of its floorplans.
func (c *catalog) buildGoals() {
	for task := range numTaskTypes {
		for room := range numRoomTypes {
			for obj := range c.objectKinds {
				kind := &c.objectKinds[obj]
				if !kind.rooms.has(room) || !c.affords(kind, task) {
					continue
				}
				for _, g := range c.candidateGoals(task, room, obj) {
					g.texts = c.goalTexts(g)
					for p := range numPools {
						g.floorplans = c.floorplansFor(g, p)
						if len(g.floorplans) > 0 && c.heldOut(g) == (p == unseenPool) {
							c.goals[p][task] = append(c.goals[p][task], g)
						}
					}
				}
			}
		}
	}
}

// goalTexts words a goal with each template of its task type.
func (c *catalog) goalTexts(g goalSpec) []string {
	target, prep := lampNames[g.lamp], ""
	if g.task != lookInLight {
		pk := &c.placeKinds[g.target]
		target, prep = pk.name, "on"
		if pk.inside {
			prep = "in"
		}
	}
	words := strings.NewReplacer("%o", c.objectKinds[g.object].name, "%p", prep, "%r", target)
	var texts []string
	for _, t := range goalTemplates[g.task] {
		texts = append(texts, words.Replace(t))
	}
	return texts
}

func (c *catalog) affords(kind *objectKind, task taskType) bool {
	switch task {
	case pickClean:
		return kind.cleanable
	case pickHeat:
		return kind.heatable
	case pickCool:
		return kind.coolable
	case lookInLight:
		return kind.lightable
	}
	return true
}

// candidateGoals lists the goals of a task type for an object in a room
// before checking floorplans: every plausible resting place of the object
// is a target, except the appliance the task itself uses (ALFRED never asks
// to put a clean apple in the sink) and, for the tasks that transform the
// object, the garbage can.
func (c *catalog) candidateGoals(task taskType, room roomType, obj int) []goalSpec {
	if task == lookInLight {
		return []goalSpec{
			{task: task, room: room, object: obj, lamp: desklamp, appliance: nowhere},
			{task: task, room: room, object: obj, lamp: floorlamp, appliance: nowhere},
		}
	}
	appliance := c.applianceFor(task)
	var goals []goalSpec
	for _, target := range c.objectKinds[obj].places {
		pk := &c.placeKinds[target]
		transforms := task == pickClean || task == pickHeat || task == pickCool
		switch {
		case task == pickClean && pk.cleans,
			task == pickHeat && pk.heats,
			task == pickCool && pk.cools,
			transforms && pk.name == "garbagecan":
			continue
		}
		goals = append(goals, goalSpec{task: task, room: room, object: obj, target: target, appliance: appliance})
	}
	return goals
}

func (c *catalog) heldOut(g goalSpec) bool {
	target := c.placeKinds[g.target].name
	if g.task == lookInLight {
		target = lampNames[g.lamp]
	}
	return heldOutPairs[[2]string{c.objectKinds[g.object].name, target}]
}

// floorplansFor lists the floorplans of pool p where goal g can be set: the
// room type matches, the target (or lamp) and the appliance the task needs
// are there, and the object has somewhere to start other than the target.
func (c *catalog) floorplansFor(g goalSpec, p pool) []int {
	var fits []int
	for i := range c.floorplans {
		fp := &c.floorplans[i]
		if fp.room != g.room || fp.heldOut != (p == unseenPool) {
			continue
		}
		if g.task == lookInLight {
			if !fp.hasLamp || fp.lamp != g.lamp {
				continue
			}
		} else if !fp.hasKind[g.target] {
			continue
		}
		if (g.appliance != nowhere && !fp.hasKind[g.appliance]) || !c.canStart(fp, g) {
			continue
		}
		fits = append(fits, i)
	}
	return fits
}

// applianceFor is the place kind a task type needs: a sink basin to clean,
// a microwave to heat, a fridge to cool. (A stove burner also heats, but the
// expert and ALFRED's goals use the microwave.)
func (c *catalog) applianceFor(task taskType) int {
	switch task {
	case pickClean:
		return c.mustPlace("sinkbasin")
	case pickHeat:
		return c.mustPlace("microwave")
	case pickCool:
		return c.mustPlace("fridge")
	}
	return nowhere
}

// canStart reports whether the goal's objects have somewhere to start in a
// floorplan: a plausible place other than the target, so that no goal is
// met before the agent acts.
func (c *catalog) canStart(fp *floorplan, g goalSpec) bool {
	for _, k := range fp.objectPlaces[g.object] {
		if g.task == lookInLight || k != g.target {
			return true
		}
	}
	return false
}
