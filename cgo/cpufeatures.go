package cgo

import (
	"log/slog"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

// ggml compiles its CPU kernels for the instruction sets that CGO_CFLAGS
// enables at build time, not for the CPU it runs on: a binary built by a
// plain `go build` (without the Makefile's -march=native) runs its matrix
// products with SSE only, 5-10x slower on an AVX2 machine, and nothing
// else says so. Init warns once when that happens.

// vectorFeatures are the x86-64 instruction sets whose absence from ggml's
// build costs most: the kernels of every tensor type use them. AVX-512 is
// left out: portable builds (the CUDA image's) omit it on purpose.
var vectorFeatures = []struct {
	name string // as llama_print_system_info writes it
	has  bool   // whether this CPU has it
}{
	{"AVX2", cpu.X86.HasAVX2},
	{"FMA", cpu.X86.HasFMA},
	{"F16C", cpu.X86.HasF16C},
}

// UnusedCPUFeatures lists the vector instruction sets this CPU has that
// ggml was compiled without: empty on a build made for this CPU and on
// other architectures than x86-64.
func UnusedCPUFeatures() []string {
	return unusedFeatures(SystemInfo())
}

// unusedFeatures reads which features a system info line lists as
// compiled in.
func unusedFeatures(systemInfo string) []string {
	if runtime.GOARCH != "amd64" {
		return nil
	}
	var unused []string
	for _, f := range vectorFeatures {
		if f.has && !strings.Contains(systemInfo, " "+f.name+" = 1") {
			unused = append(unused, f.name)
		}
	}
	return unused
}

// warnUnusedCPUFeatures logs which of the CPU's vector instruction sets
// ggml's build leaves unused, and how to build it with them.
func warnUnusedCPUFeatures(systemInfo string) {
	if unused := unusedFeatures(systemInfo); len(unused) > 0 {
		slog.Warn("llama.cpp was compiled without vector instructions this CPU has: inference and training run several times slower; build with make, or export CGO_CFLAGS and CGO_CXXFLAGS as the Makefile sets them (-O3 -march=native)",
			"unused", strings.Join(unused, ","))
	}
}
