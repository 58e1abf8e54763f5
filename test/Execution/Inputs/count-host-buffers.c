// The harness of host-buffer-cache.mlir: calls the lowered method five
// times on 16384 elements, checks the data, and prints how many host blocks
// the lowered code has allocated so far (aligned_alloc, or cudaMallocHost
// for pinned buffers), counted by linking with --wrap.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "CudaRuntimeSubset.h"
#include "memref-descriptors.h"

enum { Elements = 16384, Calls = 5 };

static int blocks;

void *__real_aligned_alloc(size_t alignment, size_t size);
cudaError_t __real_cudaMallocHost(void **pointer, size_t size);

void *__wrap_aligned_alloc(size_t alignment, size_t size) {
  ++blocks;
  return __real_aligned_alloc(alignment, size);
}

cudaError_t __wrap_cudaMallocHost(void **pointer, size_t size) {
  ++blocks;
  return __real_cudaMallocHost(pointer, size);
}

void _mlir_ciface_twice(MemRef1D *in, MemRef1D *out);

int main(void) {
  static float in[Elements], out[Elements];
  MemRef1D inRef = {in, in, 0, {Elements}, {1}};
  MemRef1D outRef = {out, out, 0, {Elements}, {1}};
  for (int call = 0; call < Calls; ++call) {
    for (int i = 0; i < Elements; ++i)
      in[i] = (float)(i + call);
    _mlir_ciface_twice(&inRef, &outRef);
    int wrong = 0;
    for (int i = 0; i < Elements; ++i)
      wrong += out[i] != 2.0f * (float)(i + call);
    printf("call %d: %d wrong elements, host blocks allocated: %d\n", call,
           wrong, blocks);
  }
  return 0;
}
