package tauretail

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
)

func newEnv(t testing.TB, split envs.Split, seed int64) *Env {
	t.Helper()
	e := New().(*Env)
	if _, err := e.Reset(split, seed); err != nil {
		t.Fatal(err)
	}
	return e
}

func expertAction(t testing.TB, e *Env) string {
	t.Helper()
	a, err := e.ExpertAction()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func step(t testing.TB, e *Env, action string) envs.StepResult {
	t.Helper()
	res, err := e.Step("Thought: next.\nAction: " + action)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// runExpert plays the expert to the end and returns the transcript and the
// last step.
func runExpert(t testing.TB, e *Env, first string) (string, envs.StepResult) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString(first)
	for {
		a := expertAction(t, e)
		res := step(t, e, a)
		fmt.Fprintf(&sb, "\n> %s\n%s", a, res.Observation)
		if res.Done {
			return sb.String(), res
		}
	}
}

// findEpisode returns the first seed of split whose task satisfies ok.
func findEpisode(t testing.TB, split envs.Split, ok func(*task) bool) (*Env, string) {
	t.Helper()
	for seed := int64(0); seed < 5000; seed++ {
		e := New().(*Env)
		first, err := e.Reset(split, seed)
		if err != nil {
			t.Fatal(err)
		}
		if ok(e.task) {
			return e, first
		}
	}
	t.Fatal("no episode found")
	return nil, ""
}

func onlyGoal(kind goalKind, extra func(*goal) bool) func(*task) bool {
	return func(tk *task) bool {
		return len(tk.goals) == 1 && tk.goals[0].kind == kind && (extra == nil || extra(tk.goals[0]))
	}
}

func TestSpec(t *testing.T) {
	s := New().Spec()
	if s.Name != "tauretail" || s.MaxSteps != maxSteps || s.RewardMin != 0 || s.RewardMax != 1 {
		t.Errorf("spec = %+v", s)
	}
	if !slices.Equal(s.Splits, envs.Splits) {
		t.Errorf("splits = %v", s.Splits)
	}
	for _, tool := range toolSpecs {
		if !strings.Contains(s.Instruction, "- "+tool.name+"{") {
			t.Errorf("instruction does not document %s", tool.name)
		}
	}
	for _, want := range []string{`Action: respond{"content": `, "confirm", "no longer needed", "ordered by mistake", "gift card"} {
		if !strings.Contains(s.Instruction, want) {
			t.Errorf("instruction lacks %q", want)
		}
	}
}

func TestStepErrors(t *testing.T) {
	e := New().(*Env)
	if _, err := e.Step("Action: think{}"); err == nil {
		t.Error("step before reset: no error")
	}
	if _, err := e.ExpertAction(); err == nil {
		t.Error("expert before reset: no error")
	}
	if _, err := e.Reset("validation", 1); err == nil {
		t.Error("unknown split: no error")
	}
	e = newEnv(t, envs.Train, 1)
	res := step(t, e, `transfer_to_human_agents{"summary": "help"}`)
	if !res.Done || res.Observation != "Transfer successful" {
		t.Fatalf("transfer: %+v", res)
	}
	if _, err := e.Step("Action: think{}"); err == nil {
		t.Error("step after done: no error")
	}
	if _, err := e.ExpertAction(); err == nil {
		t.Error("expert after done: no error")
	}
}

func TestDeterminism(t *testing.T) {
	transcripts := map[string]int64{}
	for seed := int64(0); seed < 40; seed++ {
		a, _ := runExpert(t, newEnv(t, envs.Train, seed), "")
		e := New().(*Env)
		first, _ := e.Reset(envs.Train, seed)
		b, _ := runExpert(t, e, "")
		if a != b {
			t.Fatalf("seed %d: two runs differ:\n%s\n---\n%s", seed, a, b)
		}
		b = first + b
		if other, dup := transcripts[b]; dup {
			t.Fatalf("seeds %d and %d give the same episode", other, seed)
		}
		transcripts[b] = seed
	}
}

func TestResetStartsClean(t *testing.T) {
	e := newEnv(t, envs.Test, 5)
	runExpert(t, e, "")
	first, _ := e.Reset(envs.Test, 9)
	again, _ := runExpert(t, e, first)
	fresh := New().(*Env)
	first2, _ := fresh.Reset(envs.Test, 9)
	want, _ := runExpert(t, fresh, first2)
	if again != want {
		t.Error("an episode after another differs from the same episode in a fresh environment")
	}
}

func TestSplits(t *testing.T) {
	held := map[goalKind]bool{}
	for _, k := range unseenGoalKinds {
		held[k] = true
	}
	unseenProducts := 0
	for seed := int64(0); seed < 300; seed++ {
		train, test, unseen := newEnv(t, envs.Train, seed), newEnv(t, envs.Test, seed), newEnv(t, envs.Unseen, seed)
		if train.task.user.ID == test.task.user.ID && train.task.user.Email == test.task.user.Email {
			t.Errorf("seed %d: train and test episodes have the same user", seed)
		}
		for _, e := range []*Env{train, test} {
			for _, k := range e.task.kinds() {
				if held[k] {
					t.Errorf("seed %d: held-out goal %v in a seen split", seed, k)
				}
			}
			for _, o := range e.db.Orders {
				for _, it := range o.Items {
					if catalog().Product(it.ProductID).HeldOut {
						t.Errorf("seed %d: held-out product %s in a seen split", seed, it.Name)
					}
				}
			}
		}
		if !held[unseen.task.goals[0].kind] {
			t.Errorf("seed %d: unseen task starts with %v", seed, unseen.task.goals[0].kind)
		}
		for _, o := range unseen.db.Orders {
			for _, it := range o.Items {
				if catalog().Product(it.ProductID).HeldOut {
					unseenProducts++
				}
			}
		}
	}
	if unseenProducts == 0 {
		t.Error("held-out products never appear in the unseen split")
	}
}

func TestExpertSucceedsOnEverySplit(t *testing.T) {
	const episodes = 250
	for _, split := range envs.Splits {
		kinds := map[goalKind]int{}
		for seed := int64(0); seed < episodes; seed++ {
			e := New().(*Env)
			first, err := e.Reset(split, seed)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range e.task.kinds() {
				kinds[k]++
			}
			transcript, res := runExpert(t, e, first)
			if !res.Info.Success || res.Reward != 1 || res.Info.Score != 1 {
				t.Fatalf("%s seed %d: expert failed (%v):\n%s", split, seed, res.Info.Extra, transcript)
			}
			if v := res.Info.Extra["policy_violations"]; v != 0 {
				t.Errorf("%s seed %d: expert broke the policy %v times", split, seed, v)
			}
			if e.steps > 25 {
				t.Errorf("%s seed %d: expert took %d steps", split, seed, e.steps)
			}
		}
		want := seenGoalKinds
		if split == envs.Unseen {
			want = slices.Concat(seenGoalKinds, unseenGoalKinds)
		}
		for _, k := range want {
			if kinds[k] == 0 {
				t.Errorf("%s: goal %v never drawn", split, k)
			}
		}
	}
}

// randomAction writes a well-formed call of a random tool with arguments
// drawn from the episode's ids, or a random message.
func randomAction(rng *rand.Rand, e *Env) string {
	u := e.task.user
	var orderIDs, itemIDs []string
	for _, o := range e.db.Orders {
		orderIDs = append(orderIDs, o.ID)
		for _, it := range o.Items {
			itemIDs = append(itemIDs, it.ItemID)
		}
	}
	slices.Sort(orderIDs)
	slices.Sort(itemIDs)
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	order, item, other := pick(orderIDs), pick(itemIDs), pick(itemIDs)
	pm := u.PaymentMethods[rng.IntN(len(u.PaymentMethods))].ID
	messages := []string{"Hello, how can I help?", "Could you tell me more?", "Please wait a moment.",
		"Can you confirm the order id and your email?", "What would you like to do?", "Sure."}
	switch rng.IntN(12) {
	case 0, 1, 2:
		return respondAction(pick(messages))
	case 3:
		return callAction(toolFindByEmail, "email", u.Email)
	case 4:
		return callAction(toolUserDetails, "user_id", u.ID)
	case 5:
		return callAction(toolOrderDetails, "order_id", order)
	case 6:
		return callAction(toolCancel, "order_id", order, "reason", pick([]string{reasonMistake, reasonNoLongerNeeded}))
	case 7:
		return fmt.Sprintf(`%s{"order_id": %q, "item_ids": [%q], "new_item_ids": [%q], "payment_method_id": %q}`, toolModifyItems, order, item, other, pm)
	case 8:
		return fmt.Sprintf(`%s{"order_id": %q, "item_ids": [%q], "payment_method_id": %q}`, toolReturn, order, item, pm)
	case 9:
		return fmt.Sprintf(`%s{"order_id": %q, "item_ids": [%q], "new_item_ids": [%q], "payment_method_id": %q}`, toolExchange, order, item, other, pm)
	case 10:
		return toolListProductTypes + "{}"
	}
	return callAction(toolTransfer, "summary", "The user needs help.")
}

func TestRandomPolicyScoresNearZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, split := range envs.Splits {
		var total float64
		const episodes = 300
		for seed := int64(0); seed < episodes; seed++ {
			e := newEnv(t, split, seed)
			for {
				res := step(t, e, randomAction(rng, e))
				if res.Done {
					total += res.Reward
					break
				}
			}
		}
		mean := total / episodes
		t.Logf("%s: random policy scores %.3f", split, mean)
		if mean > 0.03 {
			t.Errorf("%s: random policy scores more than 0.03", split)
		}
	}
}

