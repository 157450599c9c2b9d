package alfworld

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
)

// placeKind is a type of location the agent can go to: a receptacle
// (cabinet, countertop, ...) or a floor lamp, which is a place but holds
// nothing.
type placeKind struct {
	name      string
	container bool // objects can be put in or on it
	openable  bool // closed at the start; hides its contents until opened
	inside    bool // goal texts and messages say "in" rather than "on"
	heats     bool
	cools     bool
	cleans    bool
}

// objectKind is a type of movable object.
type objectKind struct {
	name   string
	rooms  roomSet
	places []int // place kinds it plausibly rests in, indices into catalog.placeKinds
	// names and examines are the instance names ("apple 2") and their
	// examine commands, indexed by instance number - 1.
	names, examines []string
	// What the object affords; a task type needs its affordance.
	cleanable, heatable, coolable, lightable bool
}

// maxInstances bounds how many objects of one type a room holds.
const maxInstances = 3

type roomType int

const (
	kitchen roomType = iota
	livingroom
	bedroom
	bathroom
	numRoomTypes
)

var roomNames = [numRoomTypes]string{"kitchen", "livingroom", "bedroom", "bathroom"}

// floorplanBase numbers floorplans like AI2-THOR's scenes, which ALFWorld
// inherits: kitchens 1-30, living rooms 201-230, bedrooms 301-330, bathrooms
// 401-430.
var floorplanBase = [numRoomTypes]int{0, 200, 300, 400}

// Per room type, floorplans 1..floorplansSeen are used by train and test;
// the rest (up to floorplansPerRoom) only by the unseen split, as ALFWorld's
// unseen split plays in rooms never seen in training.
const (
	floorplansPerRoom = 30
	floorplansSeen    = 24
)

type roomSet uint8

func (s roomSet) has(r roomType) bool { return s&(1<<r) != 0 }

const (
	inKitchen    roomSet = 1 << kitchen
	inLivingroom roomSet = 1 << livingroom
	inBedroom    roomSet = 1 << bedroom
	inBathroom   roomSet = 1 << bathroom
)

// Affordance flags of the object table.
const (
	affordClean = 1 << iota
	affordHeat
	affordCool
	affordLight
)

// lampKind names the two lamps of look_at_obj_in_light tasks. A desk lamp
// stands on a receptacle; a floor lamp is a place of its own.
type lampKind int

const (
	desklamp lampKind = iota
	floorlamp
)

var lampNames = [...]string{"desklamp", "floorlamp"}

// placeRange says how many instances of a place kind a room of some type has.
type placeRange struct {
	kind     string
	min, max int
}

type roomSpec struct {
	places []placeRange
	// floorlampChance is the chance that the room's lamp is a floor lamp
	// rather than a desk lamp; rooms without lamps have hasLamp false.
	hasLamp         bool
	floorlampChance float64
	desklampHosts   []string // place kinds a desk lamp may stand on
}

var placeKindTable = []placeKind{
	{name: "cabinet", container: true, openable: true, inside: true},
	{name: "drawer", container: true, openable: true, inside: true},
	{name: "fridge", container: true, openable: true, inside: true, cools: true},
	{name: "microwave", container: true, openable: true, inside: true, heats: true},
	{name: "safe", container: true, openable: true, inside: true},
	{name: "countertop", container: true},
	{name: "diningtable", container: true},
	{name: "coffeetable", container: true},
	{name: "sidetable", container: true},
	{name: "desk", container: true},
	{name: "dresser", container: true},
	{name: "shelf", container: true},
	{name: "stoveburner", container: true, heats: true},
	{name: "sinkbasin", container: true, inside: true, cleans: true},
	{name: "bathtubbasin", container: true, inside: true},
	{name: "garbagecan", container: true, inside: true},
	{name: "coffeemachine", container: true, inside: true},
	{name: "toaster", container: true, inside: true},
	{name: "bed", container: true},
	{name: "sofa", container: true},
	{name: "armchair", container: true},
	{name: "tvstand", container: true},
	{name: "ottoman", container: true},
	{name: "toilet", container: true},
	{name: "towelholder", container: true},
	{name: "handtowelholder", container: true},
	{name: "toiletpaperhanger", container: true},
	{name: "laundryhamper", container: true, inside: true},
	{name: "floorlamp"},
}

