package cgo

// #include "adamw.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// AdamWStep holds the constants of one AdamW update (see AdamW).
type AdamWStep struct {
	GradScale    float32 // multiplies the gradient (1 / micro-batches)
	Beta1, Beta2 float32
	StepSize     float32 // lr / (1 - beta1^t)
	SqrtB2C      float32 // sqrt(1 - beta2^t)
	Eps          float32
	Decay        float32 // 1 - lr * weight decay; 1 without decay
}

// AdamW updates the parameters w and their moments m and v in place from
// the gradient g, in float32 as PyTorch's AdamW does: a vectorised C loop,
// since the optimiser touches every parameter once per step. The four
// slices must have the same length.
func AdamW(w, m, v, g []float32, s AdamWStep) {
	n := len(w)
	if len(m) != n || len(v) != n || len(g) != n {
		panic(fmt.Sprintf("cgo.AdamW: lengths %d, %d, %d, %d differ", n, len(m), len(v), len(g)))
	}
	if n == 0 {
		return
	}
	C.agentrl_adamw((*C.float)(unsafe.Pointer(&w[0])), (*C.float)(unsafe.Pointer(&m[0])), (*C.float)(unsafe.Pointer(&v[0])),
		(*C.float)(unsafe.Pointer(&g[0])), C.int64_t(n), C.float(s.GradScale), C.float(s.Beta1), C.float(s.Beta2),
		C.float(s.StepSize), C.float(s.SqrtB2C), C.float(s.Eps), C.float(s.Decay))
}
