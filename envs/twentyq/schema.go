package twentyq

// The schema: every attribute an object has, and for each one the yes/no
// propositions the oracle can answer about it, with the canonical question
// and the words players use to ask it. The objects themselves are in
// objects.txt.

// answer is the oracle's reply to a proposition about one object.
type answer uint8

const (
	no answer = iota
	yes
	unknown
)

func (a answer) String() string {
	switch a {
	case yes:
		return "Yes."
	case no:
		return "No."
	default:
		return "I don't know."
	}
}

// wording is how players ask about one proposition.
type wording struct {
	// question is the canonical question; the oracle maps it back to this
	// proposition, and the expert asks it.
	question string
	// phrases ask about the proposition; negated phrases ask about its
	// opposite ("natural" for man-made). Both are normalised like questions
	// (see normalize), so "is made of" and "made" are the same phrase.
	phrases []string
	negated []string
}

func ask(question string, phrases ...string) wording {
	return wording{question: question, phrases: phrases}
}

func (w wording) not(phrases ...string) wording {
	w.negated = append(w.negated, phrases...)
	return w
}

// booleanAttribute is a yes/no property of an object.
type booleanAttribute struct {
	name string
	wording
}

// ordinalAttribute takes one level from an ordered scale (size, number of
// legs); its propositions ask whether the level lies in a range.
type ordinalAttribute struct {
	name   string
	levels []string // in increasing order
	ranges []levelRange
}

// levelRange is the proposition "min <= level <= max".
type levelRange struct {
	min, max int
	wording
}

// setAttribute holds any subset of its values (an object can be red and
// white, found in the kitchen and the garden); each value is a proposition.
type setAttribute struct {
	name   string
	values []setValue
}

type setValue struct {
	name string
	wording
}