var roomTable = [numRoomTypes]roomSpec{
	kitchen: {places: []placeRange{
		{"cabinet", 3, 10}, {"countertop", 1, 3}, {"drawer", 1, 8}, {"fridge", 1, 1},
		{"microwave", 1, 1}, {"stoveburner", 2, 4}, {"sinkbasin", 1, 1}, {"garbagecan", 1, 1},
		{"coffeemachine", 1, 1}, {"toaster", 0, 1}, {"diningtable", 0, 2}, {"shelf", 0, 3},
	}},
	livingroom: {places: []placeRange{
		{"sofa", 1, 1}, {"armchair", 0, 2}, {"coffeetable", 0, 2}, {"sidetable", 1, 3},
		{"diningtable", 0, 1}, {"tvstand", 0, 1}, {"dresser", 0, 1}, {"drawer", 0, 6},
		{"cabinet", 0, 4}, {"shelf", 0, 6}, {"garbagecan", 1, 1}, {"ottoman", 0, 1},
	}, hasLamp: true, floorlampChance: 0.5, desklampHosts: []string{"sidetable", "dresser"}},
	bedroom: {places: []placeRange{
		{"bed", 1, 1}, {"desk", 0, 2}, {"dresser", 0, 1}, {"drawer", 2, 8}, {"sidetable", 1, 2},
		{"shelf", 0, 6}, {"garbagecan", 1, 1}, {"armchair", 0, 1}, {"safe", 0, 1},
		{"laundryhamper", 0, 1},
	}, hasLamp: true, floorlampChance: 0.3, desklampHosts: []string{"desk", "sidetable", "dresser"}},
	bathroom: {places: []placeRange{
		{"toilet", 1, 1}, {"sinkbasin", 1, 2}, {"bathtubbasin", 0, 1}, {"countertop", 1, 1},
		{"cabinet", 1, 4}, {"drawer", 0, 4}, {"garbagecan", 1, 1}, {"towelholder", 1, 2},
		{"handtowelholder", 0, 2}, {"toiletpaperhanger", 1, 1}, {"shelf", 0, 3}, {"dresser", 0, 1},
	}},
}

type objectRow struct {
	name       string
	rooms      roomSet
	places     string
	affordance int
}

