package envs

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseAction(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Action: search[red shoes]", "search[red shoes]"},
		{"Thought: I need shoes.\nAction: search[red shoes]\n", "search[red shoes]"},
		{"action : click[Buy Now]", "click[Buy Now]"},
		{"ACTION:   go to cabinet 1  ", "go to cabinet 1"},
		{"Thought: the action: was wrong\nAction: look", "look"},
		{"Action:\n\n  open fridge 1\n", "open fridge 1"},
		{"Action: `inventory`", "inventory"},
		{"Action: \"Is it a cat?\"", "Is it a cat?"},
		{"just text\n\nIs it alive?\n", "Is it alive?"},
		{"", ""},
		{"İAction: look", "look"},
		{"ȺȺȺȺ action: go to x", "go to x"},
		{"\xdcACtion:", ""},
		{"the transaction: rejected", "the transaction: rejected"},
		{"respond{\"content\": \"your transaction: done\"}", "respond{\"content\": \"your transaction: done\"}"},
		{"Action: respond{\"content\": \"transaction: ok\"}", "respond{\"content\": \"transaction: ok\"}"},
	}
	for _, c := range cases {
		if got := ParseAction(c.in); got != c.want {
			t.Errorf("ParseAction(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzParseAction(f *testing.F) {
	for _, s := range []string{"Action: look", "İAction: look", "\xdcACtion:", "Action:\n", "action:action:", "Thought: x\nAction: y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := ParseAction(text)
		if strings.Contains(got, "\n") {
			t.Fatalf("action %q spans lines", got)
		}
		if utf8.ValidString(text) && !utf8.ValidString(got) {
			t.Fatalf("valid input %q gave invalid UTF-8 %q", text, got)
		}
		if len(got) > len(text) {
			t.Fatalf("action %q longer than the input", got)
		}
	})
}