var booleanAttributes = []booleanAttribute{
	{"alive", ask("Is it alive?", "alive", "living", "living thing", "life form", "organism", "breathe").
		not("inanimate", "nonliving", "non living", "dead", "lifeless")},
	{"animal", ask("Is it an animal?", "animal", "creature", "beast", "critter", "wildlife")},
	{"mammal", ask("Is it a mammal?", "mammal", "mammalian")},
	{"bird", ask("Is it a bird?", "bird", "feather", "feathered", "avian", "beak")},
	{"fish", ask("Is it a fish?", "fish", "gill")},
	{"insect", ask("Is it an insect?", "insect", "bug")},
	{"reptile", ask("Is it a reptile?", "reptile", "reptilian")},
	{"amphibian", ask("Is it an amphibian?", "amphibian")},
	{"plant", ask("Is it a plant?", "plant", "flora", "vegetation", "leaf", "leave", "leafy")},
	{"tree", ask("Is it a tree?", "tree")},
	{"flower", ask("Is it a flower?", "flower", "bloom", "blossom", "petal", "flowering")},
	{"food", ask("Can you eat it?", "food", "edible", "eat", "eaten", "for eating", "snack", "meal", "consume").
		not("inedible")},
	{"drink", ask("Can you drink it?", "drink", "beverage", "drinkable", "sip")},
	{"liquid", ask("Is it a liquid?", "liquid", "fluid", "pour")},
	{"fruit", ask("Is it a fruit?", "fruit", "fruity", "berry")},
	{"vegetable", ask("Is it a vegetable?", "vegetable", "veggie", "veg")},
	{"sweet", ask("Is it sweet?", "sweet", "sugar", "sugary", "dessert")},
	{"citrus", ask("Is it a citrus fruit?", "citrus", "citrus fruit")},
	{"sour", ask("Is it sour?", "sour", "tart", "acidic")},
	{"salty", ask("Is it salty?", "salty", "salt", "savory", "savoury")},
	{"spicy", ask("Is it spicy?", "spicy", "hot to eat", "peppery")},
	{"cooked", ask("Is it usually cooked before it is eaten?", "cook", "cooked", "need cooking", "baked", "fried", "boiled", "roasted", "grilled").
		not("raw", "uncooked", "eaten raw")},
	{"meat", ask("Is it meat?", "meat", "meaty", "made from meat", "contain meat")},
	{"dairy", ask("Is it a dairy product?", "dairy", "dairy product", "made from milk", "contain milk")},
	{"breakfast", ask("Is it eaten at breakfast?", "breakfast", "morning")},
	{"alcoholic", ask("Does it contain alcohol?", "alcohol", "alcoholic", "booze")},
	{"manmade", ask("Is it man-made?", "man made", "manmade", "artificial", "manufactured", "human made", "made by humans", "made by people", "invented", "synthetic", "factory").
		not("natural", "found in nature", "occur naturally", "naturally occurring")},
	{"electric", ask("Does it use electricity?", "electricity", "electric", "electrical", "electronic", "electronics", "battery", "plug", "plugged", "plug in", "power outlet", "powered", "power", "charge", "charged")},
	{"screen", ask("Does it have a screen?", "screen", "display", "touchscreen")},
	{"motor", ask("Does it have an engine or a motor?", "engine", "motor", "motorized", "motorised", "fuel", "gas", "gasoline", "petrol", "diesel")},
	{"vehicle", ask("Is it a vehicle?", "vehicle", "transport", "transportation", "travel in", "drive", "driven", "means of transport")},
	{"rideable", ask("Can you ride it?", "ride", "ridden", "rideable", "ride on", "ride in")},
	{"floats", ask("Does it float on water?", "float", "floating", "on water", "sail")},
	{"furniture", ask("Is it furniture?", "furniture", "piece of furniture", "furnishing")},
	{"tool", ask("Is it a tool?", "tool", "utensil", "implement", "instrument for work")},
	{"instrument", ask("Is it a musical instrument?", "musical instrument", "instrument", "musical", "music", "play music", "make music")},
	{"strings", ask("Does it have strings?", "string", "stringed")},
	{"percussion", ask("Do you hit it to make a sound?", "percussion", "hit it", "hit", "strike", "bang")},
	{"wind", ask("Do you blow into it?", "blow", "blow into", "wind instrument", "brass instrument")},
	{"clothing", ask("Can you wear it?", "wear", "worn", "wearable", "clothing", "clothes", "garment", "apparel", "outfit", "accessory", "put on")},
	{"jewelry", ask("Is it jewelry?", "jewelry", "jewellery", "jewel", "bling")},
	{"container", ask("Can you put things in it?", "container", "contain", "hold things", "store things", "put things in", "storage", "keep things in", "hollow")},
	{"toy", ask("Is it a toy or a game?", "toy", "plaything", "play with", "game", "for children", "for kids", "children play")},
	{"sport", ask("Is it used in sports?", "sport", "sporting", "exercise", "athletic", "athletics", "workout")},
	{"wild", ask("Does it live in the wild?", "wild", "in wild", "untamed")},
	{"domesticated", ask("Is it domesticated?", "domesticated", "domestic", "tame", "tamed")},
	{"pet", ask("Is it kept as a pet?", "pet", "companion", "house pet")},
	{"dangerous", ask("Is it dangerous?", "dangerous", "harmful", "hurt", "harm", "kill", "deadly", "poisonous", "venomous", "hazardous", "lethal", "bite", "sting").
		not("safe", "harmless")},
	{"carnivore", ask("Does it eat meat?", "carnivore", "carnivorous", "eat meat", "meat eater", "predator", "hunt", "hunter", "eat animals", "eat other animals", "omnivore")},
	{"herbivore", ask("Does it eat plants?", "herbivore", "herbivorous", "eat plants", "eat grass", "plant eater", "vegetarian", "eat leaves", "eat seeds")},
	{"fur", ask("Does it have fur?", "fur", "furry", "hair", "hairy", "fuzzy")},
	{"scales", ask("Does it have scales?", "scale", "scaly")},
	{"shell", ask("Does it have a shell?", "shell", "shelled")},
	{"tail", ask("Does it have a tail?", "tail")},
	{"horns", ask("Does it have horns or antlers?", "horn", "horned", "antler")},
	{"stripes", ask("Does it have stripes?", "stripe", "striped", "stripy")},
	{"spots", ask("Does it have spots?", "spot", "spotted", "spotty", "dot", "dotted")},
	{"swims", ask("Can it swim?", "swim", "swimming", "swimmer")},
	{"flies", ask("Can it fly?", "fly", "flying", "flight", "airborne", "soar", "glide", "fly in air", "fly in sky")},
	{"wings", ask("Does it have wings?", "wing", "winged")},
	{"eggs", ask("Does it lay eggs?", "lay egg", "lays egg", "laying egg", "egg laying", "hatch", "hatch from egg", "come from egg")},
	{"nocturnal", ask("Is it active at night?", "nocturnal", "at night", "night", "active at night")},
	{"climbs", ask("Can it climb?", "climb", "climbing", "climber", "climb tree")},
	{"fast", ask("Is it fast?", "fast", "quick", "speedy", "rapid", "run fast", "move fast").
		not("slow")},
	{"heavy", ask("Is it heavy?", "heavy", "weigh lot", "heavier than person").
		not("lightweight", "light weight")},
	{"transparent", ask("Is it transparent?", "transparent", "see through", "clear", "translucent")},
	{"soft", ask("Is it soft?", "soft", "squishy", "fluffy", "cuddly", "squeezable", "spongy").
		not("hard", "firm", "rigid", "solid")},
	{"sharp", ask("Is it sharp?", "sharp", "blade", "pointy", "pointed", "spiky", "spike", "thorn", "thorny", "prickly", "spiny")},
	{"handle", ask("Does it have a handle?", "handle")},
	{"buttons", ask("Does it have buttons?", "button", "knob", "push button")},
	{"expensive", ask("Is it expensive?", "expensive", "costly", "cost lot", "pricey", "valuable", "luxury", "worth lot").
		not("cheap", "inexpensive", "affordable")},
	{"hot", ask("Does it get hot?", "hot", "heat", "warm", "burn", "burning", "get hot", "heated")},
	{"cold", ask("Is it cold?", "cold", "cool", "chill", "chilled", "frozen", "freeze", "refrigerated", "kept in fridge", "icy")},
	{"noisy", ask("Does it make noise?", "noise", "noisy", "loud", "sound", "make sound", "make noise", "sing", "song").
		not("quiet", "silent")},
	{"smelly", ask("Does it have a strong smell?", "smell", "smelly", "fragrant", "scent", "scented", "stink", "stinky", "odor", "odour", "aroma")},
	{"round", ask("Is it round?", "round", "circular", "sphere", "spherical", "ball shaped", "circle", "ball")},
	{"long", ask("Is it long and thin?", "long", "elongated", "thin", "skinny", "long and thin", "rod", "tall")},
	{"flat", ask("Is it flat?", "flat", "thin and flat")},
	{"seeds", ask("Does it have seeds?", "seed", "pit", "pip", "seedy")},
	{"treegrown", ask("Does it grow on trees?", "grow on tree", "grows on tree", "from tree", "come from tree", "tree fruit", "pick from tree")},
	{"underground", ask("Does it live or grow underground?", "underground", "under ground", "in ground", "dig", "burrow", "root", "in soil", "in dirt")},
	{"tropical", ask("Is it tropical?", "tropical", "tropic", "exotic")},
	{"indoors", ask("Is it usually found indoors?", "indoors", "inside", "indoor", "in house", "in home", "household", "at home", "in building", "in room", "inside house")},
	{"outdoors", ask("Is it usually found outdoors?", "outdoors", "outside", "outdoor", "in nature", "open air")},
}

