package rollout

import (
	"errors"
	"fmt"
)

// Trials counts one task's successful attempts out of all its attempts.
type Trials struct {
	Successes int
	Attempts  int
}

// TaskTrials groups episodes by task (split and seed), in the order each
// task first appears, and counts each task's attempts and successes. An
// episode that failed with an error (Trajectory.Error) is not an attempt:
// the agent did not get to finish it.
func TaskTrials(ts []Trajectory) []Trials {
	type task struct {
		split string
		seed  int64
	}
	index := map[task]int{}
	var out []Trials
	for i := range ts {
		t := &ts[i]
		if t.Error != "" {
			continue
		}
		k := task{string(t.Split), t.Seed}
		j, ok := index[k]
		if !ok {
			j = len(out)
			index[k] = j
			out = append(out, Trials{})
		}
		out[j].Attempts++
		if t.Success {
			out[j].Successes++
		}
	}
	return out
}

// PassHatK is tau-bench's pass^k: the probability that k attempts at a task,
// drawn without replacement from the n made, all succeed, averaged over
// tasks: mean of C(c,k)/C(n,k). Unlike pass@k it falls as k grows and
// measures consistency. Each task needs at least k attempts.
func PassHatK(tasks []Trials, k int) (float64, error) {
	if len(tasks) == 0 {
		return 0, errors.New("pass^k: no tasks")
	}
	if k < 1 {
		return 0, fmt.Errorf("pass^k: k = %d, want k >= 1", k)
	}
	var sum float64
	for i, t := range tasks {
		if t.Attempts < k {
			return 0, fmt.Errorf("pass^k: task %d has %d attempts, fewer than k = %d", i, t.Attempts, k)
		}
		if t.Successes < 0 || t.Successes > t.Attempts {
			return 0, fmt.Errorf("pass^k: task %d has %d successes out of %d attempts", i, t.Successes, t.Attempts)
		}
		// C(c,k)/C(n,k) = prod_{i<k} (c-i)/(n-i), which never forms the
		// large binomials.
		p := 1.0
		for j := range k {
			p *= float64(t.Successes-j) / float64(t.Attempts-j)
			if p <= 0 {
				p = 0
				break
			}
		}
		sum += p
	}
	return sum / float64(len(tasks)), nil
}

// PassHatKs is pass^k for k = 1 up to the fewest attempts any task of ts
// had (episodes with an error left out, see TaskTrials).
func PassHatKs(ts []Trajectory) ([]float64, error) {
	tasks := TaskTrials(ts)
	if len(tasks) == 0 {
		return nil, errors.New("pass^k: no episode finished without an error")
	}
	fewest := tasks[0].Attempts
	for _, t := range tasks {
		fewest = min(fewest, t.Attempts)
	}
	out := make([]float64, fewest)
	for k := 1; k <= fewest; k++ {
		p, err := PassHatK(tasks, k)
		if err != nil {
			return nil, err
		}
		out[k-1] = p
	}
	return out, nil
}
