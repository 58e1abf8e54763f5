// Copies and memsets must stay inside one live allocation: the requested
// size counts, not the page-rounded mapping.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s

#include "CudaRuntimeSubset.h"

#include <stdio.h>

static void report(const char *What, cudaError_t Status) {
  printf("%s -> %s\n", What, cudaGetErrorName(Status));
}

int main(void) {
  char Host[128] = {0};
  char *Dev = NULL;
  if (cudaMalloc((void **)&Dev, 64) != cudaSuccess)
    return 1;
  printf("dev=%p\n", (void *)Dev);
  // CHECK: dev=0x[[DEV:[0-9a-f]+]]

  report("h2d 72", cudaMemcpy(Dev, Host, 72, cudaMemcpyHostToDevice));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy: out-of-bounds: dst 0x[[DEV]] + 72 bytes (offset 0) exceeds the 64-byte device allocation 0x[[DEV]] on cuda:0
  // CHECK-NEXT: h2d 72 -> cudaErrorInvalidValue
  printf("last=%s\n", cudaGetErrorName(cudaGetLastError()));
  printf("last=%s\n", cudaGetErrorName(cudaGetLastError()));
  // CHECK-NEXT: last=cudaErrorInvalidValue
  // CHECK-NEXT: last=cudaSuccess

  report("d2h at 60",
         cudaMemcpyAsync(Host, Dev + 60, 8, cudaMemcpyDeviceToHost, 0));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyAsync: out-of-bounds: src 0x{{[0-9a-f]+}} + 8 bytes (offset 60) exceeds the 64-byte device allocation 0x[[DEV]] on cuda:0
  // CHECK-NEXT: d2h at 60 -> cudaErrorInvalidValue

  report("memset past end", cudaMemset(Dev + 64, 0, 1));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemset: out-of-bounds: dst 0x{{[0-9a-f]+}} + 1 bytes (offset 64) exceeds the 64-byte device allocation 0x[[DEV]] on cuda:0
  // CHECK-NEXT: memset past end -> cudaErrorInvalidValue

  // Exactly the allocation is fine.
  report("exact", cudaMemcpy(Dev, Host, 64, cudaMemcpyHostToDevice));
  // CHECK-NEXT: exact -> cudaSuccess

  report("null src", cudaMemcpy(Dev, NULL, 4, cudaMemcpyHostToDevice));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy: invalid pointer: src is null in a copy of 4 bytes
  // CHECK-NEXT: null src -> cudaErrorInvalidValue

  report("overlap", cudaMemcpy(Dev + 8, Dev, 16, cudaMemcpyDeviceToDevice));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy: overlapping copy: dst 0x{{[0-9a-f]+}} + 16 bytes overlaps src 0x[[DEV]] + 16 bytes
  // CHECK-NEXT: overlap -> cudaErrorInvalidValue

  report("free", cudaFree(Dev));
  // CHECK-NEXT: free -> cudaSuccess
  return 0;
}
