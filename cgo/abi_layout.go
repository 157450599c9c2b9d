package cgo

// #include "abi.h"
import "C"

import "reflect"

// mirroredStructs maps each C struct declared in abi_types.h to its Go view,
// whose field offsets and size TestABI compares with the real headers.
func mirroredStructs() map[string]reflect.Type {
	return map[string]reflect.Type{
		"struct llama_model_params":          reflect.TypeOf(C.struct_llama_model_params{}),
		"struct llama_context_params":        reflect.TypeOf(C.struct_llama_context_params{}),
		"struct llama_batch":                 reflect.TypeOf(C.struct_llama_batch{}),
		"struct llama_chat_message":          reflect.TypeOf(C.struct_llama_chat_message{}),
		"struct llama_model_quantize_params": reflect.TypeOf(C.struct_llama_model_quantize_params{}),
		"struct ggml_init_params":            reflect.TypeOf(C.struct_ggml_init_params{}),
		"struct ggml_tensor":                 reflect.TypeOf(C.struct_ggml_tensor{}),
	}
}
