package alfworld

import (
	"testing"

	"github.com/agentrl/agentrl/envs/envbench"
)

// BenchmarkSteps: 64 instances stepped in parallel by their experts.
func BenchmarkSteps(b *testing.B) {
	envbench.Benchmark(b, New)
}
