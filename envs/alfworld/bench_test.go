package alfworld

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrl/agentrl/envs"
)

// BenchmarkSteps runs 64 environments in parallel goroutines, each driven
// by the expert and reset when its episode ends, and reports the total
// environment steps per second (expert and Step together).
func BenchmarkSteps(b *testing.B) {
	const workers = 64
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := New().(*Env)
			seed := int64(w) << 32
			if _, err := e.Reset(envs.Train, seed); err != nil {
				b.Error(err)
				return
			}
			for next.Add(1) <= int64(b.N) {
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
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "steps/s")
}
