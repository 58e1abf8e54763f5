// ETCOPY_CUDA_SIM_FAIL=KIND:N makes the N-th call of a kind fail with the
// error documented for its entry point; `any:N` counts every API call. A
// failed call changes nothing and sets the last error. Items that do not
// parse are ignored with a warning.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s --check-prefix=NONE --implicit-check-not=etcopy-cuda-sim
// RUN: env ETCOPY_CUDA_SIM_FAIL=set-device:1 %t 2>&1 | FileCheck %s --check-prefix=SETDEV
// RUN: env ETCOPY_CUDA_SIM_FAIL=stream:2 %t 2>&1 | FileCheck %s --check-prefix=STREAM
// RUN: env ETCOPY_CUDA_SIM_FAIL=event:2,host-alloc:1 %t 2>&1 | FileCheck %s --check-prefix=EVENT
// RUN: env ETCOPY_CUDA_SIM_FAIL=copy:1,memset:1 %t 2>&1 | FileCheck %s --check-prefix=COPY
// RUN: env ETCOPY_CUDA_SIM_FAIL=sync:1,other:1 %t 2>&1 | FileCheck %s --check-prefix=SYNC
// RUN: env ETCOPY_CUDA_SIM_FAIL=alloc:1 %t 2>&1 | FileCheck %s --check-prefix=ALLOC
// RUN: env ETCOPY_CUDA_SIM_FAIL=any:5 %t 2>&1 | FileCheck %s --check-prefix=ANY
// RUN: env ETCOPY_CUDA_SIM_FAIL=any:2,stream:1 %t 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: env ETCOPY_CUDA_SIM_FAIL=bogus:1,copy:0,copy,any:x,,sync:-1 %t 2>&1 | FileCheck %s --check-prefix=BAD

#include "CudaRuntimeSubset.h"

#include <stdio.h>

static void report(const char *What, cudaError_t Status) {
  cudaError_t Last = cudaGetLastError();
  printf("%s -> %s (last error %s)\n", What, cudaGetErrorName(Status),
         cudaGetErrorName(Last));
}

int main(void) {
  int In = 7, Out = 0;
  int *Dev = NULL, *Pinned = NULL;
  cudaStream_t S = NULL;
  cudaEvent_t E = NULL;
  struct cudaPointerAttributes Attr;

  report("set-device", cudaSetDevice(0));
  report("stream", cudaStreamCreate(&S));
  report("event", cudaEventCreate(&E));
  report("alloc", cudaMalloc((void **)&Dev, sizeof(int)));
  report("host-alloc", cudaMallocHost((void **)&Pinned, sizeof(int)));
  report("copy", cudaMemcpyAsync(Dev, &In, sizeof(int),
                                 cudaMemcpyHostToDevice, S));
  report("memset", cudaMemsetAsync(Dev, 1, 1, S));
  report("sync", cudaStreamSynchronize(S));
  report("other", cudaPointerGetAttributes(&Attr, Dev));
  if (Dev)
    cudaMemcpy(&Out, Dev, sizeof(int), cudaMemcpyDeviceToHost);
  printf("out=%d\n", Out);

  // The second call of each kind succeeds: nothing is left half done.
  if (Dev)
    report("free", cudaFree(Dev));
  if (Pinned)
    report("free host", cudaFreeHost(Pinned));
  if (E)
    report("event destroy", cudaEventDestroy(E));
  if (S)
    report("stream destroy", cudaStreamDestroy(S));
  return 0;
}

// NONE: set-device -> cudaSuccess (last error cudaSuccess)
// NONE-NEXT: stream -> cudaSuccess (last error cudaSuccess)
// NONE-NEXT: event -> cudaSuccess (last error cudaSuccess)
// NONE-NEXT: alloc -> cudaSuccess (last error cudaSuccess)
// NONE-NEXT: host-alloc -> cudaSuccess (last error cudaSuccess)
// NONE-NEXT: copy -> cudaSuccess (last error cudaSuccess)
// NONE-NEXT: memset -> cudaSuccess (last error cudaSuccess)
// NONE-NEXT: sync -> cudaSuccess (last error cudaSuccess)
// NONE-NEXT: other -> cudaSuccess (last error cudaSuccess)
// NONE-NEXT: out=1
// NONE-NEXT: free -> cudaSuccess (last error cudaSuccess)
// NONE-NEXT: free host -> cudaSuccess (last error cudaSuccess)
// NONE-NEXT: event destroy -> cudaSuccess (last error cudaSuccess)
// NONE-NEXT: stream destroy -> cudaSuccess (last error cudaSuccess)

// SETDEV: etcopy-cuda-sim: error: cudaSetDevice: injected failure: set-device call #1 fails with cudaErrorDevicesUnavailable because ETCOPY_CUDA_SIM_FAIL=set-device:1
// SETDEV-NEXT: set-device -> cudaErrorDevicesUnavailable (last error cudaErrorDevicesUnavailable)
// SETDEV-NEXT: stream -> cudaSuccess (last error cudaSuccess)