var objectTable = []objectRow{
	{"apple", inKitchen, "countertop diningtable fridge microwave garbagecan sinkbasin", affordClean | affordHeat | affordCool},
	{"bread", inKitchen, "countertop diningtable fridge microwave cabinet", affordHeat | affordCool},
	{"butterknife", inKitchen, "countertop diningtable drawer sinkbasin", affordClean},
	{"knife", inKitchen, "countertop diningtable drawer sinkbasin", affordClean},
	{"fork", inKitchen, "countertop diningtable drawer sinkbasin", affordClean},
	{"spoon", inKitchen, "countertop diningtable drawer sinkbasin", affordClean},
	{"ladle", inKitchen, "countertop diningtable drawer sinkbasin", affordClean},
	{"spatula", inKitchen, "countertop diningtable drawer sinkbasin", affordClean},
	{"cup", inKitchen, "countertop diningtable cabinet fridge microwave sinkbasin shelf", affordClean | affordHeat | affordCool},
	{"mug", inKitchen | inBedroom, "countertop diningtable cabinet coffeemachine fridge microwave sinkbasin shelf desk sidetable", affordClean | affordHeat | affordCool | affordLight},
	{"plate", inKitchen | inLivingroom, "countertop diningtable cabinet fridge microwave sinkbasin shelf coffeetable", affordClean | affordHeat | affordCool},
	{"bowl", inKitchen | inLivingroom | inBedroom, "countertop diningtable cabinet fridge microwave sinkbasin shelf coffeetable sidetable desk dresser", affordClean | affordHeat | affordCool | affordLight},
	{"egg", inKitchen, "countertop diningtable fridge microwave garbagecan sinkbasin", affordHeat | affordCool},
	{"potato", inKitchen, "countertop diningtable fridge microwave garbagecan sinkbasin", affordClean | affordHeat | affordCool},
	{"tomato", inKitchen, "countertop diningtable fridge microwave garbagecan sinkbasin", affordClean | affordHeat | affordCool},
	{"lettuce", inKitchen, "countertop diningtable fridge garbagecan sinkbasin", affordClean | affordCool},
	{"pan", inKitchen, "stoveburner countertop diningtable cabinet fridge sinkbasin", affordClean | affordCool},
	{"pot", inKitchen, "stoveburner countertop diningtable cabinet fridge sinkbasin shelf", affordClean | affordCool},
	{"kettle", inKitchen, "stoveburner countertop diningtable cabinet sinkbasin shelf", affordClean},
	{"saltshaker", inKitchen, "countertop diningtable cabinet drawer shelf", 0},
	{"peppershaker", inKitchen, "countertop diningtable cabinet drawer shelf", 0},
	{"soapbottle", inKitchen | inBathroom, "countertop cabinet sinkbasin toilet shelf bathtubbasin garbagecan", 0},
	{"dishsponge", inKitchen | inBathroom, "countertop diningtable sinkbasin cabinet drawer bathtubbasin", affordClean},
	{"winebottle", inKitchen, "countertop diningtable fridge cabinet shelf garbagecan", affordCool},
	{"spraybottle", inKitchen | inBathroom, "countertop cabinet toilet shelf garbagecan drawer", 0},
	{"papertowelroll", inKitchen | inLivingroom, "countertop diningtable cabinet shelf coffeetable sidetable", 0},
	{"vase", inKitchen | inLivingroom | inBedroom, "shelf countertop diningtable cabinet coffeetable sidetable dresser tvstand desk", affordLight},
	{"remotecontrol", inLivingroom | inBedroom, "sofa armchair coffeetable sidetable tvstand drawer dresser ottoman diningtable", affordLight},
	{"keychain", inLivingroom | inBedroom, "coffeetable sidetable drawer dresser sofa armchair shelf tvstand desk diningtable safe", affordLight},
	{"creditcard", inLivingroom | inBedroom, "coffeetable sidetable drawer dresser sofa armchair shelf tvstand desk diningtable bed", affordLight},
	{"cellphone", inLivingroom | inBedroom, "bed desk drawer sidetable dresser sofa armchair coffeetable shelf safe", affordLight},
	{"book", inLivingroom | inBedroom, "bed desk shelf sidetable dresser drawer sofa coffeetable armchair", affordLight},
	{"newspaper", inLivingroom, "sofa armchair coffeetable sidetable diningtable tvstand ottoman drawer dresser garbagecan", affordLight},
	{"laptop", inLivingroom | inBedroom, "bed desk sofa armchair coffeetable diningtable ottoman", affordLight},
	{"pillow", inLivingroom | inBedroom, "bed sofa armchair ottoman", affordLight},
	{"statue", inLivingroom | inBedroom, "shelf coffeetable sidetable dresser tvstand diningtable desk cabinet", affordLight},
	{"watch", inLivingroom | inBedroom, "coffeetable sidetable drawer dresser shelf desk safe tvstand", affordLight},
	{"box", inLivingroom, "coffeetable sidetable diningtable sofa armchair shelf dresser cabinet garbagecan ottoman", affordLight},
	{"candle", inLivingroom | inBathroom, "coffeetable sidetable shelf dresser countertop toilet cabinet drawer", affordLight},
	{"cd", inBedroom, "desk drawer shelf sidetable dresser garbagecan safe", affordLight},
	{"pen", inBedroom, "desk drawer shelf sidetable dresser garbagecan", affordLight},
	{"pencil", inBedroom, "desk drawer shelf sidetable dresser garbagecan", affordLight},
	{"alarmclock", inBedroom, "desk shelf sidetable dresser", affordLight},
	{"cloth", inBathroom | inBedroom, "countertop cabinet bathtubbasin sinkbasin drawer toilet shelf garbagecan dresser laundryhamper", affordClean},
	{"towel", inBathroom, "towelholder bathtubbasin countertop shelf cabinet", 0},
	{"handtowel", inBathroom, "handtowelholder countertop cabinet shelf drawer", 0},
	{"soapbar", inBathroom, "bathtubbasin sinkbasin countertop toilet cabinet garbagecan shelf", affordClean},
	{"toiletpaper", inBathroom, "toilet toiletpaperhanger countertop cabinet shelf garbagecan drawer", 0},
	{"tissuebox", inBathroom | inLivingroom, "toilet countertop shelf cabinet dresser sidetable coffeetable", 0},
}

// floorplan is a fixed room layout: which places a room has. Episodes in the
// same floorplan share the places but not the objects.
type floorplan struct {
	id      int
	room    roomType
	heldOut bool        // only the unseen split plays in it
	places  []placeSlot // in listing order
	hasKind []bool      // indexed by place kind
	slots   [][]int     // indexed by place kind: its places, by instance number
	hasLamp bool
	lamp    lampKind
	// lampSlot indexes places: the desk lamp's host, or the floor lamp itself.
	lampSlot int
	// objectPlaces lists, per object kind, the place kinds of the floorplan
	// the object plausibly rests in (none for objects of other rooms);
	// objectKinds lists the object kinds with at least one.
	objectPlaces [][]int
	objectKinds  []int
	// view is what the agent sees from the middle of the room.
	view string
}

// placeSlot is one place of a floorplan, with the command strings that name
// it made once, so that listing admissible actions allocates little.
type placeSlot struct {
	kind    int
	name    string // "cabinet 3"
	goTo    string // "go to cabinet 3"
	open    string
	close   string
	examine string
}

// catalog is the static world knowledge shared read-only by all episodes.
type catalog struct {
	placeKinds  []placeKind
	objectKinds []objectKind
	placeIndex  map[string]int
	objectIndex map[string]int
	floorplans  []floorplan
	// goals[pool][task] lists the goals an episode of that pool and task type
	// is drawn from; see goal.go.
	goals [numPools][numTaskTypes][]goalSpec
}

