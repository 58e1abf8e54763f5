// Freed allocations stay quarantined: later uses are reported as use after
// free (at enqueue time, or at execution time when a queued free of another
// stream ran first), and freeing twice is a double free.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s

#include "CudaRuntimeSubset.h"

#include <stdio.h>

static void report(const char *What, cudaError_t Status) {
  printf("%s -> %s\n", What, cudaGetErrorName(Status));
}

int main(void) {
  char Host[64] = {0};
  char *Dev = NULL;
  cudaStream_t S1, S2;
  if (cudaMalloc((void **)&Dev, 64) != cudaSuccess ||
      cudaStreamCreate(&S1) != cudaSuccess ||
      cudaStreamCreate(&S2) != cudaSuccess)
    return 1;
  printf("dev=%p\n", (void *)Dev);
  // CHECK: dev=0x[[DEV:[0-9a-f]+]]

  report("free", cudaFree(Dev));
  report("copy after free",
         cudaMemcpy(Host, Dev + 8, 16, cudaMemcpyDeviceToHost));
  // CHECK-NEXT: free -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy: use after free: src 0x{{[0-9a-f]+}} points into a freed 64-byte device allocation 0x[[DEV]] on cuda:0 (freed by cudaFree)
  // CHECK-NEXT: copy after free -> cudaErrorInvalidValue

  report("double free", cudaFree(Dev));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFree: double free: 0x[[DEV]] was already freed (a 64-byte device allocation on cuda:0, freed by cudaFree)
  // CHECK-NEXT: double free -> cudaErrorInvalidValue

  // A queued free makes later uses invalid at once.
  char *Async = NULL;
  if (cudaMallocAsync((void **)&Async, 32, S1) != cudaSuccess)
    return 1;
  report("free async", cudaFreeAsync(Async, S1));
  report("use with free pending",
         cudaMemsetAsync(Async, 0, 32, S1));
  report("free again", cudaFreeAsync(Async, S2));
  // CHECK-NEXT: free async -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemsetAsync: use after free: dst 0x{{[0-9a-f]+}} points into a 32-byte device allocation 0x{{[0-9a-f]+}} on cuda:0 that has a cudaFreeAsync pending on S1
  // CHECK-NEXT: use with free pending -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFreeAsync: double free: 0x{{[0-9a-f]+}} (a 32-byte device allocation on cuda:0) already has a cudaFreeAsync pending on S1
  // CHECK-NEXT: free again -> cudaErrorInvalidValue
  report("sync", cudaStreamSynchronize(S1));
  // CHECK-NEXT: sync -> cudaSuccess

  // A race: the copy on S1 is queued first, but S2's free runs first because
  // nothing orders the two streams. The copy is then a device-side use after
  // free, reported by the synchronisation that runs it.
  char *Raced = NULL;
  if (cudaMalloc((void **)&Raced, 64) != cudaSuccess)
    return 1;
  report("copy", cudaMemcpyAsync(Host, Raced, 16, cudaMemcpyDeviceToHost, S1));
  report("free on other stream", cudaFreeAsync(Raced, S2));
  report("sync S2", cudaStreamSynchronize(S2));
  report("sync S1", cudaStreamSynchronize(S1));
  // CHECK-NEXT: copy -> cudaSuccess
  // CHECK-NEXT: free on other stream -> cudaSuccess
  // CHECK-NEXT: sync S2 -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamSynchronize: use after free: cudaMemcpyAsync(dst=0x{{[0-9a-f]+}}, src=0x[[RACED:[0-9a-f]+]], 16 bytes, DeviceToHost, stream=S1) reads src 0x[[RACED]] in a 64-byte device allocation 0x[[RACED]] on cuda:0 that was freed (by cudaFreeAsync on S2) before the operation executed
  // CHECK-NEXT: sync S1 -> cudaErrorIllegalAddress

  // Pointers that are not allocation starts, or not device memory at all.
  char *Other = NULL;
  if (cudaMalloc((void **)&Other, 64) != cudaSuccess)
    return 1;
  report("interior", cudaFree(Other + 4));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFree: invalid pointer: 0x{{[0-9a-f]+}} is not the start of an allocation (offset 4 in the 64-byte device allocation 0x{{[0-9a-f]+}} on cuda:0)
  // CHECK-NEXT: interior -> cudaErrorInvalidValue
  report("host", cudaFree(Host));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFree: invalid pointer: 0x{{[0-9a-f]+}} is pageable host memory, not memory returned by cudaMalloc, cudaMallocAsync or cudaMallocManaged
  // CHECK-NEXT: host -> cudaErrorInvalidValue
  report("free host on device", cudaFreeHost(Other));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFreeHost: invalid pointer: 0x{{[0-9a-f]+}} is device memory (from cudaMalloc); free it with cudaFree
  // CHECK-NEXT: free host on device -> cudaErrorInvalidValue
  report("attributes", cudaPointerGetAttributes(
                           &(struct cudaPointerAttributes){0}, Dev));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaPointerGetAttributes: use after free: pointer 0x[[DEV]] points into a freed 64-byte device allocation 0x[[DEV]] on cuda:0 (freed by cudaFree)
  // CHECK-NEXT: attributes -> cudaErrorInvalidValue

  cudaFree(Other);
  cudaStreamDestroy(S1);
  cudaStreamDestroy(S2);
  printf("done\n");
  // CHECK-NEXT: done
  // CHECK-NOT: etcopy-cuda-sim
  return 0;
}