func TestInvalidActions(t *testing.T) {
	garbage := []string{
		"",
		"   \n\t ",
		strings.Repeat("a", 1<<20),
		strings.Repeat("{", 100000),
		"こんにちは 🙂 respond",
		"Action: respond{",
		`Action: respond{"content": "hi"`,
		`Action: respond{"content": "hi"} trailing`,
		`Action: respond["hi"]`,
		`Action: {"content": "hi"}`,
		`Action: fly_to_moon{}`,
		`Action: respond{"content": ""}`,
		`Action: respond{"content": "   "}`,
		`Action: respond{"text": "hi"}`,
		`Action: respond{"content": ["a", 1]}`,
		`Action: respond{"content": null}`,
		`Action: cancel_pending_order{"order_id": "#W1234567"}`,
		`Action: modify_pending_order_items{"order_id": "#W1", "item_ids": "1", "new_item_ids": ["2"], "payment_method_id": "x"}`,
		`Action: return_delivered_order_items{"order_id": "#W1", "item_ids": [{}], "payment_method_id": "x"}`,
		`Action: modify_user_address{"user_id": "u", "address1": "a"}`,
		`Action: find_user_id_by_name_zip{"first_name": "A", "last_name": "B"}`,
		"Action: \x00\xff\xfe",
		"Action: ((((((",
		"\xf1ACtion: respond{\"content\": hi}",
		"Action: get_order_details{\"order_id\": \"\xff\"",
	}
	for _, g := range garbage {
		e := newEnv(t, envs.Train, 3)
		res, err := e.Step(g)
		if err != nil {
			t.Fatalf("%.40q: %v", g, err)
		}
		if res.Info.ValidAction || res.Done {
			t.Errorf("%.40q: valid=%v done=%v obs=%q", g, res.Info.ValidAction, res.Done, res.Observation)
		}
		if !strings.HasPrefix(res.Observation, "Invalid action: ") || !strings.Contains(res.Observation, "respond") {
			t.Errorf("%.40q: uninformative observation %q", g, res.Observation)
		}
		if e.steps != 1 {
			t.Errorf("%.40q: invalid action did not count as a step", g)
		}
	}
}

