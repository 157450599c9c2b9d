package webshop

// The hand-written vocabulary the catalog is generated from: categories,
// their product types, attributes, option values and the phrases titles,
// bullet points and descriptions are assembled from. Option values inside
// one pool are chosen so that the reward's fuzzy match tells them apart
// ("2 pack" and "12 pack" would match); "size" pools are exempt, as the
// reward compares sizes exactly. The catalog builder drops from a product
// any value that would still be confused.

type categorySpec struct {
	name   string
	brands []string
	// attributes are shared by every type of the category.
	attributes []string
	// benefits end a bullet point whose heading is an attribute.
	benefits []string
	// uses complete "made for ..." in descriptions.
	uses []string
	// closings end descriptions.
	closings []string
	types    []typeSpec
}

type typeSpec struct {
	// name is the singular noun phrase instructions use: "snack bar".
	name string
	// titleNoun is how titles name the product: "Snack Bars".
	titleNoun string
	// article precedes the name in instructions; "a" becomes "an" before a
	// vowel.
	article     string
	descriptors []string
	// attributes are specific to the type, on top of the category's.
	attributes []string
	options    []optionSpec
	minPrice   float64
	maxPrice   float64
}

type optionSpec struct {
	name   string
	values []string
	// selfDescribing values read well alone in an instruction ("12 count"),
	// others need the option name ("in black color").
	selfDescribing bool
}

// heldOutCategories never provide goals for train and test; their products
// are the targets of the unseen split.
var heldOutCategories = []string{"pet supplies", "garden and outdoor"}

var (
	colors      = []string{"black", "white", "navy blue", "grey", "red", "pink", "beige", "forest green", "brown", "purple", "teal", "burgundy", "ivory", "charcoal", "mustard yellow", "sky blue", "rose gold", "silver", "olive", "coral"}
	clothSizes  = []string{"xs", "small", "medium", "large", "xl", "xxl"}
	shoeSizes   = []string{"6", "7", "8", "9", "10", "11", "12"}
	packCounts  = []string{"2 pack", "4 pack", "6 pack", "8 pack", "10 pack"}
	itemCounts  = []string{"6 count", "12 count", "30 count", "48 count"}
	liquidSizes = []string{"8 fl oz", "16 fl oz", "32 fl oz"}
	weights     = []string{"8 ounce", "12 ounce", "2 pound", "5 pound"}
	scents      = []string{"lavender", "coconut", "eucalyptus", "citrus", "unscented", "vanilla", "sandalwood", "rosemary mint", "ocean breeze", "cherry blossom"}
)

