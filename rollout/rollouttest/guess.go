// Package rollouttest provides a small, fast, deterministic environment for
// testing code that drives environments: the runner, policies, trajectory
// files and remote environments. It is a real environment (a number-guessing
// game with an expert), not a recording, so a test can check behaviour
// without depending on any of the simulators.
package rollouttest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentrl/agentrl/envs"
)

// Name is the name Guess reports in its Spec.
const Name = "guess"

// MaxSteps bounds a Guess episode; binary search needs at most 6 guesses
// over the largest range.
const MaxSteps = 8

// rangeSize is the number of candidates per split: train and test draw from
// 1..16, unseen from 1..40.
var rangeSize = map[envs.Split]int{envs.Train: 16, envs.Test: 16, envs.Unseen: 40}

// actionLists holds the available actions per range size, built once so that
// AvailableActions does not allocate on every step.
var actionLists = map[int][]string{}

func init() {
	for _, n := range rangeSize {
		if _, ok := actionLists[n]; ok {
			continue
		}
		list := make([]string, n)
		for i := range list {
			list[i] = fmt.Sprintf("guess[%d]", i+1)
		}
		actionLists[n] = list
	}
}

// Guess is a number-guessing game: the agent names a number with
// guess[K] and is told whether the hidden number is higher or lower.
// Reward is 1 for the step that names the number, 0 otherwise.
type Guess struct {
	unlisted bool // AvailableActions returns nil; ExampleActions shows the shape
	n        int  // numbers are 1..n
	target   int
	lo, hi   int // the range still consistent with the feedback so far
	done     bool
	reset    bool
}

// New returns a Guess game awaiting Reset.
func New() *Guess { return &Guess{} }

// NewUnlisted returns a Guess game that, like free-text environments, does
// not enumerate its actions but offers examples of their shape.
func NewUnlisted() *Guess { return &Guess{unlisted: true} }

// Spec describes the game.
func (g *Guess) Spec() envs.Spec {
	return envs.Spec{
		Name:        Name,
		Description: "guess a hidden number with higher/lower feedback",
		Instruction: "Guess the hidden number. After each guess you are told whether the number is higher or lower.\n" +
			"Answer with one action in the form:\nAction: guess[K]",
		MaxSteps:  MaxSteps,
		RewardMin: 0,
		RewardMax: 1,
		Splits:    envs.Splits,
	}
}

// Reset draws the hidden number from split and seed.
func (g *Guess) Reset(split envs.Split, seed int64) (string, error) {
	n, ok := rangeSize[split]
	if !ok {
		return "", fmt.Errorf("guess: unknown split %q", split)
	}
	*g = Guess{unlisted: g.unlisted, n: n, lo: 1, hi: n, reset: true}
	g.target = 1 + int(mix(uint64(seed), split)%uint64(n))
	return fmt.Sprintf("The hidden number is between 1 and %d.", n), nil
}

// Step applies one guess.
func (g *Guess) Step(text string) (envs.StepResult, error) {
	if !g.reset {
		return envs.StepResult{}, errors.New("guess: step before reset")
	}
	if g.done {
		return envs.StepResult{}, errors.New("guess: episode is over")
	}
	action := envs.ParseAction(text)
	k, ok := parseGuess(action)
	if !ok || k < 1 || k > g.n {
		return envs.StepResult{
			Observation: fmt.Sprintf("Invalid action %q: valid actions are guess[1] ... guess[%d].", action, g.n),
			Info:        envs.Info{ValidAction: false},
		}, nil
	}
	switch {
	case k == g.target:
		g.done = true
		return envs.StepResult{
			Observation: fmt.Sprintf("Correct, the number is %d.", k),
			Reward:      1,
			Done:        true,
			Info:        envs.Info{Success: true, ValidAction: true, Score: 1},
		}, nil
	case k < g.target:
		g.lo = max(g.lo, k+1)
		return envs.StepResult{Observation: fmt.Sprintf("%d is too low.", k), Info: envs.Info{ValidAction: true}}, nil
	default:
		g.hi = min(g.hi, k-1)
		return envs.StepResult{Observation: fmt.Sprintf("%d is too high.", k), Info: envs.Info{ValidAction: true}}, nil
	}
}

// AvailableActions lists every guess in range; the list is shared and must
// not be modified.
func (g *Guess) AvailableActions() []string {
	if g.unlisted || !g.reset || g.done {
		return nil
	}
	return actionLists[g.n]
}

// ExampleActions shows the shape of an action, for policies that need one
// when the actions are not listed.
func (g *Guess) ExampleActions() []string {
	return []string{"guess[1]", "guess[8]", "guess[16]"}
}

// ExpertAction bisects the range still consistent with the feedback, as a
// player who does not peek would; it takes up to log2(n)+1 steps.
func (g *Guess) ExpertAction() (string, error) {
	if !g.reset || g.done {
		return "", errors.New("guess: no episode in progress")
	}
	return fmt.Sprintf("Action: guess[%d]", (g.lo+g.hi)/2), nil
}

// Target reveals the hidden number, for tests that check the game.
func (g *Guess) Target() int { return g.target }

func parseGuess(action string) (int, bool) {
	rest, ok := strings.CutPrefix(strings.ToLower(action), "guess[")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, "]")
	if !ok {
		return 0, false
	}
	k, err := strconv.Atoi(strings.TrimSpace(digits))
	return k, err == nil
}

// mix scrambles the seed (splitmix64 finaliser) so that consecutive seeds
// give unrelated numbers, and salts it with the split so that the splits
// differ for the same seed.
func mix(x uint64, split envs.Split) uint64 {
	for _, c := range []byte(split) {
		x = x*31 + uint64(c)
	}
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
