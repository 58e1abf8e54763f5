// Registered and pinned host memory: registration ranges must not overlap,
// only registered ranges can be unregistered, and both kinds are host memory
// for copies.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s

#include "CudaRuntimeSubset.h"

#include <stdio.h>
#include <stdlib.h>

static void report(const char *What, cudaError_t Status) {
  printf("%s -> %s\n", What, cudaGetErrorName(Status));
}

int main(void) {
  char *Buffer = malloc(256);
  char *Dev = NULL, *Pinned = NULL;
  if (!Buffer || cudaMalloc((void **)&Dev, 64) != cudaSuccess ||
      cudaMallocHost((void **)&Pinned, 64) != cudaSuccess)
    return 1;

  report("register", cudaHostRegister(Buffer, 128, cudaHostRegisterDefault));
  report("overlap", cudaHostRegister(Buffer + 64, 128, 0));
  report("register device", cudaHostRegister(Dev, 64, 0));
  // CHECK: register -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaHostRegister: 0x{{[0-9a-f]+}} + 128 bytes overlaps the registered range 0x{{[0-9a-f]+}} + 128 bytes
  // CHECK-NEXT: overlap -> cudaErrorHostMemoryAlreadyRegistered
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaHostRegister: invalid pointer: 0x{{[0-9a-f]+}} is device memory on cuda:0; only pageable host memory can be registered
  // CHECK-NEXT: register device -> cudaErrorInvalidValue

  struct cudaPointerAttributes Attr;
  cudaPointerGetAttributes(&Attr, Buffer + 10);
  printf("registered: type=%d device=%d\n", (int)Attr.type, Attr.device);
  // CHECK-NEXT: registered: type=1 device=0

  report("h2d from registered",
         cudaMemcpy(Dev, Buffer, 64, cudaMemcpyHostToDevice));
  report("d2h to pinned",
         cudaMemcpy(Pinned, Dev, 64, cudaMemcpyDeviceToHost));
  report("memset pinned", cudaMemset(Pinned, 0, 64));
  // CHECK-NEXT: h2d from registered -> cudaSuccess
  // CHECK-NEXT: d2h to pinned -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemset: invalid pointer: dst 0x{{[0-9a-f]+}} is pinned host memory; cudaMemset needs device or managed memory
  // CHECK-NEXT: memset pinned -> cudaErrorInvalidValue

  report("unregister interior", cudaHostUnregister(Buffer + 1));
  report("unregister", cudaHostUnregister(Buffer));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaHostUnregister: 0x{{[0-9a-f]+}} is not the start of a range registered with cudaHostRegister
  // CHECK-NEXT: unregister interior -> cudaErrorHostMemoryNotRegistered
  // CHECK-NEXT: unregister -> cudaSuccess

  report("free pinned with cudaFree", cudaFree(Pinned));
  report("free pinned", cudaFreeHost(Pinned));
  report("free pinned again", cudaFreeHost(Pinned));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFree: invalid pointer: 0x{{[0-9a-f]+}} is pinned host memory (from cudaMallocHost); free it with cudaFreeHost
  // CHECK-NEXT: free pinned with cudaFree -> cudaErrorInvalidValue
  // CHECK-NEXT: free pinned -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFreeHost: double free: 0x{{[0-9a-f]+}} was already freed (a 64-byte pinned host allocation, freed by cudaFreeHost)
  // CHECK-NEXT: free pinned again -> cudaErrorInvalidValue

  cudaFree(Dev);
  free(Buffer);
  printf("done\n");
  // CHECK-NEXT: done
  // CHECK-NOT: etcopy-cuda-sim
  return 0;
}
