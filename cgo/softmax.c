// A vectorisable softmax kernel for sampling: with -O3 and the machine's
// SIMD flags (the Makefile's CGO_CFLAGS) the compiler turns these loops into
// AVX2/AVX-512 code, which Go does not do for its own loops. The reductions
// keep LANES independent partial results so that they vectorise without
// reassociating floating-point sums.
#include "softmax.h"

#include <stdint.h>
#include <string.h>

#define LANES 16

// exp for x <= 0, |relative error| < 3e-7: range reduction to
// e^r * 2^k with |r| <= ln2/2 and a degree-6 Taylor polynomial, written
// without branches or calls so that the loops vectorise.
static inline float exp_nonpos(float x) {
    x = x < -87.0f ? -87.0f : x;
    // Adding and subtracting 1.5 * 2^23 rounds to the nearest integer.
    const float k = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    const float r = x - k * 0.693359375f - k * -2.12194440e-4f;
    const float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
    const int32_t bits = ((int32_t)k + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

float agentrl_max(const float * x, int n) {
    float lane[LANES];
    for (int j = 0; j < LANES; j++) {
        lane[j] = x[0];
    }
    int i = 0;
    for (; i + LANES <= n; i += LANES) {
        for (int j = 0; j < LANES; j++) {
            lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
        }
    }
    float m = x[0];
    for (int j = 0; j < LANES; j++) {
        m = lane[j] > m ? lane[j] : m;
    }
    for (; i < n; i++) {
        m = x[i] > m ? x[i] : m;
    }
    return m;
}

double agentrl_softmax(const float * logits, int n, float max, float inv_t, float * probs) {
    float lane[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES) {
        for (int j = 0; j < LANES; j++) {
            const float p = exp_nonpos((logits[i + j] - max) * inv_t);
            probs[i + j] = p;
            lane[j] += p;
        }
    }
    double sum = 0;
    for (int j = 0; j < LANES; j++) {
        sum += lane[j];
    }
    for (; i < n; i++) {
        probs[i] = exp_nonpos((logits[i] - max) * inv_t);
        sum += probs[i];
    }
    return sum;
}

double agentrl_sum_exp(const float * logits, int n, float max) {
    float lane[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES) {
        for (int j = 0; j < LANES; j++) {
            lane[j] += exp_nonpos(logits[i + j] - max);
        }
    }
    double sum = 0;
    for (int j = 0; j < LANES; j++) {
        sum += lane[j];
    }
    for (; i < n; i++) {
        sum += exp_nonpos(logits[i] - max);
    }
    return sum;
}
