// A host program embedding a lowered method (memory-pool-policy.mlir) that
// chooses the pool policy itself: its etcopy_get_pool_release_threshold
// replaces the weak default of the lowered module. It asks for 64 KiB on
// cuda:0, whose pool it configured itself first with a higher threshold
// (1 MiB, which the lowered code must keep), and for 1 GiB on cuda:1. It
// reports each question of the policy and calls the method three times.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "CudaRuntimeSubset.h"
#include "memref-descriptors.h"

void _mlir_ciface_relay(MemRef1D *in, MemRef1D *out);

uint64_t etcopy_get_pool_release_threshold(int32_t device) {
  int current = -1;
  cudaGetDevice(&current);
  printf("policy asked for cuda:%d with cuda:%d current\n", device, current);
  return device == 0 ? 65536 : 1 << 30;
}

int main(void) {
  cudaMemPool_t pool = NULL;
  uint64_t threshold = 1 << 20;
  if (cudaDeviceGetMemPool(&pool, 0) != cudaSuccess ||
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
                              &threshold) != cudaSuccess)
    return 1;
  float in[4] = {1.5f, -2.0f, 3.0f, 40.0f}, out[4];
  MemRef1D inRef = {in, in, 0, {4}, {1}};
  MemRef1D outRef = {out, out, 0, {4}, {1}};
  for (int call = 0; call < 3; ++call) {
    _mlir_ciface_relay(&inRef, &outRef);
    printf("call %d: %g %g %g %g\n", call, out[0], out[1], out[2], out[3]);
  }
  return 0;
}
