package remote

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentrl/agentrl/envs"
)

// Env is one environment instance on a server. Like every envs.Env it is
// not safe for concurrent use. Close frees the instance on the server.
type Env struct {
	c  *Client
	id json.RawMessage // the server's id for the instance; nil before /create

	actions       []string
	noActionsPath bool // the server has no /available_actions
	started       bool
	done          bool
	ret           float64 // the episode's return so far
}

// Spec returns the environment's description.
func (e *Env) Spec() envs.Spec { return e.c.spec }

// Reset creates the instance on the server if needed and starts the task
// whose index is seed (the protocol's IndexField); agentrl's server also
// receives the split.
func (e *Env) Reset(split envs.Split, seed int64) (string, error) {
	ctx := context.Background()
	if e.id == nil {
		if err := e.create(ctx); err != nil {
			return "", err
		}
	}
	body := e.body()
	for k, v := range e.c.proto.ResetFields {
		body[k] = v
	}
	body[e.c.proto.IndexField] = seed
	if e.c.proto.SendSplit {
		body["split"] = split
	} else if split != envs.Test {
		return "", e.c.errorf("reset", "the %s protocol sends a task index only, so the server's tasks have no split: play them as the %s split and choose them by index (--seed0), not as %s", e.c.proto.Name, envs.Test, split)
	}
	raw, err := e.c.do(ctx, "reset", http.MethodPost, "/reset", nil, body, true)
	if err != nil {
		return "", err
	}
	obs, actions, err := parseReset(raw)
	if err != nil {
		return "", e.c.errorf("reset", "%v", err)
	}
	e.started, e.done, e.ret = true, false, 0
	if obs == "" {
		if obs, err = e.observation(ctx); err != nil {
			return "", err
		}
	}
	if err := e.setActions(ctx, actions); err != nil {
		return "", err
	}
	return obs, nil
}

// Step sends one action. Servers that do not report the step's validity or
// the episode's outcome (AgentGym's) get ValidAction true and, on the last
// step, the score and success the Protocol derives.
func (e *Env) Step(action string) (envs.StepResult, error) {
	if !e.started {
		return envs.StepResult{}, e.c.errorf("step", "no episode in progress; reset first")
	}
	if e.done {
		return envs.StepResult{}, e.c.errorf("step", "the episode is over; reset first")
	}
	ctx := context.Background()
	if e.c.proto.ParseActions {
		action = envs.ParseAction(action)
	}
	body := e.body()
	body["action"] = action
	raw, err := e.c.do(ctx, "step", http.MethodPost, "/step", nil, body, false)
	if err != nil {
		return envs.StepResult{}, err
	}
	ans, err := parseStep(raw)
	if err != nil {
		return envs.StepResult{}, e.c.errorf("step", "%v", err)
	}
	res := envs.StepResult{Observation: ans.observation, Reward: ans.reward, Done: ans.done}
	e.ret += ans.reward
	if ans.info != nil {
		res.Info = *ans.info
	} else {
		res.Info = envs.Info{ValidAction: true, Extra: ans.extra}
		if ans.done {
			res.Info.Score = e.ret
			if ans.score != nil {
				res.Info.Score = *ans.score
			}
			res.Info.Success = res.Info.Score >= e.c.proto.SuccessScore
		}
	}
	e.done = ans.done
	if e.done {
		e.actions = nil
		return res, nil
	}
	if err := e.setActions(ctx, ans.actions); err != nil {
		return envs.StepResult{}, err
	}
	return res, nil
}

// AvailableActions returns the actions the server listed after the last
// Reset or Step, or nil where it does not list them.
func (e *Env) AvailableActions() []string { return e.actions }

// Close frees the instance on the server. Servers without /close keep it.
// It tries once: an instance is closed when its server may be failing.
func (e *Env) Close() error {
	if e.id == nil {
		return nil
	}
	payload, err := json.Marshal(e.body())
	if err != nil {
		return e.c.errorf("close", "encode request: %v", err)
	}
	e.id = nil
	_, err = e.c.once(context.Background(), http.MethodPost, e.c.base+"/close", payload)
	var se *statusError
	if err == nil || (errors.As(err, &se) && se.code == http.StatusNotFound) {
		return nil
	}
	return e.c.errorf("close", "%s", describe(err, e.c.opts.Timeout))
}

func (e *Env) create(ctx context.Context) error {
	// Repeated, a create that the server did carry out leaks one instance
	// at worst: it is retried like the requests safe to repeat.
	raw, err := e.c.do(ctx, "create", http.MethodPost, "/create", nil, map[string]any{}, true)
	if err != nil {
		return err
	}
	id, err := parseID(raw, e.c.proto.IDField)
	if err != nil {
		return e.c.errorf("create", "%v", err)
	}
	e.id = id
	return nil
}

// body starts a request body with the instance id.
func (e *Env) body() map[string]any {
	return map[string]any{e.c.proto.IDField: e.id}
}

// query is the instance id as a query string.
func (e *Env) query() url.Values {
	id := string(e.id)
	if s, err := strconv.Unquote(id); err == nil {
		id = s
	}
	return url.Values{e.c.proto.IDField: {id}}
}

func (e *Env) observation(ctx context.Context) (string, error) {
	raw, err := e.c.do(ctx, "observation", http.MethodGet, "/observation", e.query(), nil, true)
	if err != nil {
		return "", err
	}
	var obs string
	if err := json.Unmarshal(raw, &obs); err != nil {
		if msg, ok := errorField(raw); ok {
			return "", e.c.errorf("observation", "server error: %s", msg)
		}
		return "", e.c.errorf("observation", "answer is not a string: %s", snippet(raw))
	}
	return obs, nil
}

// setActions records the available actions: those the answer carried, or
// else those /available_actions lists.
func (e *Env) setActions(ctx context.Context, listed *[]string) error {
	if listed != nil {
		e.actions = *listed
		return nil
	}
	e.actions = nil
	if e.noActionsPath {
		return nil
	}
	raw, err := e.c.do(ctx, "available actions", http.MethodGet, "/available_actions", e.query(), nil, true)
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusNotFound {
		e.noActionsPath = true
		return nil
	}
	if err != nil {
		return err
	}
	if e.actions, err = parseActions(raw); err != nil {
		return e.c.errorf("available actions", "%v", err)
	}
	return nil
}
