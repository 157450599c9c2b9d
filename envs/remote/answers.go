package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentrl/agentrl/envs"
)

// The servers' answers differ in shape; these functions accept every shape
// the known servers send and reject anything else with a message that
// quotes the answer.

// errorField returns the "error" member of an object answer: AgentGym's
// servers report failures with status 200 and {"error": "..."}.
func errorField(raw json.RawMessage) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return "", false
	}
	v, ok := obj["error"]
	if !ok || bytes.Equal(v, []byte("null")) {
		return "", false
	}
	return jsonText(v), true
}

// object decodes an object answer, turning an "error" member into an error.
func object(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("answer is not a JSON object: %s", snippet(raw))
	}
	if msg, ok := errorField(raw); ok {
		return nil, fmt.Errorf("server error: %s", msg)
	}
	return obj, nil
}

// parseID reads /create's answer: a bare id (WebShop) or an object holding
// it (the others).
func parseID(raw json.RawMessage, idField string) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if isScalarID(raw) {
		return raw, nil
	}
	obj, err := object(raw)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{idField, "id", "env_idx"} {
		if v, ok := obj[k]; ok && isScalarID(bytes.TrimSpace(v)) {
			return bytes.TrimSpace(v), nil
		}
	}
	return nil, fmt.Errorf("answer has no instance id: %s", snippet(raw))
}

// isScalarID accepts a JSON number or string.
func isScalarID(v json.RawMessage) bool {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return false
	}
	switch x.(type) {
	case float64, string:
		return true
	}
	return false
}

// parseReset reads /reset's answer: an object with the observation (and
// maybe a task description and the available actions), a bare
// observation, or WebShop's [observation, null]. An empty observation
// means the caller asks /observation.
func parseReset(raw json.RawMessage) (obs string, actions *[]string, err error) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil && list != nil {
		if len(list) == 0 || json.Unmarshal(list[0], &obs) != nil {
			return "", nil, fmt.Errorf("answer is not [observation, ...]: %s", snippet(raw))
		}
		return obs, nil, nil
	}
	if json.Unmarshal(raw, &obs) == nil {
		return obs, nil, nil
	}
	obj, err := object(raw)
	if err != nil {
		return "", nil, err
	}
	if v, ok := obj["observation"]; ok {
		if json.Unmarshal(v, &obs) != nil {
			return "", nil, fmt.Errorf("observation is not a string: %s", snippet(v))
		}
	}
	// SciWorld sends the task apart from the room's description.
	if v, ok := obj["task_description"]; ok {
		var task string
		if json.Unmarshal(v, &task) == nil && task != "" {
			obs = task + "\n" + obs
		}
	}
	if actions, err = optionalActions(obj); err != nil {
		return "", nil, err
	}
	return obs, actions, nil
}

// stepAnswer is /step's answer, normalised.
type stepAnswer struct {
	observation string
	reward      float64
	done        bool
	info        *envs.Info     // set by agentrl's server only
	extra       map[string]any // another server's "info" object
	score       *float64
	actions     *[]string
}

// parseStep reads /step's answer: {observation (or WebShop's state),
// reward, done} plus optional info, score and available_actions.
func parseStep(raw json.RawMessage) (stepAnswer, error) {
	var a stepAnswer
	obj, err := object(raw)
	if err != nil {
		return a, err
	}
	obsRaw, ok := obj["observation"]
	if !ok {
		obsRaw, ok = obj["state"]
	}
	if !ok || json.Unmarshal(obsRaw, &a.observation) != nil {
		return a, fmt.Errorf("answer has no observation string: %s", snippet(raw))
	}
	if v, ok := obj["reward"]; !ok || json.Unmarshal(v, &a.reward) != nil {
		return a, fmt.Errorf("answer has no numeric reward: %s", snippet(raw))
	}
	if v, ok := obj["done"]; !ok || json.Unmarshal(v, &a.done) != nil {
		return a, fmt.Errorf("answer has no boolean done: %s", snippet(raw))
	}
	if v, ok := obj["score"]; ok {
		var s float64
		if json.Unmarshal(v, &s) != nil {
			return a, fmt.Errorf("score is not a number: %s", snippet(v))
		}
		a.score = &s
	}
	if v, ok := obj["info"]; ok {
		var fields map[string]json.RawMessage
		if json.Unmarshal(v, &fields) == nil && fields != nil {
			if _, full := fields["valid_action"]; full {
				var info envs.Info
				if err := json.Unmarshal(v, &info); err != nil {
					return a, fmt.Errorf("info is not a step info: %v", err)
				}
				a.info = &info
			} else if err := json.Unmarshal(v, &a.extra); err != nil {
				return a, fmt.Errorf("info: %v", err)
			}
		}
	}
	if a.actions, err = optionalActions(obj); err != nil {
		return a, err
	}
	return a, nil
}

// optionalActions reads an answer's "available_actions" member, if any.
func optionalActions(obj map[string]json.RawMessage) (*[]string, error) {
	v, ok := obj["available_actions"]
	if !ok {
		return nil, nil
	}
	actions, err := parseActions(v)
	if err != nil {
		return nil, err
	}
	return &actions, nil
}

// parseActions reads a list of actions, or WebShop's {has_search_bar,
// clickables}: its buttons become click[...] actions, and a page with a
// search bar takes free text, so its actions are not listed (nil).
func parseActions(raw json.RawMessage) ([]string, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list, nil
	}
	if msg, ok := errorField(raw); ok {
		return nil, fmt.Errorf("server error: %s", msg)
	}
	var page struct {
		HasSearchBar *bool    `json:"has_search_bar"`
		Clickables   []string `json:"clickables"`
	}
	if json.Unmarshal(raw, &page) != nil || page.HasSearchBar == nil {
		return nil, errors.New("available actions are neither a list of strings nor {has_search_bar, clickables}: " + snippet(raw))
	}
	if *page.HasSearchBar {
		return nil, nil
	}
	out := make([]string, len(page.Clickables))
	for i, c := range page.Clickables {
		out[i] = "click[" + c + "]"
	}
	return out, nil
}
