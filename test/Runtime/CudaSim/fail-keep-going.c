// A program that keeps going after injected failures finds the simulator
// exactly as before each failed call: retrying the call succeeds, a failed
// record leaves the event as it was, a failed synchronisation leaves the
// work queued, and nothing leaks.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_FAIL=set-device:1,alloc:1,memset:1,copy:1,event:2,sync:1,host-alloc:1,free:1,stream:2 \
// RUN:   %t 2>&1 | FileCheck %s

#include "CudaRuntimeSubset.h"

#include <stdio.h>

static void report(const char *What, cudaError_t Status) {
  printf("%s -> %s\n", What, cudaGetErrorName(Status));
}

int main(void) {
  int Device = -1;
  report("set device 1", cudaSetDevice(1));
  cudaGetDevice(&Device);
  printf("device=%d\n", Device);
  // CHECK: error: cudaSetDevice: injected failure: set-device call #1
  // CHECK-NEXT: set device 1 -> cudaErrorDevicesUnavailable
  // CHECK-NEXT: device=0

  int *Dev = NULL;
  report("malloc", cudaMalloc((void **)&Dev, 16));
  report("malloc again", cudaMalloc((void **)&Dev, 16));
  // CHECK-NEXT: error: cudaMalloc: injected allocation failure: device allocation #1
  // CHECK-NEXT: malloc -> cudaErrorMemoryAllocation
  // CHECK-NEXT: malloc again -> cudaSuccess

  cudaStream_t S;
  cudaEvent_t E;
  int In[4] = {1, 2, 3, 4}, Out[4] = {0, 0, 0, 0};
  if (cudaStreamCreate(&S) != cudaSuccess || cudaEventCreate(&E) != cudaSuccess)
    return 1;
  report("memset", cudaMemsetAsync(Dev, 0, sizeof(In), S));
  report("memset again", cudaMemsetAsync(Dev, 0, sizeof(In), S));
  report("copy", cudaMemcpyAsync(Dev, In, sizeof(In), cudaMemcpyHostToDevice, S));
  report("record", cudaEventRecord(E, S));
  // The event was never recorded, so it is complete although S has work.
  report("event query", cudaEventQuery(E));
  report("copy again",
         cudaMemcpyAsync(Dev, In, sizeof(In), cudaMemcpyHostToDevice, S));
  report("copy back",
         cudaMemcpyAsync(Out, Dev, sizeof(Out), cudaMemcpyDeviceToHost, S));
  report("sync", cudaStreamSynchronize(S));
  printf("out: %d %d %d %d\n", Out[0], Out[1], Out[2], Out[3]);
  report("sync again", cudaStreamSynchronize(S));
  printf("out: %d %d %d %d\n", Out[0], Out[1], Out[2], Out[3]);
  // CHECK-NEXT: error: cudaMemsetAsync: injected failure: memset call #1
  // CHECK-NEXT: memset -> cudaErrorInvalidValue
  // CHECK-NEXT: memset again -> cudaSuccess
  // CHECK-NEXT: error: cudaMemcpyAsync: injected failure: copy call #1
  // CHECK-NEXT: copy -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaEventRecord: injected failure: event call #2
  // CHECK-NEXT: record -> cudaErrorInvalidResourceHandle
  // CHECK-NEXT: event query -> cudaSuccess
  // CHECK-NEXT: copy again -> cudaSuccess
  // CHECK-NEXT: copy back -> cudaSuccess
  // CHECK-NEXT: error: cudaStreamSynchronize: injected failure: sync call #1
  // CHECK-NEXT: sync -> cudaErrorLaunchFailure
  // CHECK-NEXT: out: 0 0 0 0
  // CHECK-NEXT: sync again -> cudaSuccess
  // CHECK-NEXT: out: 1 2 3 4

  // A failed registration registers nothing.
  static char Buffer[64];
  report("register", cudaHostRegister(Buffer, sizeof(Buffer), 0));
  report("unregister", cudaHostUnregister(Buffer));
  report("register again", cudaHostRegister(Buffer, sizeof(Buffer), 0));
  report("unregister again", cudaHostUnregister(Buffer));
  // CHECK-NEXT: error: cudaHostRegister: injected failure: host-alloc call #1
  // CHECK-NEXT: register -> cudaErrorMemoryAllocation
  // CHECK-NEXT: error: cudaHostUnregister: 0x{{[0-9a-f]+}} is not the start of a range registered with cudaHostRegister
  // CHECK-NEXT: unregister -> cudaErrorHostMemoryNotRegistered
  // CHECK-NEXT: register again -> cudaSuccess
  // CHECK-NEXT: unregister again -> cudaSuccess

  report("free", cudaFree(Dev));
  report("free again", cudaFree(Dev));
  report("event destroy", cudaEventDestroy(E));
  report("stream destroy", cudaStreamDestroy(S));
  report("stream destroy again", cudaStreamDestroy(S));
  // CHECK-NEXT: error: cudaFree: injected failure: free call #1
  // CHECK-NEXT: free -> cudaErrorInvalidValue
  // CHECK-NEXT: free again -> cudaSuccess
  // CHECK-NEXT: event destroy -> cudaSuccess
  // CHECK-NEXT: error: cudaStreamDestroy: injected failure: stream call #2
  // CHECK-NEXT: stream destroy -> cudaErrorInvalidResourceHandle
  // CHECK-NEXT: stream destroy again -> cudaSuccess
  // CHECK-NOT: etcopy-cuda-sim
  return 0;
}
