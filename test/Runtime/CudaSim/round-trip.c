// Host -> device -> device -> host round trips keep the data; memset,
// cudaMemcpyDefault, fresh-memory poisoning, pointer attributes, versions and
// error names behave like libcudart.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s --implicit-check-not=etcopy-cuda-sim
// RUN: env ETCOPY_CUDA_SIM_POISON=0 %t 2>&1 | FileCheck %s --check-prefix=NOPOISON

#include "CudaRuntimeSubset.h"

#include <stdio.h>

#include "Inputs/check-cuda.h"

static void printFloats(const char *Label, const float *Values, int Count) {
  printf("%s:", Label);
  for (int I = 0; I < Count; ++I)
    printf(" %.1f", Values[I]);
  printf("\n");
}

int main(void) {
  int Count = 0, Version = 0, Device = -1;
  CHECK_CUDA(cudaGetDeviceCount(&Count));
  CHECK_CUDA(cudaGetDevice(&Device));
  printf("devices=%d current=%d\n", Count, Device);
  // CHECK: devices=1 current=0
  CHECK_CUDA(cudaRuntimeGetVersion(&Version));
  printf("runtime=%d\n", Version);
  // CHECK: runtime=13000
  CHECK_CUDA(cudaDriverGetVersion(&Version));
  printf("driver=%d\n", Version);
  // CHECK: driver=13000

  float Host[8], Back[8];
  for (int I = 0; I < 8; ++I)
    Host[I] = 1.5f * (float)I;
  float *A = NULL, *B = NULL;
  CHECK_CUDA(cudaMalloc((void **)&A, sizeof(Host)));
  CHECK_CUDA(cudaMalloc((void **)&B, sizeof(Host)));

  // Fresh device memory is filled with 0xA5 unless ETCOPY_CUDA_SIM_POISON=0.
  unsigned char Raw[4];
  CHECK_CUDA(cudaMemcpy(Raw, A, sizeof(Raw), cudaMemcpyDeviceToHost));
  printf("fresh: %02x %02x\n", Raw[0], Raw[3]);
  // CHECK: fresh: a5 a5
  // NOPOISON: fresh: 00 00

  CHECK_CUDA(cudaMemcpy(A, Host, sizeof(Host), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(B, A, sizeof(Host), cudaMemcpyDeviceToDevice));
  CHECK_CUDA(cudaMemcpy(Back, B, sizeof(Back), cudaMemcpyDeviceToHost));
  printFloats("back", Back, 8);
  // CHECK: back: 0.0 1.5 3.0 4.5 6.0 7.5 9.0 10.5

  CHECK_CUDA(cudaMemset(B, 0, 4 * sizeof(float)));
  CHECK_CUDA(cudaMemsetAsync(B + 6, 0, 2 * sizeof(float), 0));
  CHECK_CUDA(cudaStreamSynchronize(0));
  CHECK_CUDA(cudaMemcpy(Back, B, sizeof(Back), cudaMemcpyDefault));
  printFloats("memset", Back, 8);
  // CHECK: memset: 0.0 0.0 0.0 0.0 6.0 7.5 0.0 0.0

  // A zero-byte allocation succeeds and writes nothing; cudaFree(NULL) is
  // a no-op. (Zero-byte copies are rejected: see strict-rules.c.)
  void *Empty = (void *)1;
  CHECK_CUDA(cudaMalloc(&Empty, 0));
  CHECK_CUDA(cudaFree(NULL));
  printf("empty=%p\n", Empty);
  // CHECK: empty=0x1

  // Managed and pinned host memory are host-accessible.
  float *Managed = NULL, *Pinned = NULL;
  CHECK_CUDA(cudaMallocManaged((void **)&Managed, sizeof(Host),
                               cudaMemAttachGlobal));
  CHECK_CUDA(cudaMallocHost((void **)&Pinned, sizeof(Host)));
  CHECK_CUDA(cudaMemcpy(Managed, A, sizeof(Host), cudaMemcpyDeviceToDevice));
  CHECK_CUDA(cudaMemcpy(Pinned, Managed, sizeof(Host),
                        cudaMemcpyDeviceToHost));
  Managed[0] = 42.0f;
  printf("managed: %.1f %.1f pinned: %.1f\n", Managed[0], Managed[7],
         Pinned[7]);
  // CHECK: managed: 42.0 10.5 pinned: 10.5

  struct cudaPointerAttributes Attr;
  CHECK_CUDA(cudaPointerGetAttributes(&Attr, A + 1));
  printf("device: type=%d device=%d same=%d host=%p\n", (int)Attr.type,
         Attr.device, Attr.devicePointer == (void *)(A + 1),
         Attr.hostPointer);
  // CHECK: device: type=2 device=0 same=1 host=(nil)
  CHECK_CUDA(cudaPointerGetAttributes(&Attr, Managed));
  printf("managed: type=%d device=%d\n", (int)Attr.type, Attr.device);
  // CHECK: managed: type=3 device=0
  CHECK_CUDA(cudaPointerGetAttributes(&Attr, Pinned));
  printf("pinned: type=%d\n", (int)Attr.type);
  // CHECK: pinned: type=1
  CHECK_CUDA(cudaPointerGetAttributes(&Attr, Host));
  printf("pageable: type=%d device=%d\n", (int)Attr.type, Attr.device);
  // CHECK: pageable: type=0 device=-2

  const cudaError_t Codes[] = {cudaSuccess,
                               cudaErrorInvalidValue,
                               cudaErrorMemoryAllocation,
                               cudaErrorInvalidMemcpyDirection,
                               cudaErrorInsufficientDriver,
                               cudaErrorInvalidDevice,
                               cudaErrorInvalidResourceHandle,
                               cudaErrorNotReady,
                               cudaErrorIllegalAddress,
                               (cudaError_t)12345};
  for (unsigned I = 0; I < sizeof(Codes) / sizeof(Codes[0]); ++I)
    printf("%d %s: %s\n", (int)Codes[I], cudaGetErrorName(Codes[I]),
           cudaGetErrorString(Codes[I]));
  // CHECK: 0 cudaSuccess: no error
  // CHECK-NEXT: 1 cudaErrorInvalidValue: invalid argument
  // CHECK-NEXT: 2 cudaErrorMemoryAllocation: out of memory
  // CHECK-NEXT: 21 cudaErrorInvalidMemcpyDirection: invalid copy direction for memcpy
  // CHECK-NEXT: 35 cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version
  // CHECK-NEXT: 101 cudaErrorInvalidDevice: invalid device ordinal
  // CHECK-NEXT: 400 cudaErrorInvalidResourceHandle: invalid resource handle
  // CHECK-NEXT: 600 cudaErrorNotReady: device not ready
  // CHECK-NEXT: 700 cudaErrorIllegalAddress: an illegal memory access was encountered
  // CHECK-NEXT: 12345 unrecognized error code: unrecognized error code

  printf("last=%s\n", cudaGetErrorName(cudaGetLastError()));
  // CHECK: last=cudaSuccess

  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(B));
  CHECK_CUDA(cudaFree(Managed));
  CHECK_CUDA(cudaFreeHost(Pinned));
  printf("done\n");
  // CHECK: done
  return 0;
}
