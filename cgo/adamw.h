#ifndef AGENTRL_ADAMW_H
#define AGENTRL_ADAMW_H

#include <stdint.h>

// agentrl_adamw applies one AdamW update to n parameters w with moments m
// and v and gradient g * grad_scale:
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   w = w * decay - step_size * m / (sqrt(v) / sqrt_b2c + eps)
// where step_size = lr / (1 - beta1^t), sqrt_b2c = sqrt(1 - beta2^t) and
// decay = 1 - lr * weight_decay, in float32 as PyTorch's AdamW.
void agentrl_adamw(float *w, float *m, float *v, const float *g, int64_t n, float grad_scale,
                   float beta1, float beta2, float step_size, float sqrt_b2c, float eps, float decay);

#endif
