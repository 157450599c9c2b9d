package tauretail

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/envtest"
)

func TestCanonical(t *testing.T) {
	e := New().(*Env)
	same := map[string][]string{
		`respond{"content": "hello, how can i help?"}`: {`respond{"content": "Hello, how can I help?"}`,
			`Respond ( {"content":"HELLO, HOW CAN I HELP?"} )`, "Thought: greet.\nAction: respond{\"content\": \"Hello, how can I help?\"}"},
		`find_user_id_by_email{"email": "jane.doe12@example.com"}`: {`find_user_id_by_email{"email": " Jane.Doe12@Example.com "}`,
			`FIND_USER_ID_BY_EMAIL {"email":"jane.doe12@example.com"}`},
		`find_user_id_by_name_zip{"first_name": "jane", "last_name": "doe", "zip": "62704"}`: {
			`find_user_id_by_name_zip{"first_name": "Jane", "last_name": "Doe", "zip": "62704"}`,
			`find_user_id_by_name_zip{"zip": 62704, "last_name": "DOE ", "first_name": " jane"}`,
			`find_user_id_by_name_zip({"zip": 62704.0, "first_name": "JANE", "last_name": "doe"})`},
		`get_order_details{"order_id": "#W0000001"}`: {`get_order_details{"order_id": "#W0000001"}`,
			`get_order_details {  "order_id" :	"#W0000001" }`,
			`get_order_details{"order_id": "#W0000002", "order_id": "#W0000001"}`},
		`get_product_details{"product_id": "1234567890"}`: {`get_product_details{"product_id": 1234567890}`, `get_product_details{"product_id": "1234567890"}`},
		`list_all_product_types{}`:                        {"list_all_product_types", "List_All_Product_Types()", "list_all_product_types{ }"},
		`calculate{"expression": "67.49"}`: {`calculate{"expression": "54.99 + 12.50"}`, `calculate{"expression": "(54.99+12.5)"}`,
			`calculate{"expression": "67.49"}`, `calculate{"expression": "134.98 / 2"}`},
		`think{"thought": ""}`:                    {`think{"thought": "The order is pending."}`, `think{"thought": 42}`},
		`transfer_to_human_agents{"summary": ""}`: {`transfer_to_human_agents{"summary": "Dispute."}`},
		`cancel_pending_order{"order_id": "#W0000001", "reason": "no longer needed"}`: {
			`cancel_pending_order{"reason": "no longer needed", "order_id": "#W0000001"}`},
		`cancel_pending_order{"order_id": "#W0000001", "reason": ""}`: {
			`cancel_pending_order{"order_id": "#W0000001", "reason": "No longer needed"}`,
			`cancel_pending_order{"order_id": "#W0000001", "reason": "changed my mind"}`},
		`return_delivered_order_items{"order_id": "#W0000001", "item_ids": ["1", "2"], "payment_method_id": "gift_card_1"}`: {
			`return_delivered_order_items{"payment_method_id": "gift_card_1", "item_ids": ["2", "1"], "order_id": "#W0000001"}`,
			`return_delivered_order_items{"order_id": "#W0000001", "item_ids": [2, 1], "payment_method_id": "gift_card_1"}`},
		`modify_pending_order_items{"order_id": "#W1", "item_ids": ["1", "2"], "new_item_ids": ["3", "4"], "payment_method_id": "paypal_1"}`: {
			`modify_pending_order_items{"payment_method_id":"paypal_1","new_item_ids":["3","4"],"item_ids":["1","2"],"order_id":"#W1"}`},
		`modify_user_address{"user_id": "jane_doe_1", "address1": "12 Elm Street", "address2": "", "city": "Springfield", "state": "IL", "country": "USA", "zip": "62704"}`: {
			`modify_user_address{"user_id": "jane_doe_1", "address1": "12 Elm Street", "city": "Springfield", "state": "IL", "country": "USA", "zip": 62704}`},
	}
	// An expression the tool cannot evaluate stands for its error; that form
	// is a valid call, though of another error.
	for _, a := range []string{`calculate{"expression": "1/0"}`, `calculate{"expression": "2 / (1-1)"}`} {
		if got, want := e.Canonical(a), `calculate{"expression": "Error: division by zero"}`; got != want {
			t.Errorf("Canonical(%q) = %q, want %q", a, got, want)
		}
	}
	differ := [][2]string{
		// The user reads messages by substrings, spaces included.
		{`respond{"content": "how will you pay?"}`, `respond{"content": "how will you  pay?"}`},
		{`get_order_details{"order_id": "#W0000001"}`, `get_order_details{"order_id": "#w0000001"}`},
		{`get_order_details{"order_id": "#W0000001"}`, `get_order_details{"order_id": " #W0000001"}`},
		{`find_user_id_by_name_zip{"first_name": "Jane", "last_name": "Doe", "zip": "62704"}`, `find_user_id_by_name_zip{"first_name": "Jane", "last_name": "Doe", "zip": "62705"}`},
		{`find_user_id_by_email{"email": "İ@example.com"}`, `find_user_id_by_email{"email": "i@example.com"}`},
		{`calculate{"expression": "1 + 1"}`, `calculate{"expression": "1 + 2"}`},
		{`calculate{"expression": "1/0"}`, `calculate{"expression": "1 +"}`},
		{`modify_pending_order_items{"order_id": "#W1", "item_ids": ["1", "2"], "new_item_ids": ["3", "4"], "payment_method_id": "paypal_1"}`,
			`modify_pending_order_items{"order_id": "#W1", "item_ids": ["2", "1"], "new_item_ids": ["4", "3"], "payment_method_id": "paypal_1"}`},
		{`modify_user_address{"user_id": "u", "address1": "12 Elm Street", "address2": "", "city": "X", "state": "IL", "country": "USA", "zip": "1"}`,
			`modify_user_address{"user_id": "u", "address1": "12 elm street", "address2": "", "city": "X", "state": "IL", "country": "USA", "zip": "1"}`},
		{`think{"thought": "x"}`, `respond{"content": "x"}`},
		// Invalid calls stay themselves.
		{`respond{"content": " "}`, `respond{"content": ""}`},
		{`get_order_details{}`, `get_order_details{ }`},
		{`get_order_details{"order": "#W1"}`, `get_order_details{"id": "#W1"}`},
		{`fly{}`, `swim{}`},
		{`respond{"content": "hi"`, `respond{"content": "hi"}}`},
	}
	envtest.CheckCanonical(t, e, same, differ)
	envtest.CheckCanonicalRejected(t, e, `respond{"content": ""}`, `get_order_details{}`, `think{"thought": ["a"]}`, `fly{}`, `{"content": "hi"}`,
		"Thought: hmm\nAction:  respond{\"content\": hi} ", "Action: ` fly{} `")
}

