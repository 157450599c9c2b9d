package main

import (
	"os"
	"strconv"
	"strings"
)

// rssMiB is the process's resident memory now (0 where /proc is absent).
func rssMiB() float64 { return procMiB("/proc/self/status", "VmRSS") }

// procMiB reads a "Field:   N kB" line of a /proc file, in MiB.
func procMiB(path, field string) float64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}
