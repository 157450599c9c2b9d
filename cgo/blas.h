// Matrix products of the trainer's CPU graphs through a CBLAS library
// (OpenBLAS, BLIS, MKL or Apple's Accelerate) opened at run time, as ggml
// custom operations. See blas.go.
#ifndef AGENTRL_BLAS_H
#define AGENTRL_BLAS_H

#include <stddef.h>

#include "abi.h"

// Opens the CBLAS library at path and sets its own threading to one
// thread (ggml's threads split each product among themselves). Returns 0,
// or -1 with a message in err.
int agentrl_blas_open(const char *path, char *err, size_t err_len);

// The kernel family the opened library chose for this CPU (OpenBLAS's
// core name, e.g. "SkylakeX"), or NULL where the library does not say.
const char *agentrl_blas_kernels(void);

// ggml_custom_op_t kernels. dst->src[0] and dst->src[1] are the operands,
// F32 with unit-stride rows; dst is contiguous F32.
//   mul_mat:   dst[i, j] = sum_l a[l, i] * b[l, j]  (ggml_mul_mat)
//   mul_mat_t: dst[i, j] = sum_l a[i, l] * b[l, j]  (ggml_mul_mat of a's transpose)
//   out_prod:  dst[i, j] = sum_l a[i, l] * b[j, l]  (ggml_out_prod)
// Dimensions 2 and 3 of a are broadcast over b's.
void agentrl_blas_mul_mat(struct ggml_tensor *dst, int ith, int nth, void *userdata);
void agentrl_blas_mul_mat_t(struct ggml_tensor *dst, int ith, int nth, void *userdata);
void agentrl_blas_out_prod(struct ggml_tensor *dst, int ith, int nth, void *userdata);

#endif
