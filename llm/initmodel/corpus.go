package initmodel

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
)

// CorpusSize is the approximate size in bytes of the built-in corpus.
const CorpusSize = 400 << 10

// Corpus returns the built-in tokenizer corpus: generated English-like text
// in the styles a model meets in agent tasks (instructions, observations,
// "Thought:"/"Action: search[...]" steps, dialogues, arithmetic, product
// listings, plain prose), about CorpusSize bytes. It is generated from a
// fixed seed, so it is the same on every call and every machine.
func Corpus() string { return builtinCorpus() }

var builtinCorpus = sync.OnceValue(func() string {
	g := &corpusGen{r: rand.New(rand.NewPCG(20240601, 7))}
	sections := []struct {
		weight int
		write  func()
	}{
		{5, g.prose},
		{3, g.household},
		{3, g.shopping},
		{2, g.guessing},
		{2, g.support},
		{3, g.arithmetic},
		{2, g.questions},
		{1, g.chat},
		{1, g.records},
	}
	total := 0
	for _, s := range sections {
		total += s.weight
	}
	for g.b.Len() < CorpusSize {
		pick := g.r.IntN(total)
		for _, s := range sections {
			if pick < s.weight {
				s.write()
				break
			}
			pick -= s.weight
		}
		g.b.WriteString("\n")
	}
	return g.b.String()
})

// corpusGen writes generated text into b.
type corpusGen struct {
	r *rand.Rand
	b strings.Builder
}

func pick[T any](g *corpusGen, list []T) T { return list[g.r.IntN(len(list))] }

func (g *corpusGen) printf(format string, args ...any) { fmt.Fprintf(&g.b, format, args...) }

func (g *corpusGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *corpusGen) person() string { return pick(g, firstNames) + " " + pick(g, lastNames) }

func (g *corpusGen) price() string {
	return fmt.Sprintf("%d.%02d", 2+g.r.IntN(150), []int{0, 49, 95, 99, g.r.IntN(100)}[g.r.IntN(5)])
}

func (g *corpusGen) nounPhrase() string {
	article := pick(g, []string{"the", "a", "this", "that", "every", "one", "her", "his", "our", "their"})
	n := pick(g, nouns)
	if g.chance(0.5) {
		n = pick(g, adjectives) + " " + n
	}
	if article == "a" {
		return withArticle(n)
	}
	return article + " " + n
}

// withArticle puts "a" or "an" before a noun phrase.
func withArticle(s string) string {
	if strings.ContainsAny(s[:1], "aeiou") {
		return "an " + s
	}
	return "a " + s
}

