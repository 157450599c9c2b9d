// Package remote connects to environments served over HTTP with the AgentGym
// protocol, and serves any environment over that protocol.
//
// AgentGym runs each benchmark (WebShop, ALFWorld, SciWorld, BabyAI,
// TextCraft, ...) as an HTTP server with one environment instance per id:
//
//	POST /create                     -> a new instance id
//	POST /reset  {id, <index>: N}    -> the first observation of task N
//	POST /step   {id, action}        -> {observation, reward, done, ...}
//	GET  /observation?id=ID          -> the current observation
//	GET  /available_actions?id=ID    -> the actions valid now
//	POST /close  {id}                -> frees the instance
//
// The servers differ in details (the id field's name, the reset index's
// name, the shape of the answers); a Protocol captures them, and Protocols
// lists those of the servers this package knows. Env is the client side, an
// envs.Env; Server is the server side, serving any envs.Env (the protocol
// named "agentrl", a superset that also reports the full step Info and the
// environment's Spec).
package remote

import (
	"fmt"
	"sort"
	"strings"
)

// Protocol describes how one family of servers speaks the AgentGym
// protocol.
type Protocol struct {
	Name string
	// IDField names the instance id in request bodies and query strings
	// ("id", or "env_idx" for WebShop).
	IDField string
	// IndexField names the task index in the reset body ("data_idx",
	// "game", "session_id"); the episode's seed is sent there.
	IndexField string
	// ResetFields are sent with every reset, e.g. ALFWorld's world_type.
	ResetFields map[string]any
	// SendSplit adds the split name to reset requests; only servers that
	// know splits (agentrl's) want it.
	SendSplit bool
	// ParseActions sends envs.ParseAction(text) rather than the model's raw
	// text, for servers that expect a bare action.
	ParseActions bool
	// SuccessScore is the score from which an episode counts as a success,
	// for servers that do not say so themselves. The score is the server's
	// "score" field where it sends one, else the episode's return.
	SuccessScore float64
}

// Protocols lists the known server families by name.
var Protocols = map[string]Protocol{
	// agentrl's own server (Server): raw actions, splits, full step info.
	"agentrl": {Name: "agentrl", IDField: "id", IndexField: "data_idx", SendSplit: true, SuccessScore: 1},
	// The common AgentGym form: BabyAI, TextCraft, ...
	"agentgym": {Name: "agentgym", IDField: "id", IndexField: "data_idx", ParseActions: true, SuccessScore: 1},
	// AgentGym's SciWorld server: the score runs to 100.
	"sciworld": {Name: "sciworld", IDField: "id", IndexField: "data_idx", ParseActions: true, SuccessScore: 100},
	// AgentGym's WebShop server: env_idx ids and session_id goals; the
	// final reward is WebShop's score in [0,1].
	"webshop": {Name: "webshop", IDField: "env_idx", IndexField: "session_id", ParseActions: true, SuccessScore: 1},
	// AgentGym's ALFWorld server: games by index, text world; reward 1 on
	// success.
	"alfworld": {Name: "alfworld", IDField: "id", IndexField: "game", ResetFields: map[string]any{"world_type": "Text"}, ParseActions: true, SuccessScore: 1},
}

// ProtocolNames lists the known protocols in sorted order.
func ProtocolNames() []string {
	names := make([]string, 0, len(Protocols))
	for n := range Protocols {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupProtocol returns the named protocol.
func LookupProtocol(name string) (Protocol, error) {
	p, ok := Protocols[name]
	if !ok {
		return Protocol{}, fmt.Errorf("unknown protocol %q (known: %s)", name, strings.Join(ProtocolNames(), ", "))
	}
	return p, nil
}