// The second stream call is the destroy at the end: the stream stays alive.
// STREAM: stream -> cudaSuccess
// STREAM: free host -> cudaSuccess
// STREAM-NEXT: event destroy -> cudaSuccess
// STREAM-NEXT: etcopy-cuda-sim: error: cudaStreamDestroy: injected failure: stream call #2 fails with cudaErrorInvalidResourceHandle because ETCOPY_CUDA_SIM_FAIL=stream:2
// STREAM-NEXT: stream destroy -> cudaErrorInvalidResourceHandle (last error cudaErrorInvalidResourceHandle)
// STREAM-NEXT: etcopy-cuda-sim: warning: leak: 1 stream(s) never destroyed: S1

// EVENT: stream -> cudaSuccess
// EVENT-NEXT: event -> cudaSuccess
// EVENT-NEXT: alloc -> cudaSuccess
// EVENT-NEXT: etcopy-cuda-sim: error: cudaMallocHost: injected failure: host-alloc call #1 fails with cudaErrorMemoryAllocation because ETCOPY_CUDA_SIM_FAIL=event:2,host-alloc:1
// EVENT-NEXT: host-alloc -> cudaErrorMemoryAllocation (last error cudaErrorMemoryAllocation)
// EVENT: free -> cudaSuccess
// EVENT-NEXT: etcopy-cuda-sim: error: cudaEventDestroy: injected failure: event call #2 fails with cudaErrorInvalidResourceHandle because ETCOPY_CUDA_SIM_FAIL=event:2,host-alloc:1
// EVENT-NEXT: event destroy -> cudaErrorInvalidResourceHandle (last error cudaErrorInvalidResourceHandle)
// EVENT-NEXT: stream destroy -> cudaSuccess
// EVENT-NEXT: etcopy-cuda-sim: warning: leak: 1 event(s) never destroyed: E1

// The failed copy did not reach the device: only the memset did.
// COPY: etcopy-cuda-sim: error: cudaMemcpyAsync: injected failure: copy call #1 fails with cudaErrorInvalidValue because ETCOPY_CUDA_SIM_FAIL=copy:1,memset:1
// COPY-NEXT: copy -> cudaErrorInvalidValue (last error cudaErrorInvalidValue)
// COPY-NEXT: etcopy-cuda-sim: error: cudaMemsetAsync: injected failure: memset call #1 fails with cudaErrorInvalidValue because ETCOPY_CUDA_SIM_FAIL=copy:1,memset:1
// COPY-NEXT: memset -> cudaErrorInvalidValue (last error cudaErrorInvalidValue)
// COPY-NEXT: sync -> cudaSuccess
// COPY-NEXT: other -> cudaSuccess
// COPY-NEXT: out=-1515870811

// A failed synchronisation leaves the work queued: the synchronous copy on
// the legacy default stream runs it first, so the data still arrives.
// SYNC: etcopy-cuda-sim: error: cudaStreamSynchronize: injected failure: sync call #1 fails with cudaErrorLaunchFailure because ETCOPY_CUDA_SIM_FAIL=sync:1,other:1
// SYNC-NEXT: sync -> cudaErrorLaunchFailure (last error cudaErrorLaunchFailure)
// SYNC-NEXT: etcopy-cuda-sim: error: cudaPointerGetAttributes: injected failure: other call #1 fails with cudaErrorInvalidValue because ETCOPY_CUDA_SIM_FAIL=sync:1,other:1
// SYNC-NEXT: other -> cudaErrorInvalidValue (last error cudaErrorInvalidValue)
// SYNC-NEXT: out=1

// ALLOC: etcopy-cuda-sim: error: cudaMalloc: injected allocation failure: device allocation #1 (4 bytes on cuda:0) fails because ETCOPY_CUDA_SIM_FAIL=alloc:1
// ALLOC-NEXT: alloc -> cudaErrorMemoryAllocation (last error cudaErrorMemoryAllocation)

// ANY: alloc -> cudaSuccess
// ANY-NEXT: etcopy-cuda-sim: error: cudaMallocHost: injected failure: API call #5 fails with cudaErrorMemoryAllocation because ETCOPY_CUDA_SIM_FAIL=any:5
// ANY-NEXT: host-alloc -> cudaErrorMemoryAllocation

// When both select the same call, the `any` item is named.
// BOTH: set-device -> cudaSuccess
// BOTH-NEXT: etcopy-cuda-sim: error: cudaStreamCreate: injected failure: API call #2 fails with cudaErrorMemoryAllocation because ETCOPY_CUDA_SIM_FAIL=any:2,stream:1
// BOTH-NEXT: stream -> cudaErrorMemoryAllocation

// BAD: etcopy-cuda-sim: warning: ignoring 'bogus:1' in ETCOPY_CUDA_SIM_FAIL='bogus:1,copy:0,copy,any:x,,sync:-1': expected KIND:N with N >= 1 and KIND one of any, alloc, free, copy, batch, memset, stream, event, sync, set-device, host-alloc, peer, other
// BAD-NEXT: etcopy-cuda-sim: warning: ignoring 'copy:0' in
// BAD-NEXT: etcopy-cuda-sim: warning: ignoring 'copy' in
// BAD-NEXT: etcopy-cuda-sim: warning: ignoring 'any:x' in
// BAD-NEXT: etcopy-cuda-sim: warning: ignoring 'sync:-1' in
// BAD-NEXT: set-device -> cudaSuccess
// BAD-NOT: etcopy-cuda-sim: error
