package tauretail

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrl/agentrl/envs"
)

// BenchmarkSteps runs 64 environments in parallel goroutines, each driven
// by the expert and reset when its episode ends, and reports steps/s.
func BenchmarkSteps(b *testing.B) {
	const instances = 64
	catalog()
	var steps atomic.Int64
	perInstance := max(b.N/instances, 1)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range instances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := New().(*Env)
			seed := int64(i) * 1_000_003
			if _, err := e.Reset(envs.Train, seed); err != nil {
				b.Error(err)
				return
			}
			for range perInstance {
				action, err := e.ExpertAction()
				if err != nil {
					b.Error(err)
					return
				}
				res, err := e.Step(action)
				if err != nil {
					b.Error(err)
					return
				}
				steps.Add(1)
				if res.Done {
					seed++
					if _, err := e.Reset(envs.Train, seed); err != nil {
						b.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(steps.Load())/time.Since(start).Seconds(), "steps/s")
}
