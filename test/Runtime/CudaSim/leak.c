// Memory still allocated at exit fails the process; streams and events that
// were never destroyed only warn. ETCOPY_CUDA_SIM_LEAK_CHECK=0 turns both off.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: not %t 2>&1 | FileCheck %s
// RUN: env ETCOPY_CUDA_SIM_LEAK_CHECK=0 %t 2>&1 | FileCheck %s --check-prefix=OFF

#include "CudaRuntimeSubset.h"

#include <stdio.h>

int main(void) {
  void *Dev = NULL, *Managed = NULL, *Pinned = NULL, *Freed = NULL;
  cudaStream_t S;
  cudaEvent_t E;
  if (cudaMalloc(&Dev, 64) != cudaSuccess ||
      cudaMallocManaged(&Managed, 32, cudaMemAttachGlobal) != cudaSuccess ||
      cudaMallocHost(&Pinned, 16) != cudaSuccess ||
      cudaMalloc(&Freed, 8) != cudaSuccess ||
      cudaStreamCreate(&S) != cudaSuccess ||
      cudaEventCreate(&E) != cudaSuccess)
    return 2;
  cudaFree(Freed);
  printf("dev=%p managed=%p pinned=%p\n", Dev, Managed, Pinned);
  printf("main done\n");
  return 0;
}
// CHECK: dev=0x[[DEV:[0-9a-f]+]] managed=0x[[MANAGED:[0-9a-f]+]] pinned=0x[[PINNED:[0-9a-f]+]]
// CHECK-NEXT: main done
// CHECK-NEXT: etcopy-cuda-sim: warning: leak: 1 stream(s) never destroyed: S1
// CHECK-NEXT: etcopy-cuda-sim: warning: leak: 1 event(s) never destroyed: E1
// CHECK-NEXT: etcopy-cuda-sim: error: leak: 2 device allocation(s), 96 bytes, not freed at exit
// CHECK-NEXT: etcopy-cuda-sim: note: leaked 64 bytes of device memory at 0x[[DEV]] on cuda:0 (allocation #1, cudaMalloc)
// CHECK-NEXT: etcopy-cuda-sim: note: leaked 32 bytes of managed memory at 0x[[MANAGED]] on cuda:0 (allocation #2, cudaMallocManaged)
// CHECK-NEXT: etcopy-cuda-sim: error: leak: 1 pinned host allocation(s), 16 bytes, not freed at exit
// CHECK-NEXT: etcopy-cuda-sim: note: leaked 16 bytes of pinned host memory at 0x[[PINNED]] (cudaMallocHost)
// CHECK-NEXT: etcopy-cuda-sim: note: set ETCOPY_CUDA_SIM_LEAK_CHECK=0 to disable the leak check
// CHECK-NOT: {{.}}

// OFF: main done
// OFF-NOT: etcopy-cuda-sim
