package cgo

// A file with //export may only declare in its preamble.

// #include "abi.h"
import "C"

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"unsafe"
)

// lastError is the text of llama.cpp's latest error message: loaders report
// failure as a NULL pointer and explain it only in the log.
var lastError atomic.Value

func init() { lastError.Store("") }

// takeLastError returns and clears the latest error message.
func takeLastError() string {
	s, _ := lastError.Swap("").(string)
	return s
}

// withLastError adds llama.cpp's latest logged error, if any, to msg.
func withLastError(msg string) string {
	if e := takeLastError(); e != "" {
		return msg + ": " + e
	}
	return msg + " (run with --verbose for llama.cpp's log)"
}

// abortsRequested counts the contexts whose abort flag is set.
var abortsRequested atomic.Int32

// isAbortReport tells the messages llama.cpp logs when a decode stops at
// the abort callback's request.
func isAbortReport(msg string) bool {
	msg = strings.TrimSpace(msg)
	for _, report := range []string{
		"graph_compute_async failed with error 1", // GGML_STATUS_ABORTED
		"failed to compute graph, compute status: 1",
		"failed to decode, ret = 2",
	} {
		if strings.HasSuffix(msg, report) {
			return true
		}
	}
	return false
}

// lastLogLevel is the level of the previous message, for GGML_LOG_LEVEL_CONT
// continuations; ggml may log from its worker threads.
var lastLogLevel atomic.Int64

//export agentrlLog
func agentrlLog(level C.int, text *C.char, _ unsafe.Pointer) {
	var lv slog.Level
	switch level {
	case C.GGML_LOG_LEVEL_ERROR:
		lv = slog.LevelError
	case C.GGML_LOG_LEVEL_WARN:
		// llama.cpp warns about benign configurations too (e.g. a shared
		// KV cache larger than the training context); agentrl validates
		// what matters itself, so these show with --verbose.
		lv = slog.LevelInfo
	case C.GGML_LOG_LEVEL_CONT:
		lv = slog.Level(lastLogLevel.Load())
	case C.GGML_LOG_LEVEL_DEBUG:
		lv = slog.LevelDebug - 4
	default:
		// llama.cpp's INFO is chatty (every metadata key on load).
		lv = slog.LevelDebug
	}
	if lv >= slog.LevelError && abortsRequested.Load() > 0 && isAbortReport(C.GoString(text)) {
		// The failure a requested abort (Ctrl-C, a cancelled call) makes
		// llama_decode report: expected, so only --verbose shows it.
		lv = slog.LevelDebug
	}
	lastLogLevel.Store(int64(lv))
	if lv >= slog.LevelError {
		// The first error explains; later ones only say that loading failed.
		lastError.CompareAndSwap("", strings.TrimSpace(C.GoString(text)))
	}
	if !slog.Default().Enabled(context.Background(), lv) {
		return
	}
	msg := strings.TrimRight(C.GoString(text), "\n")
	if msg != "" {
		slog.Log(context.Background(), lv, msg, "source", "llama.cpp")
	}
}
