/*===- harness.c - Run the method embed-compiler compiled ----------------===*
 *
 * Links with the LLVM IR embed-compiler writes and a CUDA runtime (the
 * simulator or libcudart). It implements the delegate @scale as a device
 * delegate would (reading its input from device memory, returning a device
 * buffer it allocated), calls @method, prints the result and frees it.
 *
 *===----------------------------------------------------------------------===*/

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The CUDA Runtime API: cuda_runtime_api.h, or the declarations the
   simulator installs for builds without the CUDA toolkit. */
#include "etcopy/CudaSim/CudaRuntimeSubset.h"

typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} MemRef1D;

enum { N = 4 };

/* @scale, on cuda:0: 2 * x. */
void _mlir_ciface_scale(MemRef1D *result, MemRef1D *x) {
  float values[N];
  if (cudaMemcpy(values, x->aligned + x->offset, sizeof values,
                 cudaMemcpyDeviceToHost))
    return;
  for (int i = 0; i < N; ++i)
    values[i] *= 2.0f;
  float *data = NULL;
  cudaMalloc((void **)&data, sizeof values);
  cudaMemcpy(data, values, sizeof values, cudaMemcpyHostToDevice);
  /* cudaMemcpy from pageable memory may return before the device memory is
     written: a delegate's work must be complete when it returns
     (docs/Delegates.md). */
  cudaStreamSynchronize(0);
  *result = (MemRef1D){data, data, 0, {N}, {1}};
}

void _mlir_ciface_method(MemRef1D *result, MemRef1D *x);

int main(void) {
  float input[N] = {0.0f, 0.25f, 0.5f, 1.0f};
  MemRef1D x = {input, input, 0, {N}, {1}}, result;
  _mlir_ciface_method(&result, &x);
  /* method(x) = sin(2x) + x, computed on the host from the device result. */
  for (int i = 0; i < N; ++i) {
    float expected = sinf(2.0f * input[i]) + input[i];
    printf("method[%d] = %.4f (expected %.4f)\n", i,
           result.aligned[result.offset + i], expected);
  }
  /* The result is host memory the method allocated: the caller owns it. */
  free(result.allocated);
  return 0;
}
