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
		lv = slog.LevelWarn
	case C.GGML_LOG_LEVEL_CONT:
		lv = slog.Level(lastLogLevel.Load())
	case C.GGML_LOG_LEVEL_DEBUG:
		lv = slog.LevelDebug - 4
	default:
		// llama.cpp's INFO is chatty (every metadata key on load).
		lv = slog.LevelDebug
	}
	lastLogLevel.Store(int64(lv))
	if !slog.Default().Enabled(context.Background(), lv) {
		return
	}
	msg := strings.TrimRight(C.GoString(text), "\n")
	if msg != "" {
		slog.Log(context.Background(), lv, msg, "source", "llama.cpp")
	}
}
