package main

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/agentrl/agentrl/cgo"
)

// libDirEnv overrides where GPU backend libraries (libggml-cuda.so, ...)
// are looked for.
const libDirEnv = "AGENTRL_LIB_DIR"

// loadGPUBackends registers the GPU backends installed beside the binary
// (<exe dir>/../lib/agentrl, or $AGENTRL_LIB_DIR), once.
var loadGPUBackends = sync.OnceFunc(func() {
	dir := os.Getenv(libDirEnv)
	if dir == "" {
		exe, err := os.Executable()
		if err != nil {
			return
		}
		dir = filepath.Join(filepath.Dir(exe), "..", "lib", "agentrl")
	}
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		cgo.LoadBackends(dir)
	}
})