var (
	catalogOnce   sync.Once
	sharedCatalog *catalog
)

// worldCatalog returns the catalog, building it on first use.
func worldCatalog() *catalog {
	catalogOnce.Do(func() { sharedCatalog = buildCatalog() })
	return sharedCatalog
}

func buildCatalog() *catalog {
	c := &catalog{
		placeKinds:  placeKindTable,
		placeIndex:  make(map[string]int, len(placeKindTable)),
		objectIndex: make(map[string]int, len(objectTable)),
	}
	for i, k := range c.placeKinds {
		c.placeIndex[k.name] = i
	}
	for i, row := range objectTable {
		kind := objectKind{
			name:      row.name,
			rooms:     row.rooms,
			cleanable: row.affordance&affordClean != 0,
			heatable:  row.affordance&affordHeat != 0,
			coolable:  row.affordance&affordCool != 0,
			lightable: row.affordance&affordLight != 0,
		}
		for _, p := range strings.Fields(row.places) {
			kind.places = append(kind.places, c.mustPlace(p))
		}
		for n := 1; n <= maxInstances; n++ {
			name := row.name + " " + strconv.Itoa(n)
			kind.names = append(kind.names, name)
			kind.examines = append(kind.examines, "examine "+name)
		}
		c.objectKinds = append(c.objectKinds, kind)
		c.objectIndex[row.name] = i
	}
	for room := range numRoomTypes {
		for n := 1; n <= floorplansPerRoom; n++ {
			fp := c.makeFloorplan(room, n)
			c.addObjectPlaces(&fp)
			fp.view = fp.describe()
			c.floorplans = append(c.floorplans, fp)
		}
	}
	c.buildGoals()
	return c
}

// mustPlace resolves a place kind named in the static tables above; an
// unknown name is a typo in those tables.
func (c *catalog) mustPlace(name string) int {
	i, ok := c.placeIndex[name]
	if !ok {
		panic("alfworld: unknown place kind " + name + " in the catalog tables")
	}
	return i
}

// makeFloorplan lays out floorplan n of a room type, deterministically.
func (c *catalog) makeFloorplan(room roomType, n int) floorplan {
	rng := rand.New(rand.NewPCG(uint64(room)+1, uint64(n)))
	spec := roomTable[room]
	fp := floorplan{
		id:      floorplanBase[room] + n,
		room:    room,
		heldOut: n > floorplansSeen,
		hasKind: make([]bool, len(c.placeKinds)),
		slots:   make([][]int, len(c.placeKinds)),
	}
	for _, r := range spec.places {
		kind := c.mustPlace(r.kind)
		count := r.min + rng.IntN(r.max-r.min+1)
		for i := 1; i <= count; i++ {
			fp.addPlace(kind, c.placeKinds[kind].name, i)
		}
	}
	if !spec.hasLamp {
		return fp
	}
	var hosts []int
	for i, slot := range fp.places {
		for _, h := range spec.desklampHosts {
			if c.placeKinds[slot.kind].name == h {
				hosts = append(hosts, i)
			}
		}
	}
	fp.hasLamp = true
	if len(hosts) == 0 || rng.Float64() < spec.floorlampChance {
		kind := c.mustPlace("floorlamp")
		fp.lamp = floorlamp
		fp.lampSlot = len(fp.places)
		fp.addPlace(kind, "floorlamp", 1)
	} else {
		fp.lamp = desklamp
		fp.lampSlot = hosts[rng.IntN(len(hosts))]
	}
	return fp
}

func (fp *floorplan) describe() string {
	var b strings.Builder
	b.WriteString("You are in the middle of a room. Looking quickly around you, you see ")
	for i := range fp.places {
		writeListItem(&b, fp.places[i].name, i, len(fp.places))
	}
	b.WriteString(".")
	return b.String()
}

func (c *catalog) addObjectPlaces(fp *floorplan) {
	fp.objectPlaces = make([][]int, len(c.objectKinds))
	for i := range c.objectKinds {
		kind := &c.objectKinds[i]
		if !kind.rooms.has(fp.room) {
			continue
		}
		for _, k := range kind.places {
			if fp.hasKind[k] {
				fp.objectPlaces[i] = append(fp.objectPlaces[i], k)
			}
		}
		if len(fp.objectPlaces[i]) > 0 {
			fp.objectKinds = append(fp.objectKinds, i)
		}
	}
}

func (fp *floorplan) addPlace(kind int, kindName string, number int) {
	name := kindName + " " + strconv.Itoa(number)
	fp.slots[kind] = append(fp.slots[kind], len(fp.places))
	fp.hasKind[kind] = true
	fp.places = append(fp.places, placeSlot{
		kind:    kind,
		name:    name,
		goTo:    "go to " + name,
		open:    "open " + name,
		close:   "close " + name,
		examine: "examine " + name,
	})
}
