package tauretail

import (
	"errors"
	"fmt"
)

// Trials counts one task's successful attempts out of all its attempts.
type Trials struct {
	Successes int
	Attempts  int
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
