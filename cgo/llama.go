// Package cgo is agentrl's only bridge to C: thin Go wrappers over the subset
// of the llama.cpp and ggml API the project uses (backend, model, context,
// batch, vocabulary, adapters, devices). It holds no policy: sampling,
// batching and validation of user input live in package llm, which must check
// its inputs before calling here, because a GGML_ABORT inside C ends the
// process.
//
// llama.cpp and ggml are compiled from the pinned Go module
// github.com/ollama/ollama (v0.17.4). The declarations in abi.h mirror its
// headers; TestABI keeps them honest.
package cgo

/*
#cgo CFLAGS: -std=c11
#include <stdlib.h>
#include "abi.h"

// Defined in Go (log.go).
extern void agentrlLog(int level, char * text, void * user_data);
static void install_log(void) { llama_log_set((ggml_log_callback)agentrlLog, NULL); }
*/
import "C"

import (
	"strings"
	"sync"

	// The C/C++ sources of llama.cpp and ggml (CPU backend), compiled by cgo.
	_ "github.com/ollama/ollama/llama/llama.cpp/src"
	_ "github.com/ollama/ollama/ml/backend/ggml/ggml/src"
)

var initOnce sync.Once

// Init initialises the llama.cpp backend once per process and routes its
// logs to log/slog. Every constructor in this package calls it.
func Init() {
	initOnce.Do(func() {
		C.install_log()
		C.llama_backend_init()
		disarmBackendResets()
		warnUnusedCPUFeatures(C.GoString(C.llama_print_system_info()))
	})
}

// SystemInfo reports the CPU features llama.cpp was compiled with.
func SystemInfo() string {
	Init()
	return strings.TrimSpace(C.GoString(C.llama_print_system_info()))
}

// MaxParallelSequences is llama.cpp's compile-time limit on sequences per
// context.
func MaxParallelSequences() int { return int(C.llama_max_parallel_sequences()) }

// SupportsGPUOffload reports whether a GPU backend is available.
func SupportsGPUOffload() bool {
	Init()
	return bool(C.llama_supports_gpu_offload())
}
