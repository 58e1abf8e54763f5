// ETCOPY_CUDA_SIM_DEVICES sets the number of simulated devices; ordinals
// outside it are rejected, and the current device is per thread.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir -lpthread
// RUN: %t 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 %t 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: env ETCOPY_CUDA_SIM_DEVICES=0 %t 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: env ETCOPY_CUDA_SIM_DEVICES=65 %t 2>&1 | FileCheck %s --check-prefix=BAD

#include "CudaRuntimeSubset.h"

#include <pthread.h>
#include <stdio.h>

static void *reportThreadDevice(void *Unused) {
  (void)Unused;
  int Device = -1;
  cudaGetDevice(&Device);
  printf("new thread device=%d\n", Device);
  return NULL;
}

int main(void) {
  int Count = -1;
  cudaError_t Status = cudaGetDeviceCount(&Count);
  printf("count=%d (%s)\n", Count, cudaGetErrorName(Status));
  // ONE: count=1 (cudaSuccess)
  // TWO: count=2 (cudaSuccess)
  // NONE: count=0 (cudaErrorNoDevice)
  // BAD: etcopy-cuda-sim: warning: ignoring ETCOPY_CUDA_SIM_DEVICES='65': expected an integer in [0, 64]; simulating 1 device
  // BAD-NEXT: count=1 (cudaSuccess)
  if (Count == 0) {
    void *Dev = NULL;
    printf("malloc -> %s\n", cudaGetErrorName(cudaMalloc(&Dev, 16)));
    // NONE-NEXT: etcopy-cuda-sim: error: cudaMalloc: no simulated device (ETCOPY_CUDA_SIM_DEVICES=0)
    // NONE-NEXT: malloc -> cudaErrorNoDevice
    return 0;
  }

  printf("set 1 -> %s\n", cudaGetErrorName(cudaSetDevice(1)));
  // ONE-NEXT: etcopy-cuda-sim: error: cudaSetDevice: invalid device ordinal 1 (1 device(s) simulated; set ETCOPY_CUDA_SIM_DEVICES for more)
  // ONE-NEXT: set 1 -> cudaErrorInvalidDevice
  // TWO-NEXT: set 1 -> cudaSuccess
  printf("set -1 -> %s\n", cudaGetErrorName(cudaSetDevice(-1)));
  // ONE-NEXT: etcopy-cuda-sim: error: cudaSetDevice: invalid device ordinal -1
  // ONE-NEXT: set -1 -> cudaErrorInvalidDevice
  // TWO-NEXT: etcopy-cuda-sim: error: cudaSetDevice: invalid device ordinal -1 (2 device(s) simulated; set ETCOPY_CUDA_SIM_DEVICES for more)
  // TWO-NEXT: set -1 -> cudaErrorInvalidDevice

  int Device = -1;
  cudaGetDevice(&Device);
  printf("device=%d\n", Device);
  // ONE-NEXT: device=0
  // TWO-NEXT: device=1

  // Allocations and streams belong to the current device.
  void *Dev = NULL;
  cudaStream_t S;
  if (cudaMalloc(&Dev, 16) != cudaSuccess ||
      cudaStreamCreate(&S) != cudaSuccess)
    return 1;
  struct cudaPointerAttributes Attr;
  cudaPointerGetAttributes(&Attr, Dev);
  printf("allocation on %d\n", Attr.device);
  // ONE-NEXT: allocation on 0
  // TWO-NEXT: allocation on 1
  void *Async = NULL;
  if (cudaSetDevice(0) != cudaSuccess ||
      cudaMallocAsync(&Async, 16, S) != cudaSuccess)
    return 1;
  cudaPointerGetAttributes(&Attr, Async);
  printf("stream allocation on %d\n", Attr.device);
  // ONE-NEXT: stream allocation on 0
  // TWO-NEXT: stream allocation on 1

  // An event of device 0 cannot be recorded on a stream of device 1.
  cudaEvent_t E;
  cudaEventCreate(&E);
  printf("record -> %s\n", cudaGetErrorName(cudaEventRecord(E, S)));
  // ONE-NEXT: record -> cudaSuccess
  // TWO-NEXT: etcopy-cuda-sim: error: cudaEventRecord: event E1 was created on cuda:0 but stream S1 belongs to cuda:1
  // TWO-NEXT: record -> cudaErrorInvalidResourceHandle

  if (Count == 2)
    cudaSetDevice(1);
  pthread_t Thread;
  pthread_create(&Thread, NULL, reportThreadDevice, NULL);
  pthread_join(Thread, NULL);
  // ONE-NEXT: new thread device=0
  // TWO-NEXT: new thread device=0

  cudaFreeAsync(Async, S);
  cudaStreamSynchronize(S);
  cudaFree(Dev);
  cudaStreamDestroy(S);
  cudaEventDestroy(E);
  return 0;
}
