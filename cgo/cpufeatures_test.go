package cgo

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

func TestUnusedFeaturesReadsTheSystemInfo(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		if got := unusedFeatures("CPU : NEON = 1 |", 0); got != nil {
			t.Fatalf("off x86-64 nothing is reported, got %v", got)
		}
		t.Skip("the vector features checked are x86-64's")
	}
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasF16C {
		t.Skip("this CPU lacks AVX2, FMA or F16C")
	}
	all := "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 |"
	allCXX := 0
	for _, f := range vectorFeatures {
		allCXX |= f.cxx
	}
	if got := unusedFeatures(all, allCXX); len(got) != 0 {
		t.Errorf("a build with every feature: got unused %v", got)
	}
	sseOnly := "CPU : SSE3 = 1 | SSSE3 = 1 | LLAMAFILE = 1 |"
	if got := unusedFeatures(sseOnly, allCXX); !slices.Equal(got, []string{"AVX2", "FMA", "F16C"}) {
		t.Errorf("an SSE-only C half: got unused %v, want AVX2, FMA, F16C", got)
	}
	// The C half built for the CPU, the C++ half (CGO_CXXFLAGS unset) not.
	if got := unusedFeatures(all, 0); !slices.Equal(got, []string{"AVX2", "FMA", "F16C"}) {
		t.Errorf("an SSE-only C++ half: got unused %v, want AVX2, FMA, F16C", got)
	}
	// "AVX = 1" must not count as AVX2, nor "AVX512_BF16" as anything.
	if got := unusedFeatures("CPU : AVX = 1 | AVX512_BF16 = 1 | FMA = 1 | F16C = 1 |", allCXX); !slices.Equal(got, []string{"AVX2"}) {
		t.Errorf("got unused %v, want AVX2", got)
	}
}

func TestThisBuildUsesTheCPU(t *testing.T) {
	// Built through the Makefile (-march=native), ggml uses every vector
	// feature of the machine that built it, in both halves.
	if !strings.Contains(os.Getenv("CGO_CFLAGS"), "-march=native") || !strings.Contains(os.Getenv("CGO_CXXFLAGS"), "-march=native") {
		t.Skip("not built with -march=native")
	}
	if got := UnusedCPUFeatures(); len(got) != 0 {
		t.Fatalf("built with -march=native, ggml leaves %v unused (system info %q)", got, SystemInfo())
	}
}
