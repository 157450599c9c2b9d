// Package envs defines the text environments agents are trained in: the Env
// interface every simulator and remote environment implements, the expert
// interface that gives demonstrations, and the action parser shared by all.
//
// Simulators live in sub-packages (envs/webshop, envs/alfworld, ...); the
// registry (envs/registry) names them for the CLI.
package envs

import (
	"fmt"
	"io"
)

// Split selects the task distribution an episode is drawn from. Train and
// test share a distribution but use disjoint seeds; Unseen changes the
// distribution (held-out categories, objects, task types or rooms) to measure
// generalisation.
type Split string

const (
	Train  Split = "train"
	Test   Split = "test"
	Unseen Split = "unseen"
)

// Splits lists every split in a stable order.
var Splits = []Split{Train, Test, Unseen}

// ParseSplit turns a user-supplied name into a Split.
func ParseSplit(name string) (Split, error) {
	for _, s := range Splits {
		if string(s) == name {
			return s, nil
		}
	}
	return "", fmt.Errorf("unknown split %q (want train, test or unseen)", name)
}

// Spec describes an environment.
type Spec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Instruction is the system prompt given to the agent: the task and the
	// exact action format the parser accepts.
	Instruction string  `json:"instruction"`
	MaxSteps    int     `json:"max_steps"`
	RewardMin   float64 `json:"reward_min"` // bounds of the episode return
	RewardMax   float64 `json:"reward_max"`
	Splits      []Split `json:"splits"`
	// WholeReply is true where the environment reads the whole reply, not
	// the action parsed from it (math: a worked solution ending in
	// "#### n"): a demonstration then keeps the reply as it was.
	WholeReply bool `json:"whole_reply,omitempty"`
}

// Info carries what a step reveals besides the observation and reward.
type Info struct {
	// Success is true once the episode's goal is reached.
	Success bool `json:"success"`
	// ValidAction is false when the action could not be parsed or is not
	// allowed in the current state; such a step still counts.
	ValidAction bool `json:"valid_action"`
	// Score is the environment's own final score (e.g. WebShop's reward in
	// [0,1]), set on the last step of an episode.
	Score float64 `json:"score"`
	// Extra holds environment-specific step signals.
	Extra map[string]any `json:"extra,omitempty"`
}

// StepResult is what Step returns.
type StepResult struct {
	Observation string  `json:"observation"`
	Reward      float64 `json:"reward"`
	Done        bool    `json:"done"`
	Info        Info    `json:"info"`
}

// Env is a text environment. It is not safe for concurrent use: the runner
// gives each goroutine its own instance.
type Env interface {
	Spec() Spec
	// Reset starts a new episode drawn from split by seed and returns the
	// first observation. The same (split, seed) always gives the same episode.
	Reset(split Split, seed int64) (string, error)
	// Step applies one action, the model's raw text; the environment parses
	// it (see ParseAction). An invalid action is not an error: it yields an
	// informative observation and Info.ValidAction=false. Errors are for
	// failures of the environment itself (e.g. a remote server is down) or
	// stepping an episode that is over.
	Step(action string) (StepResult, error)
	// AvailableActions lists the actions valid in the current state, or nil
	// where the environment does not enumerate them.
	AvailableActions() []string
}

// Expert is implemented by simulators that can act optimally from their
// hidden state; its trajectories are demonstrations.
type Expert interface {
	// ExpertAction returns the action an expert takes in the current state,
	// formatted exactly as the agent should write it.
	ExpertAction() (string, error)
}

// Close releases an environment instance that holds resources (a remote
// session, a process): those implement io.Closer; the others need nothing.
func Close(env Env) {
	if c, ok := env.(io.Closer); ok {
		c.Close()
	}
}

// SpecOf returns the Spec of the environments newEnv makes. It makes one
// to ask, and closes it.
func SpecOf(newEnv func() Env) Spec {
	env := newEnv()
	defer Close(env)
	return env.Spec()
}
