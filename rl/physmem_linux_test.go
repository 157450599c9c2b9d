package rl

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestParseCgroupLimit(t *testing.T) {
	for _, tc := range []struct {
		text  string
		bytes uint64
		ok    bool
	}{
		{"8589934592\n", 8 << 30, true},
		{"max\n", 0, false},                 // cgroup v2: no limit
		{"9223372036854771712\n", 0, false}, // cgroup v1: no limit
		{"", 0, false},
		{"0\n", 0, false},
	} {
		if got, ok := parseCgroupLimit(tc.text); got != tc.bytes || ok != tc.ok {
			t.Errorf("parseCgroupLimit(%q) = %d, %v; want %d, %v", tc.text, got, ok, tc.bytes, tc.ok)
		}
	}
}

func TestDefaultMemoryBudgetIsAThirdOfTheMachine(t *testing.T) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Skip("no /proc/meminfo to compare with")
	}
	var kib int
	for _, line := range strings.Split(string(b), "\n") {
		if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kib); err == nil {
			break
		}
	}
	mib := kib / 1024
	for _, f := range cgroupLimitFiles { // a container's limit, where lower
		if b, err := os.ReadFile(f); err == nil {
			if limit, ok := parseCgroupLimit(string(b)); ok && int(limit>>20) < mib {
				mib = int(limit >> 20)
			}
		}
	}
	if got, want := DefaultMemoryMiB(), min(max(mib/3/512*512, 2048), 32768); got != want {
		t.Errorf("default lora.memory_mib %d, want a third of the memory (%d MiB), rounded down to 512 MiB: %d", got, mib, want)
	}
}
