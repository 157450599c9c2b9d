package rl

import (
	"runtime"
	"syscall"
)

// PeakRSSMiB is the most resident memory the process has held so far, in
// MiB (0 where the system does not say): the base model in the engine and
// in the trainer, the KV cache, the adapters, and the largest micro-batch's
// activations.
func PeakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return float64(ru.Maxrss) / (1 << 20) // bytes
	}
	return float64(ru.Maxrss) / 1024 // KiB
}
