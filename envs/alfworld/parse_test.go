package alfworld

import (
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
)

func TestParseCommand(t *testing.T) {
	cases := []struct {
		text string
		want command
	}{
		{"go to cabinet 3", command{verb: verbGoTo, a: name{"cabinet", 3}}},
		{"  Go  To   CounterTop 12. ", command{verb: verbGoTo, a: name{"countertop", 12}}},
		{"goto fridge1", command{verb: verbGoTo, a: name{"fridge", 1}}},
		{"open drawer 2", command{verb: verbOpen, a: name{"drawer", 2}}},
		{"close drawer 2!", command{verb: verbClose, a: name{"drawer", 2}}},
		{"take apple 1 from countertop 2", command{verb: verbTake, a: name{"apple", 1}, b: name{"countertop", 2}}},
		{"take apple 1", command{verb: verbTake, a: name{"apple", 1}}},
		{"move mug 2 to coffeemachine 1", command{verb: verbMove, a: name{"mug", 2}, b: name{"coffeemachine", 1}}},
		{"put mug 2 in/on coffeemachine 1", command{verb: verbMove, a: name{"mug", 2}, b: name{"coffeemachine", 1}}},
		{"put mug 2 in coffeemachine 1", command{verb: verbMove, a: name{"mug", 2}, b: name{"coffeemachine", 1}}},
		{"put book 1 on bed 1", command{verb: verbMove, a: name{"book", 1}, b: name{"bed", 1}}},
		{"clean plate 1 with sinkbasin 1", command{verb: verbClean, a: name{"plate", 1}, b: name{"sinkbasin", 1}}},
		{"heat egg 3 with microwave 1", command{verb: verbHeat, a: name{"egg", 3}, b: name{"microwave", 1}}},
		{"cool tomato 1 with fridge 1", command{verb: verbCool, a: name{"tomato", 1}, b: name{"fridge", 1}}},
		{"use desklamp 1", command{verb: verbUse, a: name{"desklamp", 1}}},
		{"examine sidetable 2", command{verb: verbExamine, a: name{"sidetable", 2}}},
		{"INVENTORY", command{verb: verbInventory}},
		{"look.", command{verb: verbLook}},
	}
	for _, c := range cases {
		got, ok := parseCommand(c.text)
		if !ok || got != c.want {
			t.Errorf("parseCommand(%q) = %+v, %v; want %+v", c.text, got, ok, c.want)
		}
	}
	for _, bad := range []string{
		"", "go", "go to", "go cabinet 1", "go to cabinet", "go to cabinet 0", "go to cabinet 100",
		"go to cabinet x", "go to 3", "go to cabinet 1 now", "take apple 1 off countertop 1",
		"put apple 1 under countertop 1", "move apple 1 into countertop 1", "clean plate 1",
		"heat egg 1 in microwave 1", "inventory please", "look around", "open", "use", "fly",
		"go to cab-inet 1", "go to cabinet 1 1", "go to cabinet +1", "go to cabinet -1",
		"go to 1cabinet", "go to ñandú 1", strings.Repeat("look ", 100),
	} {
		if got, ok := parseCommand(bad); ok {
			t.Errorf("parseCommand(%q) = %+v, want rejection", bad, got)
		}
	}
}

// format writes a command the way admissible does (with "move" and "from").
func format(c command) string { return c.canonical() }

func FuzzParseCommand(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		c, ok := parseCommand(text)
		if !ok {
			return
		}
		for _, n := range []name{c.a, c.b} {
			if n.number < 0 || n.number > 99 || (n.number > 0 && !isWord(n.kind)) {
				t.Fatalf("parseCommand(%q) gave name %+v", text, n)
			}
		}
		canonical := format(c)
		if again, ok := parseCommand(canonical); !ok || again != c {
			t.Fatalf("parseCommand(%q) = %+v, but its canonical form %q parses to %+v, %v", text, c, canonical, again, ok)
		}
	})
}

func FuzzStep(f *testing.F) {
	f.Fuzz(func(t *testing.T, seed int64, action string) {
		e := New()
		if _, err := e.Reset(envs.Splits[uint64(seed)%3], seed); err != nil {
			t.Fatal(err)
		}
		res, err := e.Step(action)
		if err != nil {
			t.Fatalf("Step(%q): %v", action, err)
		}
		if res.Done || res.Reward != 0 {
			t.Fatalf("Step(%q) ended the episode at the first step: %+v", action, res)
		}
		if !res.Info.ValidAction && !strings.HasPrefix(res.Observation, "Nothing happens. Invalid action ") {
			t.Fatalf("invalid Step(%q) observation %q", action, res.Observation)
		}
		if res.Info.ValidAction && !strings.Contains(res.Observation, "Admissible actions: ") {
			t.Fatalf("valid Step(%q) observation %q", action, res.Observation)
		}
	})
}
