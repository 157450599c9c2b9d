// Keeps ggml's scheduler from resetting GPU backends that llama.cpp has
// already freed (see backendreset.c).
#ifndef AGENTRL_BACKENDRESET_H
#define AGENTRL_BACKENDRESET_H

#include "abi.h"

// Offsets into ggml-backend-impl.h's structs, which no public header
// declares; TestABI checks both against the pinned sources.
#define AGENTRL_DEVICE_INIT_BACKEND_OFFSET 40 // offsetof(struct ggml_backend_device, iface.init_backend)
#define AGENTRL_BACKEND_RESET_OFFSET 136      // offsetof(struct ggml_backend, iface.reset)

// agentrl_disarm_backend_reset makes the backends that dev creates from now
// on have no reset function. It returns 0, or -1 when too many devices were
// disarmed already.
int agentrl_disarm_backend_reset(ggml_backend_dev_t dev);

// agentrl_backend_has_reset reports whether backend has a reset function.
int agentrl_backend_has_reset(ggml_backend_t backend);

#endif
