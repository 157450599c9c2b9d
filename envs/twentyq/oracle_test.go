package twentyq

import (
	"strings"
	"testing"
)

// describe renders a parse result for comparison in tests.
func describe(k *knowledgeBase, p parsed) string {
	switch {
	case p.invalid != "":
		return "invalid: " + p.invalid
	case p.guess >= 0:
		return "guess " + k.objects[p.guess].name
	case p.unknownGuess != "":
		return "unknown guess " + p.unknownGuess
	}
	var parts []string
	for _, t := range p.query.terms {
		s := k.props[t.prop].question
		if t.negated {
			s = "not " + s
		}
		parts = append(parts, s)
	}
	if p.query.or {
		return strings.Join(parts, " or ")
	}
	return strings.Join(parts, " and ")
}

func TestCanonicalQuestionsRoundTrip(t *testing.T) {
	k := kb()
	for p, prop := range k.props {
		got := k.matcher.parse(prop.question)
		if len(got.query.terms) != 1 || got.query.terms[0] != (term{prop: p}) || got.guess >= 0 || got.invalid != "" {
			t.Errorf("%q parses as %s", prop.question, describe(k, got))
		}
	}
	for _, o := range k.objects {
		got := k.matcher.parse(o.guessText())
		if got.guess < 0 || k.objects[got.guess].name != o.name {
			t.Errorf("%q parses as %s", o.guessText(), describe(k, got))
		}
	}
}

func TestEverySynonymIsAGuess(t *testing.T) {
	k := kb()
	for _, o := range k.objects {
		for _, name := range o.names {
			q := "Is it a " + name + "?"
			if got := k.matcher.parse(q); got.guess < 0 || k.objects[got.guess].name != o.name {
				t.Errorf("%q parses as %s, want guess %s", q, describe(k, got), o.name)
			}
		}
	}
}

func TestQuestionParsing(t *testing.T) {
	k := kb()
	cases := map[string]string{
		"Is it a living thing?":             "Is it alive?",
		"IS IT ALIVE":                       "Is it alive?",
		"is it alive???":                    "Is it alive?",
		"Is it something you can eat?":      "Can you eat it?",
		"Is it edible?":                     "Can you eat it?",
		"Is it larger than a bread box?":    "Is it bigger than a breadbox?",
		"Is it smaller than a breadbox?":    "not Is it bigger than a breadbox?",
		"Can you hold it in your hand?":     "not Is it bigger than a breadbox?",
		"Is it made out of wood?":           "Is it made of wood?",
		"Is it metallic?":                   "Is it made of metal?",
		"Does it have 4 legs?":              "Does it have four legs?",
		"Does it walk on two legs?":         "Does it have two legs?",
		"Does it have more than four legs?": "Does it have more than four legs?",
		"Does it live in water?":            "Is it found in water?",
		"Would I find it in the kitchen?":   "Is it found in the kitchen?",
		"Do you cook it?":                   "Is it usually cooked before it is eaten?",
		"Do you cook with it?":              "Is it used for cooking?",
		"Is it natural?":                    "not Is it man-made?",
		"Is it not alive?":                  "not Is it alive?",
		"Is it alive or not?":               "Is it alive?",
		"Is it electronic?":                 "Does it use electricity?",
		"Is it used for transportation?":    "Is it a vehicle?",
		"Is it a piece of furniture?":       "Is it furniture?",
		"Is it a type of fruit?":            "Is it a fruit?",
		"Is it a predator?":                 "Does it eat meat?",
		"Is it kept in the fridge?":         "Is it cold?",
		"Is it hard?":                       "not Is it soft?",
		"Is it orange?":                     "Is it orange?",
		"Is it a mammal or a bird?":         "Is it a mammal? or Is it a bird?",
		"Is it a small mammal?":             "not Is it bigger than a breadbox? and Is it a mammal?",
		"Is it a cat?":                      "guess cat",
		"is it cat":                         "guess cat",
		"Cat?":                              "guess cat",
		"Guess: cat":                        "guess cat",
		"My guess is a kitten.":             "guess cat",
		"Are you thinking of a polar bear?": "guess polar bear",
		"Is it an orange?":                  "guess orange",
		"Guess: orange":                     "guess orange",
		"Is it a t-shirt?":                  "guess shirt",
		"Are they knives?":                  "guess knife",
		"Is it mice?":                       "guess mouse",
		"Guess: unicorn":                    "unknown guess unicorn",
		"Is it a cat or a dog?":             "invalid: " + msgTwo,
		"Is it a black cat?":                "invalid: " + msgMixed,
		"Is it warm-blooded?":               "invalid: " + msgNone,
		"Is it cold blooded?":               "invalid: " + msgNone,
		"What is it?":                       "invalid: " + msgWh,
		"How many legs does it have?":       "invalid: " + msgWh,
		"Is it bigger than a cat?":          "invalid: " + msgSize,
		"Is it found in Africa?":            "invalid: " + msgNone,
		"Is it a unicorn?":                  "invalid: " + msgNone,
		"Guess:":                            "invalid: " + msgEmpty,
		"":                                  "invalid: " + msgEmpty,
		"]]]][[[":                           "invalid: " + msgEmpty,
		"Is it red, green, blue or white?":  "invalid: " + msgMany,
	}
	for q, want := range cases {
		if got := describe(k, k.matcher.parse(q)); got != want {
			t.Errorf("%q parses as %q, want %q", q, got, want)
		}
	}
}

