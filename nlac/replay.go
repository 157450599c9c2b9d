package nlac

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/agentrl/agentrl/rollout"
)

// Transition is one step (s, a, r, s', done) of an episode in the replay
// buffer: the state is the episode up to the step's observation, the
// action the step's, the next state the episode one step further.
type Transition struct {
	Episode *Episode
	Step    int
}

// Episode is an episode in the buffer with the iteration that played it.
type Episode struct {
	Iteration  int                `json:"iteration"`
	Trajectory rollout.Trajectory `json:"trajectory"`
}

// Done reports whether the transition ends its episode: the environment
// ended it or the step limit did (a run's episodes always stop there, so
// nothing follows either way).
func (t Transition) Done() bool { return t.Step == len(t.Episode.Trajectory.Steps)-1 }

// step is the transition's step of its episode.
func (t Transition) step() *rollout.Step { return &t.Episode.Trajectory.Steps[t.Step] }

// action is the transition's action as the roles see it (actionText).
func (t Transition) action() string {
	return actionText(t.Episode.Trajectory.WholeReply, t.step().ParsedAction, t.step().Action)
}

// next is the step after the transition's, nil at the end of the episode.
func (t Transition) next() *rollout.Step {
	if t.Done() {
		return nil
	}
	return &t.Episode.Trajectory.Steps[t.Step+1]
}

// nextObservation is what the environment answered to the action.
func (t Transition) nextObservation() string {
	if n := t.next(); n != nil {
		return n.Observation
	}
	return t.Episode.Trajectory.FinalObservation
}

// Buffer is the replay buffer: whole episodes, the oldest dropped once it
// holds more than Capacity transitions. It is written to the checkpoint
// of each iteration, so a resumed run samples from what an uninterrupted
// one would.
type Buffer struct {
	Capacity int
	episodes []*Episode
	size     int // transitions
}

// Add puts the episodes an iteration played into the buffer, dropping the
// oldest episodes beyond the capacity (the newest always stay, even an
// episode longer than the capacity).
func (b *Buffer) Add(iteration int, trajs []rollout.Trajectory) {
	for i := range trajs {
		if len(trajs[i].Steps) == 0 {
			continue
		}
		b.episodes = append(b.episodes, &Episode{Iteration: iteration, Trajectory: trajs[i]})
		b.size += len(trajs[i].Steps)
	}
	for len(b.episodes) > 1 && b.size-len(b.episodes[0].Trajectory.Steps) >= b.Capacity {
		b.size -= len(b.episodes[0].Trajectory.Steps)
		b.episodes[0] = nil
		b.episodes = b.episodes[1:]
	}
}

// Len is the number of transitions held.
func (b *Buffer) Len() int { return b.size }

// Sample draws n distinct transitions (all of them when the buffer holds
// fewer), uniformly or, with decay < 1, with weight decay^(newest - its
// iteration), so that recent episodes come up more often. The draw is
// determined by rng.
func (b *Buffer) Sample(n int, decay float64, rng *rand.Rand) []Transition {
	all := make([]Transition, 0, b.size)
	newest := 0
	for _, e := range b.episodes {
		newest = max(newest, e.Iteration)
	}
	// Weighted sampling without replacement: the n largest keys
	// u^(1/w) (Efraimidis and Spirakis), which is uniform when every
	// weight is 1. They are ranked by their logarithm, log(u)/w: u^(1/w)
	// itself underflows to 0 for an old episode's tiny weight, and ties
	// at 0 would be taken in buffer order, oldest first. Remaining ties
	// (an underflowed weight) go to the newer transition.
	keys := make([]float64, 0, b.size)
	for _, e := range b.episodes {
		w := math.Pow(decay, float64(newest-e.Iteration))
		for s := range e.Trajectory.Steps {
			all = append(all, Transition{Episode: e, Step: s})
			keys = append(keys, math.Log(rng.Float64())/w)
		}
	}
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := keys[idx[a]], keys[idx[b]]
		return ka > kb || ka == kb && idx[a] > idx[b]
	})
	idx = idx[:min(n, len(idx))]
	// In buffer order, so that the steps of an episode stay together in
	// logs and batches.
	sort.Ints(idx)
	out := make([]Transition, len(idx))
	for i, k := range idx {
		out[i] = all[k]
	}
	return out
}

// Save writes the buffer to path (gzipped JSON lines, one episode each),
// atomically.
func (b *Buffer) Save(path string) error {
	if err := writeJSONLines(path, b.episodes); err != nil {
		return fmt.Errorf("replay buffer: %w", err)
	}
	return nil
}

// LoadBuffer reads a buffer Save wrote, with the given capacity.
func LoadBuffer(path string, capacity int) (*Buffer, error) {
	eps, err := readJSONLines(path, func(e **Episode) error { return (*e).Trajectory.Validate() })
	if err != nil {
		return nil, fmt.Errorf("replay buffer: %w", err)
	}
	b := &Buffer{Capacity: capacity}
	for _, e := range eps {
		if len(e.Trajectory.Steps) > 0 {
			b.episodes = append(b.episodes, e)
			b.size += len(e.Trajectory.Steps)
		}
	}
	return b, nil
}
