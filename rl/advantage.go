// Package rl holds the reinforcement-learning machinery the algorithms
// share and the baselines built on it: run directories (metrics,
// checkpoints, resume), the collector (a policy snapshot in, trajectories
// out), trajectories as training sequences, advantage estimators over the
// turns of agent episodes, the SFT, GRPO, PPO and ETO loops, configuration,
// evaluation and sweeps. NLAC and StepAgent register themselves with it.
package rl

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
)

// GAE computes generalised advantage estimates over the turns of one
// episode (Schulman et al. 2016): with δ_t = r_t + γ V_{t+1} - V_t, where
// V_{T} = 0 when the episode ended (terminal) and the bootstrap value
// otherwise, A_t = δ_t + γλ A_{t+1}. rewards and values have one entry per
// turn; the returned returns are A_t + V_t, the critic's regression
// targets.
func GAE(rewards, values []float64, bootstrap float64, terminal bool, gamma, lambda float64) (advantages, returns []float64, err error) {
	if len(rewards) != len(values) {
		return nil, nil, fmt.Errorf("GAE: %d rewards but %d values", len(rewards), len(values))
	}
	if !(gamma >= 0 && gamma <= 1) || !(lambda >= 0 && lambda <= 1) {
		return nil, nil, fmt.Errorf("GAE: gamma %g and lambda %g must be in [0, 1]", gamma, lambda)
	}
	n := len(rewards)
	advantages, returns = make([]float64, n), make([]float64, n)
	next := bootstrap
	if terminal {
		next = 0
	}
	running := 0.0
	for t := n - 1; t >= 0; t-- {
		delta := rewards[t] + gamma*next - values[t]
		running = delta + gamma*lambda*running
		advantages[t] = running
		returns[t] = running + values[t]
		next = values[t]
	}
	return advantages, returns, nil
}

// GroupAdvantages normalises the returns of one group of rollouts of the
// same task as GRPO does: (R - mean) / (std + eps), with the sample
// standard deviation (n - 1). A group whose returns are all equal, or of
// one rollout, carries no signal: its advantages are zero.
func GroupAdvantages(returns []float64, eps float64) []float64 {
	out := make([]float64, len(returns))
	if len(returns) < 2 {
		return out
	}
	mean, std := stat.MeanStdDev(returns, nil)
	if std == 0 || math.IsNaN(std) {
		return out
	}
	for i, r := range returns {
		out[i] = (r - mean) / (std + eps)
	}
	return out
}
