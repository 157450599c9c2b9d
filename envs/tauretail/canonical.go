package tauretail

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentrl/agentrl/envs"
)

var _ envs.Canonicalizer = (*Env)(nil)

// Canonical returns the tool call as the environment acts on it, written
// the way the expert writes calls: tool{"key": "value", ...} with the
// tool's name in lower case, its arguments in the tool's parameter order,
// every value a JSON string (numbers as the tools read them: 62704.0 is
// "62704"), so key order, spacing, parentheses around the arguments and
// quoting of numbers do not matter. Values are compared as the tools use
// them:
//
//   - respond: the content in lower case, exactly (the user reads it in lower
//     case, spacing included);
//   - find_user_id_by_email: the email trimmed and case-folded;
//     find_user_id_by_name_zip: the names trimmed and case-folded, the zip
//     trimmed;
//   - get_*_details: the id exactly;
//   - calculate: the tool's output stands for the expression, as nothing
//     else of it is shown or kept: calculate{"expression": "5"} for "2 + 3",
//     calculate{"expression": "Error: division by zero"} for "1/0" (a valid
//     call, though not one that fails alike);
//   - think and transfer_to_human_agents: the text is ignored;
//   - write tools: ids and addresses exactly, a missing address2 as "",
//     return's item_ids sorted (it stores and checks them as a multiset),
//     modify's and exchange's item lists in their order (pairs old/new, and
//     the order decides which duplicate is changed and which error is
//     shown), and every cancellation reason but the two valid ones as "",
//     since all are refused alike.
//
// A call the environment rejects (no tool name, bad JSON, an unknown tool
// or argument, a missing or mistyped argument, an empty respond) canonicalises
// to itself, parsed and trimmed.
func (e *Env) Canonical(action string) string {
	text := strings.TrimSpace(envs.ParseAction(action)) // ParseAction may leave spaces inside quotes
	if c, ok := canonicalCall(text); ok {
		return c
	}
	return text
}

// canonicalCall mirrors act's parsing and validation; ok is false where act
// answers invalid.
func canonicalCall(action string) (string, bool) {
	call, err := parseToolCall(action)
	if err != nil {
		return "", false
	}
	spec := findTool(call.name)
	if spec == nil || call.args.checkKeys(spec) != nil {
		return "", false
	}
	if isWriteTool(call.name) {
		w, err := parseWriteCall(call.name, call.args)
		if err != nil {
			return "", false
		}
		switch w.tool {
		case toolReturn:
			w.itemIDs = sortedCopy(w.itemIDs)
		case toolCancel:
			if w.reason != reasonNoLongerNeeded && w.reason != reasonMistake {
				w.reason = ""
			}
		}
		return w.action(), true
	}
	var arg string
	if len(spec.params) == 1 {
		if arg, err = call.args.str(spec.params[0]); err != nil {
			return "", false
		}
	}
	switch call.name {
	case toolRespond:
		if strings.TrimSpace(arg) == "" {
			return "", false
		}
		return respondAction(strings.ToLower(arg)), true
	case toolFindByEmail:
		return callAction(call.name, "email", foldCase(strings.TrimSpace(arg))), true
	case toolFindByNameZip:
		first, err1 := call.args.str("first_name")
		last, err2 := call.args.str("last_name")
		zip, err3 := call.args.str("zip")
		if err1 != nil || err2 != nil || err3 != nil {
			return "", false
		}
		return callAction(call.name, "first_name", foldCase(strings.TrimSpace(first)),
			"last_name", foldCase(strings.TrimSpace(last)), "zip", strings.TrimSpace(zip)), true
	case toolUserDetails, toolOrderDetails, toolProductDetails:
		return callAction(call.name, spec.params[0], arg), true
	case toolListProductTypes:
		return call.name + "{}", true
	case toolCalculate:
		out := "Error: "
		if v, err := evaluate(arg); err != nil {
			out += err.Error()
		} else {
			out = formatResult(v)
		}
		return callAction(call.name, "expression", out), true
	case toolThink, toolTransfer:
		return callAction(call.name, spec.params[0], ""), true
	}
	return "", false
}

// foldCase maps s to one representative of the strings strings.EqualFold
// holds equal to it: each rune becomes the smallest rune of its simple
// case-folding orbit, ASCII letters then in lower case ("K", "k" and the
// Kelvin sign are all "k"; "İ", alone in its orbit, stays apart from "i").
func foldCase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r >= utf8.RuneSelf {
			least := r
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				least = min(least, f)
			}
			r = least
		}
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