func TestFoldCaseMatchesEqualFold(t *testing.T) {
	words := []string{"k", "K", "\u212a", "s", "S", "\u017f", "İ", "i", "I", "ı", "ß", "ẞ", "Σ", "σ", "ς", "Ǆ", "ǅ", "ǆ", "Jane", "JANE", "é", "É", "ﬀ", ""}
	for _, a := range words {
		for _, b := range words {
			if got, want := foldCase(a) == foldCase(b), strings.EqualFold(a, b); got != want {
				t.Errorf("foldCase(%q) == foldCase(%q) is %v, strings.EqualFold %v", a, b, got, want)
			}
		}
	}
}

// TestCanonicalActionsActAlike plays the expert and, before each of its
// calls, steps rewritings of it in copies of the state, comparing the
// observations, the outcome and the expert's next action.
func TestCanonicalActionsActAlike(t *testing.T) {
	for seed := range int64(6) {
		e := newEnv(t, envs.Train, seed)
		var path []string
		for !e.done {
			a := expertAction(t, e)
			path = append(path, a)
			step(t, e, a)
		}
		for i, a := range path {
			for _, b := range rewriteCall(t, a) {
				if !envs.Equivalent(e, a, b) {
					t.Errorf("seed %d: %q and its rewriting %q are not equivalent", seed, a, b)
					continue
				}
				x, y := newEnv(t, envs.Train, seed), newEnv(t, envs.Train, seed)
				for _, p := range path[:i] {
					step(t, x, p)
					step(t, y, p)
				}
				rx, ry := step(t, x, a), step(t, y, b)
				if rx.Observation != ry.Observation || rx.Info.ValidAction != ry.Info.ValidAction || rx.Reward != ry.Reward || rx.Done != ry.Done {
					t.Errorf("seed %d step %d: %q and %q act differently:\n%s\n---\n%s", seed, i, a, b, rx.Observation, ry.Observation)
				} else if !rx.Done && expertAction(t, x) != expertAction(t, y) {
					t.Errorf("seed %d step %d: after %q and %q the expert goes on differently", seed, i, a, b)
				}
			}
		}
	}
}