func TestToleratedSpellings(t *testing.T) {
	for _, a := range []string{
		`Get_User_Details { "user_id": "nobody" }`,
		`get_user_details({"user_id": "nobody"})`,
		"`get_user_details{\"user_id\": \"nobody\"}`",
	} {
		e := newEnv(t, envs.Train, 3)
		res := step(t, e, a)
		if !res.Info.ValidAction || res.Observation != "Error: user not found" {
			t.Errorf("%s: %+v", a, res)
		}
	}
	e := newEnv(t, envs.Train, 3)
	if res := step(t, e, "list_all_product_types"); !res.Info.ValidAction || !strings.HasPrefix(res.Observation, `{"Air Purifier"`) {
		t.Errorf("tool without braces: %+v", res)
	}
	if res := step(t, e, `get_product_details{"product_id": `+catalog().Products[0].ProductID+`}`); !res.Info.ValidAction ||
		!strings.Contains(res.Observation, `"name": "T-Shirt"`) {
		t.Errorf("unquoted number argument: %+v", res)
	}
}

func TestEpisodeEndsAtMaxSteps(t *testing.T) {
	e := newEnv(t, envs.Train, 8)
	for i := 1; i <= maxSteps; i++ {
		res := step(t, e, "nonsense")
		if res.Done != (i == maxSteps) {
			t.Fatalf("step %d: done=%v", i, res.Done)
		}
		if res.Done && (res.Reward != 0 || res.Info.Success || res.Info.Extra == nil) {
			t.Errorf("last step: %+v", res)
		}
	}
}

