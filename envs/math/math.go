// Package math simulates GSM8K-style math word problems: multi-step
// arithmetic problems generated from templates (shopping, wages, travel,
// ages, sharing, discounts, ...) with integer answers and worked solutions
// in GSM8K's format (one step per line with <<expression=result>>
// calculator annotations, then "#### answer").
//
// It offers two environments. "math" is single-step, as GSM8K is: the agent
// writes a solution and the number after its last "####" (else the last
// number) is compared exactly with the answer. "math-calc" lets the agent
// use a calculator tool, calc[<expression>], for up to 8 steps before it
// answers with answer[<number>]. Both reward 1 for an exactly right answer
// and 0 otherwise. Difficulty is the number of solution steps, 2 to 6.
package math

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/agentrl/agentrl/envs"
)

// CalcMaxSteps is the number of actions a math-calc episode allows.
const CalcMaxSteps = 8

const singleInstruction = `Solve the math word problem. Think step by step, writing out each calculation, then give the final answer as a plain number on the last line in the form "#### <number>". Your whole reply is your answer; if you write "Action:", put the same text after it. Only the number after the last "####" is graded (without "####", the last number in your reply).

Example:
Natalia sold clips to 48 friends in April and half as many in May. How many clips did she sell in April and May?
She sold 48 / 2 = 24 clips in May.
She sold 48 + 24 = 72 clips in April and May.
#### 72`

const calcInstruction = `Solve the math word problem using a calculator. Each turn, write exactly one action after "Action:":
- calc[<expression>] evaluates an expression with + - * / and parentheses, for example calc[(48 + 24) * 3]; the result comes back as the next observation.
- answer[<number>] gives your final answer and ends the episode; "#### <number>" works too.
You have 8 actions in all, the answer included. Only an exactly right answer counts.

Example:
Action: calc[48 / 2]
Action: calc[48 + 24]
Action: answer[72]`

// Env is one math problem. It also implements envs.Expert.
type Env struct {
	withCalc bool
	problem  problem
	steps    int
	done     bool
	// computed are the results of the episode's calculations so far
	// (math-calc), which the expert reads its progress from.
	computed []*big.Rat
}

// New returns the single-step environment "math".
func New() envs.Env { return &Env{done: true} }

// NewCalc returns the calculator environment "math-calc".
func NewCalc() envs.Env { return &Env{withCalc: true, done: true} }

var _ envs.Expert = (*Env)(nil)

// Spec describes the environment.
func (e *Env) Spec() envs.Spec {
	if e.withCalc {
		return envs.Spec{
			Name:        "math-calc",
			Description: "GSM8K-style word problems with a calculator tool: calc[expression] then answer[number]; reward 1 for an exact answer.",
			Instruction: calcInstruction,
			MaxSteps:    CalcMaxSteps,
			RewardMin:   0,
			RewardMax:   1,
			Splits:      envs.Splits,
		}
	}
	return envs.Spec{
		Name:        "math",
		Description: "GSM8K-style word problems answered in one reply ending in \"#### answer\"; reward 1 for an exact answer.",
		Instruction: singleInstruction,
		MaxSteps:    1,
		RewardMin:   0,
		RewardMax:   1,
		Splits:      envs.Splits,
		WholeReply:  true,
	}
}

// Reset generates the problem of (split, seed) and returns its text.
func (e *Env) Reset(split envs.Split, seed int64) (string, error) {
	p, err := generateProblem(split, seed)
	if err != nil {
		return "", fmt.Errorf("math: %w", err)
	}
	e.problem, e.steps, e.done, e.computed = p, 0, false, nil
	if e.withCalc {
		return p.question + "\nUse calc[...] for calculations and answer[...] for the final answer.", nil
	}
	return p.question, nil
}

// Step grades an answer, or (math-calc) evaluates a calculation.
func (e *Env) Step(action string) (envs.StepResult, error) {
	if e.done {
		return envs.StepResult{}, errors.New("math: step after the episode ended; call Reset")
	}
	e.steps++
	var res envs.StepResult
	if e.withCalc {
		res = e.calcStep(action)
	} else {
		// The whole reply is the action: a solution ending in "#### n".
		res = e.grade(extractAnswer(action))
	}
	if e.withCalc && !res.Done && e.steps >= CalcMaxSteps {
		res.Done = true
		res.Observation += fmt.Sprintf("\nOut of steps. The answer was %d.", e.problem.answer)
	}
	e.done = res.Done
	return res, nil
}

// grade ends the episode with the reward for answer.
func (e *Env) grade(answer string, found bool) envs.StepResult {
	res := envs.StepResult{Done: true, Info: envs.Info{ValidAction: found}}
	want := strconv.FormatInt(e.problem.answer, 10)
	switch {
	case !found:
		res.Observation = fmt.Sprintf(`No answer found: end with "#### <number>". The answer was %s.`, want)
	case answer == want:
		res.Reward, res.Info.Success = 1, true
		res.Observation = fmt.Sprintf("Correct! The answer is %s.", want)
	default:
		res.Observation = fmt.Sprintf("Incorrect: you answered %s; the answer was %s.", answer, want)
	}
	res.Info.Score = res.Reward
	return res
}