// rewriteCall gives forms of a tool call the environment acts on alike:
// another case for the name (and for a message), the keys in reverse order
// with other spacing, parentheses, digit-only values unquoted, return's
// items in another order.
func rewriteCall(t *testing.T, a string) []string {
	call, err := parseToolCall(a)
	if err != nil {
		t.Fatalf("the expert's %q: %v", a, err)
	}
	keys := make([]string, 0, len(call.args))
	for k := range call.args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Reverse(keys)
	var b strings.Builder
	b.WriteString(strings.ToUpper(call.name) + " ( {")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ,\t")
		}
		v := call.args[k]
		if s, ok := v.(string); ok && s != "" && strings.Trim(s, "0123456789") == "" && s[0] != '0' {
			v = json.Number(s)
		}
		if list, ok := v.([]any); ok && call.name == toolReturn {
			v = slices.Clone(list)
			slices.Reverse(v.([]any))
		}
		kj, _ := json.Marshal(k)
		vj, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(" " + string(kj) + " :  " + string(vj))
	}
	b.WriteString(" } )")
	out := []string{b.String(), "Thought: next.\nAction:   " + a + "  "}
	if call.name == toolRespond {
		content, _ := call.args.str("content")
		out = append(out, respondAction(asciiUpper(content)))
	}
	return out
}

func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// FuzzCanonicalActsAlike steps a text and its canonical form in copies of an
// episode: a valid call's canonical form is a valid call with the same
// effect. Two kinds of canonical forms are left out: a message containing
// "action:", which ParseAction would cut when the form is stepped as a
// model's text, and a refused calculation, whose form names the error.
func FuzzCanonicalActsAlike(f *testing.F) {
	for _, s := range []string{`Respond({"content": "Could you give me your EMAIL?"})`, `calculate{"expression": " (1 + 2) * 3"}`,
		`find_user_id_by_name_zip{"zip": 12345, "first_name": "A", "last_name": "B"}`, `think{"thought": 1}`, `list_all_product_types`,
		`cancel_pending_order{"order_id": "#W1", "reason": "No"}`, `modify_user_address{"user_id": "x", "zip": 1, "address1": "a", "city": "c", "state": "s", "country": "k"}`} {
		f.Add(int64(0), s)
	}
	f.Fuzz(func(t *testing.T, seed int64, x string) {
		a, b := newEnv(t, envs.Train, seed&7), newEnv(t, envs.Train, seed&7)
		c := a.Canonical(x)
		if envs.ParseAction(c) != c || strings.Contains(c, `{"expression": "Error: `) {
			return
		}
		ra, err := a.Step(x)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Step(c)
		if err != nil {
			t.Fatal(err)
		}
		if ra.Info.ValidAction && (ra.Observation != rb.Observation || !rb.Info.ValidAction || ra.Done != rb.Done || a.violations != b.violations) {
			t.Fatalf("%q and its canonical form %q act differently: %q / %q", x, c, ra.Observation, rb.Observation)
		}
	})
}
