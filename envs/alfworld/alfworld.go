// Package alfworld simulates ALFWorld (Shridhar et al., 2021), the text
// version of ALFRED's household tasks played in the TextWorld engine.
//
// Each episode is a room (kitchen, living room, bedroom or bathroom) laid
// out from one of 30 floorplans per room type, with receptacles that may be
// closed (cabinets, drawers, fridge, microwave, safe), appliances that clean
// (sink basin), heat (microwave, stove burner) or cool (fridge), a lamp in
// living rooms and bedrooms, and movable objects at plausible places. The
// agent gets one of ALFWorld's six task types: pick and place, pick two,
// clean / heat / cool then place, and examine an object under a lamp. It
// acts with ALFWorld's commands (go to, open, close, take, move / put,
// clean, heat, cool, use, examine, inventory, look); every observation ends
// with the admissible commands, which AvailableActions also returns. The
// reward is 1 when the goal, checked on the state after each step, is met
// (which ends the episode), else 0; an episode lasts at most 40 steps.
//
// Splits: train and test draw from the same goals and floorplans with
// different random streams; unseen plays only in held-out floorplans and
// asks only for held-out (object, target) combinations.
package alfworld

import (
	"errors"
	"strconv"
	"strings"

	"github.com/agentrl/agentrl/envs"
)

// MaxSteps is the episode length limit.
const MaxSteps = 40

const instruction = `You are a household robot in a text world. Each observation tells you what happened and ends with the admissible actions; your task is given at the start ("Your task is to: ...").
Reply with exactly one action after "Action:". Actions:
  go to <place>                    e.g. go to cabinet 3
  open <place> / close <place>     closed receptacles hide what is inside
  take <object> from <place>       e.g. take apple 1 from countertop 1
  move <object> to <place>         (or: put <object> in/on <place>)
  clean <object> with <sinkbasin>  heat <object> with <microwave>  cool <object> with <fridge>
  use <lamp>                       e.g. use desklamp 1
  examine <place or held object>, inventory, look
You hold at most one object. Places and objects are named by type and number, as the observations write them.
Tasks: put an object somewhere (possibly two of them, or after cleaning, heating or cooling it), or examine an object under a lamp (hold it at the lamp and use the lamp).
Example:
Thought: A mug is often in a cabinet; I will look there first.
Action: go to cabinet 1`

// Env is one ALFWorld episode at a time. It implements envs.Env and
// envs.Expert.
type Env struct {
	world
	started bool
	done    bool
	success bool
	steps   int
	actions []string // admissible commands of the current state
	extra   map[string]any
}

// New returns an environment; call Reset before Step.
func New() envs.Env { return &Env{} }

// Spec describes the environment.
func (e *Env) Spec() envs.Spec {
	return envs.Spec{
		Name:        "alfworld",
		Description: "ALFWorld household tasks in a text world: find objects, clean, heat or cool them and put them in place, or examine them under a lamp (six task types, reward 1 on success).",
		Instruction: instruction,
		MaxSteps:    MaxSteps,
		RewardMin:   0,
		RewardMax:   1,
		Splits:      envs.Splits,
	}
}

// Reset starts the episode of (split, seed).
func (e *Env) Reset(split envs.Split, seed int64) (string, error) {
	if _, ok := splitStreams[split]; !ok {
		return "", errors.New("alfworld: unknown split " + strconv.Quote(string(split)))
	}
	e.generate(split, seed)
	e.started, e.done, e.success, e.steps = true, false, false, 0
	e.actions = e.admissible(e.actions[:0])
	e.extra = map[string]any{
		"task_type": taskNames[e.goal.task],
		"room":      roomNames[e.fp.room],
		"floorplan": e.fp.id,
	}
	var b strings.Builder
	view := e.fp.view
	b.Grow(len(view) + len(e.goalText) + e.admissibleLen() + 32)
	b.WriteString(view)
	b.WriteString("\n\nYour task is to: ")
	b.WriteString(e.goalText)
	e.writeAdmissible(&b)
	return b.String(), nil
}

// Step applies one action written by the agent.
func (e *Env) Step(action string) (envs.StepResult, error) {
	if !e.started {
		return envs.StepResult{}, errors.New("alfworld: Step called before Reset")
	}
	if e.done {
		return envs.StepResult{}, errors.New("alfworld: Step called after the episode ended; call Reset")
	}
	e.steps++
	text := envs.ParseAction(action)
	var feedback string
	cmd, valid := parseCommand(text)
	if valid {
		feedback, valid = e.apply(cmd)
	} else {
		feedback = "it is not a command; see the admissible actions"
	}
	if !valid {
		feedback = "Nothing happens. Invalid action " + quoteAction(text) + ": " + feedback + "."
	}
	e.success = valid && e.goalMet()
	e.done = e.success || e.steps >= MaxSteps

	res := envs.StepResult{Done: e.done, Info: envs.Info{Success: e.success, ValidAction: valid, Extra: e.extra}}
	if e.success {
		res.Reward, res.Info.Score = 1, 1
	}
	switch {
	case e.success:
		res.Observation = feedback + "\n\nYou completed the task."
	case e.done:
		res.Observation = feedback + "\n\nYou ran out of steps; the task is not completed."
	default:
		if valid {
			e.actions = e.admissible(e.actions[:0])
		}
		var b strings.Builder
		b.Grow(len(feedback) + e.admissibleLen())
		b.WriteString(feedback)
		e.writeAdmissible(&b)
		res.Observation = b.String()
	}
	return res, nil
}

// AvailableActions returns the admissible commands of the current state
// (nil once the episode is over).
func (e *Env) AvailableActions() []string {
	if !e.started || e.done {
		return nil
	}
	return append([]string(nil), e.actions...)
}

// admissibleLen is the length of what writeAdmissible writes.
func (e *Env) admissibleLen() int {
	n := len("\n\nAdmissible actions: .")
	for _, a := range e.actions {
		n += len(a) + len(", ")
	}
	return n
}

func (e *Env) writeAdmissible(b *strings.Builder) {
	b.WriteString("\n\nAdmissible actions: ")
	for i, a := range e.actions {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a)
	}
	b.WriteString(".")
}

// quoteAction quotes the agent's text for an error message, cut short so
// that a huge reply does not flood the observation.
func quoteAction(text string) string {
	const limit = 60
	runes := 0
	for i := range text {
		if runes == limit {
			text = text[:i] + "..."
			break
		}
		runes++
	}
	return strconv.Quote(text)
}