// runUntil plays the expert until the expert's next action satisfies stop,
// and returns that action without taking it.
func runUntil(t *testing.T, e *Env, stop func(string) bool) string {
	t.Helper()
	for {
		a := expertAction(t, e)
		if stop(a) {
			return a
		}
		if res := step(t, e, a); res.Done {
			t.Fatal("episode ended early")
		}
	}
}

func isTool(name string) func(string) bool {
	return func(a string) bool { return strings.HasPrefix(a, name+"{") }
}

func TestRewardRightWrite(t *testing.T) {
	e, _ := findEpisode(t, envs.Train, onlyGoal(goalModifyItems, nil))
	step(t, e, runUntil(t, e, isTool(toolModifyItems)))
	res := step(t, e, `transfer_to_human_agents{"summary": "done"}`)
	if !res.Done || res.Reward != 1 || !res.Info.Success {
		t.Errorf("the gold write then a transfer: %+v", res)
	}
}

func TestRewardWrongVariant(t *testing.T) {
	e, _ := findEpisode(t, envs.Train, onlyGoal(goalModifyItems, func(g *goal) bool { return len(g.changes) == 1 }))
	g := e.task.goals[0]
	runUntil(t, e, isTool(toolModifyItems))
	var wrong string
	for _, v := range catalog().Product(g.changes[0].old.ProductID).Variants {
		if v.Available && v.ItemID != g.changes[0].old.ItemID && v.ItemID != g.changes[0].newVariant.ItemID {
			wrong = v.ItemID
			break
		}
	}
	if wrong == "" {
		t.Skip("product has no third available variant")
	}
	w := *g.gold
	w.newItemIDs = []string{wrong}
	if res := step(t, e, w.action()); strings.HasPrefix(res.Observation, "Error") {
		t.Fatalf("wrong variant refused: %s", res.Observation)
	}
	res := step(t, e, `transfer_to_human_agents{"summary": "done"}`)
	if res.Reward != 0 || res.Info.Success || res.Info.Extra["db_match"] != false {
		t.Errorf("wrong variant: %+v", res)
	}
}

func TestRewardExtraWrite(t *testing.T) {
	e, first := findEpisode(t, envs.Train, onlyGoal(goalCancel, nil))
	step(t, e, runUntil(t, e, isTool(toolCancel)))
	extra := writeCall{tool: toolUserAddress, userID: e.task.user.ID, address: Address{"1 New Road", "", "Austin", "TX", "USA", "78701"}}
	if res := step(t, e, extra.action()); strings.HasPrefix(res.Observation, "Error") {
		t.Fatalf("extra write refused: %s", res.Observation)
	}
	transcript, res := runExpert(t, e, first)
	if !strings.Contains(transcript, stopToken) {
		t.Fatalf("user did not end the conversation:\n%s", transcript)
	}
	if res.Reward != 0 || res.Info.Extra["db_match"] != false || res.Info.Extra["policy_violations"] != 1 {
		t.Errorf("extra write: %+v", res)
	}
}

