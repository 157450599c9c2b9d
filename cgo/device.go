package cgo

/*
#include <stdlib.h>
#include "abi.h"
#include "backendreset.h"
*/
import "C"

import (
	"log/slog"
	"sync"
	"unsafe"
)

// Device is a compute device ggml found (CPU, GPU, ...).
type Device struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"` // cpu, gpu, igpu or accel
	Backend     string `json:"backend"`
	MemoryFree  uint64 `json:"memory_free"`
	MemoryTotal uint64 `json:"memory_total"`
}

// Devices lists the devices of every registered backend.
func Devices() []Device {
	Init()
	n := int(C.ggml_backend_dev_count())
	devs := make([]Device, 0, n)
	for i := 0; i < n; i++ {
		d := C.ggml_backend_dev_get(C.size_t(i))
		var free, total C.size_t
		C.ggml_backend_dev_memory(d, &free, &total)
		devs = append(devs, Device{
			Name:        C.GoString(C.ggml_backend_dev_name(d)),
			Description: C.GoString(C.ggml_backend_dev_description(d)),
			Type:        deviceTypeName(C.ggml_backend_dev_type(d)),
			Backend:     C.GoString(C.ggml_backend_reg_name(C.ggml_backend_dev_backend_reg(d))),
			MemoryFree:  uint64(free),
			MemoryTotal: uint64(total),
		})
	}
	return devs
}

func deviceTypeName(t C.enum_ggml_backend_dev_type) string {
	switch t {
	case C.GGML_BACKEND_DEVICE_TYPE_CPU:
		return "cpu"
	case C.GGML_BACKEND_DEVICE_TYPE_GPU:
		return "gpu"
	case C.GGML_BACKEND_DEVICE_TYPE_IGPU:
		return "igpu"
	default:
		return "accel"
	}
}

// LoadBackends loads every ggml backend library (libggml-cuda.so, ...) found
// in dir, so that its devices appear in Devices.
func LoadBackends(dir string) {
	Init()
	cdir := C.CString(dir)
	defer C.free(unsafe.Pointer(cdir))
	C.ggml_backend_load_all_from_path(cdir)
	disarmBackendResets()
}

var disarmMu sync.Mutex

// disarmBackendResets keeps the scheduler of a freed llama.cpp context
// from resetting the GPU backends the context freed before it
// (backendreset.c): the backends of every device but the CPU's are
// created without a reset function. The CPU backend has none.
func disarmBackendResets() {
	disarmMu.Lock()
	defer disarmMu.Unlock()
	for i := range C.ggml_backend_dev_count() {
		d := C.ggml_backend_dev_get(i)
		if C.ggml_backend_dev_type(d) == C.GGML_BACKEND_DEVICE_TYPE_CPU {
			continue
		}
		if C.agentrl_disarm_backend_reset(d) != 0 {
			slog.Warn("too many devices to keep the scheduler from resetting freed backends: freeing a context on this one may crash", "device", C.GoString(C.ggml_backend_dev_name(d)))
		}
	}
}
