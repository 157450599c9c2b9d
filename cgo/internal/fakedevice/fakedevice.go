// Package fakedevice makes ggml backend devices out of plain memory, laid
// out as ggml-backend-impl.h lays out a device and its backends, for the
// tests of the cgo package's device shims.
package fakedevice

/*
#cgo CFLAGS: -I${SRCDIR}/../..
#include <stdlib.h>
#include <string.h>
#include "backendreset.h"

static void fake_reset(ggml_backend_t backend) { (void) backend; }

// A backend: zeros but for its reset function.
static ggml_backend_t fake_init_backend(ggml_backend_dev_t dev, const char * params) {
	(void) dev; (void) params;
	char * backend = calloc(1, 512);
	void (*reset)(ggml_backend_t) = fake_reset;
	memcpy(backend + AGENTRL_BACKEND_RESET_OFFSET, &reset, sizeof reset);
	return (ggml_backend_t) backend;
}

static ggml_backend_dev_t fake_device(void) {
	char * dev = calloc(1, 512);
	ggml_backend_t (*init)(ggml_backend_dev_t, const char *) = fake_init_backend;
	memcpy(dev + AGENTRL_DEVICE_INIT_BACKEND_OFFSET, &init, sizeof init);
	return (ggml_backend_dev_t) dev;
}

// What ggml_backend_dev_init does: call the device's init_backend.
static ggml_backend_t init_backend(ggml_backend_dev_t dev) {
	ggml_backend_t (*init)(ggml_backend_dev_t, const char *);
	memcpy(&init, (char *) dev + AGENTRL_DEVICE_INIT_BACKEND_OFFSET, sizeof init);
	return init(dev, NULL);
}
*/
import "C"

import (
	"unsafe"

	// Its C code defines the shim functions called here.
	_ "github.com/agentrl/agentrl/cgo"
)

// Device is a fake device whose backends have a reset function.
type Device struct{ c C.ggml_backend_dev_t }

// New makes a device; Free frees it.
func New() *Device { return &Device{C.fake_device()} }

// Free frees the device's memory.
func (d *Device) Free() { C.free(unsafe.Pointer(d.c)) }

// Disarm makes the device's later backends have no reset function, as the
// cgo package does to every device but the CPU's.
func (d *Device) Disarm() bool { return C.agentrl_disarm_backend_reset(d.c) == 0 }

// NewBackendHasReset creates a backend through the device and reports
// whether it has a reset function.
func (d *Device) NewBackendHasReset() bool {
	b := C.init_backend(d.c)
	defer C.free(unsafe.Pointer(b))
	return C.agentrl_backend_has_reset(b) != 0
}