func TestQueryLogic(t *testing.T) {
	k := kb()
	obj := func(name string) int {
		for i, o := range k.objects {
			if o.name == name {
				return i
			}
		}
		t.Fatalf("no object %s", name)
		return -1
	}
	cases := []struct {
		question, object string
		want             answer
	}{
		{"Is it a mammal?", "dog", yes},
		{"Is it a mammal?", "robin", no},
		{"Is it not a mammal?", "robin", yes},
		{"Is it a mammal or a bird?", "robin", yes},
		{"Is it a mammal and a bird?", "robin", no},
		{"Is it a small mammal?", "mouse", yes},
		{"Is it a small mammal?", "horse", no},
		{"Is it red?", "butterfly", unknown},
		{"Is it red or a mammal?", "butterfly", unknown},
		{"Is it red or an insect?", "butterfly", yes},
		{"Is it red and a mammal?", "butterfly", no},
		{"Is it a fruit?", "tomato", unknown},
		{"Is it bigger than a car?", "whale", yes},
		{"Is it bigger than a person?", "whale", yes},
		{"Is it bigger than a coin?", "ant", no},
		{"Does it have eight legs?", "spider", yes},
		{"Does it have wheels?", "bicycle", yes},
		{"Does it have a single wheel?", "wheelbarrow", yes},
		{"Does it live in water?", "shark", yes},
		{"Does it live in water?", "cat", no},
	}
	for _, c := range cases {
		p := k.matcher.parse(c.question)
		if p.invalid != "" || p.guess >= 0 {
			t.Errorf("%q: %s", c.question, describe(k, p))
			continue
		}
		if got := p.query.eval(k, obj(c.object)); got != c.want {
			t.Errorf("%q about %s: %v, want %v", c.question, c.object, got, c.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	cases := map[string]string{
		"Does it have WHEELS?":      "have wheel",
		"Can it fly? It flies!":     "fly fly",
		"Is it made of glass":       "made glass",
		"Does it have 4 legs":       "have four leg",
		"Is it man-made?":           "man made",
		"Don't you know?":           "dont know",
		"boxes, dishes, berries":    "box dish berry",
		"bus class octopus":         "bus class octopus",
		"  \t\n  ":                  "",
		"Ça coûte cher, n'est-ce ?": "ça coûte cher nest ce",
	}
	for in, want := range cases {
		if got := strings.Join(normalize(in), " "); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
