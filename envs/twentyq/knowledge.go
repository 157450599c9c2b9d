package twentyq

import (
	_ "embed"
	"fmt"
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"

	"github.com/agentrl/agentrl/envs"
)

// objects.txt lists the objects. A line "[category] attributes" starts a
// category and gives the attribute values its objects share; each following
// line "name | synonym, synonym | attributes" is one object, whose attributes
// override the category's. Attribute syntax:
//
//	name          boolean yes           -name        boolean no
//	name?         boolean unknown       name=a,b     ordinal level or set members
//	name=none     empty set             name=?       unknown (sizes, colours that vary)
//	mass          no article when guessing ("Is it rice?")
//
// Booleans nobody mentions are no; every ordinal and set attribute must be
// given by the category or the object.
//
//go:embed objects.txt
var objectsText string

// unseenCategories are never targets in train or test; the unseen split
// draws only from them.
var unseenCategories = []string{"reptile", "amphibian", "instrument", "drink", "toy"}

// testEvery puts every testEvery-th object of each seen category (in a fixed
// pseudo-random order) in the test split, the rest in train.
const testEvery = 3

type object struct {
	name     string
	category string
	names    []string // name, then synonyms
	massNoun bool
	bools    []answer // by booleanAttributes index
	levels   []int    // by ordinalAttributes index; -1 is unknown
	sets     []valueSet
}

// valueSet is the members of a set attribute, as bits by value index.
type valueSet struct {
	members uint64
	unknown bool
}

// guessText is how a player guesses the object: "Is it a cat?".
func (o *object) guessText() string {
	return "Is it " + o.withArticle() + "?"
}

func (o *object) withArticle() string {
	switch {
	case o.massNoun:
		return o.name
	case strings.ContainsRune("aeiou", rune(o.name[0])):
		return "an " + o.name
	default:
		return "a " + o.name
	}
}

// proposition is one yes/no question the oracle answers from the
// knowledge base.
type proposition struct {
	wording
	eval func(*object) answer
}

