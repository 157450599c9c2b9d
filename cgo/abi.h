// The subset of the llama.h, ggml.h and ggml-backend.h C API that agentrl
// calls, declared here so that the Go package builds with no generated files.
// It mirrors the ABI of the pinned llama.cpp (github.com/ollama/ollama
// v0.17.4) exactly; TestABI checks every struct layout, enum value and
// function prototype against the real headers. When the pin moves, update
// abi_types.h and abi_funcs.h and run that test.
#ifndef AGENTRL_ABI_H
#define AGENTRL_ABI_H

#include "abi_types.h"
#include "abi_funcs.h"

#endif
