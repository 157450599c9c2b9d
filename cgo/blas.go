package cgo

/*
#cgo linux LDFLAGS: -ldl
#include <stdlib.h>
#include "blas.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The trainer's matrix products on the CPU can run through a CBLAS library
// instead of ggml's own kernels: ggml's tiled F32 product (llamafile's
// tinyBLAS) computes each output as a dot product of unpacked rows, while
// OpenBLAS, BLIS, MKL and Accelerate pack their operands into
// cache-blocked panels and run at a larger share of the core's peak, which
// is what training spends most of its time on. The library is opened at
// run time, so one binary runs with or without it; each product is a ggml
// custom operation whose threads split it among themselves, each calling
// the library single-threaded.

// BLASEnv names the environment variable that picks the library: a path or
// file name to open, or "off" to use ggml's kernels. Unset, the first of
// the usual libraries that opens is used.
const BLASEnv = "AGENTRL_BLAS"

// blasCandidates are tried in order when BLASEnv is unset. The reference
// BLAS (libblas.so.3 without a faster alternative installed) is not among
// them: it is slower than ggml.
var blasCandidates = map[string][]string{
	"linux":  {"libopenblas.so.0", "libopenblas.so", "libblis.so.4", "libmkl_rt.so.2", "libmkl_rt.so"},
	"darwin": {"/System/Library/Frameworks/Accelerate.framework/Accelerate"},
}

var blas struct {
	once sync.Once
	name string // the library opened; empty when none
	err  error  // why the library BLASEnv names could not be used
}

// openBLASCoreType is OpenBLAS's variable that overrides its choice of
// kernels for the CPU.
const openBLASCoreType = "OPENBLAS_CORETYPE"

// chooseOpenBLASKernels sets OPENBLAS_CORETYPE, unless the user has, to
// the fastest x86-64 kernel family the CPU runs. An OpenBLAS release older
// than the CPU does not recognise it and falls back to its slowest
// kernels: 0.3.21 (Debian 12) on a Sapphire Rapids Xeon picks Prescott
// (SSE3), whose single-precision product is 3x slower there than its
// SkylakeX (AVX-512) one. SkylakeX and Haswell are the families OpenBLAS
// itself uses for the single-precision products of the CPUs that have
// these features, newer ones included. It must run before the library
// is opened: OpenBLAS reads the variable once, when it loads.
func chooseOpenBLASKernels() {
	if runtime.GOARCH != "amd64" || os.Getenv(openBLASCoreType) != "" {
		return
	}
	x := cpu.X86
	switch {
	case x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512DQ && x.HasAVX512CD:
		os.Setenv(openBLASCoreType, "SkylakeX")
	case x.HasAVX2 && x.HasFMA:
		os.Setenv(openBLASCoreType, "Haswell")
	}
}

// BLASKernels is the kernel family the opened library uses on this CPU
// (OpenBLAS's core name, e.g. "SkylakeX"), or "" where it does not say or
// no library is open.
func BLASKernels() string {
	if name, _ := BLAS(); name == "" {
		return ""
	}
	if k := C.agentrl_blas_kernels(); k != nil {
		return C.GoString(k)
	}
	return ""
}

// BLAS opens the CBLAS library once and returns its name, or "" when the
// products stay on ggml's kernels (AGENTRL_BLAS=off, or none of the usual
// libraries is installed). An error means AGENTRL_BLAS names a library
// that cannot be used.
func BLAS() (string, error) {
	blas.once.Do(func() {
		chooseOpenBLASKernels()
		choice := strings.TrimSpace(os.Getenv(BLASEnv))
		switch strings.ToLower(choice) {
		case "off", "none", "0", "false":
			return
		case "":
			for _, lib := range blasCandidates[runtime.GOOS] {
				if openBLAS(lib) == nil {
					blas.name = lib
					return
				}
			}
		default:
			if err := openBLAS(choice); err != nil {
				blas.err = fmt.Errorf("%s=%s: %w (set %s=off to use ggml's kernels)", BLASEnv, choice, err, BLASEnv)
				return
			}
			blas.name = choice
		}
	})
	return blas.name, blas.err
}

// BLASAdvice is what to install for faster training on the CPU when no
// CBLAS library was found, or "" when one is open or BLASEnv is set (to
// "off" or to a library). Training long sequences of SmolLM2 with OpenBLAS is about
// 1.6x as fast as with ggml's kernels (docs/trainer.md), a difference a
// user would not otherwise see: the run works either way.
func BLASAdvice() string {
	if name, err := BLAS(); name != "" || err != nil || strings.TrimSpace(os.Getenv(BLASEnv)) != "" {
		return ""
	}
	if runtime.GOOS == "linux" {
		return "no CBLAS library found, so training's matrix products run on ggml's kernels, about 1.6x slower; install OpenBLAS (Debian, Ubuntu: apt install libopenblas0-pthread) for faster training"
	}
	return ""
}

func openBLAS(path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var msg [512]C.char
	if C.agentrl_blas_open(cpath, &msg[0], C.size_t(len(msg))) != 0 {
		return errors.New(C.GoString(&msg[0]))
	}
	return nil
}

// blasOperand reports whether t can be a BLAS operand: F32 with unit-stride
// rows whose stride fits the library's int, for a matrix of rows elements
// per column.
func blasOperand(t Tensor, rows int64) bool {
	ld := t.Nb(1) / 4
	return t.Type() == TypeF32 && t.Nb(0) == 4 && ld >= rows && ld < 1<<31 && t.Ne(1) < 1<<31 && t.Ne(0) < 1<<31
}

// The products BLAS computes, as ggml custom operations.
type blasProduct struct {
	op     string
	kernel C.ggml_custom_op_t
	// inner gives the contraction lengths of a and b, outer the
	// dimensions 0 and 1 of the result.
	inner func(a, b Tensor) (int64, int64)
	outer func(a, b Tensor) (int64, int64)
}

var (
	blasMulMat = blasProduct{"blas mul_mat", C.ggml_custom_op_t(C.agentrl_blas_mul_mat),
		func(a, b Tensor) (int64, int64) { return a.Ne(0), b.Ne(0) },
		func(a, b Tensor) (int64, int64) { return a.Ne(1), b.Ne(1) }}
	blasMulMatT = blasProduct{"blas mul_mat_t", C.ggml_custom_op_t(C.agentrl_blas_mul_mat_t),
		func(a, b Tensor) (int64, int64) { return a.Ne(1), b.Ne(0) },
		func(a, b Tensor) (int64, int64) { return a.Ne(0), b.Ne(1) }}
	blasOutProd = blasProduct{"blas out_prod", C.ggml_custom_op_t(C.agentrl_blas_out_prod),
		func(a, b Tensor) (int64, int64) { return a.Ne(1), b.Ne(1) },
		func(a, b Tensor) (int64, int64) { return a.Ne(0), b.Ne(0) }}
)

func (p blasProduct) can(a, b Tensor) bool {
	ka, kb := p.inner(a, b)
	name, _ := BLAS()
	return name != "" && ka == kb && b.Ne(2)%a.Ne(2) == 0 && b.Ne(3)%a.Ne(3) == 0 &&
		blasOperand(a, a.Ne(0)) && blasOperand(b, b.Ne(0))
}

func (p blasProduct) build(x *GraphContext, a, b Tensor) Tensor {
	if !p.can(a, b) {
		opPanic(p.op, "%v and %v: shapes do not match, not F32 with unit-stride rows, or no BLAS library open", a, b)
	}
	x.reserve(p.op)
	args := (**C.struct_ggml_tensor)(C.malloc(C.size_t(2 * unsafe.Sizeof((*C.struct_ggml_tensor)(nil)))))
	defer C.free(unsafe.Pointer(args))
	srcs := unsafe.Slice(args, 2)
	srcs[0], srcs[1] = a.c, b.c
	m, n := p.outer(a, b)
	return Tensor{C.ggml_custom_4d(x.c, C.GGML_TYPE_F32, C.int64_t(m), C.int64_t(n), C.int64_t(b.Ne(2)), C.int64_t(b.Ne(3)),
		args, 2, p.kernel, C.GGML_N_TASKS_MAX, nil)}
}

// BLASMulMat is MulMat computed by the CBLAS library BLAS opened, for the
// CPU backend. It panics with an *OpError if no library is open, the
// shapes do not match or an operand is not F32 with unit-stride rows (a
// permuted view is fine); CanBLASMulMat says beforehand.
func (x *GraphContext) BLASMulMat(a, b Tensor) Tensor { return blasMulMat.build(x, a, b) }

// CanBLASMulMat reports whether BLASMulMat(a, b) can run.
func CanBLASMulMat(a, b Tensor) bool { return blasMulMat.can(a, b) }

// BLASMulMatT is MulMat(T(a), b) without making the transpose: for a
// [m, k] and b [k, n] the result is [m, n]. See BLASMulMat.
func (x *GraphContext) BLASMulMatT(a, b Tensor) Tensor { return blasMulMatT.build(x, a, b) }

// CanBLASMulMatT reports whether BLASMulMatT(a, b) can run.
func CanBLASMulMatT(a, b Tensor) bool { return blasMulMatT.can(a, b) }

// BLASOutProd is OutProd computed by the CBLAS library. See BLASMulMat.
func (x *GraphContext) BLASOutProd(a, b Tensor) Tensor { return blasOutProd.build(x, a, b) }

// CanBLASOutProd reports whether BLASOutProd(a, b) can run.
func CanBLASOutProd(a, b Tensor) bool { return blasOutProd.can(a, b) }
