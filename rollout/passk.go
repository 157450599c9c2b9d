package rollout

import "fmt"

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
	return overTasks("pass^k", tasks, k, func(t Trials) float64 {
		// C(c,k)/C(n,k) = prod_{i<k} (c-i)/(n-i), which never forms the
		// large binomials.
		p := 1.0
		for j := range k {
			p *= float64(t.Successes-j) / float64(t.Attempts-j)
			if p <= 0 {
				return 0
			}
		}
		return p
	})
}

// PassAtK is pass@k: the probability that at least one of k attempts at a
// task, drawn without replacement from the n made, succeeds, averaged over
// tasks: mean of 1 - C(n-c,k)/C(n,k), the unbiased estimate of the chance
// that k fresh attempts hold a success. It rises with k; pass@1 is the
// mean success, as pass^1 is. Each task needs at least k attempts.
func PassAtK(tasks []Trials, k int) (float64, error) {
	return overTasks("pass@k", tasks, k, func(t Trials) float64 {
		fails := t.Attempts - t.Successes
		if fails < k {
			return 1
		}
		// C(n-c,k)/C(n,k) = prod_{i<k} (n-c-i)/(n-i).
		allFail := 1.0
		for j := range k {
			allFail *= float64(fails-j) / float64(t.Attempts-j)
		}
		return 1 - allFail
	})
}

// overTasks averages the estimate of one task over the tasks, after
// checking that each has k attempts and a possible number of successes.
func overTasks(what string, tasks []Trials, k int, estimate func(Trials) float64) (float64, error) {
	if len(tasks) == 0 {
		return 0, fmt.Errorf("%s: no tasks", what)
	}
	if k < 1 {
		return 0, fmt.Errorf("%s: k = %d, want k >= 1", what, k)
	}
	var sum float64
	for i, t := range tasks {
		if t.Attempts < k {
			return 0, fmt.Errorf("%s: task %d has %d attempts, fewer than k = %d", what, i, t.Attempts, k)
		}
		if t.Successes < 0 || t.Successes > t.Attempts {
			return 0, fmt.Errorf("%s: task %d has %d successes out of %d attempts", what, i, t.Successes, t.Attempts)
		}
		sum += estimate(t)
	}
	return sum / float64(len(tasks)), nil
}

// PassHatKs is pass^k for k = 1 up to the fewest attempts any task of ts
// had (episodes with an error left out, see TaskTrials).
func PassHatKs(ts []Trajectory) ([]float64, error) { return upToFewest("pass^k", ts, PassHatK) }

// PassAtKs is pass@k for k = 1 up to the fewest attempts any task of ts
// had (episodes with an error left out, see TaskTrials).
func PassAtKs(ts []Trajectory) ([]float64, error) { return upToFewest("pass@k", ts, PassAtK) }

// upToFewest is atK of the tasks of ts for k = 1 up to the fewest
// attempts a task finished.
func upToFewest(what string, ts []Trajectory, atK func([]Trials, int) (float64, error)) ([]float64, error) {
	tasks := TaskTrials(ts)
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%s: no episode finished without an error", what)
	}
	fewest := tasks[0].Attempts
	for _, t := range tasks {
		fewest = min(fewest, t.Attempts)
	}
	out := make([]float64, fewest)
	for k := 1; k <= fewest; k++ {
		p, err := atK(tasks, k)
		if err != nil {
			return nil, err
		}
		out[k-1] = p
	}
	return out, nil
}
