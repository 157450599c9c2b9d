// The pinned ggml's scheduler calls each backend's reset function when it
// is freed (a change of the pinned sources, for the CUDA backend only), but
// llama.cpp's context frees its backends before its scheduler, so the
// CUDA backend's reset runs on a freed backend and crashes the process in
// llama_free. The reset only returns the backend's memory pools early,
// which freeing the backend does anyway: backends created through a
// disarmed device get none, like the CPU backend.

#include "backendreset.h"

#include <stddef.h>
#include <string.h>

typedef ggml_backend_t (*init_backend_fn)(ggml_backend_dev_t dev, const char * params);

enum { max_devices = 64 };

// The devices disarmed and their own init_backend. Written under the Go
// side's lock, before any backend of the device is created.
static struct {
	ggml_backend_dev_t dev;
	init_backend_fn    init;
} disarmed[max_devices];
static int n_disarmed;

static init_backend_fn read_init(ggml_backend_dev_t dev) {
	init_backend_fn f;
	memcpy(&f, (char *) dev + AGENTRL_DEVICE_INIT_BACKEND_OFFSET, sizeof f);
	return f;
}

static ggml_backend_t init_without_reset(ggml_backend_dev_t dev, const char * params) {
	for (int i = 0; i < n_disarmed; i++) {
		if (disarmed[i].dev != dev) {
			continue;
		}
		ggml_backend_t backend = disarmed[i].init(dev, params);
		if (backend != NULL) {
			void (*none)(ggml_backend_t) = NULL;
			memcpy((char *) backend + AGENTRL_BACKEND_RESET_OFFSET, &none, sizeof none);
		}
		return backend;
	}
	return NULL;
}

int agentrl_disarm_backend_reset(ggml_backend_dev_t dev) {
	init_backend_fn init = read_init(dev);
	if (init == NULL || init == init_without_reset) {
		return 0;
	}
	if (n_disarmed == max_devices) {
		return -1;
	}
	disarmed[n_disarmed].dev = dev;
	disarmed[n_disarmed].init = init;
	n_disarmed++;
	init_backend_fn wrapped = init_without_reset;
	memcpy((char *) dev + AGENTRL_DEVICE_INIT_BACKEND_OFFSET, &wrapped, sizeof wrapped);
	return 0;
}

int agentrl_backend_has_reset(ggml_backend_t backend) {
	void (*reset)(ggml_backend_t);
	memcpy(&reset, (char *) backend + AGENTRL_BACKEND_RESET_OFFSET, sizeof reset);
	return reset != NULL;
}
