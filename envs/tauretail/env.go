// Package tauretail simulates tau-bench retail (Yao et al. 2024): a
// customer-service agent helps a simulated user through tools over a store's
// database (users, orders, products), following a written domain policy.
//
// Each episode generates a small database and a hidden user goal from its
// seed: cancel or modify a pending order, return or exchange delivered
// items, change an address, or ask for an order's status, its total or a
// product's price. The rule-based user reveals the details of its goal only
// when asked and approves a write only when the agent has stated all of its
// arguments. As in the original benchmark the reward is 1 only if the final
// database equals the database the gold writes produce and every piece of
// information the user asked for was said to them; policy violations that
// leave the database right go unpunished, as there.
package tauretail

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"

	"github.com/agentrl/agentrl/envs"
)

// maxSteps bounds an episode: each agent action (tool call or message) is a
// step.
const maxSteps = 30

// Streams of the random source: train and test share one and differ in the
// task index drawn from the seed; unseen has its own.
const (
	seenStream   = 0x7a0_5eed
	unseenStream = 0x7a0_0dd
)

// Env is one tau-bench retail episode at a time. It implements envs.Env
// and envs.Expert.
type Env struct {
	pcg *rand.PCG
	rng *rand.Rand // draws the episode, then the user's phrasing
	ids idSet      // ids given out in the episode

	// The database is compared record by record: only records that a gold
	// write or one of the agent's writes touched can differ between the
	// final and the goal database.
	db       *Database // the episode's database, which the agent's writes change
	goal     *Database // the records the gold writes touch, after them
	before   *Database // the records the agent's writes touched, before them
	task     *task
	customer customer

	steps int
	done  bool
	buf   []byte // scratch space for JSON observations

	// What the agent has done so far, for the expert and the diagnostics.
	authenticated      bool // a lookup returned the id of the user talking
	userDetailsFetched bool
	productsListed     bool
	fetchedOrders      []string
	fetchedProducts    []string
	violations         int // lookups or writes before authentication, writes without a yes
}

var (
	_ envs.Env    = (*Env)(nil)
	_ envs.Expert = (*Env)(nil)
)

// New returns an environment; call Reset before Step.
func New() envs.Env {
	pcg := rand.NewPCG(0, 0)
	return &Env{pcg: pcg, rng: rand.New(pcg), ids: newIDSet()}
}

// Spec describes the environment.
func (e *Env) Spec() envs.Spec {
	return envs.Spec{
		Name:        "tauretail",
		Description: "tau-bench retail: a customer-service agent with tools over a store database, a written policy and a simulated user with a hidden goal",
		Instruction: instruction,
		MaxSteps:    maxSteps,
		RewardMin:   0,
		RewardMax:   1,
		Splits:      envs.Splits,
	}
}

// Reset starts the episode of (split, seed): train uses the even task
// indices and test the odd ones, so their task sets are disjoint; unseen
// draws from its own stream and distribution.
func (e *Env) Reset(split envs.Split, seed int64) (string, error) {
	switch split {
	case envs.Train:
		e.pcg.Seed(uint64(seed)<<1, seenStream)
	case envs.Test:
		e.pcg.Seed(uint64(seed)<<1|1, seenStream)
	case envs.Unseen:
		e.pcg.Seed(uint64(seed), unseenStream)
	default:
		return "", fmt.Errorf("tauretail: reset: unknown split %q", split)
	}
	e.db, e.task = generateEpisode(e.rng, split, e.ids)
	e.goal = newDatabase()
	for _, g := range e.task.goals {
		if g.gold != nil {
			e.goal.keep(e.db, g.gold)
		}
	}
	for _, g := range e.task.goals {
		if g.gold != nil {
			e.goal.apply(g.gold)
		}
	}
	e.before = newDatabase()
	e.customer = customer{task: e.task, rng: e.rng}
	e.steps, e.done = 0, false
	e.authenticated, e.userDetailsFetched, e.productsListed = false, false, false
	e.fetchedOrders, e.fetchedProducts = e.fetchedOrders[:0], e.fetchedProducts[:0]
	e.violations = 0
	return "User: " + e.customer.opening(), nil
}

