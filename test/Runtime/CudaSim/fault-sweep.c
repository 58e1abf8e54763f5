// A sweep: ETCOPY_CUDA_SIM_FAIL=any:N fails the N-th API call of this
// program, for every N up to the count the statistics report. Each run must
// end with the program's own error status (2) and report the injected
// error; only a failed free may leave memory behind (the leak check then
// exits with status 1), and no run may crash or find any other error.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %python %S/Inputs/fault-sweep.py %t | FileCheck %s

#include "CudaRuntimeSubset.h"

#include <stdio.h>
#include <string.h>

/// Runs Call; on failure prints it and jumps to the clean-up code.
#define TRY(Call)                                                              \
  do {                                                                         \
    cudaError_t Status = (Call);                                               \
    if (Status != cudaSuccess) {                                               \
      printf("error: %s failed: %s\n", #Call, cudaGetErrorName(Status));       \
      goto Cleanup;                                                            \
    }                                                                          \
  } while (0)

/// Runs a clean-up Call; on failure prints it and carries on.
#define RELEASE(Call)                                                          \
  do {                                                                         \
    cudaError_t Status = (Call);                                               \
    if (Status != cudaSuccess) {                                               \
      printf("error: %s failed: %s\n", #Call, cudaGetErrorName(Status));       \
      Result = 2;                                                              \
    }                                                                          \
  } while (0)

int main(void) {
  int Result = 2;
  float In[4] = {1, 2, 3, 4}, Out[4] = {0, 0, 0, 0};
  cudaStream_t S = NULL;
  cudaEvent_t E = NULL;
  float *Dev = NULL, *Pinned = NULL;

  TRY(cudaSetDevice(0));
  TRY(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));
  TRY(cudaEventCreateWithFlags(&E, cudaEventDisableTiming));
  TRY(cudaMalloc((void **)&Dev, sizeof(In)));
  TRY(cudaMallocHost((void **)&Pinned, sizeof(In)));
  memcpy(Pinned, In, sizeof(In));
  TRY(cudaMemsetAsync(Dev, 0, sizeof(In), S));
  {
    // The driver memset the compiler uses for 32-bit patterns.
    void *Function = NULL;
    TRY(cudaGetDriverEntryPointByVersion("cuMemsetD32Async", &Function, 13000,
                                         cudaEnableDefault, NULL));
    CUresult Result =
        ((PFN_cuMemsetD32Async_v3020)Function)((CUdeviceptr)Dev, 0, 4, S);
    if (Result != CUDA_SUCCESS) {
      printf("error: cuMemsetD32Async failed: %s\n",
             Result == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
                                                : "another error");
      goto Cleanup;
    }
  }
  TRY(cudaMemcpyAsync(Dev, Pinned, sizeof(In), cudaMemcpyHostToDevice, S));
  TRY(cudaEventRecord(E, S));
  TRY(cudaStreamWaitEvent(S, E, 0));
  {
    // Bring the two halves back in one batch.
    void *Dsts[2] = {Out, Out + 2};
    const void *Srcs[2] = {Dev, Dev + 2};
    size_t Sizes[2] = {sizeof(Out) / 2, sizeof(Out) / 2}, First = 0;
    struct cudaMemcpyAttributes Attr;
    memset(&Attr, 0, sizeof(Attr));
    Attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    TRY(cudaMemcpyBatchAsync(Dsts, Srcs, Sizes, 2, &Attr, &First, 1, S));
  }
  TRY(cudaStreamSynchronize(S));
  printf("out: %g %g %g %g\n", Out[0], Out[1], Out[2], Out[3]);
  Result = 0;

Cleanup:
  if (Pinned)
    RELEASE(cudaFreeHost(Pinned));
  if (Dev)
    RELEASE(cudaFree(Dev));
  if (E)
    RELEASE(cudaEventDestroy(E));
  if (S)
    RELEASE(cudaStreamDestroy(S));
  return Result;
}

// CHECK: calls: any=17
// CHECK-NEXT: any:1 cudaSetDevice cudaErrorDevicesUnavailable exit=2 reported{{$}}
// CHECK-NEXT: any:2 cudaStreamCreateWithFlags cudaErrorMemoryAllocation exit=2 reported{{$}}
// CHECK-NEXT: any:3 cudaEventCreateWithFlags cudaErrorMemoryAllocation exit=2 reported{{$}}
// CHECK-NEXT: any:4 cudaMalloc cudaErrorMemoryAllocation exit=2 reported{{$}}
// CHECK-NEXT: any:5 cudaMallocHost cudaErrorMemoryAllocation exit=2 reported{{$}}
// CHECK-NEXT: any:6 cudaMemsetAsync cudaErrorInvalidValue exit=2 reported{{$}}
// CHECK-NEXT: any:7 cudaGetDriverEntryPointByVersion cudaErrorNotSupported exit=2 reported{{$}}
// CHECK-NEXT: any:8 cuMemsetD32Async CUDA_ERROR_INVALID_VALUE exit=2 reported{{$}}
// CHECK-NEXT: any:9 cudaMemcpyAsync cudaErrorInvalidValue exit=2 reported{{$}}
// CHECK-NEXT: any:10 cudaEventRecord cudaErrorInvalidResourceHandle exit=2 reported{{$}}
// CHECK-NEXT: any:11 cudaStreamWaitEvent cudaErrorInvalidResourceHandle exit=2 reported{{$}}
// CHECK-NEXT: any:12 cudaMemcpyBatchAsync cudaErrorInvalidValue exit=2 reported{{$}}
// CHECK-NEXT: any:13 cudaStreamSynchronize cudaErrorLaunchFailure exit=2 reported{{$}}
// A failed free leaves its memory allocated: the leak check fails the run.
// CHECK-NEXT: any:14 cudaFreeHost cudaErrorInvalidValue exit=1 reported leaked-memory{{$}}
// CHECK-NEXT: any:15 cudaFree cudaErrorInvalidValue exit=1 reported leaked-memory{{$}}
// CHECK-NEXT: any:16 cudaEventDestroy cudaErrorInvalidResourceHandle exit=2 reported leaked-handles{{$}}
// CHECK-NEXT: any:17 cudaStreamDestroy cudaErrorInvalidResourceHandle exit=2 reported leaked-handles{{$}}
// CHECK-EMPTY:
