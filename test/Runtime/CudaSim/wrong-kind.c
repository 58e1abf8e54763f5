// The copy kind must match the memory on both sides; managed memory is valid
// on either side, and cudaMemcpyDefault infers the direction.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s

#include "CudaRuntimeSubset.h"

#include <stdio.h>

static void report(const char *What, cudaError_t Status) {
  printf("%s -> %s\n", What, cudaGetErrorName(Status));
}

int main(void) {
  char Host[16] = "0123456789abcde";
  char *Dev = NULL, *Managed = NULL, *Pinned = NULL;
  if (cudaMalloc((void **)&Dev, 16) != cudaSuccess ||
      cudaMallocManaged((void **)&Managed, 16, cudaMemAttachGlobal) !=
          cudaSuccess ||
      cudaMallocHost((void **)&Pinned, 16) != cudaSuccess)
    return 1;

  report("h2d to host", cudaMemcpy(Host + 8, Host, 8, cudaMemcpyHostToDevice));
  // CHECK: etcopy-cuda-sim: error: cudaMemcpy: wrong copy kind: HostToDevice copy of 8 bytes from src 0x{{[0-9a-f]+}} (pageable host memory) to dst 0x{{[0-9a-f]+}} (pageable host memory)
  // CHECK-NEXT: h2d to host -> cudaErrorInvalidValue

  report("d2h from host",
         cudaMemcpyAsync(Dev, Host, 16, cudaMemcpyDeviceToHost, 0));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyAsync: wrong copy kind: DeviceToHost copy of 16 bytes from src 0x{{[0-9a-f]+}} (pageable host memory) to dst 0x{{[0-9a-f]+}} (device memory on cuda:0)
  // CHECK-NEXT: d2h from host -> cudaErrorInvalidValue

  report("h2h to device", cudaMemcpy(Dev, Host, 16, cudaMemcpyHostToHost));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy: wrong copy kind: HostToHost copy of 16 bytes from src 0x{{[0-9a-f]+}} (pageable host memory) to dst 0x{{[0-9a-f]+}} (device memory on cuda:0)
  // CHECK-NEXT: h2h to device -> cudaErrorInvalidValue

  report("d2d from pinned",
         cudaMemcpy(Dev, Pinned, 16, cudaMemcpyDeviceToDevice));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy: wrong copy kind: DeviceToDevice copy of 16 bytes from src 0x{{[0-9a-f]+}} (pinned host memory) to dst 0x{{[0-9a-f]+}} (device memory on cuda:0)
  // CHECK-NEXT: d2d from pinned -> cudaErrorInvalidValue

  report("kind 7", cudaMemcpy(Dev, Host, 16, (enum cudaMemcpyKind)7));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy: invalid copy kind 7
  // CHECK-NEXT: kind 7 -> cudaErrorInvalidMemcpyDirection

  report("memset host", cudaMemset(Host, 0, 4));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemset: invalid pointer: dst 0x{{[0-9a-f]+}} is pageable host memory; cudaMemset needs device or managed memory
  // CHECK-NEXT: memset host -> cudaErrorInvalidValue

  // Valid combinations.
  report("h2d", cudaMemcpy(Dev, Host, 16, cudaMemcpyHostToDevice));
  report("pinned h2d", cudaMemcpy(Dev, Pinned, 16, cudaMemcpyHostToDevice));
  report("managed as dst of h2d",
         cudaMemcpy(Managed, Host, 16, cudaMemcpyHostToDevice));
  report("managed as src of h2h",
         cudaMemcpy(Pinned, Managed, 16, cudaMemcpyHostToHost));
  report("managed as src of d2h",
         cudaMemcpy(Host, Managed, 16, cudaMemcpyDeviceToHost));
  report("default", cudaMemcpy(Host, Dev, 16, cudaMemcpyDefault));
  // CHECK-NEXT: h2d -> cudaSuccess
  // CHECK-NEXT: pinned h2d -> cudaSuccess
  // CHECK-NEXT: managed as dst of h2d -> cudaSuccess
  // CHECK-NEXT: managed as src of h2h -> cudaSuccess
  // CHECK-NEXT: managed as src of d2h -> cudaSuccess
  // CHECK-NEXT: default -> cudaSuccess
  // CHECK-NOT: etcopy-cuda-sim

  cudaFree(Dev);
  cudaFree(Managed);
  cudaFreeHost(Pinned);
  return 0;
}