// bitset has one bit per object.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int) { b[i/64] |= 1 << (i % 64) }

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// first returns the lowest member, or -1.
func (b bitset) first() int {
	for i, w := range b {
		if w != 0 {
			return i*64 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// knowledgeBase is built once and shared read-only by every environment.
type knowledgeBase struct {
	objects []object
	props   []proposition
	// answers[p][o] is the answer to proposition p about object o; the
	// bitsets hold the same by answer, for the expert's counting.
	answers [][]answer
	yesSet  []bitset
	unknown []bitset
	all     bitset
	pools   map[envs.Split][]int // target objects of each split, in seed order
	matcher *matcher
	xlogx   []float64 // c*log(c), for the expert's entropy
	// openingQuestion is the expert's first question, the same in every
	// game.
	openingQuestion string
	// examples are every canonical question and every guess.
	examples []string
}

var (
	kbOnce  sync.Once
	kbValue *knowledgeBase
)

// kb returns the shared knowledge base. The data is part of the program, so
// malformed data is a programming error that the tests catch; it panics.
func kb() *knowledgeBase {
	kbOnce.Do(func() {
		k, err := buildKnowledgeBase(objectsText)
		if err != nil {
			panic(fmt.Sprintf("twentyq: knowledge base: %v", err))
		}
		kbValue = k
	})
	return kbValue
}

func buildKnowledgeBase(text string) (*knowledgeBase, error) {
	objects, err := parseObjects(text)
	if err != nil {
		return nil, err
	}
	k := &knowledgeBase{objects: objects, props: allPropositions()}
	n := len(objects)
	k.all = newBitset(n)
	for i := range objects {
		k.all.set(i)
	}
	for _, p := range k.props {
		row := make([]answer, n)
		ys, us := newBitset(n), newBitset(n)
		for i := range objects {
			row[i] = p.eval(&objects[i])
			switch row[i] {
			case yes:
				ys.set(i)
			case unknown:
				us.set(i)
			}
		}
		k.answers = append(k.answers, row)
		k.yesSet = append(k.yesSet, ys)
		k.unknown = append(k.unknown, us)
	}
	k.pools = splitPools(objects)
	k.xlogx = xlogxTable(n)
	k.openingQuestion = k.expertQuestion(k.all)
	for _, p := range k.props {
		k.examples = append(k.examples, p.question)
	}
	for i := range k.objects {
		k.examples = append(k.examples, k.objects[i].guessText())
	}
	k.matcher, err = newMatcher(k)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// allPropositions lists every proposition of the schema in a fixed order.
func allPropositions() []proposition {
	var props []proposition
	for i, a := range booleanAttributes {
		props = append(props, proposition{a.wording, func(o *object) answer { return o.bools[i] }})
	}
	for i, a := range ordinalAttributes {
		for _, r := range a.ranges {
			props = append(props, proposition{r.wording, func(o *object) answer {
				switch l := o.levels[i]; {
				case l < 0:
					return unknown
				case r.min <= l && l <= r.max:
					return yes
				default:
					return no
				}
			}})
		}
	}
	for i, a := range setAttributes {
		for j, v := range a.values {
			props = append(props, proposition{v.wording, func(o *object) answer {
				return o.sets[i].answer(uint64(1) << j)
			}})
		}
	}
	placeIndex := setAttributeIndex("place")
	var water uint64
	for _, name := range waterPlaces {
		water |= 1 << setValueIndex(placeIndex, name)
	}
	props = append(props, proposition{inWater, func(o *object) answer {
		return o.sets[placeIndex].answer(water)
	}})
	return props
}

// answer says whether the set holds any of the values in mask.
func (s valueSet) answer(mask uint64) answer {
	switch {
	case s.unknown:
		return unknown
	case s.members&mask != 0:
		return yes
	default:
		return no
	}
}

func setAttributeIndex(name string) int {
	for i, a := range setAttributes {
		if a.name == name {
			return i
		}
	}
	panic("twentyq: no set attribute " + name)
}

func setValueIndex(attr int, name string) int {
	for j, v := range setAttributes[attr].values {
		if v.name == name {
			return j
		}
	}
	panic("twentyq: no value " + name + " of " + setAttributes[attr].name)
}

// assignment is a partial object: what a category or object line sets.
type assignment struct {
	bools  map[int]answer
	levels map[int]int
	sets   map[int]valueSet
	mass   bool
}

func parseObjects(text string) ([]object, error) {
	var objects []object
	var category string
	var defaults assignment
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := fmt.Sprintf("objects.txt:%d", n+1)
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, fmt.Errorf("%s: unclosed category", where)
			}
			category = strings.TrimSpace(line[1:end])
			var err error
			if defaults, err = parseAssignment(line[end+1:]); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			continue
		}
		if category == "" {
			return nil, fmt.Errorf("%s: object before any category", where)
		}
		fields := strings.Split(line, "|")
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s: want name | synonyms | attributes", where)
		}
		own, err := parseAssignment(fields[2])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		o, err := makeObject(strings.TrimSpace(fields[0]), category, fields[1], defaults, own)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		objects = append(objects, o)
	}
	if len(objects) > 64*64 {
		return nil, fmt.Errorf("%d objects: too many", len(objects))
	}
	return objects, nil
}

func makeObject(name, category, synonyms string, defaults, own assignment) (object, error) {
	if name == "" {
		return object{}, fmt.Errorf("object without a name")
	}
	o := object{name: name, category: category, names: []string{name}, massNoun: defaults.mass || own.mass}
	for _, s := range strings.Split(synonyms, ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.names = append(o.names, s)
		}
	}
	o.bools = make([]answer, len(booleanAttributes))
	for _, a := range []assignment{defaults, own} {
		for i, v := range a.bools {
			o.bools[i] = v
		}
	}
	o.levels = make([]int, len(ordinalAttributes))
	for i, attr := range ordinalAttributes {
		l, ok := own.levels[i]
		if !ok {
			l, ok = defaults.levels[i]
		}
		if !ok {
			return object{}, fmt.Errorf("%s: no %s", name, attr.name)
		}
		o.levels[i] = l
	}
	o.sets = make([]valueSet, len(setAttributes))
	for i, attr := range setAttributes {
		s, ok := own.sets[i]
		if !ok {
			s, ok = defaults.sets[i]
		}
		if !ok {
			return object{}, fmt.Errorf("%s: no %s", name, attr.name)
		}
		o.sets[i] = s
	}
	return o, nil
}

