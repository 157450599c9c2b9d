package cgo

import "testing"

// TestAbortReports: the three errors llama.cpp logs on the way out of a
// decode stopped by the abort callback are recognised (so a Ctrl-C prints
// no error line), and a real failure of the same functions is not.
func TestAbortReports(t *testing.T) {
	for msg, want := range map[string]bool{
		"graph_compute: ggml_backend_sched_graph_compute_async failed with error 1\n":  true,
		"decode: failed to compute graph, compute status: 1\n":                         true,
		"llama_decode: failed to decode, ret = 2\n":                                    true,
		"graph_compute: ggml_backend_sched_graph_compute_async failed with error -1\n": false,
		"graph_compute: ggml_backend_sched_graph_compute_async failed with error 10\n": false,
		"decode: failed to compute graph, compute status: -3\n":                        false,
		"llama_decode: failed to decode, ret = -3\n":                                   false,
	} {
		if got := isAbortReport(msg); got != want {
			t.Errorf("isAbortReport(%q) = %v, want %v", msg, got, want)
		}
	}
}
