package tauretail

import (
	"testing"

	"github.com/agentrl/agentrl/envs/envtest"
)

// BenchmarkSteps: 64 instances stepped in parallel by their experts.
func BenchmarkSteps(b *testing.B) {
	envtest.Benchmark(b, New)
}
