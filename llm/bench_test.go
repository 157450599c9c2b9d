package llm

import (
	"context"
	"math"
	"testing"
)

func TestBenchInferReportsBothSides(t *testing.T) {
	const parallel, promptTokens, genTokens, repeats = 2, 8, 4, 3
	var reported []int
	r, err := BenchInfer(context.Background(), testModel, InferBenchConfig{
		Parallel: parallel, PromptTokens: promptTokens, GenTokens: genTokens, Repeats: repeats,
		Engine: EngineOptions{Threads: 1, Context: promptTokens + genTokens},
		Progress: func(repeat int, plainS, engineS float64) {
			if plainS > 0 && engineS > 0 {
				reported = append(reported, repeat)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(reported) != repeats || reported[0] != 1 || reported[repeats-1] != repeats {
		t.Errorf("progress reported repeats %v, want 1 to %d with their times", reported, repeats)
	}
	if r.Repeats != repeats || r.CeilingSeconds <= 0 || r.EngineSeconds <= 0 || r.EngineWorstSeconds < r.EngineSeconds {
		t.Fatalf("implausible times: %+v", r)
	}
	if want := r.CeilingSeconds / r.EngineSeconds; r.EngineVsCeiling != want {
		t.Fatalf("engine_vs_ceiling %g, want ceiling / engine time %g", r.EngineVsCeiling, want)
	}
	if r.EngineVsCeilingMedian <= 0 || math.IsInf(r.EngineVsCeilingMedian, 0) {
		t.Fatalf("median ratio %g: want a positive finite ratio", r.EngineVsCeilingMedian)
	}
	if _, err := BenchInfer(context.Background(), testModel, InferBenchConfig{Parallel: 1, PromptTokens: 100, GenTokens: 100,
		Engine: EngineOptions{Context: 64}}); err == nil {
		t.Fatal("a workload longer than the context should be refused")
	}
}
