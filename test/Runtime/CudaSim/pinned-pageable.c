// Copies are classified by the memory on each side: host memory is pinned
// (cudaMallocHost, cudaHostAlloc, or inside a cudaHostRegister range) or
// pageable, device and managed memory are device memory; a host range that
// is only partly registered is rejected, as CUDA documents. The
// trace names the path of each accepted copy and the statistics count the
// copies and bytes of each path. cudaHostAlloc and cudaHostGetDevicePointer
// are checked like the other host memory functions.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 %t 2>&1 | FileCheck %s

#include "CudaRuntimeSubset.h"

#include <stdio.h>
#include <stdlib.h>

static void report(const char *What, cudaError_t Status) {
  printf("%s -> %s\n", What, cudaGetErrorName(Status));
}

int main(void) {
  char *Pinned = NULL, *Dev = NULL, *Dev1 = NULL, *Managed = NULL;
  char *Pageable = malloc(256), *Registered = malloc(256);
  void *None = (void *)1;
  if (!Pageable || !Registered)
    return 1;

  // cudaHostAlloc: flags are checked; zero bytes succeed and write nothing.
  report("host alloc", cudaHostAlloc((void **)&Pinned, 64,
                                     cudaHostAllocPortable | cudaHostAllocMapped |
                                         cudaHostAllocWriteCombined));
  report("bad flags", cudaHostAlloc(&None, 64, 8));
  report("zero bytes", cudaHostAlloc(&None, 0, cudaHostAllocDefault));
  printf("zero bytes gives %p\n", None);
  report("null result", cudaHostAlloc(NULL, 64, cudaHostAllocDefault));
  // CHECK: trace: cudaHostAlloc(64 bytes, flags=7) -> 0x[[PINNED:[0-9a-f]+]]
  // CHECK-NEXT: host alloc -> cudaSuccess
  // CHECK-NEXT: error: cudaHostAlloc: invalid flags 0x8 (expected a combination of cudaHostAllocPortable, cudaHostAllocMapped and cudaHostAllocWriteCombined)
  // CHECK-NEXT: trace: cudaHostAlloc(64 bytes, flags=8) -> cudaErrorInvalidValue
  // CHECK-NEXT: bad flags -> cudaErrorInvalidValue
  // CHECK-NEXT: trace: cudaHostAlloc(0 bytes, flags=0) -> nothing written (0 bytes)
  // CHECK-NEXT: zero bytes -> cudaSuccess
  // CHECK-NEXT: zero bytes gives 0x1
  // CHECK-NEXT: error: cudaHostAlloc: invalid argument: the result pointer is null
  // CHECK-NEXT: trace: cudaHostAlloc(64 bytes, flags=0) -> cudaErrorInvalidValue
  // CHECK-NEXT: null result -> cudaErrorInvalidValue

  if (cudaMalloc((void **)&Dev, 64) != cudaSuccess ||
      cudaMallocManaged((void **)&Managed, 64, cudaMemAttachGlobal) !=
          cudaSuccess ||
      cudaHostRegister(Registered, 128, cudaHostRegisterDefault) != cudaSuccess ||
      cudaSetDevice(1) != cudaSuccess ||
      cudaMalloc((void **)&Dev1, 64) != cudaSuccess || cudaSetDevice(0))
    return 1;

  // cudaHostGetDevicePointer: pinned and registered memory is mapped at the
  // same address.
  void *Mapped = NULL;
  report("mapped pinned", cudaHostGetDevicePointer(&Mapped, Pinned + 8, 0));
  printf("same address: %d\n", Mapped == Pinned + 8);
  report("mapped registered", cudaHostGetDevicePointer(&Mapped, Registered, 0));
  report("mapped pageable", cudaHostGetDevicePointer(&Mapped, Pageable, 0));
  report("mapped device", cudaHostGetDevicePointer(&Mapped, Dev, 0));
  report("mapped flags", cudaHostGetDevicePointer(&Mapped, Pinned, 1));
  report("mapped null", cudaHostGetDevicePointer(NULL, Pinned, 0));
  // CHECK: trace: cudaHostGetDevicePointer(0x{{[0-9a-f]+}}, flags=0) -> 0x{{[0-9a-f]+}}
  // CHECK-NEXT: mapped pinned -> cudaSuccess
  // CHECK-NEXT: same address: 1
  // CHECK-NEXT: trace: cudaHostGetDevicePointer
  // CHECK-NEXT: mapped registered -> cudaSuccess
  // CHECK-NEXT: error: cudaHostGetDevicePointer: invalid pointer: pHost 0x{{[0-9a-f]+}} is pageable host memory, not memory from cudaMallocHost, cudaHostAlloc or cudaHostRegister
  // CHECK-NEXT: trace: cudaHostGetDevicePointer(0x{{[0-9a-f]+}}, flags=0) -> cudaErrorInvalidValue
  // CHECK-NEXT: mapped pageable -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaHostGetDevicePointer: invalid pointer: pHost 0x{{[0-9a-f]+}} is device memory on cuda:0, not memory
  // CHECK-NEXT: trace: cudaHostGetDevicePointer
  // CHECK-NEXT: mapped device -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaHostGetDevicePointer: invalid flags 0x1 (must be 0)
  // CHECK-NEXT: trace: cudaHostGetDevicePointer
  // CHECK-NEXT: mapped flags -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaHostGetDevicePointer: invalid argument: pDevice is null
  // CHECK-NEXT: trace: cudaHostGetDevicePointer
  // CHECK-NEXT: mapped null -> cudaErrorInvalidValue

  // The path of each copy.
  cudaMemcpy(Dev, Pinned, 64, cudaMemcpyHostToDevice);
  cudaMemcpy(Registered, Dev, 64, cudaMemcpyDeviceToHost);
  cudaMemcpy(Pageable, Dev, 64, cudaMemcpyDefault);
  cudaMemcpy(Managed, Pageable, 64, cudaMemcpyDefault);
  cudaMemcpy(Pageable, Pinned, 64, cudaMemcpyHostToHost);
  cudaMemcpy(Managed, Dev, 64, cudaMemcpyDeviceToDevice);
  cudaMemcpy(Dev1, Dev, 64, cudaMemcpyDeviceToDevice);
  // CHECK: trace: cudaMemcpy({{.*}}, 64 bytes, HostToDevice) [h2d_pinned]
  // CHECK-NEXT: trace: cudaMemcpy({{.*}}, 64 bytes, DeviceToHost) [d2h_pinned]
  // CHECK-NEXT: trace: cudaMemcpy({{.*}}, 64 bytes, Default) [d2h_pageable]
  // CHECK-NEXT: trace: cudaMemcpy({{.*}}, 64 bytes, Default) [h2d_pageable]
  // CHECK-NEXT: trace: cudaMemcpy({{.*}}, 64 bytes, HostToHost) [h2h]
  // CHECK-NEXT: trace: cudaMemcpy({{.*}}, 64 bytes, DeviceToDevice) [d2d]
  // Peer access was not enabled: the copy is staged through the host.
  // CHECK-NEXT: trace: cudaMemcpy({{.*}}, 64 bytes, DeviceToDevice) [peer_staged]

  // Memory regions that are partly registered are rejected ("Memory regions
  // spanning over allocations that are both registered and not registered
  // with CUDA are not supported", cudaMemcpy and the other copies).
  char *Split = malloc(64);
  if (!Split || cudaHostRegister(Split + 32, 32, 0) != cudaSuccess)
    return 1;
  report("past the registration",
         cudaMemcpy(Dev, Registered + 100, 64, cudaMemcpyHostToDevice));
  report("into the registration",
         cudaMemcpy(Split + 16, Dev, 32, cudaMemcpyDeviceToHost));
  cudaHostUnregister(Split + 32);
  free(Split);
  // CHECK: error: cudaMemcpy: invalid pointer: src 0x{{[0-9a-f]+}} + 64 bytes runs past the end of the registered range 0x{{[0-9a-f]+}} + 128 bytes; CUDA rejects copies of memory that is partly registered
  // CHECK-NEXT: trace: cudaMemcpy({{.*}}, 64 bytes, HostToDevice) -> cudaErrorInvalidValue
  // CHECK-NEXT: past the registration -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpy: invalid pointer: dst 0x{{[0-9a-f]+}} + 32 bytes (pageable host memory) runs into the registered range 0x{{[0-9a-f]+}} + 32 bytes; CUDA rejects copies of memory that is partly registered
  // CHECK-NEXT: trace: cudaMemcpy({{.*}}, 32 bytes, DeviceToHost) -> cudaErrorInvalidValue
  // CHECK-NEXT: into the registration -> cudaErrorInvalidValue

  // A batch lists how many copies take each path.
  cudaStream_t S;
  if (cudaStreamCreate(&S) != cudaSuccess)
    return 1;
  void *Dsts[3] = {Dev, Pageable, Pinned + 32};
  const void *Srcs[3] = {Pinned, Managed, Dev1};
  size_t Sizes[3] = {16, 16, 16}, First = 0;
  struct cudaMemcpyAttributes Attr = {cudaMemcpySrcAccessOrderStream,
                                      {cudaMemLocationTypeInvalid, 0},
                                      {cudaMemLocationTypeInvalid, 0},
                                      0};
  cudaMemcpyBatchAsync(Dsts, Srcs, Sizes, 3, &Attr, &First, 1, S);
  cudaStreamSynchronize(S);
  // CHECK: trace: cudaMemcpyBatchAsync(3 copies, 48 bytes, 1 attribute(s), stream=S1) [h2d_pinned 1, d2h_pinned 1, d2h_pageable 1]

  // Memory from cudaHostAlloc is freed with cudaFreeHost.
  report("free with cudaFree", cudaFree(Pinned));
  report("free host", cudaFreeHost(Pinned));
  report("mapped freed", cudaHostGetDevicePointer(&Mapped, Pinned, 0));
  // CHECK: error: cudaFree: invalid pointer: 0x[[PINNED]] is pinned host memory (from cudaHostAlloc); free it with cudaFreeHost
  // CHECK: free with cudaFree -> cudaErrorInvalidValue
  // CHECK: free host -> cudaSuccess
  // CHECK-NEXT: error: cudaHostGetDevicePointer: use after free: pHost 0x[[PINNED]] points into a freed 64-byte pinned host allocation 0x[[PINNED]] (freed by cudaFreeHost)
  // CHECK-NEXT: trace: cudaHostGetDevicePointer
  // CHECK-NEXT: mapped freed -> cudaErrorInvalidValue

  cudaStreamDestroy(S);
  cudaHostUnregister(Registered);
  cudaFree(Dev);
  cudaFree(Dev1);
  cudaFree(Managed);
  free(Pageable);
  free(Registered);
  return 0;
}
// CHECK: stats: copies: pinned=4 pinned_bytes=160 pageable=3 pageable_bytes=144 h2h=1 h2h_bytes=64 h2d_pinned=2 h2d_pinned_bytes=80 h2d_pageable=1 h2d_pageable_bytes=64 d2h_pinned=2 d2h_pinned_bytes=80 d2h_pageable=2 d2h_pageable_bytes=80 d2d=1 d2d_bytes=64 peer_direct=0 peer_direct_bytes=0 peer_staged=1 peer_staged_bytes=64 batches=1 batch_copies=3