func TestRewardMissingInformation(t *testing.T) {
	e, _ := findEpisode(t, envs.Train, onlyGoal(goalOrderStatus, nil))
	runUntil(t, e, func(a string) bool { return strings.Contains(a, "is currently") })
	step(t, e, respondAction("I have looked at your order."))
	res := step(t, e, `transfer_to_human_agents{"summary": "status question"}`)
	if res.Reward != 0 || res.Info.Extra["db_match"] != true || res.Info.Extra["outputs_said"] != false {
		t.Errorf("information not given: %+v", res)
	}

	e, _ = findEpisode(t, envs.Train, onlyGoal(goalOrderStatus, nil))
	res = step(t, e, respondAction("Your order is "+strings.ToUpper(e.task.goals[0].output)+"."))
	if !res.Done || res.Reward != 1 {
		t.Errorf("information given (in capitals): %+v", res)
	}

	// Every status at once answers no status question.
	e, _ = findEpisode(t, envs.Train, onlyGoal(goalOrderStatus, nil))
	res = step(t, e, respondAction("Your order is pending, processed, delivered or cancelled."))
	if res.Done || res.Reward != 0 || e.task.goals[0].told {
		t.Errorf("every status listed: %+v, told %v; want the question unanswered", res, e.task.goals[0].told)
	}
}

// TestOnlyAskedQuestionsAreAnswered: information the user has not asked
// for yet (a later goal's) does not answer that goal when it comes up.
func TestOnlyAskedQuestionsAreAnswered(t *testing.T) {
	e, _ := findEpisode(t, envs.Train, func(tk *task) bool { return len(tk.goals) == 2 && tk.goals[1].output != "" })
	later := e.task.goals[1]
	e.respond("By the way: " + later.output + ".")
	if later.told {
		t.Fatalf("goal 2's %q counted before the user asked", later.output)
	}
	e.customer.introduced = 2
	e.respond("By the way: " + later.output + ".")
	if !later.told {
		t.Fatalf("goal 2's %q not counted once asked", later.output)
	}
}

func TestOutputMatchIgnoresThousandsSeparators(t *testing.T) {
	e, _ := findEpisode(t, envs.Train, onlyGoal(goalOrderTotal, nil))
	g := e.task.goals[0]
	g.output = "1234.50"
	e.respond("That comes to $1,234.5 in total.")
	if g.told {
		t.Error("1234.5 counted as 1234.50")
	}
	e.respond("That comes to $1,234.50 in total.")
	if !g.told {
		t.Error("1,234.50 not counted as 1234.50")
	}
}

func TestRunningOutOfStepsScoresZero(t *testing.T) {
	e, _ := findEpisode(t, envs.Train, onlyGoal(goalCancel, nil))
	step(t, e, runUntil(t, e, isTool(toolCancel)))
	var res envs.StepResult
	for !res.Done {
		res = step(t, e, `think{"thought": "waiting"}`)
	}
	if e.steps != maxSteps || res.Reward != 0 || res.Info.Extra["db_match"] != true {
		t.Errorf("steps=%d %+v", e.steps, res)
	}
}

func TestUnconfirmedWriteIsAViolation(t *testing.T) {
	e, first := findEpisode(t, envs.Train, onlyGoal(goalCancel, nil))
	g := e.task.goals[0]
	runUntil(t, e, func(string) bool { return g.allRevealed() && slices.Contains(e.fetchedOrders, g.orderID) })
	step(t, e, g.gold.action()) // instead of the summary
	_, res := runExpert(t, e, first)
	// Like the original benchmark, the reward looks at the database only.
	if res.Reward != 1 || res.Info.Extra["policy_violations"] != 1 {
		t.Errorf("write without a yes: %+v", res)
	}
}
