// ETCOPY_CUDA_SIM_FAIL_ALLOC (an alias of ETCOPY_CUDA_SIM_FAIL=alloc:N,...)
// makes chosen device allocations fail (counting cudaMalloc, cudaMallocAsync
// and cudaMallocManaged from 1), and ETCOPY_CUDA_SIM_MEMORY_LIMIT caps the
// live bytes per device.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: env ETCOPY_CUDA_SIM_FAIL_ALLOC=2 %t 2>&1 | FileCheck %s --check-prefix=SECOND
// RUN: env ETCOPY_CUDA_SIM_FAIL_ALLOC=1,3 %t 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: env ETCOPY_CUDA_SIM_FAIL=alloc:2 %t 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: env ETCOPY_CUDA_SIM_MEMORY_LIMIT=100 %t 2>&1 | FileCheck %s --check-prefix=LIMIT

#include "CudaRuntimeSubset.h"

#include <stdio.h>

int main(void) {
  void *Ptrs[4] = {NULL, NULL, NULL, NULL};
  cudaError_t Status[4];
  cudaStream_t S;
  if (cudaStreamCreate(&S) != cudaSuccess)
    return 1;
  // Pinned host memory is not a device allocation and is never counted.
  void *Pinned = NULL;
  if (cudaMallocHost(&Pinned, 1024) != cudaSuccess)
    return 1;
  Status[0] = cudaMalloc(&Ptrs[0], 64);
  Status[1] = cudaMallocAsync(&Ptrs[1], 64, S);
  Status[2] = cudaMallocManaged(&Ptrs[2], 64, cudaMemAttachGlobal);
  if (Ptrs[0])
    cudaFree(Ptrs[0]);
  Status[3] = cudaMalloc(&Ptrs[3], 64);
  for (int I = 0; I < 4; ++I)
    printf("alloc %d: %s%s\n", I + 1, cudaGetErrorName(Status[I]),
           Status[I] == cudaSuccess ? "" : (Ptrs[I] ? " non-null" : " null"));
  for (int I = 1; I < 4; ++I)
    if (Ptrs[I])
      cudaFree(Ptrs[I]);
  cudaFreeHost(Pinned);
  cudaStreamDestroy(S);
  return 0;
}
// NONE-NOT: etcopy-cuda-sim
// NONE: alloc 1: cudaSuccess
// NONE-NEXT: alloc 2: cudaSuccess
// NONE-NEXT: alloc 3: cudaSuccess
// NONE-NEXT: alloc 4: cudaSuccess

// SECOND: etcopy-cuda-sim: error: cudaMallocAsync: injected allocation failure: device allocation #2 (64 bytes on cuda:0) fails because ETCOPY_CUDA_SIM_FAIL_ALLOC=2
// SECOND-NEXT: alloc 1: cudaSuccess
// SECOND-NEXT: alloc 2: cudaErrorMemoryAllocation null
// SECOND-NEXT: alloc 3: cudaSuccess
// SECOND-NEXT: alloc 4: cudaSuccess

// KIND: etcopy-cuda-sim: error: cudaMallocAsync: injected allocation failure: device allocation #2 (64 bytes on cuda:0) fails because ETCOPY_CUDA_SIM_FAIL=alloc:2
// KIND-NEXT: alloc 1: cudaSuccess
// KIND-NEXT: alloc 2: cudaErrorMemoryAllocation null
// KIND-NEXT: alloc 3: cudaSuccess

// LIST: etcopy-cuda-sim: error: cudaMalloc: injected allocation failure: device allocation #1 (64 bytes on cuda:0) fails because ETCOPY_CUDA_SIM_FAIL_ALLOC=1,3
// LIST-NEXT: etcopy-cuda-sim: error: cudaMallocManaged: injected allocation failure: device allocation #3 (64 bytes on cuda:0) fails because ETCOPY_CUDA_SIM_FAIL_ALLOC=1,3
// LIST-NEXT: alloc 1: cudaErrorMemoryAllocation null
// LIST-NEXT: alloc 2: cudaSuccess
// LIST-NEXT: alloc 3: cudaErrorMemoryAllocation null
// LIST-NEXT: alloc 4: cudaSuccess

// LIMIT: etcopy-cuda-sim: error: cudaMallocAsync: out of memory: 64 bytes requested on cuda:0 with 64 of 100 bytes in use (ETCOPY_CUDA_SIM_MEMORY_LIMIT)
// LIMIT-NEXT: etcopy-cuda-sim: error: cudaMallocManaged: out of memory: 64 bytes requested on cuda:0 with 64 of 100 bytes in use (ETCOPY_CUDA_SIM_MEMORY_LIMIT)
// LIMIT-NEXT: alloc 1: cudaSuccess
// LIMIT-NEXT: alloc 2: cudaErrorMemoryAllocation null
// LIMIT-NEXT: alloc 3: cudaErrorMemoryAllocation null
// LIMIT-NEXT: alloc 4: cudaSuccess
