// cudaDeviceReset discards the current device's queued work and destroys its
// streams, events and memory, so nothing of it is reported as leaked.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s

#include "CudaRuntimeSubset.h"

#include <stdio.h>

int main(void) {
  int Host = 1;
  int *Dev = NULL;
  cudaStream_t S;
  cudaEvent_t E;
  if (cudaMalloc((void **)&Dev, sizeof(int)) != cudaSuccess ||
      cudaStreamCreate(&S) != cudaSuccess ||
      cudaEventCreate(&E) != cudaSuccess)
    return 1;
  cudaMemcpyAsync(&Host, Dev, sizeof(int), cudaMemcpyDeviceToHost, S);
  cudaEventRecord(E, S);
  printf("reset -> %s\n", cudaGetErrorName(cudaDeviceReset()));
  // CHECK: reset -> cudaSuccess
  printf("host=%d\n", Host);
  // CHECK-NEXT: host=1
  printf("sync -> %s\n", cudaGetErrorName(cudaStreamSynchronize(S)));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamSynchronize: invalid stream handle 0x{{[0-9a-f]+}} (S1 was destroyed by cudaStreamDestroy)
  // CHECK-NEXT: sync -> cudaErrorInvalidResourceHandle
  printf("free -> %s\n", cudaGetErrorName(cudaFree(Dev)));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFree: double free: 0x{{[0-9a-f]+}} was already freed (a 4-byte device allocation on cuda:0, freed by cudaDeviceReset)
  // CHECK-NEXT: free -> cudaErrorInvalidValue

  // The device is usable again.
  if (cudaMalloc((void **)&Dev, sizeof(int)) != cudaSuccess)
    return 1;
  printf("fresh -> %s\n", cudaGetErrorName(cudaFree(Dev)));
  // CHECK-NEXT: fresh -> cudaSuccess
  // CHECK-NOT: etcopy-cuda-sim
  return 0;
}
