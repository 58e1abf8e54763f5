// Asynchronous copies take effect only at a synchronisation point, and read
// their source then: a missing wait shows up as stale data on the host.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s --implicit-check-not=etcopy-cuda-sim

#include "CudaRuntimeSubset.h"

#include <stdio.h>

#include "Inputs/check-cuda.h"

int main(void) {
  int Host[4] = {1, 2, 3, 4}, Out[4] = {0, 0, 0, 0};
  int *Dev = NULL;
  cudaStream_t S;
  CHECK_CUDA(cudaStreamCreate(&S));
  CHECK_CUDA(cudaMalloc((void **)&Dev, sizeof(Host)));
  CHECK_CUDA(cudaMemcpyAsync(Dev, Host, sizeof(Host), cudaMemcpyHostToDevice,
                             S));
  // The copy has not read Host yet, so this write is what reaches the device.
  Host[0] = 100;
  CHECK_CUDA(cudaMemcpyAsync(Out, Dev, sizeof(Out), cudaMemcpyDeviceToHost,
                             S));
  printf("before sync: %d %d %d %d\n", Out[0], Out[1], Out[2], Out[3]);
  // CHECK: before sync: 0 0 0 0

  // One query answers "not ready" and runs nothing.
  printf("query: %s\n", cudaGetErrorName(cudaStreamQuery(S)));
  // CHECK-NEXT: query: cudaErrorNotReady
  printf("still: %d\n", Out[1]);
  // CHECK-NEXT: still: 0
  // "Not ready" is not an error.
  printf("last: %s\n", cudaGetErrorName(cudaGetLastError()));
  // CHECK-NEXT: last: cudaSuccess

  CHECK_CUDA(cudaStreamSynchronize(S));
  printf("after sync: %d %d %d %d\n", Out[0], Out[1], Out[2], Out[3]);
  // CHECK-NEXT: after sync: 100 2 3 4
  printf("query: %s\n", cudaGetErrorName(cudaStreamQuery(S)));
  // CHECK-NEXT: query: cudaSuccess

  // Polling until the stream is idle terminates: asking again about the same
  // work completes it.
  Host[3] = 7;
  CHECK_CUDA(cudaMemcpyAsync(Dev, Host, sizeof(Host), cudaMemcpyHostToDevice,
                             S));
  CHECK_CUDA(cudaMemcpyAsync(Out, Dev, sizeof(Out), cudaMemcpyDeviceToHost,
                             S));
  int Polls = 0;
  while (cudaStreamQuery(S) == cudaErrorNotReady)
    ++Polls;
  printf("polls=%d out[3]=%d\n", Polls, Out[3]);
  // CHECK-NEXT: polls=1 out[3]=7

  // cudaDeviceSynchronize runs everything queued on the device.
  CHECK_CUDA(cudaMemsetAsync(Dev, 0, sizeof(int), S));
  CHECK_CUDA(cudaMemcpyAsync(Out, Dev, sizeof(Out), cudaMemcpyDeviceToHost,
                             S));
  printf("before device sync: %d\n", Out[0]);
  // CHECK-NEXT: before device sync: 100
  CHECK_CUDA(cudaDeviceSynchronize());
  printf("after device sync: %d\n", Out[0]);
  // CHECK-NEXT: after device sync: 0

  CHECK_CUDA(cudaFree(Dev));
  CHECK_CUDA(cudaStreamDestroy(S));
  return 0;
}
