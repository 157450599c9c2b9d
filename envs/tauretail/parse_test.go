package tauretail

import (
	"math"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
)

func TestParseToolCall(t *testing.T) {
	cases := []struct {
		in, name string
		args     int
		fails    bool
	}{
		{`respond{"content": "hi"}`, "respond", 1, false},
		{`  RESPOND  {"content": "hi"}  `, "respond", 1, false},
		{`respond({"content": "hi"})`, "respond", 1, false},
		{`list_all_product_types`, "list_all_product_types", 0, false},
		{`list_all_product_types{}`, "list_all_product_types", 0, false},
		{`list_all_product_types()`, "list_all_product_types", 0, false},
		{`respond{"content": "a"}{"content": "b"}`, "", 0, true},
		{`respond "hi"`, "", 0, true},
		{`{"content": "hi"}`, "", 0, true},
		{`respond{'content': 'hi'}`, "", 0, true},
		{``, "", 0, true},
	}
	for _, c := range cases {
		call, err := parseToolCall(c.in)
		if (err != nil) != c.fails {
			t.Errorf("%q: err = %v", c.in, err)
			continue
		}
		if err == nil && (call.name != c.name || len(call.args) != c.args) {
			t.Errorf("%q: got %q with %d arguments", c.in, call.name, len(call.args))
		}
	}
}

func TestArguments(t *testing.T) {
	call, err := parseToolCall(`x{"a": "s", "n": 123, "f": 1.5, "l": ["1", 2], "bad": [true], "o": {}}`)
	if err != nil {
		t.Fatal(err)
	}
	a := call.args
	if s, _ := a.str("a"); s != "s" {
		t.Errorf("str = %q", s)
	}
	if s, _ := a.str("n"); s != "123" {
		t.Errorf("number = %q", s)
	}
	if s, _ := a.str("f"); s != "1.5" {
		t.Errorf("float = %q", s)
	}
	if l, _ := a.strList("l"); len(l) != 2 || l[1] != "2" {
		t.Errorf("list = %q", l)
	}
	for _, key := range []string{"missing", "o", "l"} {
		if _, err := a.str(key); err == nil {
			t.Errorf("str(%q): no error", key)
		}
	}
	for _, key := range []string{"missing", "bad", "a"} {
		if _, err := a.strList(key); err == nil {
			t.Errorf("strList(%q): no error", key)
		}
	}
	if s, err := a.optionalStr("missing"); s != "" || err != nil {
		t.Errorf("optionalStr = %q, %v", s, err)
	}
	err = a.checkKeys(findTool(toolRespond))
	if err == nil || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("checkKeys: %v", err)
	}
}

func TestCalculate(t *testing.T) {
	cases := map[string]string{
		"1 + 2 * 3":           "7",
		"(54.99 + 12.50) * 2": "134.98",
		"-(2 - 5) / 4":        "0.75",
		"10 / 3":              "3.33",
		"--1":                 "1",
		"0.1 + 0.2":           "0.3",
		"-0.001":              "0",
		"  100.5 -  0.25 ":    "100.25",
		"1 / 0":               "",
		"2 +":                 "",
		"(1":                  "",
		"1 2":                 "",
		"abc":                 "",
		"1..2":                "",
		strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100): "",
	}
	for in, want := range cases {
		v, err := evaluate(in)
		got := ""
		if err == nil {
			got = formatResult(v)
		}
		if got != want {
			t.Errorf("%q = %q (%v), want %q", in, got, err, want)
		}
	}
	e := newEnv(t, envs.Train, 1)
	if res := step(t, e, `calculate{"expression": "2 * (3 + 4)"}`); res.Observation != "14" || !res.Info.ValidAction {
		t.Errorf("calculate tool: %+v", res)
	}
	if res := step(t, e, `calculate{"expression": "2 *"}`); !strings.HasPrefix(res.Observation, "Error: ") || !res.Info.ValidAction {
		t.Errorf("calculate tool on a bad expression: %+v", res)
	}
}

func FuzzParseToolCall(f *testing.F) {
	for _, s := range []string{`respond{"content": "hi"}`, `get_order_details({"order_id": "#W1"})`, `x{`, `x{"a": [1, {"b": null}]}`, "list_all_product_types", "\xff{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		call, err := parseToolCall(s)
		if err != nil {
			return
		}
		if call.name == "" || call.args == nil {
			t.Fatalf("%q parsed to %+v", s, call)
		}
		if spec := findTool(call.name); spec != nil && call.args.checkKeys(spec) == nil && isWriteTool(call.name) {
			_, _ = parseWriteCall(call.name, call.args)
		}
	})
}

func FuzzCalculate(f *testing.F) {
	for _, s := range []string{"1+2", "(3.5*2)/7", "-(-(1))", "1/0", "((((", "9e999", "1.2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := evaluate(s)
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("%q = %v without an error", s, v)
		}
	})
}

// FuzzStep feeds arbitrary text to an episode: it must never panic, and
// text that is not a tool call must be an invalid action.
func FuzzStep(f *testing.F) {
	for _, s := range []string{
		`Action: respond{"content": "What is your email?"}`,
		`Action: get_order_details{"order_id": "#W0000000"}`,
		`Action: cancel_pending_order{"order_id": "#W1", "reason": "no longer needed"}`,
		`Action: modify_pending_order_items{"order_id": "#W1", "item_ids": ["1"], "new_item_ids": [], "payment_method_id": ""}`,
		`Thought: hm. Action: calculate{"expression": "((1)"}`,
		"Action: respond{\"content\": \"\\u0000\"}",
		"",
	} {
		f.Add(s, int64(1))
	}
	f.Fuzz(func(t *testing.T, s string, seed int64) {
		e := New().(*Env)
		if _, err := e.Reset(envs.Splits[uint64(seed)%3], seed); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			res, err := e.Step(s)
			if err != nil {
				t.Fatal(err)
			}
			if _, perr := parseToolCall(envs.ParseAction(s)); perr != nil && res.Info.ValidAction {
				t.Fatalf("%q: unparsable action counted as valid", s)
			}
			if res.Done {
				return
			}
		}
	})
}
