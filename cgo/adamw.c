#include "adamw.h"

#include <math.h>

#if defined(__AVX__)
#include <immintrin.h>
#endif

// The loop is written with AVX intrinsics where the target has them:
// sqrtf may set errno, so GCC (unlike clang) will not vectorise it, and
// cgo does not accept -fno-math-errno. The scalar loop finishes the last
// few elements (a compiler may fuse its multiply-adds, rounding them
// slightly differently).
void agentrl_adamw(float *restrict w, float *restrict m, float *restrict v, const float *restrict g, int64_t n,
                   float grad_scale, float beta1, float beta2, float step_size, float sqrt_b2c, float eps, float decay) {
    int64_t i = 0;
#if defined(__AVX__)
    const __m256 scale8 = _mm256_set1_ps(grad_scale), b1 = _mm256_set1_ps(beta1), b2 = _mm256_set1_ps(beta2);
    const __m256 c1 = _mm256_set1_ps(1.0f - beta1), c2 = _mm256_set1_ps(1.0f - beta2);
    const __m256 step8 = _mm256_set1_ps(step_size), b2c = _mm256_set1_ps(sqrt_b2c);
    const __m256 eps8 = _mm256_set1_ps(eps), decay8 = _mm256_set1_ps(decay);
    for (; i + 8 <= n; i += 8) {
        const __m256 gi = _mm256_mul_ps(_mm256_loadu_ps(g + i), scale8);
        const __m256 mi = _mm256_add_ps(_mm256_mul_ps(b1, _mm256_loadu_ps(m + i)), _mm256_mul_ps(c1, gi));
        const __m256 vi = _mm256_add_ps(_mm256_mul_ps(b2, _mm256_loadu_ps(v + i)), _mm256_mul_ps(_mm256_mul_ps(c2, gi), gi));
        _mm256_storeu_ps(m + i, mi);
        _mm256_storeu_ps(v + i, vi);
        const __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(vi), b2c), eps8);
        const __m256 wi = _mm256_mul_ps(_mm256_loadu_ps(w + i), decay8);
        _mm256_storeu_ps(w + i, _mm256_sub_ps(wi, _mm256_div_ps(_mm256_mul_ps(step8, mi), denom)));
    }
#endif
    for (; i < n; i++) {
        const float gi = g[i] * grad_scale;
        const float mi = beta1 * m[i] + (1.0f - beta1) * gi;
        const float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        w[i] = w[i] * decay - step_size * mi / (sqrtf(vi) / sqrt_b2c + eps);
    }
}
