package cgo

// #include "softmax.h"
import "C"

import "unsafe"

// Max returns the largest element of x, which must not be empty.
func Max(x []float32) float32 {
	return float32(C.agentrl_max((*C.float)(unsafe.Pointer(&x[0])), C.int(len(x))))
}

// Softmax writes probs[i] = exp((logits[i]-max)*invT), unnormalised, and
// returns their sum; max must be the largest logit and probs as long as
// logits. The kernel is vectorised C: the engine runs it over the whole
// vocabulary for every sampled token.
func Softmax(logits []float32, max, invT float32, probs []float32) float64 {
	return float64(C.agentrl_softmax((*C.float)(unsafe.Pointer(&logits[0])), C.int(len(logits)), C.float(max), C.float(invT), (*C.float)(unsafe.Pointer(&probs[0]))))
}

// SumExp returns the sum of exp(logits[i]-max).
func SumExp(logits []float32, max float32) float64 {
	return float64(C.agentrl_sum_exp((*C.float)(unsafe.Pointer(&logits[0])), C.int(len(logits)), C.float(max)))
}
