package llm

import (
	"math/rand/v2"
	"testing"
)

// TestParallelDrawsEqualSerial computes a decode's draws on several
// goroutines and on one: sampled sequences (two of them reading one row
// of logits, as the samples of one prompt do) and several scored tokens
// of one sequence must come out the same.
func TestParallelDrawsEqualSerial(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([][]float32, 11)
	for i := range rows {
		rows[i] = make([]float32, 3072)
		for k := range rows[i] {
			rows[i][k] = float32(rng.NormFloat64() * 3)
		}
	}
	sampling := Sampling{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.01}
	draws := func() []draw {
		var ds []draw
		for i := range 8 {
			// Samples 6 and 7 follow one prompt and read its row.
			ds = append(ds, draw{seq: &sequence{sampler: newSampler(sampling, 5, i)}, logits: rows[min(i, 6)]})
		}
		scored := &sequence{score: &ScoreResult{}, tokens: []int32{7, 99, 3071, 0, 12}}
		for i := range 4 {
			ds = append(ds, draw{seq: scored, logits: rows[7+i], index: i})
		}
		return ds
	}
	serial := draws()
	computeDraws(serial)
	s := &scheduler{e: &Engine{opts: EngineOptions{Threads: 3}}, draws: draws()}
	s.computeDraws()
	for i := range serial {
		if s.draws[i].token != serial[i].token || s.draws[i].logprob != serial[i].logprob {
			t.Errorf("draw %d: token %d (log-prob %g) on several goroutines, %d (%g) on one",
				i, s.draws[i].token, s.draws[i].logprob, serial[i].token, serial[i].logprob)
		}
	}
	if serial[6].token == serial[7].token && serial[5].token == serial[6].token {
		t.Error("the samples drew the same tokens: the test shows nothing")
	}
}
