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

// DefaultMemoryMiB is the default bound on one micro-batch's activations
// (lora.memory_mib): a third of the machine's memory (or of a container's
// memory limit, where lower), so that the rest
// holds the model in the engine and the trainer, the KV cache and the
// system, between 2 and 32 GiB (4 GiB where the memory is unknown). A
// micro-batch over it is recomputed (gradient checkpointing: the same
// gradients, about a quarter more time), so the bound changes the speed
// of a run, never what it learns; a fixed bound of 4 GiB made a
// 2,048-token GRPO micro-batch of SmolLM2 recompute on a 24 GiB machine.
func DefaultMemoryMiB() int {
	total := physicalMemory()
	if total == 0 {
		return 4096
	}
	mib := int(total/3>>20) / 512 * 512
	return min(max(mib, 2048), 32768)
}
