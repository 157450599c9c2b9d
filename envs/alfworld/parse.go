package alfworld

import (
	"strconv"
	"strings"
)

// verb is the kind of a command.
type verb int

const (
	verbGoTo verb = iota + 1
	verbOpen
	verbClose
	verbTake
	verbMove
	verbClean
	verbHeat
	verbCool
	verbUse
	verbExamine
	verbInventory
	verbLook
)

// name is a reference to a place, object or lamp as the agent wrote it: a
// type and an instance number ("cabinet 3").
type name struct {
	kind   string
	number int
}

func (n name) String() string { return n.kind + " " + strconv.Itoa(n.number) }

// command is a parsed action. For take, b (the place taken from) may be
// absent, with number 0.
type command struct {
	verb verb
	a, b name
}

// maxCommandLen bounds the text worth parsing: the longest command
// ("take remotecontrol 4 from toiletpaperhanger 1") is far shorter.
const maxCommandLen = 120

// parseCommand reads one command in ALFWorld's grammar, ignoring case, extra
// whitespace and a final full stop. Both generations of ALFWorld's placing
// command are accepted: "move O to R" and "put O in/on R" (also "put O in R"
// and "put O on R"). Names may be written "cabinet 3" or "cabinet3".
func parseCommand(text string) (command, bool) {
	text = strings.TrimRight(strings.TrimSpace(text), ".!")
	if len(text) > maxCommandLen {
		return command{}, false
	}
	p := tokens(strings.Fields(strings.ToLower(text)))
	var c command
	switch p.next() {
	case "go":
		c.verb = verbGoTo
		return c, p.word("to") && p.name(&c.a) && p.end()
	case "goto":
		c.verb = verbGoTo
		return c, p.name(&c.a) && p.end()
	case "open":
		c.verb = verbOpen
	case "close":
		c.verb = verbClose
	case "use":
		c.verb = verbUse
	case "examine":
		c.verb = verbExamine
	case "take":
		c.verb = verbTake
		if !p.name(&c.a) {
			return c, false
		}
		if p.end() {
			return c, true
		}
		return c, p.word("from") && p.name(&c.b) && p.end()
	case "put":
		c.verb = verbMove
		return c, p.name(&c.a) && p.word("in", "on", "in/on", "into", "onto") && p.name(&c.b) && p.end()
	case "move":
		c.verb = verbMove
		return c, p.name(&c.a) && p.word("to") && p.name(&c.b) && p.end()
	case "clean":
		c.verb = verbClean
		return c, p.name(&c.a) && p.word("with") && p.name(&c.b) && p.end()
	case "heat":
		c.verb = verbHeat
		return c, p.name(&c.a) && p.word("with") && p.name(&c.b) && p.end()
	case "cool":
		c.verb = verbCool
		return c, p.name(&c.a) && p.word("with") && p.name(&c.b) && p.end()
	case "inventory":
		c.verb = verbInventory
		return c, p.end()
	case "look":
		c.verb = verbLook
		return c, p.end()
	default:
		return c, false
	}
	// open, close, use and examine take one name.
	return c, p.name(&c.a) && p.end()
}

// tokens is the unread rest of a command's words.
type tokens []string

func (t *tokens) next() string {
	if len(*t) == 0 {
		return ""
	}
	w := (*t)[0]
	*t = (*t)[1:]
	return w
}

func (t *tokens) end() bool { return len(*t) == 0 }

// word consumes the next word if it is one of words.
func (t *tokens) word(words ...string) bool {
	if len(*t) == 0 {
		return false
	}
	for _, w := range words {
		if (*t)[0] == w {
			*t = (*t)[1:]
			return true
		}
	}
	return false
}

// name consumes "kind number" or "kindnumber".
func (t *tokens) name(n *name) bool {
	if len(*t) == 0 {
		return false
	}
	first := (*t)[0]
	if i := strings.IndexAny(first, "0123456789"); i > 0 {
		number, ok := instanceNumber(first[i:])
		if ok && isWord(first[:i]) {
			*n = name{kind: first[:i], number: number}
			*t = (*t)[1:]
			return true
		}
		return false
	}
	if len(*t) < 2 || !isWord(first) {
		return false
	}
	number, ok := instanceNumber((*t)[1])
	if !ok {
		return false
	}
	*n = name{kind: first, number: number}
	*t = (*t)[2:]
	return true
}

// instanceNumber reads a small positive number; rooms never hold a hundred
// of anything, and the bound keeps echoed names short.
func instanceNumber(s string) (int, bool) {
	if len(s) == 0 || len(s) > 2 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n > 0
}

// isWord reports whether s is made of the lowercase letters that type names
// use.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}
