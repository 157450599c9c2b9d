package math

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/agentrl/agentrl/envs"
)

// Difficulty is the number of solution steps, drawn uniformly.
const (
	minSteps = 2
	maxSteps = 6
)

// testEvery puts a generated problem in the test split when the hash of its
// text is divisible by testEvery, in train otherwise: the two splits share a
// distribution and never share a problem.
const testEvery = 5

// problem is a generated word problem with its worked solution.
type problem struct {
	template string
	question string
	steps    []step
	answer   int64
}

// step is one line of a worked solution.
type step struct {
	text  string // GSM8K style: "She pays 3 * 4 = $<<3*4=12>>12 for the pens."
	expr  string // what the calculator computes: "3*4"
	value int64
}

// solution is the worked solution as GSM8K writes it: the steps, then the
// answer after "####".
func (p *problem) solution() string {
	var b strings.Builder
	for _, s := range p.steps {
		b.WriteString(s.text)
		b.WriteByte('\n')
	}
	b.WriteString("#### ")
	b.WriteString(strconv.FormatInt(p.answer, 10))
	return b.String()
}

// template generates one kind of problem. generate writes the solution
// steps through g (exactly steps of them) and returns the question; the
// answer is the last step's value.
type template struct {
	name     string
	unseen   bool // held out: only in the unseen split
	generate func(g *gen, steps int) string
}

// splitStreams make the random streams of the splits independent.
var splitStreams = map[envs.Split]uint64{envs.Train: 0x7261696e, envs.Test: 0x74657374, envs.Unseen: 0x756e7365}

// generateProblem draws the problem of (split, seed).
func generateProblem(split envs.Split, seed int64) (problem, error) {
	stream, ok := splitStreams[split]
	if !ok {
		return problem{}, fmt.Errorf("unknown split %q", split)
	}
	pool := seenTemplates
	if split == envs.Unseen {
		pool = unseenTemplates
	}
	rng := rand.New(rand.NewPCG(uint64(seed), stream))
	// About one draw in testEvery belongs to test; a thousand draws without
	// one would mean the hash is broken.
	for range 1000 {
		t := pool[rng.IntN(len(pool))]
		p, err := generateFrom(t, rng, minSteps+rng.IntN(maxSteps-minSteps+1))
		if err != nil {
			return problem{}, err
		}
		if split == envs.Unseen || (textHash(p.question)%testEvery == 0) == (split == envs.Test) {
			return p, nil
		}
	}
	return problem{}, fmt.Errorf("no %s problem for seed %d", split, seed)
}

// seenTemplates and unseenTemplates are the template pools of train and
// test, and of unseen.
var seenTemplates, unseenTemplates = func() (seen, unseen []template) {
	for _, t := range templates {
		if t.unseen {
			unseen = append(unseen, t)
		} else {
			seen = append(seen, t)
		}
	}
	return seen, unseen
}()

func generateFrom(t template, rng *rand.Rand, steps int) (problem, error) {
	g := &gen{rng: rng, usedNames: map[string]bool{}}
	question := t.generate(g, steps)
	switch {
	case g.err != nil:
		return problem{}, fmt.Errorf("template %s: %w", t.name, g.err)
	case len(g.steps) != steps:
		return problem{}, fmt.Errorf("template %s: %d steps, want %d", t.name, len(g.steps), steps)
	}
	return problem{template: t.name, question: question, steps: g.steps, answer: g.steps[len(g.steps)-1].value}, nil
}

func textHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// gen is the state of one problem's generation.
type gen struct {
	rng       *rand.Rand
	steps     []step
	usedNames map[string]bool
	err       error
}

// between returns a uniform integer in [lo, hi].
func (g *gen) between(lo, hi int64) int64 { return lo + g.rng.Int64N(hi-lo+1) }

// multipleOf returns a uniform multiple of m in [lo, hi].
func (g *gen) multipleOf(m, lo, hi int64) int64 { return m * g.between((lo+m-1)/m, hi/m) }

func pick[T any](g *gen, xs []T) T { return xs[g.rng.IntN(len(xs))] }

// calc evaluates expr, appends the solution line, and returns the value.
// format has two %s: the expression as people write it ("3 * 4") and the
// result with its calculator annotation ("<<3*4=12>>12").
func (g *gen) calc(format, expr string) int64 {
	v, err := evaluate(expr)
	switch {
	case err != nil:
		g.fail(fmt.Errorf("step %q: %w", expr, err))
		return 0
	case !v.IsInt() || !v.Num().IsInt64():
		g.fail(fmt.Errorf("step %q is %s, not a whole number", expr, v.RatString()))
		return 0
	}
	value := v.Num().Int64()
	result := strconv.FormatInt(value, 10)
	g.steps = append(g.steps, step{
		text:  fmt.Sprintf(format, spaced.Replace(expr), "<<"+expr+"="+result+">>"+result),
		expr:  expr,
		value: value,
	})
	return value
}

func (g *gen) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

var spaced = strings.NewReplacer("+", " + ", "-", " - ", "*", " * ", "/", " / ")

// person is a named character with pronouns.
type person struct {
	name, they, them, their, themselves string
}

var (
	womenNames = []string{"Maria", "Emma", "Olivia", "Sophia", "Ava", "Mia", "Lily", "Grace", "Chloe", "Zoe",
		"Hannah", "Nora", "Aisha", "Priya", "Mei", "Sara", "Lucia", "Fatima", "Yuki", "Ana"}
	menNames = []string{"James", "Liam", "Noah", "Ethan", "Lucas", "Omar", "Raj", "Diego", "Ben", "Sam",
		"Tom", "Leo", "Ali", "Kenji", "Marco", "Hugo", "Ivan", "Jack", "David", "Kwame"}
)

// person returns a character not yet used in this problem.
func (g *gen) person() person {
	for {
		if g.rng.IntN(2) == 0 {
			if n := pick(g, womenNames); !g.usedNames[n] {
				g.usedNames[n] = true
				return person{n, "she", "her", "her", "herself"}
			}
		} else if n := pick(g, menNames); !g.usedNames[n] {
			g.usedNames[n] = true
			return person{n, "he", "him", "his", "himself"}
		}
	}
}

// capital upper-cases the first letter: "she" -> "She".
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// plural writes a count with the right form of its noun: "1 hour", "3 hours".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return itoa(n) + " " + many
}

// itoa keeps templates short.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// joinAnd joins "a", "b" and "c" as "a, b and c".
func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