// plural forms the regular plural of a noun.
func plural(n string) string {
	switch {
	case strings.HasSuffix(n, "y") && !strings.ContainsAny(n[len(n)-2:len(n)-1], "aeiou"):
		return n[:len(n)-1] + "ies"
	case strings.HasSuffix(n, "s"), strings.HasSuffix(n, "sh"), strings.HasSuffix(n, "ch"), strings.HasSuffix(n, "x"):
		return n + "es"
	case n == "child":
		return "children"
	case n == "man" || n == "woman":
		return n[:len(n)-2] + "en"
	}
	return n + "s"
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// prose writes a paragraph of simple narrative sentences.
func (g *corpusGen) prose() {
	for i, n := 0, 3+g.r.IntN(5); i < n; i++ {
		v := pick(g, verbs)
		switch g.r.IntN(7) {
		case 0:
			g.printf("%s %s %s %s %s.", capitalize(g.nounPhrase()), v.past, g.nounPhrase(), pick(g, prepositions), g.nounPhrase())
		case 1:
			g.printf("%s %s %s %s the %s.", pick(g, connectives), pick(g, firstNames), pick(g, adverbs), v.past, pick(g, nouns))
		case 2:
			g.printf("On %s, %d %s, %s was %s %s in %s.", pick(g, weekdays), 1+g.r.IntN(28), pick(g, months), pick(g, firstNames), v.ing, g.nounPhrase(), pick(g, cities))
		case 3:
			g.printf("\"Can you %s %s?\" asked %s. \"I'll try,\" said %s, \"but it isn't easy.\"", v.base, g.nounPhrase(), pick(g, firstNames), pick(g, firstNames))
		case 4:
			g.printf("There were %d %s %s %s, and %d of them were %s.", 2+g.r.IntN(40), plural(pick(g, nouns)), pick(g, prepositions), g.nounPhrase(), 1+g.r.IntN(9), pick(g, adjectives))
		case 5:
			g.printf("It's %s to %s %s; we've %s it %s.", pick(g, adjectives), v.base, g.nounPhrase(), v.past, pick(g, adverbs))
		default:
			g.printf("%s lives at %d %s, %s, and works %d hours a week.", g.person(), 1+g.r.IntN(999), pick(g, streets), pick(g, cities), 10+g.r.IntN(40))
		}
		g.printf(" ")
	}
	g.printf("\n")
}

// household writes a text-world episode: a room, a task, steps.
func (g *corpusGen) household() {
	var seen []string
	g.printf("You are in the middle of a room. Looking quickly around you, you see ")
	for i, n := 0, 4+g.r.IntN(8); i < n; i++ {
		place := fmt.Sprintf("%s %d", pick(g, receptacles), 1+g.r.IntN(4))
		seen = append(seen, place)
		sep := ", "
		if i == n-2 {
			sep = ", and "
		} else if i == n-1 {
			sep = ".\n"
		}
		g.printf("%s%s", withArticle(place), sep)
	}
	object := pick(g, household)
	target := pick(g, seen)
	task := pick(g, []string{"put " + withArticle(object), "put a clean " + object, "put a hot " + object, "put a cool " + object, "put two " + plural(object), "find " + withArticle(object)})
	g.printf("Your task is to: %s in %s.\n", task, strings.TrimRight(target, " 0123456789"))
	for i, n := 0, 2+g.r.IntN(5); i < n; i++ {
		place := pick(g, seen)
		if g.chance(0.3) {
			g.printf("> think: To solve the task, I need to find %s first. It is likely in %s.\nOK.\n", withArticle(object), withArticle(strings.TrimRight(place, " 0123456789")))
		}
		g.printf("> go to %s\n", place)
		switch g.r.IntN(4) {
		case 0:
			g.printf("The %s is closed.\n> open %s\nYou open the %s. The %s is open. In it, you see nothing.\n", place, place, place, place)
		case 1:
			g.printf("On the %s, you see %s %d, %s %d, and %s %d.\n", place, withArticle(pick(g, household)), 1+g.r.IntN(3), withArticle(pick(g, household)), 1+g.r.IntN(3), withArticle(object), 1+g.r.IntN(3))
			g.printf("> take %s 1 from %s\nYou pick up the %s 1 from the %s.\n", object, place, object, place)
		case 2:
			g.printf("> examine %s\nNothing happens.\n", place)
		default:
			g.printf("On the %s, you see nothing.\n", place)
		}
	}
	g.printf("> put %s 1 in/on %s\nYou put the %s 1 in/on the %s.\n", object, target, object, target)
}

// shopping writes a shopping episode: instruction, search, results, choice.
func (g *corpusGen) shopping() {
	product := pick(g, products)
	attr := pick(g, productAttributes)
	color, size := pick(g, colors), pick(g, sizes)
	budget := fmt.Sprintf("%d.00", 10*(2+g.r.IntN(15)))
	g.printf("Instruction: i need %s %s, and price lower than %s dollars. color: %s, size: %s\n", attr, product, budget, color, size)
	g.printf("Thought: I should search for %s %s first.\nAction: search[%s %s]\n", attr, product, attr, product)
	g.printf("Observation: [Back to Search] Page 1 (Total results: %d) [Next >]", 10+g.r.IntN(90))
	var ids []string
	for i, n := 0, 3+g.r.IntN(3); i < n; i++ {
		id := fmt.Sprintf("B0%c%c%05d", 'A'+rune(g.r.IntN(26)), 'A'+rune(g.r.IntN(26)), g.r.IntN(100000))
		ids = append(ids, id)
		g.printf(" [SEP] %s [SEP] %s %s %s, %s [SEP] $%s", id, pick(g, brands), pick(g, productAttributes), product, pick(g, colors), g.price())
	}
	choice := pick(g, ids)
	g.printf("\nThought: %s looks like a good match and costs less than $%s.\nAction: click[%s]\n", choice, budget, choice)
	g.printf("Observation: [Back to Search] [< Prev] color [%s] [%s] size [%s] [%s] Price: $%s Rating: %.1f [Description] [Features] [Reviews] [Buy Now]\n",
		color, pick(g, colors), size, pick(g, sizes), g.price(), 3+2*g.r.Float64())
	g.printf("Action: click[%s]\nAction: click[%s]\nAction: click[Buy Now]\n", color, size)
	g.printf("Your score (min 0.0, max 1.0): %.2f\n", float64(g.r.IntN(101))/100)
}

// guessing writes a round of the twenty-questions game.
func (g *corpusGen) guessing() {
	secret := pick(g, guessables)
	g.printf("Let's play twenty questions. I am thinking of something; ask yes or no questions.\n")
	asked := 0
	for i, n := 0, 3+g.r.IntN(6); i < n; i++ {
		asked++
		if g.chance(0.6) {
			g.printf("Question %d: Is it %s?\nAnswer: Yes.\n", asked, pick(g, secret.props))
		} else {
			other := pick(g, guessables)
			g.printf("Question %d: Is it %s?\nAnswer: No.\n", asked, pick(g, other.props))
		}
	}
	if g.chance(0.7) {
		g.printf("Question %d: Is it %s?\nAnswer: Yes! You guessed it in %d questions.\n", asked+1, withArticle(secret.name), asked+1)
	} else {
		g.printf("Question %d: Is it %s?\nAnswer: No. It was %s.\n", asked+1, withArticle(pick(g, guessables).name), withArticle(secret.name))
	}
}

// support writes a customer-service exchange with tool calls.
func (g *corpusGen) support() {
	first, last := pick(g, firstNames), pick(g, lastNames)
	user := fmt.Sprintf("%s_%s_%d", strings.ToLower(first), strings.ToLower(last), 1000+g.r.IntN(9000))
	order := fmt.Sprintf("#W%07d", g.r.IntN(10000000))
	item := pick(g, products)
	g.printf("Customer: Hi, I'm %s %s. I'd like to %s my order %s, the %s %s.\n", first, last, pick(g, []string{"return", "exchange", "cancel", "check on"}), order, pick(g, colors), item)
	g.printf("Agent: I can help with that. Could you confirm your email or zip code?\n")
	g.printf("Customer: My email is %s.%s@example.com and my zip code is %05d.\n", strings.ToLower(first), strings.ToLower(last), g.r.IntN(100000))
	g.printf("Action: find_user_id_by_email[%s.%s@example.com]\nObservation: %s\n", strings.ToLower(first), strings.ToLower(last), user)
	g.printf("Action: get_order_details[%s]\nObservation: {\"order_id\": \"%s\", \"user_id\": \"%s\", \"status\": \"%s\", \"items\": [{\"name\": \"%s\", \"price\": %s}]}\n",
		order, order, user, pick(g, []string{"pending", "processed", "delivered", "cancelled"}), item, g.price())
	g.printf("Agent: Your order %s is %s. The refund of $%s will go back to your original payment method within %d business days. Is there anything else?\n",
		order, pick(g, []string{"now cancelled", "eligible for return", "on its way", "being processed"}), g.price(), 3+g.r.IntN(8))
	g.printf("Customer: No, that's all. Thank you!\n")
}

// arithmetic writes a worked arithmetic problem.
func (g *corpusGen) arithmetic() {
	a, b, c := 2+g.r.IntN(98), 2+g.r.IntN(98), 2+g.r.IntN(12)
	switch g.r.IntN(6) {
	case 0:
		g.printf("Question: What is %d + %d?\nThought: %d + %d = %d.\nAnswer: %d\n", a, b, a, b, a+b, a+b)
	case 1:
		g.printf("Question: What is %d - %d?\nThought: %d - %d = %d.\nAnswer: %d\n", a, b, a, b, a-b, a-b)
	case 2:
		g.printf("Question: What is %d * %d?\nAction: calculate[%d * %d]\nObservation: %d\nAnswer: %d\n", a, c, a, c, a*c, a*c)
	case 3:
		name, thing := pick(g, firstNames), pick(g, household)
		g.printf("Problem: %s has %d %s and buys %d more packs of %d. How many %s does %s have now?\n", name, a, plural(thing), b%9+1, c, plural(thing), name)
		g.printf("Solution: %d packs of %d is %d * %d = %d. Then %d + %d = %d. The answer is %d.\n", b%9+1, c, b%9+1, c, (b%9+1)*c, a, (b%9+1)*c, a+(b%9+1)*c, a+(b%9+1)*c)
	case 4:
		p := 5 * (1 + g.r.IntN(15))
		g.printf("Problem: A %s costs $%d.00 and is on sale for %d%% off. What is the sale price?\n", pick(g, products), a, p)
		g.printf("Solution: %d%% of %d is %.2f, so the price is %d - %.2f = %.2f dollars. #### %.2f\n", p, a, float64(a*p)/100, a, float64(a*p)/100, float64(a*(100-p))/100, float64(a*(100-p))/100)
	default:
		g.printf("Question: What is %d / %d, rounded to two decimals?\nAction: calculate[%d / %d]\nObservation: %.4f\nAnswer: %.2f\n", a, c, a, c, float64(a)/float64(c), float64(a)/float64(c))
	}
}

// questions writes search-based question answering steps.
func (g *corpusGen) questions() {
	f := pick(g, facts)
	topic := strings.TrimSuffix(strings.TrimPrefix(f.question, "What is "), "?")
	g.printf("Question: %s\nThought 1: I need to look this up.\nAction 1: search[%s]\n", f.question, topic)
	g.printf("Observation 1: %s is %s %s. It was first described in %d.\n", capitalize(topic), pick(g, adjectives), g.nounPhrase(), 1500+g.r.IntN(520))
	g.printf("Thought 2: The answer is %s.\nAction 2: finish[%s]\n", f.answer, f.answer)
}

// chat writes a short conversation between roles, as a chat transcript.
func (g *corpusGen) chat() {
	g.printf("system\nYou are a helpful assistant. Think step by step, then act.\n")
	g.printf("user\nCan you help me %s %s before %s?\n", pick(g, verbs).base, g.nounPhrase(), pick(g, weekdays))
	g.printf("assistant\nSure. First I will %s %s, then I will %s it %s.\n", pick(g, verbs).base, g.nounPhrase(), pick(g, verbs).base, pick(g, adverbs))
}

// records writes structured data: JSON, key-value lines and tables.
func (g *corpusGen) records() {
	switch g.r.IntN(3) {
	case 0:
		g.printf("{\"name\": \"%s\", \"age\": %d, \"city\": \"%s\", \"active\": %t, \"tags\": [\"%s\", \"%s\"]}\n",
			g.person(), 18+g.r.IntN(60), pick(g, cities), g.chance(0.5), pick(g, nouns), pick(g, adjectives))
	case 1:
		g.printf("id: %d\nproduct: %s\nprice: $%s\nin_stock: %d\nrating: %.1f/5\n", g.r.IntN(100000), pick(g, products), g.price(), g.r.IntN(500), 1+4*g.r.Float64())
	default:
		g.printf("| item | qty | total |\n|------|-----|-------|\n")
		for i, n := 0, 2+g.r.IntN(4); i < n; i++ {
			g.printf("| %s | %d | %s |\n", pick(g, household), 1+g.r.IntN(9), g.price())
		}
	}
}
