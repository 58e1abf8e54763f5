// Destroying a stream does not run its queued work: the work runs at the
// next device-wide synchronisation. Work never synchronised before exit is
// reported; queued frees are applied so they are not reported as leaks.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s

#include "CudaRuntimeSubset.h"

#include <stdio.h>

int main(void) {
  int In = 5, Out = 0;
  int *Dev = NULL;
  cudaStream_t S;
  if (cudaMalloc((void **)&Dev, sizeof(int)) != cudaSuccess ||
      cudaStreamCreate(&S) != cudaSuccess)
    return 1;
  cudaMemcpyAsync(Dev, &In, sizeof(int), cudaMemcpyHostToDevice, S);
  cudaMemcpyAsync(&Out, Dev, sizeof(int), cudaMemcpyDeviceToHost, S);
  cudaStreamDestroy(S);
  printf("after destroy: %d\n", Out);
  // CHECK: after destroy: 0
  cudaDeviceSynchronize();
  printf("after device sync: %d\n", Out);
  // CHECK-NEXT: after device sync: 5

  // Left pending at exit: a copy and the free of the buffer it writes.
  cudaStream_t T;
  if (cudaStreamCreate(&T) != cudaSuccess)
    return 1;
  cudaMemsetAsync(Dev, 0, sizeof(int), T);
  cudaFreeAsync(Dev, T);
  cudaStreamDestroy(T);
  printf("exiting\n");
  return 0;
}
// CHECK-NEXT: exiting
// CHECK-NEXT: etcopy-cuda-sim: warning: 2 operation(s) were never synchronised before exit (queued frees were applied, queued copies and memsets were discarded)
// CHECK-NOT: etcopy-cuda-sim
