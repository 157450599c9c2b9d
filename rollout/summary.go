package rollout

import (
	"math"

	"gonum.org/v1/gonum/stat"
)

// Summary condenses a set of episodes. Each mean comes with its standard
// error (SE), the standard deviation over episodes divided by the square
// root of their number; it is 0 with fewer than two episodes.
type Summary struct {
	// Episodes counts the episodes that ran without an error (of the
	// environment, or a first prompt beyond the policy's context); the
	// statistics are over those. Errors counts the others.
	Episodes int `json:"episodes"`
	Errors   int `json:"errors"`
	// ContextFull counts the episodes cut short because their conversation
	// outgrew the policy's context; they are in the statistics, as the
	// failures to finish that they are.
	ContextFull int `json:"context_full"`

	SuccessRate   float64 `json:"success_rate"`
	SuccessRateSE float64 `json:"success_rate_se"`
	MeanReturn    float64 `json:"mean_return"`
	MeanReturnSE  float64 `json:"mean_return_se"`
	MeanScore     float64 `json:"mean_score"`
	MeanScoreSE   float64 `json:"mean_score_se"`
	MeanSteps     float64 `json:"mean_steps"`
	MeanStepsSE   float64 `json:"mean_steps_se"`
	// InvalidActionRate is the fraction of all steps whose action the
	// environment rejected (Info.ValidAction false); its SE treats steps as
	// independent draws.
	InvalidActionRate   float64 `json:"invalid_action_rate"`
	InvalidActionRateSE float64 `json:"invalid_action_rate_se"`
}

// Summarize computes the statistics of ts. Episodes that ended in an
// error are counted in Errors and left out of the means: they measure the
// environment or the setup, not the policy.
func Summarize(ts []Trajectory) Summary {
	var success, ret, score, steps []float64
	var s Summary
	invalid, total := 0, 0
	for i := range ts {
		t := &ts[i]
		if t.Error != "" {
			s.Errors++
			continue
		}
		if t.ContextFull != "" {
			s.ContextFull++
		}
		success = append(success, boolFloat(t.Success))
		ret = append(ret, t.Return)
		score = append(score, t.Score)
		steps = append(steps, float64(len(t.Steps)))
		for _, st := range t.Steps {
			total++
			if !st.Info.ValidAction {
				invalid++
			}
		}
	}
	s.Episodes = len(success)
	s.SuccessRate, s.SuccessRateSE = meanSE(success)
	s.MeanReturn, s.MeanReturnSE = meanSE(ret)
	s.MeanScore, s.MeanScoreSE = meanSE(score)
	s.MeanSteps, s.MeanStepsSE = meanSE(steps)
	if total > 0 {
		p := float64(invalid) / float64(total)
		s.InvalidActionRate = p
		s.InvalidActionRateSE = math.Sqrt(p * (1 - p) / float64(total))
	}
	return s
}

func meanSE(x []float64) (mean, se float64) {
	switch len(x) {
	case 0:
		return 0, 0
	case 1:
		return x[0], 0
	}
	mean, std := stat.MeanStdDev(x, nil)
	return mean, stat.StdErr(std, float64(len(x)))
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