// AvailableActions returns nil: actions are free-form tool calls.
func (e *Env) AvailableActions() []string { return nil }

// Step applies one action. The episode ends when the user stops, when the
// agent transfers to a human, or after maxSteps actions.
func (e *Env) Step(text string) (envs.StepResult, error) {
	if e.task == nil {
		return envs.StepResult{}, errors.New("tauretail: step before reset")
	}
	if e.done {
		return envs.StepResult{}, errors.New("tauretail: step after the episode ended")
	}
	e.steps++
	var obs string
	var valid, ended bool
	obs, valid, ended = e.act(envs.ParseAction(text))
	res := envs.StepResult{Observation: obs, Info: envs.Info{ValidAction: valid}}
	if ended || e.steps >= maxSteps {
		e.done, res.Done = true, true
		e.finish(&res, ended)
	}
	return res, nil
}

// finish scores the episode. As in the original benchmark an episode that
// runs out of steps without ending scores 0. Info.Extra reports the two
// halves of the test, the policy violations and the goal kinds, so that
// evaluations can break results down.
func (e *Env) finish(res *envs.StepResult, ended bool) {
	dbMatch := e.databaseMatchesGoal()
	outputsSaid := true
	for _, g := range e.task.goals {
		if g.output != "" && !g.told {
			outputsSaid = false
		}
	}
	success := ended && dbMatch && outputsSaid
	if success {
		res.Reward = 1
	}
	res.Info.Success = success
	res.Info.Score = res.Reward
	res.Info.Extra = map[string]any{
		"db_match":          dbMatch,
		"outputs_said":      outputsSaid,
		"policy_violations": e.violations,
		"goals":             e.task.describe(),
	}
}

// databaseMatchesGoal reports whether the database equals the goal
// database: the initial one after the gold writes. A record touched by a
// gold write must equal its goal; one touched only by the agent must be as
// it was; the rest are as generated on both sides.
func (e *Env) databaseMatchesGoal() bool {
	for id, want := range e.goal.Orders {
		if !reflect.DeepEqual(e.db.Orders[id], want) {
			return false
		}
	}
	for id, want := range e.goal.Users {
		if !reflect.DeepEqual(e.db.Users[id], want) {
			return false
		}
	}
	for id, was := range e.before.Orders {
		if _, inGoal := e.goal.Orders[id]; !inGoal && !reflect.DeepEqual(e.db.Orders[id], was) {
			return false
		}
	}
	for id, was := range e.before.Users {
		if _, inGoal := e.goal.Users[id]; !inGoal && !reflect.DeepEqual(e.db.Users[id], was) {
			return false
		}
	}
	return true
}

// invalidHelp ends every invalid-action observation.
var invalidHelp = `. Write one tool call after "Action:" as name{JSON arguments}, e.g. respond{"content": "Hello"}. Tools: ` + toolNames() + "."

func invalid(reason string) (string, bool, bool) {
	return "Invalid action: " + reason + invalidHelp, false, false
}

