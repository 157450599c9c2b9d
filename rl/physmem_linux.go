package rl

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// physicalMemory is the memory this process may use in bytes (0 where
// unknown): the machine's RAM, or the container's memory limit where that
// is lower (a container capped at 8 GiB on a 128 GiB host has 8).
func physicalMemory() uint64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	total := uint64(si.Totalram) * uint64(si.Unit)
	for _, f := range cgroupLimitFiles {
		if b, err := os.ReadFile(f); err == nil {
			if limit, ok := parseCgroupLimit(string(b)); ok && limit < total {
				return limit
			}
		}
	}
	return total
}

// cgroupLimitFiles hold the memory limit of the process's cgroup (v2,
// then v1) as a container sees it.
var cgroupLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// parseCgroupLimit reads a cgroup memory limit: bytes, or "max" (v2) or a
// number near 2^63 (v1) for none.
func parseCgroupLimit(text string) (uint64, bool) {
	n, err := strconv.ParseUint(strings.TrimSpace(text), 10, 64)
	if err != nil || n == 0 || n >= 1<<62 {
		return 0, false
	}
	return n, true
}
