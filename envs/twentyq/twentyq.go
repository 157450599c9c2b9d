// Package twentyq simulates 20 Questions as used to train and evaluate NLAC:
// the environment thinks of an object and the agent finds it by asking
// yes/no questions, which an oracle answers Yes, No or "I don't know" from a
// knowledge base of several hundred objects and about two hundred yes/no
// propositions (kind, size, colour, material, habitat, use...). The agent
// wins by naming the object ("Is it a cat?") within 20 turns.
//
// Reward follows the benchmark: -1 for every turn that is not a correct
// guess, 0 for the correct guess, so the return lies in [-20, 0]; success
// means the object was guessed.
package twentyq

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/agentrl/agentrl/envs"
)

// MaxTurns is the number of questions (guesses included) the agent may ask.
const MaxTurns = 20

const instruction = `Let's play 20 Questions. I am thinking of an object: an animal, a plant, a food, a drink, a vehicle, a tool, a piece of furniture, clothing, an instrument, a toy or a household item. Find out what it is by asking yes/no questions; I answer "Yes.", "No." or "I don't know.". You have 20 questions in all, guesses included.

Ask one question per turn about what kind of thing it is, its size (compared with a coin, a breadbox, a person or a car), shape, colour or material, where it is found, what it is used for, how it moves or what it eats. To guess, ask "Is it a <object>?" (or write "Guess: <object>"); a correct guess wins.

Write your question after "Action:", for example:
Action: Is it an animal?
Action: Is it bigger than a breadbox?
Action: Is it a dog?`

// Env is one game of 20 Questions. It also implements envs.Expert.
type Env struct {
	kb         *knowledgeBase
	target     int
	turns      int
	done       bool
	ret        float64
	candidates bitset // objects consistent with every answer so far
}

// New returns a 20 Questions environment; call Reset before Step.
func New() envs.Env { return &Env{kb: kb(), done: true} }

var _ envs.Expert = (*Env)(nil)

// Spec describes the game.
func (e *Env) Spec() envs.Spec {
	return envs.Spec{
		Name:        "twentyq",
		Description: "20 Questions: find a hidden object by asking yes/no questions; -1 per turn, 0 on the correct guess.",
		Instruction: instruction,
		MaxSteps:    MaxTurns,
		RewardMin:   -MaxTurns,
		RewardMax:   0,
		Splits:      envs.Splits,
	}
}

// Reset picks the object for (split, seed): the seed indexes the split's
// objects in a fixed shuffled order, so seeds 0..n-1 play every object of
// the split once.
func (e *Env) Reset(split envs.Split, seed int64) (string, error) {
	pool, ok := e.kb.pools[split]
	if !ok || len(pool) == 0 {
		return "", fmt.Errorf("twentyq: unknown split %q", split)
	}
	n := int64(len(pool))
	e.target = pool[((seed%n)+n)%n]
	e.turns, e.done, e.ret = 0, false, 0
	if e.candidates == nil {
		e.candidates = newBitset(len(e.kb.objects))
	}
	copy(e.candidates, e.kb.all)
	return fmt.Sprintf("I am thinking of an object. Ask your first question (%d questions left).", MaxTurns), nil
}

// Step answers one question or guess.
func (e *Env) Step(action string) (envs.StepResult, error) {
	if e.done {
		return envs.StepResult{}, errors.New("twentyq: step after the episode ended; call Reset")
	}
	e.turns++
	p := e.kb.matcher.parse(envs.ParseAction(action))
	var res envs.StepResult
	res.Info.ValidAction = p.invalid == ""
	switch {
	case p.invalid != "":
		res.Observation = p.invalid
	case p.guess == e.target:
		e.done = true
		res.Info.Success = true
		res.Observation = fmt.Sprintf("Yes! It is %s. You found it in %d questions.", e.kb.objects[e.target].withArticle(), e.turns)
	case p.guess >= 0:
		e.keepIf(func(o int) bool { return o != p.guess })
		res.Observation = no.String()
	case p.unknownGuess != "":
		res.Observation = no.String()
	default:
		a := p.query.eval(e.kb, e.target)
		e.keepConsistent(p.query, a)
		res.Observation = a.String()
	}
	if !res.Info.Success {
		res.Reward = -1
	}
	e.ret += res.Reward
	if !e.done && e.turns >= MaxTurns {
		e.done = true
		res.Observation += fmt.Sprintf(" You are out of questions; it was %s.", e.kb.objects[e.target].withArticle())
	}
	if !e.done {
		res.Observation += fmt.Sprintf(" (%d questions left)", MaxTurns-e.turns)
	}
	res.Done = e.done
	// The score is the return so far on every step, not only the last:
	// an episode cut before the game ends (a lower step limit, a full
	// context) then scores what it cost, not 0, the best score there is.
	res.Info.Score = e.ret
	return res, nil
}

// keepConsistent removes from the candidates the objects for which q has
// another answer than a.
func (e *Env) keepConsistent(q query, a answer) {
	if len(q.terms) != 1 {
		e.keepIf(func(o int) bool { return q.eval(e.kb, o) == a })
		return
	}
	// One proposition: objects agree on the negated answer exactly when
	// they agree on the plain one, and the bitsets hold the plain ones.
	p := q.terms[0].prop
	yesSet, unknownSet := e.kb.yesSet[p], e.kb.unknown[p]
	for i := range e.candidates {
		switch e.kb.answers[p][e.target] {
		case yes:
			e.candidates[i] &= yesSet[i]
		case unknown:
			e.candidates[i] &= unknownSet[i]
		default:
			e.candidates[i] &^= yesSet[i] | unknownSet[i]
		}
	}
}

// keepIf removes from the candidates the objects that fail keep.
func (e *Env) keepIf(keep func(obj int) bool) {
	for i, w := range e.candidates {
		for rest := w; rest != 0; rest &= rest - 1 {
			b := bits.TrailingZeros64(rest)
			if !keep(i*64 + b) {
				e.candidates[i] &^= 1 << b
			}
		}
	}
}

// AvailableActions returns nil: questions are free text.
func (e *Env) AvailableActions() []string { return nil }

// ExampleActions lists every question the oracle knows, in its canonical
// wording, and a guess of every object; a random baseline draws from them.
func (e *Env) ExampleActions() []string { return slices.Clone(e.kb.examples) }

// ExpertAction asks the question that best splits the objects still
// consistent with the answers so far, and guesses once at most two remain.
// It uses the hidden object only through the oracle's answers.
func (e *Env) ExpertAction() (string, error) {
	if e.done {
		return "", errors.New("twentyq: expert action after the episode ended")
	}
	return e.kb.expertQuestion(e.candidates), nil
}
