package initmodel

// Word lists for the built-in corpus. They are grouped by the role a word
// plays in the generated sentences and cover the vocabulary of the built-in
// environments: household objects and places, products and their
// attributes, customer service, arithmetic and question answering.

var (
	firstNames = []string{
		"Alice", "Bob", "Carol", "David", "Emma", "Frank", "Grace", "Henry", "Irene", "James",
		"Karen", "Liam", "Maria", "Noah", "Olivia", "Peter", "Quinn", "Rosa", "Samuel", "Tara",
		"Umar", "Vera", "Walter", "Xena", "Yusuf", "Zoe", "Aisha", "Bruno", "Chen", "Diego",
		"Elena", "Fatima", "Hiro", "Ingrid", "Jamal", "Keiko", "Lucas", "Mei", "Nadia", "Omar",
		"Priya", "Raj", "Sofia", "Tomas", "Yara", "Ethan", "Mia", "Lena", "Arjun", "Clara",
	}
	lastNames = []string{
		"Smith", "Johnson", "Garcia", "Brown", "Lee", "Martinez", "Davis", "Lopez", "Wilson", "Anderson",
		"Taylor", "Thomas", "Moore", "Jackson", "Martin", "Thompson", "White", "Harris", "Clark", "Lewis",
		"Walker", "Young", "Hall", "Allen", "King", "Wright", "Scott", "Green", "Baker", "Adams",
		"Nguyen", "Kim", "Patel", "Kowalski", "Schmidt", "Rossi", "Silva", "Ito", "Novak", "Hansen",
	}
	cities = []string{
		"Boston", "Denver", "Seattle", "Austin", "Chicago", "Portland", "Atlanta", "Phoenix", "Dallas", "Miami",
		"Toronto", "London", "Paris", "Berlin", "Madrid", "Rome", "Tokyo", "Sydney", "Lisbon", "Dublin",
		"Oslo", "Vienna", "Prague", "Seoul", "Mumbai", "Cairo", "Lima", "Nairobi", "Houston", "Columbus",
	}
	streets = []string{
		"Main Street", "Oak Avenue", "Pine Road", "Maple Drive", "Cedar Lane", "Elm Street", "Lake View",
		"River Road", "Hill Street", "Park Avenue", "Sunset Boulevard", "Market Street", "Broadway", "Mill Lane",
	}
	months = []string{
		"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
	}
	weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

	// Household places and objects (the text world of the household tasks).
	receptacles = []string{
		"cabinet", "countertop", "drawer", "fridge", "microwave", "sinkbasin", "stoveburner", "shelf", "sidetable",
		"diningtable", "coffeetable", "desk", "dresser", "bed", "sofa", "armchair", "garbagecan", "toilet",
		"bathtubbasin", "handtowelholder", "towelholder", "toiletpaperhanger", "safe", "laundryhamper", "cart",
		"coffeemachine", "toaster", "ottoman", "tvstand",
	}
	household = []string{
		"apple", "bread", "lettuce", "tomato", "potato", "egg", "mug", "cup", "bowl", "plate", "pan", "pot",
		"kettle", "knife", "butterknife", "fork", "spoon", "spatula", "ladle", "saltshaker", "peppershaker",
		"soapbottle", "dishsponge", "cloth", "towel", "handtowel", "soapbar", "candle", "spraybottle",
		"toiletpaper", "plunger", "scrubbrush", "book", "pen", "pencil", "cellphone", "laptop", "creditcard",
		"keychain", "watch", "remotecontrol", "newspaper", "pillow", "statue", "vase", "box", "houseplant",
		"alarmclock", "desklamp", "cd", "tissuebox", "winebottle", "glassbottle", "baseballbat", "tennisracket",
	}
	// Product categories, attributes and options of the shopping tasks.
	products = []string{
		"hiking boots", "running shoes", "rain jacket", "wool sweater", "cotton t-shirt", "denim jeans", "yoga pants",
		"backpack", "laptop sleeve", "phone case", "wireless earbuds", "bluetooth speaker", "desk lamp",
		"coffee maker", "water bottle", "throw pillow", "bath towel set", "shower curtain", "face moisturizer",
		"shampoo", "conditioner", "hair dryer", "electric toothbrush", "sunscreen", "lip balm", "green tea",
		"dark chocolate", "protein bars", "trail mix", "olive oil", "hot sauce", "dog food", "cat litter",
		"office chair", "standing desk", "bookshelf", "area rug", "wall clock", "picture frame", "led strip lights",
		"gaming mouse", "mechanical keyboard", "usb-c cable", "power bank", "smart watch", "fitness tracker",
		"winter gloves", "sun hat", "sunglasses", "leather wallet", "travel mug", "lunch box", "baby wipes",
	}
	productAttributes = []string{
		"water resistant", "lightweight", "long lasting", "easy to clean", "machine washable", "non-slip",
		"gluten free", "sugar free", "organic", "vegan", "dairy free", "fragrance free", "hypoallergenic",
		"bpa free", "eco friendly", "rechargeable", "wireless", "noise cancelling", "fast charging", "heavy duty",
		"high quality", "anti-fog", "quick drying", "breathable", "slim fit", "loose fit", "memory foam",
		"stainless steel", "extra large", "travel size", "made in usa", "paraben free", "cruelty free",
	}
	colors = []string{
		"black", "white", "red", "blue", "navy", "green", "olive", "gray", "silver", "gold", "pink", "purple",
		"beige", "brown", "orange", "yellow", "teal", "ivory", "charcoal", "burgundy",
	}
	sizes = []string{
		"x-small", "small", "medium", "large", "x-large", "xx-large", "6", "7", "7.5", "8", "8.5", "9", "9.5",
		"10", "10.5", "11", "12", "one size", "12 ounce", "16 ounce", "1 pound", "2 pack", "3 pack", "pack of 6",
	}
	brands = []string{
		"Northpeak", "Acorn & Co", "Bluefin", "Everline", "Solace", "Trailhead", "Kindred", "Lumen", "Brightway",
		"Oakridge", "Vantage", "Nimbus", "Crestwood", "Harbor", "Meridian", "Pinecone", "Summit", "Wildflower",
	}

	// Everyday English.
	nouns = []string{
		"time", "year", "day", "week", "morning", "evening", "night", "world", "life", "hand", "part", "child",
		"eye", "woman", "man", "place", "work", "case", "point", "company", "number", "group", "problem",
		"fact", "question", "answer", "idea", "plan", "story", "reason", "result", "change", "market", "price",
		"order", "item", "store", "customer", "package", "delivery", "address", "payment", "refund", "account",
		"room", "kitchen", "house", "door", "window", "table", "chair", "garden", "street", "city", "river",
		"mountain", "forest", "road", "car", "train", "bus", "bridge", "school", "teacher", "student", "lesson",
		"book", "page", "letter", "word", "name", "list", "note", "message", "email", "phone", "computer",
		"program", "system", "file", "report", "meeting", "team", "project", "goal", "task", "step", "rule",
		"game", "player", "score", "turn", "round", "animal", "dog", "cat", "bird", "fish", "horse", "tree",
		"flower", "water", "food", "coffee", "tea", "music", "song", "picture", "color", "shape", "size",
		"weight", "height", "distance", "speed", "minute", "hour", "season", "weather", "rain", "snow", "sun",
	}
	adjectives = []string{
		"good", "new", "first", "last", "long", "great", "little", "old", "big", "high", "different", "small",
		"large", "next", "early", "young", "important", "few", "public", "bad", "same", "able", "clean", "dirty",
		"hot", "cold", "warm", "cool", "heavy", "light", "dark", "bright", "quiet", "loud", "fast", "slow",
		"simple", "difficult", "easy", "careful", "happy", "sad", "busy", "empty", "full", "open", "closed",
		"broken", "fresh", "ripe", "soft", "hard", "sharp", "round", "square", "cheap", "expensive", "useful",
		"correct", "wrong", "possible", "likely", "certain", "clear", "strange", "common", "rare", "wooden",
		"metal", "plastic", "glass", "paper", "tiny", "huge", "narrow", "wide", "deep", "shallow", "friendly",
	}
	verbs = []struct{ base, past, ing string }{
		{"find", "found", "finding"}, {"take", "took", "taking"}, {"make", "made", "making"},
		{"see", "saw", "seeing"}, {"look", "looked", "looking"}, {"open", "opened", "opening"},
		{"close", "closed", "closing"}, {"move", "moved", "moving"}, {"put", "put", "putting"},
		{"carry", "carried", "carrying"}, {"check", "checked", "checking"}, {"buy", "bought", "buying"},
		{"sell", "sold", "selling"}, {"return", "returned", "returning"}, {"cancel", "cancelled", "cancelling"},
		{"search", "searched", "searching"}, {"choose", "chose", "choosing"}, {"compare", "compared", "comparing"},
		{"count", "counted", "counting"}, {"measure", "measured", "measuring"}, {"write", "wrote", "writing"},
		{"read", "read", "reading"}, {"ask", "asked", "asking"}, {"answer", "answered", "answering"},
		{"guess", "guessed", "guessing"}, {"build", "built", "building"}, {"clean", "cleaned", "cleaning"},
		{"heat", "heated", "heating"}, {"cool", "cooled", "cooling"}, {"wash", "washed", "washing"},
		{"cook", "cooked", "cooking"}, {"visit", "visited", "visiting"}, {"leave", "left", "leaving"},
		{"bring", "brought", "bringing"}, {"send", "sent", "sending"}, {"receive", "received", "receiving"},
		{"start", "started", "starting"}, {"finish", "finished", "finishing"}, {"help", "helped", "helping"},
		{"learn", "learned", "learning"}, {"explain", "explained", "explaining"}, {"solve", "solved", "solving"},
		{"plan", "planned", "planning"}, {"try", "tried", "trying"}, {"keep", "kept", "keeping"},
		{"change", "changed", "changing"}, {"follow", "followed", "following"}, {"notice", "noticed", "noticing"},
	}
	adverbs = []string{
		"quickly", "slowly", "carefully", "quietly", "finally", "suddenly", "usually", "often", "always",
		"never", "sometimes", "already", "still", "again", "almost", "probably", "clearly", "really", "only",
		"soon", "later", "today", "yesterday", "tomorrow", "together", "instead", "exactly", "nearly",
	}
	prepositions = []string{
		"in", "on", "under", "behind", "near", "next to", "inside", "beside", "above", "below", "across from",
		"between", "around", "on top of",
	}
	connectives = []string{
		"However,", "Then", "After that,", "Meanwhile,", "Because of this,", "In the end,", "At first,",
		"Later,", "For example,", "In fact,", "Still,", "Even so,", "As a result,", "Before long,", "Next,",
	}

	// Things to guess in the question game, with a few yes/no properties.
	guessables = []struct {
		name  string
		props []string
	}{
		{"elephant", []string{"an animal", "larger than a person", "gray", "found in Africa"}},
		{"penguin", []string{"an animal", "a bird", "able to swim", "found in cold places"}},
		{"guitar", []string{"a musical instrument", "made of wood", "played with the hands", "something with strings"}},
		{"bicycle", []string{"a vehicle", "made of metal", "something with wheels", "powered by a person"}},
		{"banana", []string{"a food", "a fruit", "yellow", "something that grows on trees"}},
		{"piano", []string{"a musical instrument", "larger than a person", "something with keys", "heavy"}},
		{"umbrella", []string{"used outdoors", "used in the rain", "something you can fold", "held in the hand"}},
		{"dolphin", []string{"an animal", "a mammal", "able to swim", "found in the ocean"}},
		{"telescope", []string{"a tool", "used to look at the sky", "made of metal and glass", "something with a lens"}},
		{"volcano", []string{"a place", "part of nature", "hot", "larger than a building"}},
		{"candle", []string{"found in a house", "something that gives light", "made of wax", "something that burns"}},
		{"carrot", []string{"a food", "a vegetable", "orange", "something that grows underground"}},
		{"owl", []string{"an animal", "a bird", "awake at night", "smaller than a person"}},
		{"ladder", []string{"a tool", "used to climb", "made of metal or wood", "taller than a person"}},
		{"lighthouse", []string{"a building", "found near the sea", "something that gives light", "tall"}},
		{"strawberry", []string{"a food", "a fruit", "red", "smaller than a hand"}},
	}

	// Facts for short question answering.
	facts = []struct{ question, answer string }{
		{"What is the capital of France?", "Paris"},
		{"How many days are in a week?", "7"},
		{"What color do you get by mixing blue and yellow?", "green"},
		{"Which planet is closest to the sun?", "Mercury"},
		{"How many legs does a spider have?", "8"},
		{"What is water made of?", "hydrogen and oxygen"},
		{"What is the largest ocean on Earth?", "the Pacific Ocean"},
		{"How many minutes are in an hour?", "60"},
		{"What do bees make?", "honey"},
		{"Which animal is known as the king of the jungle?", "the lion"},
		{"What is the freezing point of water in Celsius?", "0 degrees"},
		{"How many continents are there?", "7"},
		{"What is the opposite of hot?", "cold"},
		{"Which month comes after March?", "April"},
		{"What gas do plants take in?", "carbon dioxide"},
		{"How many sides does a triangle have?", "3"},
	}
)