var catalogSpecs = []categorySpec{
	{
		name:       "beauty",
		brands:     []string{"Lumiere Botanics", "Velvet Vine", "Aurora Skin", "Petal Theory", "Nordic Glow", "Maison Clair", "Pure Ember", "Silk Harbor", "Bloom Ritual", "Solstice"},
		attributes: []string{"cruelty free", "paraben free", "long lasting", "dermatologist tested", "travel size", "sulfate free"},
		benefits:   []string{"Gentle enough for daily use and kind to sensitive skin.", "Formulated in small batches and tested for quality at every step.", "A salon-worthy finish without the salon price.", "Lightweight texture that layers well with the rest of your routine."},
		uses:       []string{"your morning routine", "a relaxing evening at home", "everyday wear", "weekend getaways"},
		closings:   []string{"Treat yourself, or wrap it up as a thoughtful gift.", "Love it or return it within 30 days.", "Made with care and packed in recyclable materials."},
		types: []typeSpec{
			{name: "shampoo", titleNoun: "Shampoo", article: "a", descriptors: []string{"Moisturizing", "Clarifying", "Volumizing", "Repairing"}, attributes: []string{"color safe", "for dry hair", "argan oil"}, options: []optionSpec{{name: "scent", values: scents}, {name: "size", values: liquidSizes, selfDescribing: true}}, minPrice: 7, maxPrice: 32},
			{name: "face moisturizer", titleNoun: "Face Moisturizer", article: "a", descriptors: []string{"Daily", "Hydrating", "Overnight", "Oil Free"}, attributes: []string{"hyaluronic acid", "spf 30", "for sensitive skin", "non comedogenic"}, options: []optionSpec{{name: "size", values: []string{"1.7 oz", "2.5 oz", "4 oz"}, selfDescribing: true}}, minPrice: 12, maxPrice: 58},
			{name: "lipstick", titleNoun: "Lipstick", article: "a", descriptors: []string{"Matte", "Satin", "Creamy", "Velvet"}, attributes: []string{"smudge proof", "moisturizing", "vitamin e"}, options: []optionSpec{{name: "shade", values: []string{"ruby red", "nude", "berry", "mauve", "coral", "plum", "pink blush", "brick"}}}, minPrice: 6, maxPrice: 28},
			{name: "nail polish", titleNoun: "Nail Polish", article: "a", descriptors: []string{"Gel", "Quick Dry", "Glossy", "Chip Resistant"}, attributes: []string{"non toxic", "vegan formula"}, options: []optionSpec{{name: "color", values: colors}, {name: "count", values: []string{"single bottle", "3 pack", "6 pack"}, selfDescribing: true}}, minPrice: 5, maxPrice: 26},
			{name: "hair dryer", titleNoun: "Hair Dryer", article: "a", descriptors: []string{"Ionic", "Professional", "Compact", "Ceramic"}, attributes: []string{"fast drying", "low noise", "with diffuser", "foldable handle"}, options: []optionSpec{{name: "color", values: []string{"black", "white", "rose gold", "pink", "purple", "silver"}}}, minPrice: 24, maxPrice: 119},
		},
	},
	{
		name:       "grocery",
		brands:     []string{"Harvest Lane", "Golden Acre", "Pantry Creek", "Bramble Oak", "Sunny Ridge", "Wildflower Kitchen", "Copper Kettle", "Blue Mesa", "Little Orchard", "True North Foods"},
		attributes: []string{"gluten free", "non gmo", "organic", "kosher", "low sugar", "dairy free", "keto friendly", "plant based"},
		benefits:   []string{"Simple ingredients you can pronounce and taste you will come back for.", "Sourced from farms we know by name.", "Packed fresh to keep every bite at its best.", "A pantry staple the whole family agrees on."},
		uses:       []string{"busy weekday mornings", "lunch boxes and road trips", "afternoon snacking", "family dinners"},
		closings:   []string{"Store in a cool, dry place.", "Enjoy it straight from the pantry or share it with friends.", "Proudly packed in small batches."},
		types: []typeSpec{
			{name: "snack bar", titleNoun: "Snack Bars", article: "a", descriptors: []string{"Chewy", "Crunchy", "Soft Baked", "Nut Butter"}, attributes: []string{"high protein", "low calorie", "individually wrapped"}, options: []optionSpec{{name: "flavor", values: []string{"chocolate chip", "peanut butter", "blueberry", "salted caramel", "almond coconut", "lemon", "cinnamon"}}, {name: "count", values: itemCounts, selfDescribing: true}}, minPrice: 6, maxPrice: 34},
			{name: "ground coffee", titleNoun: "Ground Coffee", article: "some", descriptors: []string{"Medium Roast", "Dark Roast", "Breakfast Blend", "Single Origin"}, attributes: []string{"fair trade", "whole bean", "decaf"}, options: []optionSpec{{name: "flavor", values: []string{"french vanilla", "hazelnut", "original", "mocha", "caramel", "pumpkin spice"}}, {name: "size", values: weights, selfDescribing: true}}, minPrice: 8, maxPrice: 39},
			{name: "herbal tea", titleNoun: "Herbal Tea Bags", article: "some", descriptors: []string{"Soothing", "Calming", "Refreshing", "Loose Leaf Style"}, attributes: []string{"caffeine free", "individually wrapped", "fair trade"}, options: []optionSpec{{name: "flavor", values: []string{"chamomile", "peppermint", "ginger", "hibiscus", "lemon balm", "rooibos"}}, {name: "count", values: []string{"20 bags", "48 bags", "100 bags"}, selfDescribing: true}}, minPrice: 4, maxPrice: 24},
			{name: "pasta sauce", titleNoun: "Pasta Sauce", article: "a", descriptors: []string{"Slow Simmered", "Rustic", "Homestyle", "Chunky"}, attributes: []string{"no added sugar", "low sodium"}, options: []optionSpec{{name: "flavor", values: []string{"marinara", "tomato basil", "arrabbiata", "garlic", "vodka", "mushroom"}}, {name: "count", values: packCounts, selfDescribing: true}}, minPrice: 5, maxPrice: 36},
			{name: "trail mix", titleNoun: "Trail Mix", article: "a", descriptors: []string{"Roasted", "Sweet and Salty", "Energy", "Mountain"}, attributes: []string{"high protein", "resealable bag", "no added sugar"}, options: []optionSpec{{name: "flavor", values: []string{"dark chocolate", "tropical fruit", "honey roasted", "sea salt", "cranberry"}}, {name: "size", values: weights, selfDescribing: true}}, minPrice: 6, maxPrice: 29},
		},
	},
	{
		name:       "electronics",
		brands:     []string{"Voltiq", "Nexora", "Brightwave", "Kairo Tech", "Ampere Lab", "Zentro", "Lumina Audio", "Orbix", "Pulsewave", "Cobalt Digital"},
		attributes: []string{"fast charging", "usb c", "compact design", "energy efficient", "lightweight"},
		benefits:   []string{"Tested to hold up to years of daily use.", "Works with the phones, tablets and laptops you already own.", "Plug in and go, with no setup required.", "Backed by an 18 month warranty and friendly support."},
		uses:       []string{"work and travel", "the home office", "commutes and flights", "gaming sessions"},
		closings:   []string{"Everything you need is in the box.", "Designed in house and built to last.", "Register your device for extended support."},
		types: []typeSpec{
			{name: "wireless earbuds", titleNoun: "Wireless Earbuds", article: "a pair of", descriptors: []string{"True Wireless", "Sport", "Noise Cancelling", "In Ear"}, attributes: []string{"noise cancelling", "water resistant", "bluetooth 5 3", "long battery life"}, options: []optionSpec{{name: "color", values: []string{"black", "white", "navy blue", "rose gold", "forest green"}}}, minPrice: 19, maxPrice: 129},
			{name: "phone charger", titleNoun: "Phone Charger", article: "a", descriptors: []string{"Wall", "Dual Port", "Foldable", "GaN"}, attributes: []string{"20w", "foldable plug", "overheat protection"}, options: []optionSpec{{name: "count", values: []string{"1 pack", "2 pack", "4 pack"}, selfDescribing: true}, {name: "color", values: []string{"black", "white"}}}, minPrice: 9, maxPrice: 39},
			{name: "bluetooth speaker", titleNoun: "Bluetooth Speaker", article: "a", descriptors: []string{"Portable", "Rugged", "Mini", "Party"}, attributes: []string{"waterproof", "long battery life", "built in microphone", "deep bass"}, options: []optionSpec{{name: "color", values: []string{"black", "red", "teal", "grey", "sky blue", "olive"}}}, minPrice: 22, maxPrice: 149},
			{name: "hdmi cable", titleNoun: "HDMI Cable", article: "an", descriptors: []string{"High Speed", "Braided", "Ultra HD", "Premium"}, attributes: []string{"4k 120hz", "gold plated", "braided nylon"}, options: []optionSpec{{name: "length", values: []string{"3 ft", "6 ft", "10 ft", "15 ft"}, selfDescribing: true}, {name: "count", values: []string{"1 pack", "2 pack", "5 pack"}, selfDescribing: true}}, minPrice: 6, maxPrice: 29},
			{name: "power bank", titleNoun: "Power Bank", article: "a", descriptors: []string{"Slim", "Magnetic", "High Capacity", "Pocket"}, attributes: []string{"led display", "dual output", "airline approved"}, options: []optionSpec{{name: "capacity", values: []string{"5000mah", "10000mah", "26800mah"}, selfDescribing: true}, {name: "color", values: []string{"black", "white", "pink", "navy blue"}}}, minPrice: 15, maxPrice: 69},
		},
	},
	{
		name:       "fashion",
		brands:     []string{"Northbound", "Ellery Row", "Coastline Co", "Marlow Thread", "Urban Fable", "Saltwater Supply", "Wren Wool", "Atlas Stride", "Juniper Lane", "Fieldhouse"},
		attributes: []string{"machine washable", "breathable", "moisture wicking", "relaxed fit", "slim fit"},
		benefits:   []string{"Cut for comfort from the first wear to the hundredth.", "Holds its shape and color wash after wash.", "Easy to dress up or down.", "Stitched with reinforced seams where it matters."},
		uses:       []string{"everyday wear", "the gym and weekend errands", "work and weekends", "travel days"},
		closings:   []string{"Check the size chart for your perfect fit.", "Free exchanges if the size is not right.", "Designed to be a wardrobe favorite."},
		types: []typeSpec{
			{name: "running shoes", titleNoun: "Running Shoes", article: "a pair of", descriptors: []string{"Lightweight", "Cushioned", "Trail", "Road"}, attributes: []string{"non slip", "arch support", "memory foam"}, options: []optionSpec{{name: "size", values: shoeSizes}, {name: "color", values: []string{"black", "white", "grey", "navy blue", "red", "teal"}}}, minPrice: 35, maxPrice: 139},
			{name: "t-shirt", titleNoun: "T-Shirt", article: "a", descriptors: []string{"Crew Neck", "V Neck", "Pocket", "Graphic"}, attributes: []string{"cotton", "short sleeve", "tagless"}, options: []optionSpec{{name: "size", values: clothSizes}, {name: "color", values: colors}}, minPrice: 9, maxPrice: 35},
			{name: "denim jacket", titleNoun: "Denim Jacket", article: "a", descriptors: []string{"Classic", "Vintage Wash", "Oversized", "Sherpa Lined"}, attributes: []string{"button closure", "cotton", "long sleeve"}, options: []optionSpec{{name: "size", values: clothSizes}, {name: "color", values: []string{"light wash", "dark wash", "black", "stone grey"}}}, minPrice: 29, maxPrice: 99},
			{name: "leggings", titleNoun: "Leggings", article: "a pair of", descriptors: []string{"High Waisted", "Yoga", "Seamless", "Compression"}, attributes: []string{"tummy control", "squat proof", "with pockets"}, options: []optionSpec{{name: "size", values: clothSizes}, {name: "color", values: colors}}, minPrice: 12, maxPrice: 49},
			{name: "baseball cap", titleNoun: "Baseball Cap", article: "a", descriptors: []string{"Adjustable", "Distressed", "Classic", "Trucker"}, attributes: []string{"cotton", "sun protection", "adjustable strap"}, options: []optionSpec{{name: "color", values: colors}}, minPrice: 8, maxPrice: 32},
		},
	},
	{
		name:       "home and kitchen",
		brands:     []string{"Hearthstone", "Oak and Ember", "Casa Verde", "Linen Lane", "Copperfield", "Nestwell", "Birch Home", "Stoneware Co", "Haven Goods", "Kitchen Republic"},
		attributes: []string{"dishwasher safe", "easy to clean", "bpa free", "heavy duty", "space saving"},
		benefits:   []string{"Made to look good on display and work hard every day.", "Thoughtful details that make daily chores quicker.", "Quality materials chosen to last for years.", "A simple way to refresh any room."},
		uses:       []string{"everyday cooking", "guest rooms and living rooms", "small apartments", "holiday hosting"},
		closings:   []string{"A welcome gift for housewarmings and weddings.", "Backed by our one year quality promise.", "Wipe clean and store flat when not in use."},
		types: []typeSpec{
			{name: "frying pan", titleNoun: "Frying Pan", article: "a", descriptors: []string{"Nonstick", "Cast Iron", "Stainless Steel", "Ceramic"}, attributes: []string{"induction compatible", "oven safe", "stay cool handle"}, options: []optionSpec{{name: "size", values: []string{"8 inch", "10 inch", "12 inch"}, selfDescribing: true}}, minPrice: 15, maxPrice: 79},
			{name: "bath towel set", titleNoun: "Bath Towel Set", article: "a", descriptors: []string{"Plush", "Quick Dry", "Hotel Quality", "Turkish Cotton"}, attributes: []string{"highly absorbent", "cotton", "machine washable"}, options: []optionSpec{{name: "color", values: colors}, {name: "count", values: []string{"2 pcs", "4 pcs", "6 pcs"}, selfDescribing: true}}, minPrice: 19, maxPrice: 69},
			{name: "throw pillow cover", titleNoun: "Throw Pillow Covers", article: "a", descriptors: []string{"Decorative", "Boho", "Velvet", "Linen Blend"}, attributes: []string{"hidden zipper", "machine washable"}, options: []optionSpec{{name: "color", values: colors}, {name: "size", values: []string{"18 x 18 inch", "20 x 20 inch", "12 x 20 inch"}, selfDescribing: true}}, minPrice: 9, maxPrice: 34},
			{name: "food storage container set", titleNoun: "Food Storage Containers", article: "a", descriptors: []string{"Glass", "Stackable", "Airtight", "Meal Prep"}, attributes: []string{"leak proof", "microwave safe", "freezer safe"}, options: []optionSpec{{name: "count", values: []string{"5 piece", "10 piece", "24 piece"}, selfDescribing: true}}, minPrice: 16, maxPrice: 59},
			{name: "coffee mug", titleNoun: "Coffee Mug", article: "a", descriptors: []string{"Ceramic", "Insulated", "Stoneware", "Handmade"}, attributes: []string{"microwave safe", "large handle"}, options: []optionSpec{{name: "color", values: colors}, {name: "capacity", values: []string{"12 oz", "16 oz", "20 oz"}, selfDescribing: true}}, minPrice: 8, maxPrice: 29},
		},
	},
	{
		name:       "sports and outdoors",
		brands:     []string{"Summit Peak", "Trailforge", "Ironclad Fitness", "Riverstone", "Apex Motion", "Bluefin Sport", "Cedar Ridge", "Momentum Athletics", "Highline", "Granite Gear Co"},
		attributes: []string{"durable", "portable", "non slip", "sweat resistant"},
		benefits:   []string{"Built for beginners and trusted by seasoned athletes.", "Packs down small so it goes wherever you train.", "Stands up to rough use, season after season.", "Designed with coaches to support better form."},
		uses:       []string{"home workouts", "camping trips", "the gym", "weekend adventures"},
		closings:   []string{"Get out there and make it count.", "Includes a carry bag for easy storage.", "Covered by our no hassle warranty."},
		types: []typeSpec{
			{name: "yoga mat", titleNoun: "Yoga Mat", article: "a", descriptors: []string{"Extra Thick", "Eco", "Travel", "Cushioned"}, attributes: []string{"with carrying strap", "tear resistant", "eco friendly"}, options: []optionSpec{{name: "color", values: colors}, {name: "thickness", values: []string{"4mm", "6mm", "10mm"}, selfDescribing: true}}, minPrice: 14, maxPrice: 69},
			{name: "water bottle", titleNoun: "Water Bottle", article: "a", descriptors: []string{"Insulated", "Stainless Steel", "Sport", "Wide Mouth"}, attributes: []string{"leak proof", "bpa free", "keeps drinks cold"}, options: []optionSpec{{name: "color", values: colors}, {name: "capacity", values: []string{"18 oz", "24 oz", "32 oz", "40 oz"}, selfDescribing: true}}, minPrice: 9, maxPrice: 44},
			{name: "resistance bands", titleNoun: "Resistance Bands", article: "a set of", descriptors: []string{"Loop", "Fabric", "Latex", "Pro"}, attributes: []string{"with door anchor", "latex free", "multiple resistance levels"}, options: []optionSpec{{name: "count", values: []string{"3 pack", "5 pack", "11 pack"}, selfDescribing: true}}, minPrice: 9, maxPrice: 39},
			{name: "camping tent", titleNoun: "Camping Tent", article: "a", descriptors: []string{"Dome", "Instant", "Backpacking", "Family"}, attributes: []string{"waterproof", "easy setup", "rainfly included"}, options: []optionSpec{{name: "size", values: []string{"2 person", "4 person", "6 person"}, selfDescribing: true}, {name: "color", values: []string{"forest green", "orange", "grey", "sky blue"}}}, minPrice: 39, maxPrice: 199},
			{name: "dumbbell set", titleNoun: "Dumbbell Set", article: "a", descriptors: []string{"Adjustable", "Hex", "Neoprene", "Rubber Coated"}, attributes: []string{"anti roll", "comfortable grip"}, options: []optionSpec{{name: "weight", values: []string{"5 lb", "10 lb", "20 lb", "30 lb"}, selfDescribing: true}}, minPrice: 19, maxPrice: 149},
		},
	},
	{
		name:       "toys and games",
		brands:     []string{"Wonderbox", "Tiny Tinkers", "Brightminds", "Pinwheel Play", "Starlit Toys", "Giggle Grove", "Puzzle Loft", "Rocket Kids", "Maple Toy Co", "Kaleido"},
		attributes: []string{"educational", "non toxic", "for ages 3 and up", "gift ready"},
		benefits:   []string{"Encourages creativity, problem solving and hours of play.", "Safety tested and built for little hands.", "Screen free fun the whole family can share.", "Comes in a sturdy box that doubles as storage."},
		uses:       []string{"birthdays and holidays", "rainy afternoons", "family game night", "classrooms and playrooms"},
		closings:   []string{"Batteries, where needed, are included.", "A gift they will remember.", "Parts are easy to find and replace."},
		types: []typeSpec{
			{name: "building blocks set", titleNoun: "Building Blocks Set", article: "a", descriptors: []string{"Classic", "Creative", "City", "Castle"}, attributes: []string{"stem toy", "compatible with major brands", "storage box included"}, options: []optionSpec{{name: "count", values: []string{"250 pc", "500 pc", "1000 pc"}, selfDescribing: true}}, minPrice: 14, maxPrice: 79},
			{name: "jigsaw puzzle", titleNoun: "Jigsaw Puzzle", article: "a", descriptors: []string{"Landscape", "Animal", "Vintage Map", "Floral"}, attributes: []string{"thick pieces", "poster included", "for adults"}, options: []optionSpec{{name: "count", values: []string{"300 pc", "500 pc", "1000 pc"}, selfDescribing: true}}, minPrice: 9, maxPrice: 34},
			{name: "plush toy", titleNoun: "Plush Toy", article: "a", descriptors: []string{"Cuddly", "Jumbo", "Squishy", "Sleepy"}, attributes: []string{"super soft", "machine washable", "hypoallergenic"}, options: []optionSpec{{name: "style", values: []string{"bear", "bunny", "dinosaur", "unicorn", "penguin", "fox"}}, {name: "size", values: []string{"8 inch", "12 inch", "20 inch"}, selfDescribing: true}}, minPrice: 8, maxPrice: 39},
			{name: "board game", titleNoun: "Board Game", article: "a", descriptors: []string{"Strategy", "Party", "Cooperative", "Family"}, attributes: []string{"for 2 to 6 players", "quick to learn", "award winning"}, options: []optionSpec{{name: "edition", values: []string{"standard edition", "deluxe edition", "travel edition"}}}, minPrice: 15, maxPrice: 59},
			{name: "remote control car", titleNoun: "Remote Control Car", article: "a", descriptors: []string{"Off Road", "High Speed", "Stunt", "Monster Truck"}, attributes: []string{"rechargeable battery", "all terrain", "2 4ghz remote"}, options: []optionSpec{{name: "color", values: []string{"red", "sky blue", "forest green", "orange", "black"}}}, minPrice: 19, maxPrice: 89},
		},
	},
	{
		name:       "pet supplies",
		brands:     []string{"Pawsome", "Happy Tails", "Whisker Works", "Furbright", "Barkley Co", "Meadow Pet", "Kibble Craft", "Snout Supply", "Purrfect Home", "Good Boy Goods"},
		attributes: []string{"vet recommended", "easy to clean", "made in usa", "for small breeds"},
		benefits:   []string{"Designed with vets and loved by pets.", "Sturdy enough for the most enthusiastic companions.", "Keeps your pet happy and your home tidy.", "Quality you can see and your pet can feel."},
		uses:       []string{"dogs and cats of every age", "busy pet parents", "indoor pets", "daily walks and playtime"},
		closings:   []string{"Because they are family.", "Satisfaction guaranteed or your money back.", "Every purchase helps support local shelters."},
		types: []typeSpec{
			{name: "dog food", titleNoun: "Dry Dog Food", article: "some", descriptors: []string{"Grain Free", "Real Chicken", "Puppy", "Senior"}, attributes: []string{"high protein", "no artificial preservatives", "grain free"}, options: []optionSpec{{name: "flavor", values: []string{"chicken and rice", "salmon", "lamb", "beef", "turkey"}}, {name: "size", values: []string{"4 lb bag", "15 lb bag", "30 lb bag"}, selfDescribing: true}}, minPrice: 12, maxPrice: 79},
			{name: "cat litter", titleNoun: "Cat Litter", article: "some", descriptors: []string{"Clumping", "Clay", "Pine", "Crystal"}, attributes: []string{"odor control", "low dust", "unscented"}, options: []optionSpec{{name: "size", values: []string{"10 lb", "25 lb", "40 lb"}, selfDescribing: true}}, minPrice: 9, maxPrice: 39},
			{name: "dog leash", titleNoun: "Dog Leash", article: "a", descriptors: []string{"Reflective", "Retractable", "Rope", "Padded Handle"}, attributes: []string{"reflective stitching", "heavy duty", "padded handle"}, options: []optionSpec{{name: "length", values: []string{"4 ft", "6 ft", "10 ft"}, selfDescribing: true}, {name: "color", values: []string{"black", "red", "navy blue", "pink", "orange"}}}, minPrice: 8, maxPrice: 34},
			{name: "pet bed", titleNoun: "Pet Bed", article: "a", descriptors: []string{"Orthopedic", "Calming", "Donut", "Bolster"}, attributes: []string{"machine washable", "non slip bottom", "memory foam"}, options: []optionSpec{{name: "size", values: []string{"small", "medium", "large", "xl"}}, {name: "color", values: []string{"grey", "beige", "brown", "navy blue"}}}, minPrice: 19, maxPrice: 89},
			{name: "cat toy", titleNoun: "Cat Toys", article: "a", descriptors: []string{"Interactive", "Feather", "Catnip", "Tunnel"}, attributes: []string{"with catnip", "durable", "for indoor cats"}, options: []optionSpec{{name: "count", values: []string{"3 pack", "12 pack", "24 piece set"}, selfDescribing: true}}, minPrice: 5, maxPrice: 29},
		},
	},
	{
		name:       "office products",
		brands:     []string{"Inkwell", "Paperline", "Deskcraft", "Clearview Office", "Scribe and Co", "Ledger Goods", "Bureau Basics", "Northpoint Office", "Quill Works", "Studio Nine"},
		attributes: []string{"smooth writing", "refillable", "recycled materials", "bulk pack"},
		benefits:   []string{"Keeps your desk organized and your day on track.", "Reliable quality for offices, schools and studios.", "Thoughtfully designed for the way people really work.", "Stock up once and stay ready all year."},
		uses:       []string{"the office and classroom", "home offices", "students and teachers", "journaling and planning"},
		closings:   []string{"Order in bulk for your whole team.", "Your desk will thank you.", "Made to make work a little more pleasant."},
		types: []typeSpec{
			{name: "ballpoint pen", titleNoun: "Ballpoint Pens", article: "a", descriptors: []string{"Retractable", "Fine Point", "Gel Ink", "Executive"}, attributes: []string{"quick drying ink", "comfort grip"}, options: []optionSpec{{name: "color", values: []string{"black", "blue ink", "red", "assorted colors"}}, {name: "count", values: []string{"12 pack", "30 pack", "48 pack"}, selfDescribing: true}}, minPrice: 5, maxPrice: 29},
			{name: "spiral notebook", titleNoun: "Spiral Notebook", article: "a", descriptors: []string{"College Ruled", "Wide Ruled", "Dotted", "Graph Paper"}, attributes: []string{"perforated pages", "hardcover", "acid free paper"}, options: []optionSpec{{name: "size", values: []string{"a5", "letter size", "pocket size"}, selfDescribing: true}, {name: "count", values: []string{"3 pack", "6 pack"}, selfDescribing: true}}, minPrice: 5, maxPrice: 26},
			{name: "desk organizer", titleNoun: "Desk Organizer", article: "a", descriptors: []string{"Mesh", "Bamboo", "Rotating", "Drawer"}, attributes: []string{"multiple compartments", "sturdy", "space saving"}, options: []optionSpec{{name: "color", values: []string{"black", "white", "natural wood", "silver", "rose gold"}}}, minPrice: 12, maxPrice: 49},
			{name: "sticky notes", titleNoun: "Sticky Notes", article: "some", descriptors: []string{"Super Sticky", "Pastel", "Lined", "Neon"}, attributes: []string{"strong adhesive", "recyclable"}, options: []optionSpec{{name: "size", values: []string{"3 x 3 inch", "4 x 6 inch"}, selfDescribing: true}, {name: "count", values: []string{"12 pads", "30 pads"}, selfDescribing: true}}, minPrice: 4, maxPrice: 22},
			{name: "office chair", titleNoun: "Office Chair", article: "an", descriptors: []string{"Ergonomic", "Mesh", "Executive", "Task"}, attributes: []string{"lumbar support", "adjustable height", "swivel", "padded armrests"}, options: []optionSpec{{name: "color", values: []string{"black", "grey", "white", "navy blue", "brown"}}}, minPrice: 69, maxPrice: 299},
		},
	},
	{
		name:       "garden and outdoor",
		brands:     []string{"Greenthumb", "Fernhill", "Sunbeam Garden", "Rootwell", "Terra Verde", "Backyard Bliss", "Willow Creek", "Bloomfield", "Patio Republic", "Evergrow"},
		attributes: []string{"weather resistant", "rust proof", "fade resistant", "easy to install"},
		benefits:   []string{"Made to handle sun, rain and frost year after year.", "Turns any yard into a place you want to spend time.", "Quick to set up with no special tools.", "Trusted by weekend gardeners and professionals alike."},
		uses:       []string{"patios and balconies", "backyard gardens", "lawn care", "outdoor entertaining"},
		closings:   []string{"Grow something beautiful this season.", "Store indoors over the winter for the longest life.", "Happy gardening."},
		types: []typeSpec{
			{name: "garden hose", titleNoun: "Garden Hose", article: "a", descriptors: []string{"Expandable", "Flexible", "Kink Free", "Lightweight"}, attributes: []string{"kink free", "leak proof", "brass fittings"}, options: []optionSpec{{name: "length", values: []string{"25 ft", "50 ft", "100 ft"}, selfDescribing: true}}, minPrice: 19, maxPrice: 79},
			{name: "plant pot", titleNoun: "Plant Pots", article: "a", descriptors: []string{"Ceramic", "Self Watering", "Terracotta", "Hanging"}, attributes: []string{"drainage hole", "indoor outdoor"}, options: []optionSpec{{name: "size", values: []string{"4 inch", "6 inch", "10 inch"}, selfDescribing: true}, {name: "color", values: []string{"white", "terracotta", "black", "sage green", "speckled grey"}}}, minPrice: 9, maxPrice: 44},
			{name: "solar lights", titleNoun: "Solar Lights", article: "some", descriptors: []string{"Pathway", "String", "Spot", "Lantern"}, attributes: []string{"waterproof", "auto on off", "warm white"}, options: []optionSpec{{name: "count", values: []string{"4 pack", "8 pack", "12 pack"}, selfDescribing: true}}, minPrice: 15, maxPrice: 59},
			{name: "bird feeder", titleNoun: "Bird Feeder", article: "a", descriptors: []string{"Hanging", "Window", "Squirrel Proof", "Tube"}, attributes: []string{"squirrel proof", "large capacity"}, options: []optionSpec{{name: "color", values: []string{"forest green", "red", "copper", "black"}}}, minPrice: 14, maxPrice: 59},
			{name: "pruning shears", titleNoun: "Pruning Shears", article: "a pair of", descriptors: []string{"Bypass", "Anvil", "Ratchet", "Professional"}, attributes: []string{"sharp blade", "ergonomic handle", "safety lock"}, options: []optionSpec{{name: "count", values: []string{"1 pack", "2 pack"}, selfDescribing: true}}, minPrice: 9, maxPrice: 39},
		},
	},
	{
		name:       "health and household",
		brands:     []string{"Vitalis", "Clearwell", "Homestead Basics", "Brightday", "Purelife", "Guardian Care", "Everwell", "Fresh Harbor", "Wellspring", "Simply Clean"},
		attributes: []string{"hypoallergenic", "plant based", "fragrance free", "value size"},
		benefits:   []string{"Trusted by families for everyday care.", "Made without the harsh extras you do not need.", "Concentrated so a little goes a long way.", "Independently tested for purity and quality."},
		uses:       []string{"the whole household", "daily self care", "busy families", "the bathroom and kitchen"},
		closings:   []string{"Keep out of reach of children.", "Subscribe and never run out.", "Feel good about what you bring home."},
		types: []typeSpec{
			{name: "vitamin d supplement", titleNoun: "Vitamin D3 Supplement", article: "a", descriptors: []string{"Softgel", "Gummy", "Extra Strength", "Daily"}, attributes: []string{"immune support", "third party tested", "easy to swallow"}, options: []optionSpec{{name: "count", values: []string{"60 count", "120 count", "365 count"}, selfDescribing: true}}, minPrice: 7, maxPrice: 34},
			{name: "hand soap", titleNoun: "Hand Soap", article: "a", descriptors: []string{"Foaming", "Liquid", "Moisturizing", "Antibacterial"}, attributes: []string{"aloe vera", "biodegradable"}, options: []optionSpec{{name: "scent", values: scents}, {name: "count", values: packCounts, selfDescribing: true}}, minPrice: 5, maxPrice: 29},
			{name: "laundry detergent", titleNoun: "Laundry Detergent", article: "a", descriptors: []string{"Liquid", "Concentrated", "Pods", "Free and Clear"}, attributes: []string{"he compatible", "stain fighting", "cold water"}, options: []optionSpec{{name: "scent", values: scents}, {name: "size", values: []string{"50 loads", "100 loads"}, selfDescribing: true}}, minPrice: 9, maxPrice: 39},
			{name: "first aid kit", titleNoun: "First Aid Kit", article: "a", descriptors: []string{"Compact", "Travel", "Emergency", "Family"}, attributes: []string{"fda approved", "waterproof case"}, options: []optionSpec{{name: "count", values: []string{"100 piece", "250 piece"}, selfDescribing: true}}, minPrice: 12, maxPrice: 49},
			{name: "electric toothbrush", titleNoun: "Electric Toothbrush", article: "an", descriptors: []string{"Sonic", "Rechargeable", "Whitening", "Travel"}, attributes: []string{"2 minute timer", "rechargeable", "with travel case"}, options: []optionSpec{{name: "color", values: []string{"black", "white", "pink", "sky blue", "purple"}}}, minPrice: 19, maxPrice: 99},
		},
	},
	{
		name:       "baby",
		brands:     []string{"Little Sprout", "Cuddle Cove", "Tiny Steps", "Babybloom", "Moonbeam Baby", "Snuggle Bee", "First Nest", "Honeybee Kids", "Peapod", "Lullaby Lane"},
		attributes: []string{"bpa free", "hypoallergenic", "soft and gentle", "pediatrician approved"},
		benefits:   []string{"Gentle on delicate skin and easy for tired parents.", "Designed with parents and tested for safety.", "Makes the everyday moments a little easier.", "Grows with your little one through the early years."},
		uses:       []string{"newborns and toddlers", "nurseries and diaper bags", "nap time and bedtime", "travel with little ones"},
		closings:   []string{"A favorite at baby showers.", "From our family to yours.", "Loved by parents, approved by babies."},
		types: []typeSpec{
			{name: "baby wipes", titleNoun: "Baby Wipes", article: "some", descriptors: []string{"Sensitive", "Water Based", "Thick", "Travel"}, attributes: []string{"fragrance free", "99 percent water", "alcohol free"}, options: []optionSpec{{name: "count", values: []string{"3 pack", "6 pack", "12 pack"}, selfDescribing: true}}, minPrice: 6, maxPrice: 34},
			{name: "diapers", titleNoun: "Diapers", article: "some", descriptors: []string{"Overnight", "Ultra Soft", "Leakproof", "Eco"}, attributes: []string{"wetness indicator", "leak protection", "chlorine free"}, options: []optionSpec{{name: "size", values: []string{"newborn", "size 1", "size 3", "size 5"}}, {name: "count", values: []string{"84 count", "120 count", "196 count"}, selfDescribing: true}}, minPrice: 14, maxPrice: 59},
			{name: "baby bottle", titleNoun: "Baby Bottles", article: "a", descriptors: []string{"Anti Colic", "Glass", "Slow Flow", "Wide Neck"}, attributes: []string{"anti colic", "easy to clean", "dishwasher safe"}, options: []optionSpec{{name: "capacity", values: []string{"4 oz", "9 oz"}, selfDescribing: true}, {name: "count", values: []string{"3 pack", "6 pack"}, selfDescribing: true}}, minPrice: 9, maxPrice: 39},
			{name: "swaddle blanket", titleNoun: "Swaddle Blankets", article: "a", descriptors: []string{"Muslin", "Organic Cotton", "Bamboo", "Breathable"}, attributes: []string{"organic cotton", "breathable", "machine washable"}, options: []optionSpec{{name: "pattern", values: []string{"stars", "woodland animals", "floral", "solid white", "stripes"}}, {name: "count", values: []string{"2 pack", "4 pack"}, selfDescribing: true}}, minPrice: 12, maxPrice: 44},
			{name: "teething toy", titleNoun: "Teething Toys", article: "a", descriptors: []string{"Silicone", "Wooden", "Freezer Safe", "Textured"}, attributes: []string{"food grade silicone", "freezer safe", "easy to hold"}, options: []optionSpec{{name: "color", values: []string{"sage green", "dusty pink", "sky blue", "mustard yellow", "ivory"}}}, minPrice: 6, maxPrice: 24},
		},
	},
}
