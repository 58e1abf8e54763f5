// Streams and events must be live handles created by the runtime; invalid
// flags are rejected.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s

#include "CudaRuntimeSubset.h"

#include <stdio.h>

static void report(const char *What, cudaError_t Status) {
  printf("%s -> %s\n", What, cudaGetErrorName(Status));
}

int main(void) {
  cudaStream_t S, Bogus = (cudaStream_t)0x1234;
  cudaEvent_t E;
  if (cudaStreamCreate(&S) != cudaSuccess || cudaEventCreate(&E) != cudaSuccess)
    return 1;

  report("sync bogus", cudaStreamSynchronize(Bogus));
  // CHECK: etcopy-cuda-sim: error: cudaStreamSynchronize: invalid stream handle 0x1234 (not created by cudaStreamCreate or cudaStreamCreateWithFlags)
  // CHECK-NEXT: sync bogus -> cudaErrorInvalidResourceHandle

  report("destroy", cudaStreamDestroy(S));
  report("use destroyed", cudaMemsetAsync(NULL, 0, 0, S));
  report("destroy again", cudaStreamDestroy(S));
  // CHECK-NEXT: destroy -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemsetAsync: invalid stream handle 0x{{[0-9a-f]+}} (S1 was destroyed by cudaStreamDestroy)
  // CHECK-NEXT: use destroyed -> cudaErrorInvalidResourceHandle
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamDestroy: invalid stream handle 0x{{[0-9a-f]+}} (S1 was destroyed by cudaStreamDestroy)
  // CHECK-NEXT: destroy again -> cudaErrorInvalidResourceHandle

  report("destroy default", cudaStreamDestroy(0));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamDestroy: the default stream cannot be destroyed
  // CHECK-NEXT: destroy default -> cudaErrorInvalidResourceHandle

  report("destroy event", cudaEventDestroy(E));
  report("record destroyed", cudaEventRecord(E, 0));
  report("wait bogus", cudaStreamWaitEvent(0, (cudaEvent_t)0x99, 0));
  // CHECK-NEXT: destroy event -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaEventRecord: invalid event handle 0x{{[0-9a-f]+}} (E1 was destroyed by cudaEventDestroy)
  // CHECK-NEXT: record destroyed -> cudaErrorInvalidResourceHandle
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamWaitEvent: invalid event handle 0x99 (not created by cudaEventCreate or cudaEventCreateWithFlags)
  // CHECK-NEXT: wait bogus -> cudaErrorInvalidResourceHandle

  cudaStream_t Flagged;
  cudaEvent_t Ipc;
  report("stream flags", cudaStreamCreateWithFlags(&Flagged, 4));
  report("event flags",
         cudaEventCreateWithFlags(&Ipc, cudaEventInterprocess));
  report("managed flags", cudaMallocManaged((void **)&Ipc, 16, 0));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamCreateWithFlags: invalid flags 0x4 (expected cudaStreamDefault or cudaStreamNonBlocking)
  // CHECK-NEXT: stream flags -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaEventCreateWithFlags: invalid flags 0x4
  // CHECK-NEXT: event flags -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMallocManaged: invalid flags 0x0 (expected cudaMemAttachGlobal or cudaMemAttachHost)
  // CHECK-NEXT: managed flags -> cudaErrorInvalidValue

  // The legacy and per-thread handles name the default stream.
  report("legacy", cudaStreamSynchronize(cudaStreamLegacy));
  report("per-thread", cudaStreamQuery(cudaStreamPerThread));
  // CHECK-NEXT: legacy -> cudaSuccess
  // CHECK-NEXT: per-thread -> cudaSuccess
  // CHECK-NOT: etcopy-cuda-sim
  return 0;
}