const calcUsage = "valid actions are calc[<expression>], for example calc[(48 + 24) * 3], and answer[<number>]"

func (e *Env) calcStep(text string) envs.StepResult {
	action := strings.TrimSpace(envs.ParseAction(text))
	name, arg, bracketed := splitCall(action)
	switch {
	case strings.HasPrefix(action, "####"):
		answer, found := firstNumber(action[len("####"):])
		if !found {
			return invalid(`"####" must be followed by a number: write answer[<number>] or "#### <number>".`)
		}
		return e.grade(answer, true)
	case !bracketed:
		return invalid(fmt.Sprintf("Invalid action %q: %s.", clip(action), calcUsage))
	case name == "calc" || name == "calculate" || name == "calculator":
		v, err := evaluate(arg)
		if err != nil {
			return invalid(fmt.Sprintf("calc[%s]: error: %v.", clip(arg), err))
		}
		e.computed = append(e.computed, v)
		return envs.StepResult{Observation: fmt.Sprintf("calc[%s] = %s", clip(arg), formatNumber(v)), Info: envs.Info{ValidAction: true}}
	case name == "answer" || name == "finish":
		answer, found := firstNumber(arg)
		if !found {
			return invalid(fmt.Sprintf("answer[%s] holds no number: write answer[<number>].", clip(arg)))
		}
		return e.grade(answer, true)
	default:
		return invalid(fmt.Sprintf("Invalid action %q: %s.", clip(action), calcUsage))
	}
}

func invalid(msg string) envs.StepResult {
	return envs.StepResult{Observation: msg}
}

// splitCall splits "name[argument]" (any case, spaces allowed before the
// bracket); bracketed is false unless the text is exactly of that form.
func splitCall(action string) (name, arg string, bracketed bool) {
	action = strings.TrimSpace(action)
	open := strings.IndexByte(action, '[')
	if open < 0 || !strings.HasSuffix(action, "]") {
		return "", "", false
	}
	return strings.ToLower(strings.TrimSpace(action[:open])), action[open+1 : len(action)-1], true
}

// clip shortens text quoted back in an observation.
func clip(s string) string {
	const limit = 80
	if len(s) <= limit {
		return s
	}
	return strings.ToValidUTF8(s[:limit], "") + "..."
}

// AvailableActions returns nil: answers and expressions are free text.
func (e *Env) AvailableActions() []string { return nil }

// ExampleActions shows the shape of an action with the numbers of the
// problem: "#### n" for each (math), or calculations on consecutive pairs
// of them and answer[n] for each (math-calc). A random baseline draws from
// them, which amounts to guessing a number of the problem.
func (e *Env) ExampleActions() []string {
	nums := numbers(e.problem.question)
	var out []string
	for i, n := range nums {
		if !e.withCalc {
			out = append(out, "#### "+n)
			continue
		}
		out = append(out, "answer["+n+"]")
		if i > 0 {
			for _, op := range []string{" + ", " - ", " * ", " / "} {
				out = append(out, "calc["+nums[i-1]+op+n+"]")
			}
		}
	}
	return out
}

// ExpertAction writes the worked solution ending in "#### answer" (math),
// or (math-calc) computes the first solution step whose result no
// calculation of the episode has given yet, and answers once all have or
// when only the answer fits in the remaining steps. Reading its progress
// from the results, not from the number of steps taken, it acts sensibly
// in an agent's state too: after a wrong calculation it computes the step
// that is still missing instead of moving on or answering a number the
// context does not show. On its own episodes it computes the steps in
// order, one per action.
func (e *Env) ExpertAction() (string, error) {
	if e.done {
		return "", errors.New("math: expert action after the episode ended")
	}
	if !e.withCalc {
		return e.problem.solution(), nil
	}
	if next := e.missingStep(); next >= 0 && CalcMaxSteps-e.steps > 1 {
		return "calc[" + e.problem.steps[next].expr + "]", nil
	}
	return "answer[" + strconv.FormatInt(e.problem.answer, 10) + "]", nil
}

// missingStep is the index of the first solution step whose result the
// episode's calculations have not given, matching each result to one step
// at most (a solution may compute a value twice), or -1 if none is.
func (e *Env) missingStep() int {
	used := make([]bool, len(e.computed))
	for i, st := range e.problem.steps {
		want := new(big.Rat).SetInt64(st.value)
		found := false
		for k, v := range e.computed {
			if !used[k] && v.Cmp(want) == 0 {
				used[k], found = true, true
				break
			}
		}
		if !found {
			return i
		}
	}
	return -1
}