var ordinalAttributes = []ordinalAttribute{
	{"size", []string{"tiny", "small", "medium", "large", "huge"}, []levelRange{
		{1, 4, ask("Is it bigger than a coin?", comparisons("coin", "golf ball", "grape", "thumb", "fingertip")...).
			not(append(smaller("coin", "golf ball", "grape", "thumb", "fingertip"), "tiny", "very small", "miniature", "microscopic", "minuscule", "teeny")...)},
		{2, 4, ask("Is it bigger than a breadbox?", append(comparisons("breadbox", "bread box", "shoebox", "shoe box"), "big", "large")...).
			not(append(smaller("breadbox", "bread box", "shoebox", "shoe box"), "small", "little", "fit in hand", "hold in hand", "hold in one hand", "handheld", "hand held", "fit in pocket", "pocket sized", "carry in hand")...)},
		{3, 4, ask("Is it bigger than a person?", comparisons("person", "human", "man", "adult", "human being", "people")...).
			not(smaller("person", "human", "man", "adult", "human being", "people")...)},
		{4, 4, ask("Is it bigger than a car?", append(comparisons("car", "automobile", "horse", "cow", "sofa", "couch"), "huge", "enormous", "gigantic", "giant", "very big", "very large", "massive")...).
			not(smaller("car", "automobile", "horse", "cow", "sofa", "couch")...)},
	}},
	{"legs", []string{"0", "2", "4", "6", "8", "many"}, []levelRange{
		{1, 5, ask("Does it have legs?", "leg", "legged", "foot", "feet", "walk").not("legless")},
		{1, 1, ask("Does it have two legs?", "two leg", "two legged", "two foot", "two feet", "biped", "bipedal", "walk on two leg")},
		{2, 2, ask("Does it have four legs?", "four leg", "four legged", "four foot", "four feet", "quadruped", "walk on four leg")},
		{3, 3, ask("Does it have six legs?", "six leg", "six legged")},
		{4, 4, ask("Does it have eight legs?", "eight leg", "eight legged", "eight arm")},
		{5, 5, ask("Does it have more than eight legs?", "more than eight leg", "many leg", "lot of leg", "lot leg", "hundred leg", "ten leg", "dozen leg", "hundred of leg")},
		{2, 5, ask("Does it have more than two legs?", "more than two leg")},
		{3, 5, ask("Does it have more than four legs?", "more than four leg")},
	}},
	{"wheels", []string{"0", "1", "2", "3", "4", "many"}, []levelRange{
		{1, 5, ask("Does it have wheels?", "wheel", "wheeled", "tire", "tyre", "roll on wheel")},
		{1, 1, ask("Does it have a single wheel?", "single wheel", "only wheel", "unicycle")},
		{2, 2, ask("Does it have two wheels?", "two wheel", "two wheeled")},
		{3, 3, ask("Does it have three wheels?", "three wheel", "three wheeled")},
		{4, 4, ask("Does it have four wheels?", "four wheel", "four wheeled")},
		{5, 5, ask("Does it have more than four wheels?", "more than four wheel", "many wheel", "lot of wheel", "lot wheel", "six wheel", "eighteen wheel")},
	}},
}

