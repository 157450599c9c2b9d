//go:build !linux && !darwin

package rl

// physicalMemory is the machine's RAM in bytes (0 where unknown).
func physicalMemory() uint64 { return 0 }