// act runs one parsed action and returns the observation, whether the
// action was valid and whether it ended the episode.
func (e *Env) act(action string) (obs string, valid, ended bool) {
	call, err := parseToolCall(action)
	if err != nil {
		return invalid(err.Error())
	}
	spec := findTool(call.name)
	if spec == nil {
		return invalid(fmt.Sprintf("unknown tool %q", call.name))
	}
	if err := call.args.checkKeys(spec); err != nil {
		return invalid(err.Error())
	}
	if isWriteTool(call.name) {
		w, err := parseWriteCall(call.name, call.args)
		if err != nil {
			return invalid(call.name + ": " + err.Error())
		}
		return e.write(w), true, false
	}
	// Every other tool takes at most one string argument.
	var arg string
	if len(spec.params) == 1 {
		if arg, err = call.args.str(spec.params[0]); err != nil {
			return invalid(call.name + ": " + err.Error())
		}
	}
	switch call.name {
	case toolRespond:
		if strings.TrimSpace(arg) == "" {
			return invalid("respond needs a non-empty content")
		}
		reply, stop := e.respond(arg)
		return "User: " + reply, true, stop
	case toolFindByEmail:
		return e.findUser(func(u *User) bool { return strings.EqualFold(u.Email, strings.TrimSpace(arg)) }), true, false
	case toolFindByNameZip:
		var first, last, zip string
		if first, err = call.args.str("first_name"); err == nil {
			if last, err = call.args.str("last_name"); err == nil {
				zip, err = call.args.str("zip")
			}
		}
		if err != nil {
			return invalid(call.name + ": " + err.Error())
		}
		return e.findUser(func(u *User) bool {
			return strings.EqualFold(u.FirstName, strings.TrimSpace(first)) &&
				strings.EqualFold(u.LastName, strings.TrimSpace(last)) && u.Address.Zip == strings.TrimSpace(zip)
		}), true, false
	case toolUserDetails:
		e.checkAuthenticated()
		u := e.db.Users[arg]
		if u == nil {
			return "Error: user not found", true, false
		}
		if u.ID == e.task.user.ID {
			e.userDetailsFetched = true
		}
		e.buf = u.appendJSON(e.buf[:0])
		return string(e.buf), true, false
	case toolOrderDetails:
		e.checkAuthenticated()
		o := e.db.Orders[arg]
		if o == nil {
			return "Error: order not found", true, false
		}
		e.fetchedOrders = appendNew(e.fetchedOrders, o.ID)
		e.buf = o.appendJSON(e.buf[:0])
		return string(e.buf), true, false
	case toolProductDetails:
		p := catalog().Product(arg)
		if p == nil {
			return "Error: product not found", true, false
		}
		e.fetchedProducts = appendNew(e.fetchedProducts, p.ProductID)
		return p.detailsJSON, true, false
	case toolListProductTypes:
		e.productsListed = true
		return catalog().typesJSON, true, false
	case toolCalculate:
		v, err := evaluate(arg)
		if err != nil {
			return "Error: " + err.Error(), true, false
		}
		return formatResult(v), true, false
	case toolThink:
		return "Thought noted.", true, false
	case toolTransfer:
		return "Transfer successful", true, true
	}
	return invalid(fmt.Sprintf("unknown tool %q", call.name))
}

// respond passes a message to the user, noting first any requested
// information it contains: like the original benchmark, lower case with
// commas removed, so "1,234.50" counts as "1234.50". Only what the user
// has asked for counts, and a message naming more than one order status
// answers no status question: an order's status is one of four words,
// and one message listing them all would answer every such question.
func (e *Env) respond(content string) (reply string, stop bool) {
	lower := strings.ToLower(content)
	plain := strings.ReplaceAll(lower, ",", "")
	statuses := 0
	for _, s := range orderStatuses {
		if strings.Contains(plain, s) {
			statuses++
		}
	}
	for _, g := range e.task.goals[:e.customer.introduced] {
		if g.output != "" && strings.Contains(plain, g.output) && (g.kind != goalOrderStatus || statuses == 1) {
			g.told = true
		}
	}
	return e.customer.reply(lower)
}

func (e *Env) findUser(match func(*User) bool) string {
	for _, u := range e.db.Users {
		if match(u) {
			if u.ID == e.task.user.ID {
				e.authenticated = true
			}
			return u.ID
		}
	}
	return "Error: user not found"
}

func (e *Env) checkAuthenticated() {
	if !e.authenticated {
		e.violations++
	}
}

// write runs a write tool. A successful write that has the effect of an
// unmet goal's gold write fulfils that goal; a write the user did not
// approve counts as a policy violation.
func (e *Env) write(w *writeCall) string {
	e.checkAuthenticated()
	e.before.keep(e.db, w)
	out := e.db.apply(w)
	if strings.HasPrefix(out, "Error:") {
		return out
	}
	for _, g := range e.task.goals {
		if g.gold != nil && !g.executed && g.gold.sameEffect(w) {
			g.executed = true
			if !g.confirmed {
				e.violations++
			}
			return out
		}
	}
	e.violations++
	return out
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
