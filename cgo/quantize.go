package cgo

/*
#include <stdlib.h>
#include "abi.h"

static void agentrl_to_float(enum ggml_type type, const void * x, float * y, int64_t n) {
	ggml_get_type_traits(type)->to_float(x, y, n);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// FileType is a llama.cpp model file type (enum llama_ftype): the type
// most weight matrices are quantised to, with the K-quant mixes ("_S",
// "_M", "_L") that give some matrices more bits.
type FileType int32

// The file types QuantizeModel writes.
const (
	FileTypeF32    FileType = C.LLAMA_FTYPE_ALL_F32
	FileTypeF16    FileType = C.LLAMA_FTYPE_MOSTLY_F16
	FileTypeBF16   FileType = C.LLAMA_FTYPE_MOSTLY_BF16
	FileTypeQ8_0   FileType = C.LLAMA_FTYPE_MOSTLY_Q8_0
	FileTypeQ4_0   FileType = C.LLAMA_FTYPE_MOSTLY_Q4_0
	FileTypeQ4_1   FileType = C.LLAMA_FTYPE_MOSTLY_Q4_1
	FileTypeQ5_0   FileType = C.LLAMA_FTYPE_MOSTLY_Q5_0
	FileTypeQ5_1   FileType = C.LLAMA_FTYPE_MOSTLY_Q5_1
	FileTypeQ2_K   FileType = C.LLAMA_FTYPE_MOSTLY_Q2_K
	FileTypeQ3_K_S FileType = C.LLAMA_FTYPE_MOSTLY_Q3_K_S
	FileTypeQ3_K_M FileType = C.LLAMA_FTYPE_MOSTLY_Q3_K_M
	FileTypeQ3_K_L FileType = C.LLAMA_FTYPE_MOSTLY_Q3_K_L
	FileTypeQ4_K_S FileType = C.LLAMA_FTYPE_MOSTLY_Q4_K_S
	FileTypeQ4_K_M FileType = C.LLAMA_FTYPE_MOSTLY_Q4_K_M
	FileTypeQ5_K_S FileType = C.LLAMA_FTYPE_MOSTLY_Q5_K_S
	FileTypeQ5_K_M FileType = C.LLAMA_FTYPE_MOSTLY_Q5_K_M
	FileTypeQ6_K   FileType = C.LLAMA_FTYPE_MOSTLY_Q6_K
)

// QuantizeModel writes the model at in as a model of file type ft at out,
// as llama.cpp's llama-quantize does (same per-tensor type choices and
// fall-backs), with threads threads (0: one per core). The input must
// have been validated by the caller; its weights must be F32, F16 or BF16
// unless dequantize is set, which lets llama.cpp convert quantised
// weights (the caller allows it only towards F32 and F16). out is written
// in place: callers wanting an atomic result write to a temporary name
// and rename.
func QuantizeModel(in, out string, ft FileType, threads int, dequantize bool) error {
	Init()
	params := C.llama_model_quantize_default_params()
	params.nthread = C.int32_t(threads)
	params.ftype = C.enum_llama_ftype(ft)
	params.allow_requantize = C.bool(dequantize)
	cin, cout := C.CString(in), C.CString(out)
	defer C.free(unsafe.Pointer(cin))
	defer C.free(unsafe.Pointer(cout))
	takeLastError()
	if rc := C.llama_model_quantize(cin, cout, &params); rc != 0 {
		return errors.New(withLastError(fmt.Sprintf("llama.cpp could not quantize %s (status %d)", in, uint32(rc))))
	}
	return nil
}

// Dequantize converts raw tensor data of type typ to float32 with ggml's
// own routine for that type, so the values are exactly those ggml's
// kernels compute with.
func Dequantize(typ Type, raw []byte) ([]float32, error) {
	if typ < 0 || typ >= typeCount {
		return nil, fmt.Errorf("dequantize: unknown ggml type %d", int32(typ))
	}
	traits := C.ggml_get_type_traits(C.enum_ggml_type(typ))
	if traits.to_float == nil || traits.blck_size <= 0 || traits.type_size == 0 {
		return nil, fmt.Errorf("dequantize: ggml cannot convert %s to float32", typ)
	}
	block, size := int64(traits.blck_size), int64(traits.type_size)
	if int64(len(raw))%size != 0 {
		return nil, fmt.Errorf("dequantize: %d bytes is not a whole number of %s blocks", len(raw), typ)
	}
	n := int64(len(raw)) / size * block
	out := make([]float32, n)
	if n > 0 {
		C.agentrl_to_float(C.enum_ggml_type(typ), unsafe.Pointer(&raw[0]), (*C.float)(unsafe.Pointer(&out[0])), C.int64_t(n))
	}
	return out, nil
}
