#include "blas.h"

#include <dlfcn.h>
#include <stdio.h>

// CBLAS's enums, as every implementation numbers them.
enum { CBLAS_COL_MAJOR = 102 };
enum { CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

typedef void (*sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *b, int ldb,
                         float beta, float *c, int ldc);

static sgemm_fn sgemm;
static const char *kernels;

int agentrl_blas_open(const char *path, char *err, size_t err_len) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(err, err_len, "%s", dlerror());
        return -1;
    }
    sgemm_fn f = (sgemm_fn)dlsym(lib, "cblas_sgemm");
    if (f == NULL) {
        snprintf(err, err_len, "%s has no cblas_sgemm", path);
        dlclose(lib);
        return -1;
    }
    // An OpenMP build of OpenBLAS sizes each call's thread team from the
    // calling thread's OpenMP setting, which ggml's threads do not have:
    // every one of them would start a team as large as the machine.
    int (*get_parallel)(void) = (int (*)(void))dlsym(lib, "openblas_get_parallel");
    if (get_parallel != NULL && get_parallel() == 2) {
        snprintf(err, err_len, "%s is OpenBLAS built with OpenMP, whose threads would compete with ggml's: use its pthreads build (Debian: libopenblas0-pthread)", path);
        dlclose(lib);
        return -1;
    }
    // Each library's own way to stay on the calling thread; those it does
    // not have are absent (Accelerate has none: it schedules its own
    // threads).
    void (*set_threads)(int) = (void (*)(int))dlsym(lib, "openblas_set_num_threads");
    if (set_threads == NULL) {
        set_threads = (void (*)(int))dlsym(lib, "MKL_Set_Num_Threads");
    }
    if (set_threads != NULL) {
        set_threads(1);
    }
    void (*blis_set_threads)(int64_t) = (void (*)(int64_t))dlsym(lib, "bli_thread_set_num_threads");
    if (blis_set_threads != NULL) {
        blis_set_threads(1);
    }
    char *(*corename)(void) = (char *(*)(void))dlsym(lib, "openblas_get_corename");
    kernels = corename != NULL ? corename() : NULL;
    sgemm = f;
    return 0;
}

const char *agentrl_blas_kernels(void) { return kernels; }

// The range [*from, *to) of n items that thread ith of nth takes.
static void share(int64_t n, int ith, int nth, int64_t *from, int64_t *to) {
    *from = n * ith / nth;
    *to = n * (ith + 1) / nth;
}

// The three products, as dst = op(a) op(b) of column-major matrices.
enum product { MUL_MAT, MUL_MAT_T, OUT_PROD };

// One product per index of dimensions 2 and 3 of dst, a's broadcast over
// b's. The work is cut into products x column chunks, enough chunks per
// product that every thread has some, and each thread takes a contiguous
// share of those pieces.
static void products(struct ggml_tensor *dst, int ith, int nth, enum product kind) {
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t m = dst->ne[0], n = dst->ne[1];
    const int64_t k = kind == MUL_MAT ? a->ne[0] : a->ne[1];
    const int lda = (int)(a->nb[1] / sizeof(float));
    const int ldb = (int)(b->nb[1] / sizeof(float));
    const int ldc = (int)(dst->nb[1] / sizeof(float));
    const int64_t r2 = dst->ne[2] / a->ne[2], r3 = dst->ne[3] / a->ne[3];
    const int64_t count = dst->ne[2] * dst->ne[3];
    const int64_t chunks = (nth + count - 1) / count;

    int64_t first, last;
    share(count * chunks, ith, nth, &first, &last);
    for (int64_t piece = first; piece < last; piece++) {
        const int64_t p = piece / chunks;
        int64_t col0, col1;
        share(n, (int)(piece % chunks), (int)chunks, &col0, &col1);
        if (col1 <= col0) {
            continue;
        }
        const int64_t i2 = p % dst->ne[2], i3 = p / dst->ne[2];
        const float *pa = (const float *)((const char *)a->data + (i2 / r2) * a->nb[2] + (i3 / r3) * a->nb[3]);
        const float *pb = (const float *)((const char *)b->data + i2 * b->nb[2] + i3 * b->nb[3]);
        float *pc = (float *)((char *)dst->data + i2 * dst->nb[2] + i3 * dst->nb[3]) + col0 * ldc;
        const int cols = (int)(col1 - col0);
        switch (kind) {
        case MUL_MAT: // a is k x m, b is k x n: dst = a^T b
            sgemm(CBLAS_COL_MAJOR, CBLAS_TRANS, CBLAS_NO_TRANS, (int)m, cols, (int)k,
                  1.0f, pa, lda, pb + col0 * ldb, ldb, 0.0f, pc, ldc);
            break;
        case MUL_MAT_T: // a is m x k, b is k x n: dst = a b
            sgemm(CBLAS_COL_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, (int)m, cols, (int)k,
                  1.0f, pa, lda, pb + col0 * ldb, ldb, 0.0f, pc, ldc);
            break;
        case OUT_PROD: // a is m x k, b is n x k: dst = a b^T, whose columns are b's rows
            sgemm(CBLAS_COL_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS, (int)m, cols, (int)k,
                  1.0f, pa, lda, pb + col0, ldb, 0.0f, pc, ldc);
            break;
        }
    }
}

void agentrl_blas_mul_mat(struct ggml_tensor *dst, int ith, int nth, void *userdata) {
    (void)userdata;
    products(dst, ith, nth, MUL_MAT);
}

void agentrl_blas_mul_mat_t(struct ggml_tensor *dst, int ith, int nth, void *userdata) {
    (void)userdata;
    products(dst, ith, nth, MUL_MAT_T);
}

void agentrl_blas_out_prod(struct ggml_tensor *dst, int ith, int nth, void *userdata) {
    (void)userdata;
    products(dst, ith, nth, OUT_PROD);
}