// comparisons returns "bigger than <ref>" phrasings; smaller returns the
// opposite ones.
func comparisons(refs ...string) []string {
	var phrases []string
	for _, r := range refs {
		phrases = append(phrases, "bigger than "+r, "larger than "+r, "taller than "+r)
	}
	return phrases
}

func smaller(refs ...string) []string {
	var phrases []string
	for _, r := range refs {
		phrases = append(phrases, "smaller than "+r, "shorter than "+r, "less than "+r)
	}
	return phrases
}

var setAttributes = []setAttribute{
	{"color", []setValue{
		{"red", ask("Is it red?", "red", "reddish", "crimson", "scarlet")},
		{"orange", ask("Is it orange?", "orange", "orangey")},
		{"yellow", ask("Is it yellow?", "yellow", "yellowish")},
		{"green", ask("Is it green?", "green", "greenish")},
		{"blue", ask("Is it blue?", "blue", "bluish")},
		{"purple", ask("Is it purple?", "purple", "violet")},
		{"pink", ask("Is it pink?", "pink", "pinkish")},
		{"brown", ask("Is it brown?", "brown", "brownish", "tan")},
		{"black", ask("Is it black?", "black", "blackish", "dark colored")},
		{"white", ask("Is it white?", "white", "whitish")},
		{"gray", ask("Is it gray?", "gray", "grey", "grayish", "greyish")},
		{"silver", ask("Is it silver?", "silver", "silvery")},
		{"gold", ask("Is it gold-colored?", "gold", "golden", "gold colored", "gold coloured")},
	}},
	{"material", []setValue{
		{"metal", ask("Is it made of metal?", "metal", "metallic", "steel", "aluminum", "aluminium", "brass", "copper")},
		{"wood", ask("Is it made of wood?", "wood", "wooden", "timber", "made from tree")},
		{"plastic", ask("Is it made of plastic?", "plastic")},
		{"glass", ask("Is it made of glass?", "glass")},
		{"fabric", ask("Is it made of fabric?", "fabric", "cloth", "textile", "cotton", "wool", "woolen", "woollen", "silk", "nylon")},
		{"paper", ask("Is it made of paper?", "paper", "cardboard")},
		{"rubber", ask("Is it made of rubber?", "rubber", "rubbery")},
		{"leather", ask("Is it made of leather?", "leather")},
		{"ceramic", ask("Is it made of ceramic?", "ceramic", "porcelain", "clay", "pottery")},
		{"wax", ask("Is it made of wax?", "wax", "waxy")},
	}},
	{"place", []setValue{
		{"kitchen", ask("Is it found in the kitchen?", "kitchen")},
		{"bathroom", ask("Is it found in the bathroom?", "bathroom", "restroom", "washroom")},
		{"bedroom", ask("Is it found in the bedroom?", "bedroom")},
		{"living_room", ask("Is it found in the living room?", "living room", "lounge", "family room", "sitting room")},
		{"office", ask("Is it found in an office?", "office", "workplace")},
		{"garage", ask("Is it found in the garage?", "garage", "workshop", "shed")},
		{"school", ask("Is it found in a school?", "school", "classroom")},
		{"garden", ask("Is it found in the garden?", "garden", "yard", "backyard", "lawn")},
		{"farm", ask("Is it found on a farm?", "farm", "ranch", "farmyard", "barnyard", "farm animal")},
		{"forest", ask("Is it found in the forest?", "forest", "woodland")},
		{"jungle", ask("Is it found in the jungle?", "jungle", "rainforest", "rain forest")},
		{"grassland", ask("Is it found on the savanna?", "savanna", "savannah", "grassland", "plains", "prairie", "meadow")},
		{"desert", ask("Is it found in the desert?", "desert")},
		{"ocean", ask("Is it found in the ocean?", "ocean", "sea", "saltwater", "salt water", "marine", "beach", "seaside", "coast", "reef", "sea creature")},
		{"freshwater", ask("Is it found in rivers or lakes?", "river", "lake", "pond", "stream", "freshwater", "fresh water", "swamp", "marsh", "rivers or lakes")},
		{"polar", ask("Is it found in the Arctic or Antarctic?", "arctic", "antarctic", "antarctica", "polar", "north pole", "south pole", "snow", "snowy", "arctic or antarctic")},
		{"mountains", ask("Is it found in the mountains?", "mountain", "hill", "alpine")},
		{"city", ask("Is it found in the city?", "city", "town", "urban", "street", "road", "sewer")},
		{"sky", ask("Is it found in the sky?", "sky", "in air", "up in air")},
	}},
	{"bodypart", []setValue{
		{"head", ask("Do you wear it on your head?", "wear on head", "on head", "headwear")},
		{"face", ask("Do you wear it on your face?", "wear on face", "on face")},
		{"ears", ask("Do you wear it on your ears?", "wear on ear", "on ear", "in ear")},
		{"neck", ask("Do you wear it around your neck?", "wear around neck", "wear on neck", "around neck")},
		{"upper_body", ask("Do you wear it on your upper body?", "upper body", "torso", "wear on top", "top half", "wear on body")},
		{"legs", ask("Do you wear it on your legs?", "wear on leg", "lower body", "bottom half")},
		{"feet", ask("Do you wear it on your feet?", "wear on foot", "on foot", "footwear", "on feet", "wear on feet")},
		{"hands", ask("Do you wear it on your hands?", "wear on hand", "on hand", "handwear")},
		{"wrist", ask("Do you wear it on your wrist?", "wear on wrist", "on wrist")},
		{"finger", ask("Do you wear it on your finger?", "wear on finger", "on finger")},
		{"waist", ask("Do you wear it around your waist?", "wear around waist", "around waist")},
	}},
	{"purpose", []setValue{
		{"cooking", ask("Is it used for cooking?", "cooking", "cook with", "used to cook", "baking", "cook food", "prepare food", "food preparation")},
		{"eating", ask("Is it used for eating?", "eating", "eat with", "used to eat", "used for eating", "tableware", "cutlery", "silverware")},
		{"drinking", ask("Is it used for drinking?", "drinking", "drink from", "drink out of", "drink with", "used to drink", "used for drinking")},
		{"cleaning", ask("Is it used for cleaning?", "cleaning", "clean", "wash", "washing", "dust", "dusting", "laundry")},
		{"cutting", ask("Is it used for cutting?", "cutting", "cut", "chop", "chopping", "slice", "slicing")},
		{"writing", ask("Is it used for writing?", "writing", "write", "write with", "printing", "print")},
		{"reading", ask("Is it used for reading?", "reading", "read")},
		{"learning", ask("Is it used for learning?", "learning", "learn", "study", "studying", "education", "educational", "teach", "teaching")},
		{"art", ask("Is it used for art?", "art", "painting", "paint", "draw", "drawing", "artistic", "craft", "color with", "colour with")},
		{"communication", ask("Is it used for communication?", "communication", "communicate", "call", "calling", "talk to people", "send message", "message", "phone call")},
		{"entertainment", ask("Is it used for entertainment?", "entertainment", "entertain", "entertaining", "fun", "for fun", "enjoyment", "leisure", "hobby", "listen to")},
		{"photography", ask("Is it used to take pictures?", "photo", "photograph", "photography", "take picture", "picture")},
		{"computing", ask("Is it used for calculating?", "compute", "computing", "calculate", "calculating", "calculation", "math", "arithmetic")},
		{"sitting", ask("Is it used for sitting?", "sit", "sit on", "sit in", "sitting", "seat", "seating")},
		{"sleeping", ask("Is it used for sleeping?", "sleep", "sleeping", "sleep on", "sleep in", "nap", "lie on", "lie down")},
		{"decoration", ask("Is it used for decoration?", "decoration", "decorate", "decorative", "ornament", "ornamental", "decor")},
		{"lighting", ask("Is it used for light?", "give light", "light up", "produce light", "make light", "lighting", "illuminate", "shine", "glow", "used for light", "give off light")},
		{"repair", ask("Is it used for building or repairing things?", "repair", "fix", "fix things", "construction", "construct", "build things", "building or repairing", "diy")},
		{"fastening", ask("Is it used to hold things together?", "fasten", "fastening", "attach", "stick", "sticky", "hold together", "hold things together", "join", "adhesive", "sew", "sewing")},
		{"gardening", ask("Is it used for gardening?", "gardening", "garden work", "yard work", "yardwork")},
		{"hygiene", ask("Is it used for personal hygiene?", "hygiene", "grooming", "groom", "personal care", "brush teeth", "bathe", "bathing", "shower", "personal hygiene")},
		{"timekeeping", ask("Is it used to tell the time?", "tell time", "time", "timekeeping", "keep time", "tell the time")},
		{"measuring", ask("Is it used for measuring?", "measure", "measuring", "measurement", "weigh")},
		{"protection", ask("Is it used for protection?", "protect", "protection", "protective", "safety", "keep safe", "keep warm", "shelter", "security", "secure")},
		{"carrying", ask("Is it used for carrying things?", "carry", "carrying", "carry things", "haul", "carrying things")},
		{"seeing", ask("Does it help you see?", "see", "vision", "sight", "eyesight", "help see", "see better")},
		{"medical", ask("Is it used for medical care?", "medical", "medicine", "health", "hospital", "doctor", "heal", "emergency", "medical care")},
	}},
}

// waterPlaces are the places whose objects answer yes to the derived
// proposition "found in water".
var waterPlaces = []string{"ocean", "freshwater"}

var inWater = ask("Is it found in water?", "in water", "aquatic", "underwater", "under water", "live in water", "water animal", "found in water")

// comparisonWords start a comparison the oracle cannot make when the rest of
// the question did not match one of its reference objects ("bigger than a
// cat?"); it asks the player to rephrase instead of guessing.
var comparisonWords = []string{"bigger than", "larger than", "taller than", "smaller than", "shorter than", "heavier than", "lighter than", "more than", "less than", "fewer than"}
