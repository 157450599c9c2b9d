package alfworld

import (
	"strings"

	"github.com/agentrl/agentrl/envs"
)

var _ envs.Canonicalizer = (*Env)(nil)

// Canonical returns the command as parseCommand reads it, written the way
// the admissible actions write it: lower case, single spaces, no final full
// stop, "goto X" as "go to X", "put O in/on R" (and in, on, into, onto) as
// "move O to R", names as "kind N" ("cabinet03" is "cabinet 3"). "take O"
// and "take O from R" stay different: the first takes from wherever the
// agent is. Text parseCommand rejects canonicalises to itself, parsed and
// trimmed.
func (e *Env) Canonical(action string) string {
	text := strings.TrimSpace(envs.ParseAction(action)) // ParseAction may leave spaces inside quotes
	cmd, ok := parseCommand(text)
	if !ok {
		return text
	}
	return cmd.canonical()
}

// canonical writes c in ALFWorld's words; parseCommand reads it back as c.
func (c command) canonical() string {
	switch c.verb {
	case verbGoTo:
		return "go to " + c.a.String()
	case verbOpen:
		return "open " + c.a.String()
	case verbClose:
		return "close " + c.a.String()
	case verbTake:
		if c.b.number == 0 {
			return "take " + c.a.String()
		}
		return "take " + c.a.String() + " from " + c.b.String()
	case verbMove:
		return "move " + c.a.String() + " to " + c.b.String()
	case verbClean:
		return "clean " + c.a.String() + " with " + c.b.String()
	case verbHeat:
		return "heat " + c.a.String() + " with " + c.b.String()
	case verbCool:
		return "cool " + c.a.String() + " with " + c.b.String()
	case verbUse:
		return "use " + c.a.String()
	case verbExamine:
		return "examine " + c.a.String()
	case verbInventory:
		return "inventory"
	case verbLook:
		return "look"
	}
	return ""
}
