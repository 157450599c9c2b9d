package cgo

/*
#include "cxxfeatures.h"
*/
import "C"

import (
	"log/slog"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

// ggml compiles its CPU kernels for the instruction sets that CGO_CFLAGS
// (its C half) and CGO_CXXFLAGS (its C++ half) enable at build time, not
// for the CPU it runs on: a binary built by a plain `go build` (without
// the Makefile's -march=native) runs its matrix products with SSE only,
// 5-15x slower on an AVX2 machine, and nothing else says so. Init warns
// once when that happens.

// vectorFeatures are the x86-64 instruction sets whose absence from ggml's
// build costs most: the kernels of every tensor type use them. AVX-512 is
// left out: portable builds (the CUDA image's) omit it on purpose.
var vectorFeatures = []struct {
	name string // as llama_print_system_info writes it
	has  bool   // whether this CPU has it
	cxx  int    // its bit in agentrl_cxx_vector_features
}{
	{"AVX2", cpu.X86.HasAVX2, C.AGENTRL_CXX_AVX2},
	{"FMA", cpu.X86.HasFMA, C.AGENTRL_CXX_FMA},
	{"F16C", cpu.X86.HasF16C, C.AGENTRL_CXX_F16C},
}

// UnusedCPUFeatures lists the vector instruction sets this CPU has that
// ggml was compiled without, in its C or its C++ half: empty on a build
// made for this CPU and on other architectures than x86-64.
func UnusedCPUFeatures() []string {
	return unusedFeatures(SystemInfo(), cxxVectorFeatures())
}

// unusedFeatures reads which features the C half has from its system
// info line and which the C++ half has from cxx.
func unusedFeatures(systemInfo string, cxx int) []string {
	if runtime.GOARCH != "amd64" {
		return nil
	}
	var unused []string
	for _, f := range vectorFeatures {
		inC := strings.Contains(systemInfo, " "+f.name+" = 1")
		if f.has && (!inC || cxx&f.cxx == 0) {
			unused = append(unused, f.name)
		}
	}
	return unused
}

// cxxVectorFeatures are the vectorFeatures bits of the C++ half's build.
func cxxVectorFeatures() int { return int(C.agentrl_cxx_vector_features()) }

// warnUnusedCPUFeatures logs which of the CPU's vector instruction sets
// ggml's build leaves unused, and how to build it with them.
func warnUnusedCPUFeatures(systemInfo string) {
	if unused := unusedFeatures(systemInfo, cxxVectorFeatures()); len(unused) > 0 {
		slog.Warn("llama.cpp was compiled without vector instructions this CPU has: inference and training run several times slower; build with make, or export CGO_CFLAGS and CGO_CXXFLAGS, each in its own assignment, as the Makefile sets them (-O3 -march=native)",
			"unused", strings.Join(unused, ","))
	}
}