func parseAssignment(text string) (assignment, error) {
	a := assignment{bools: map[int]answer{}, levels: map[int]int{}, sets: map[int]valueSet{}}
	for _, tok := range strings.Fields(text) {
		if tok == "mass" {
			a.mass = true
			continue
		}
		if name, value, ok := strings.Cut(tok, "="); ok {
			if err := a.setValued(name, value); err != nil {
				return a, err
			}
			continue
		}
		v := yes
		switch {
		case strings.HasPrefix(tok, "-"):
			v, tok = no, tok[1:]
		case strings.HasSuffix(tok, "?"):
			v, tok = unknown, tok[:len(tok)-1]
		}
		i := booleanIndex(tok)
		if i < 0 {
			return a, fmt.Errorf("unknown boolean attribute %q", tok)
		}
		a.bools[i] = v
	}
	return a, nil
}

// setValued records "name=value[,value...]" for an ordinal or set attribute.
func (a assignment) setValued(name, value string) error {
	for i, attr := range ordinalAttributes {
		if attr.name != name {
			continue
		}
		if value == "?" {
			a.levels[i] = -1
			return nil
		}
		for l, level := range attr.levels {
			if level == value {
				a.levels[i] = l
				return nil
			}
		}
		return fmt.Errorf("%s: unknown level %q (want one of %s)", name, value, strings.Join(attr.levels, ", "))
	}
	for i, attr := range setAttributes {
		if attr.name != name {
			continue
		}
		var s valueSet
		switch value {
		case "?":
			s.unknown = true
		case "none":
		default:
		values:
			for _, v := range strings.Split(value, ",") {
				for j, known := range attr.values {
					if known.name == v {
						s.members |= 1 << j
						continue values
					}
				}
				return fmt.Errorf("%s: unknown value %q", name, v)
			}
		}
		a.sets[i] = s
		return nil
	}
	return fmt.Errorf("unknown attribute %q", name)
}

func booleanIndex(name string) int {
	for i, a := range booleanAttributes {
		if a.name == name {
			return i
		}
	}
	return -1
}

// splitPools assigns every object to train, test or unseen and orders each
// pool pseudo-randomly (by a hash of the name, so the order does not depend
// on the file's layout), so that consecutive seeds give different objects.
func splitPools(objects []object) map[envs.Split][]int {
	byCategory := map[string][]int{}
	for i, o := range objects {
		byCategory[o.category] = append(byCategory[o.category], i)
	}
	pools := map[envs.Split][]int{}
	for category, members := range byCategory {
		sort.Slice(members, func(a, b int) bool {
			return nameHash(objects[members[a]].name) < nameHash(objects[members[b]].name)
		})
		for rank, i := range members {
			switch {
			case isUnseenCategory(category):
				pools[envs.Unseen] = append(pools[envs.Unseen], i)
			case rank%testEvery == testEvery-1:
				pools[envs.Test] = append(pools[envs.Test], i)
			default:
				pools[envs.Train] = append(pools[envs.Train], i)
			}
		}
	}
	for _, pool := range pools {
		sort.Ints(pool)
		rand.New(rand.NewPCG(0x20, 0x9)).Shuffle(len(pool), func(a, b int) { pool[a], pool[b] = pool[b], pool[a] })
	}
	return pools
}

func isUnseenCategory(c string) bool {
	for _, u := range unseenCategories {
		if u == c {
			return true
		}
	}
	return false
}

func nameHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
