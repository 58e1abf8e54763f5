// The default stream has the legacy semantics: its work waits for work
// already queued on blocking streams of the device and vice versa, but not
// for non-blocking streams. Synchronous copies run on it.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s --implicit-check-not=etcopy-cuda-sim

#include "CudaRuntimeSubset.h"

#include <stdio.h>

#include "Inputs/check-cuda.h"

int main(void) {
  int In = 1, Out = 0;
  int *Dev = NULL;
  cudaStream_t Blocking, NonBlocking;
  CHECK_CUDA(cudaMalloc((void **)&Dev, sizeof(int)));
  CHECK_CUDA(cudaMemset(Dev, 0, sizeof(int)));
  CHECK_CUDA(cudaStreamCreate(&Blocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&NonBlocking, cudaStreamNonBlocking));

  // Blocking stream, then the default stream: ordered.
  CHECK_CUDA(cudaMemcpyAsync(Dev, &In, sizeof(int), cudaMemcpyHostToDevice,
                             Blocking));
  CHECK_CUDA(cudaMemcpyAsync(&Out, Dev, sizeof(int), cudaMemcpyDeviceToHost,
                             0));
  CHECK_CUDA(cudaStreamSynchronize(0));
  printf("blocking then default: %d\n", Out);
  // CHECK: blocking then default: 1

  // Default stream, then a blocking stream: ordered too.
  In = 2;
  CHECK_CUDA(cudaMemcpyAsync(Dev, &In, sizeof(int), cudaMemcpyHostToDevice,
                             0));
  CHECK_CUDA(cudaMemcpyAsync(&Out, Dev, sizeof(int), cudaMemcpyDeviceToHost,
                             Blocking));
  CHECK_CUDA(cudaStreamSynchronize(Blocking));
  printf("default then blocking: %d\n", Out);
  // CHECK-NEXT: default then blocking: 2

  // A non-blocking stream is not ordered with the default stream, and a
  // synchronous cudaMemcpy does not wait for it.
  In = 3;
  CHECK_CUDA(cudaMemcpyAsync(Dev, &In, sizeof(int), cudaMemcpyHostToDevice,
                             NonBlocking));
  CHECK_CUDA(cudaMemcpy(&Out, Dev, sizeof(int), cudaMemcpyDeviceToHost));
  printf("non-blocking then memcpy: %d\n", Out);
  // CHECK-NEXT: non-blocking then memcpy: 2

  // A synchronous cudaMemcpy does wait for blocking streams.
  CHECK_CUDA(cudaStreamSynchronize(NonBlocking));
  In = 4;
  CHECK_CUDA(cudaMemcpyAsync(Dev, &In, sizeof(int), cudaMemcpyHostToDevice,
                             Blocking));
  CHECK_CUDA(cudaMemcpy(&Out, Dev, sizeof(int), cudaMemcpyDeviceToHost));
  printf("blocking then memcpy: %d\n", Out);
  // CHECK-NEXT: blocking then memcpy: 4

  CHECK_CUDA(cudaStreamDestroy(Blocking));
  CHECK_CUDA(cudaStreamDestroy(NonBlocking));
  CHECK_CUDA(cudaFree(Dev));
  return 0;
}
