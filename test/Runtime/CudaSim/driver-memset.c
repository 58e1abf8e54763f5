// cudaGetDriverEntryPointByVersion hands out simulated cuMemsetD8Async,
// cuMemsetD16Async and cuMemsetD32Async (driver signatures, CUresult codes):
// N elements of 1, 2 or 4 bytes, in stream order like cudaMemsetAsync, on
// suitably aligned device memory. An unknown symbol or one newer than the
// requested version is not an error but yields NULL and a status. Driver
// calls leave the runtime's last error alone.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_STATS=1 %t 2>&1 | FileCheck %s
// RUN: env ETCOPY_CUDA_SIM_TRACE=1 %t 2>&1 | FileCheck %s --check-prefix=TRACE
// RUN: env ETCOPY_CUDA_SIM_FAIL=memset:1 %t 2>&1 | FileCheck %s --check-prefix=FAIL

#include "CudaRuntimeSubset.h"

#include <stdio.h>
#include <string.h>

static const char *statusName(enum cudaDriverEntryPointQueryResult Status) {
  switch (Status) {
  case cudaDriverEntryPointSuccess:
    return "found";
  case cudaDriverEntryPointSymbolNotFound:
    return "not found";
  case cudaDriverEntryPointVersionNotSufficent:
    return "version not sufficient";
  }
  return "?";
}

static void *lookup(const char *Symbol, unsigned Version,
                    unsigned long long Flags) {
  void *Function = (void *)1;
  enum cudaDriverEntryPointQueryResult Status =
      (enum cudaDriverEntryPointQueryResult)7;
  cudaError_t Error = cudaGetDriverEntryPointByVersion(Symbol, &Function,
                                                       Version, Flags, &Status);
  printf("%s@%u -> %s, %s, %s\n", Symbol, Version, cudaGetErrorName(Error),
         Function ? "function" : "NULL",
         Error == cudaSuccess ? statusName(Status) : "-");
  return Function;
}

static void report(const char *What, CUresult Result) {
  printf("%s -> %d (last error %s)\n", What, (int)Result,
         cudaGetErrorName(cudaGetLastError()));
}

int main(void) {
  PFN_cuMemsetD8Async_v3020 D8 = (PFN_cuMemsetD8Async_v3020)lookup(
      "cuMemsetD8Async", 13000, cudaEnableDefault);
  PFN_cuMemsetD16Async_v3020 D16 = (PFN_cuMemsetD16Async_v3020)lookup(
      "cuMemsetD16Async", 12000, cudaEnableLegacyStream);
  PFN_cuMemsetD32Async_v3020 D32 = (PFN_cuMemsetD32Async_v3020)lookup(
      "cuMemsetD32Async", 3020, cudaEnableDefault);
  // TRACE: trace: cudaGetDriverEntryPointByVersion("cuMemsetD8Async", cudaVersion=13000, flags=0) -> 0x{{[0-9a-f]+}} (cudaDriverEntryPointSuccess)
  // CHECK: cuMemsetD8Async@13000 -> cudaSuccess, function, found
  // TRACE: trace: cudaGetDriverEntryPointByVersion("cuMemsetD16Async", cudaVersion=12000, flags=1)
  // CHECK-NEXT: cuMemsetD16Async@12000 -> cudaSuccess, function, found
  // TRACE: trace: cudaGetDriverEntryPointByVersion
  // CHECK-NEXT: cuMemsetD32Async@3020 -> cudaSuccess, function, found

  // Per-thread lookups give the same functions: the simulator's per-thread
  // and legacy default streams are one stream.
  printf("per-thread D32 is the same: %d\n",
         lookup("cuMemsetD32Async", 13000, cudaEnablePerThreadDefaultStream) ==
             (void *)D32);
  // CHECK-NEXT: cuMemsetD32Async@13000 -> cudaSuccess, function, found
  // CHECK-NEXT: per-thread D32 is the same: 1

  lookup("cuMemcpyBatchAsync", 13000, cudaEnableDefault);
  lookup("cuMemsetD32Async", 3000, cudaEnableDefault);
  lookup("cuMemsetD32Async", 13010, cudaEnableDefault);
  lookup("cuMemsetD32Async", 13000, 4);
  lookup(NULL, 13000, cudaEnableDefault);
  void *Ignored;
  printf("no status -> %s\n",
         cudaGetErrorName(cudaGetDriverEntryPointByVersion(
             "cuMemsetD8Async", &Ignored, 13000, cudaEnableDefault, NULL)));
  printf("no result -> %s\n",
         cudaGetErrorName(cudaGetDriverEntryPointByVersion(
             "cuMemsetD8Async", NULL, 13000, cudaEnableDefault, NULL)));
  // TRACE: trace: cudaGetDriverEntryPointByVersion("cuMemcpyBatchAsync", cudaVersion=13000, flags=0) -> NULL (cudaDriverEntryPointSymbolNotFound)
  // CHECK-NEXT: cuMemcpyBatchAsync@13000 -> cudaSuccess, NULL, not found
  // TRACE: trace: cudaGetDriverEntryPointByVersion("cuMemsetD32Async", cudaVersion=3000, flags=0) -> NULL (cudaDriverEntryPointVersionNotSufficent)
  // CHECK-NEXT: cuMemsetD32Async@3000 -> cudaSuccess, NULL, version not sufficient
  // CHECK-NEXT: error: cudaGetDriverEntryPointByVersion: cudaVersion 13010 is newer than the driver (13000)
  // TRACE: trace: cudaGetDriverEntryPointByVersion("cuMemsetD32Async", cudaVersion=13010, flags=0) -> cudaErrorInvalidValue
  // CHECK-NEXT: cuMemsetD32Async@13010 -> cudaErrorInvalidValue, function, -
  // CHECK-NEXT: error: cudaGetDriverEntryPointByVersion: invalid flags 0x4 (expected cudaEnableDefault, cudaEnableLegacyStream or cudaEnablePerThreadDefaultStream)
  // TRACE: trace: cudaGetDriverEntryPointByVersion
  // CHECK-NEXT: cuMemsetD32Async@13000 -> cudaErrorInvalidValue, function, -
  // CHECK-NEXT: error: cudaGetDriverEntryPointByVersion: invalid argument: symbol is null
  // TRACE: trace: cudaGetDriverEntryPointByVersion("(null)", cudaVersion=13000, flags=0) -> cudaErrorInvalidValue
  // CHECK-NEXT: (null)@13000 -> cudaErrorInvalidValue, function, -
  // TRACE: trace: cudaGetDriverEntryPointByVersion
  // CHECK-NEXT: no status -> cudaSuccess
  // CHECK-NEXT: error: cudaGetDriverEntryPointByVersion: invalid argument: funcPtr is null
  // TRACE: trace: cudaGetDriverEntryPointByVersion
  // CHECK-NEXT: no result -> cudaErrorInvalidValue
  cudaGetLastError();

  unsigned char *Dev = NULL;
  unsigned char Host[64];
  cudaStream_t S;
  if (!D8 || !D16 || !D32 || cudaMalloc((void **)&Dev, 64) != cudaSuccess ||
      cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking) != cudaSuccess)
    return 1;
  CUdeviceptr P = (CUdeviceptr)Dev;

  // The memsets are queued on S: a synchronous copy, which does not wait
  // for a non-blocking stream, still sees the old bytes.
  report("d32", D32(P, 0x3f800000u, 4, S));
  report("d16", D16(P + 16, 0xabcd, 8, S));
  report("d8", D8(P + 32, 0x5a, 3, S));
  cudaMemcpy(Host, Dev, 4, cudaMemcpyDeviceToHost);
  printf("before sync: %02x\n", Host[0]);
  cudaStreamSynchronize(S);
  cudaMemcpy(Host, Dev, sizeof(Host), cudaMemcpyDeviceToHost);
  float F[4];
  memcpy(F, Host, sizeof(F));
  printf("d32: %g %g %g %g\n", F[0], F[1], F[2], F[3]);
  printf("d16: %02x %02x ... %02x %02x, then %02x\n", Host[16], Host[17],
         Host[30], Host[31], Host[32 + 3]);
  printf("d8: %02x %02x %02x %02x\n", Host[32], Host[33], Host[34], Host[35]);
  // TRACE: trace: cuMemsetD32Async(dst=0x[[TDEV:[0-9a-f]+]], value=0x3f800000, 4 elements, stream=S1)
  // CHECK-NEXT: d32 -> 0 (last error cudaSuccess)
  // TRACE: trace: cuMemsetD16Async(dst=0x{{[0-9a-f]+}}, value=0xabcd, 8 elements, stream=S1)
  // CHECK-NEXT: d16 -> 0 (last error cudaSuccess)
  // TRACE: trace: cuMemsetD8Async(dst=0x{{[0-9a-f]+}}, value=0x5a, 3 elements, stream=S1)
  // CHECK-NEXT: d8 -> 0 (last error cudaSuccess)
  // CHECK-NEXT: before sync: a5
  // CHECK-NEXT: d32: 1 1 1 1
  // CHECK-NEXT: d16: cd ab ... cd ab, then a5
  // CHECK-NEXT: d8: 5a 5a 5a a5

  // Checks: alignment, bounds in elements, memory kind, stream, and no
  // empty memsets; errors are CUresult codes and do not set the runtime's
  // last error.
  report("d32 misaligned", D32(P + 2, 0, 1, S));
  report("d16 misaligned", D16(P + 1, 0, 1, S));
  report("d32 out of bounds", D32(P, 0, 17, S));
  report("d8 host memory", D8((CUdeviceptr)Host, 0, 1, S));
  report("d8 null", D8(0, 0, 1, S));
  report("d8 bad stream", D8(P, 0, 1, (CUstream)0x1234));
  report("d32 nothing", D32(P + 1, 0, 0, S));
  report("d8 legacy stream", D8(P + 63, 7, 1, CU_STREAM_LEGACY));
  cudaMemcpy(Host, Dev, sizeof(Host), cudaMemcpyDeviceToHost);
  printf("last byte: %d\n", Host[63]);
  // CHECK-NEXT: error: cuMemsetD32Async: misaligned pointer: dst 0x{{[0-9a-f]+}} is not 4-byte aligned
  // TRACE: trace: cuMemsetD32Async({{.*}}) -> CUDA_ERROR_INVALID_VALUE
  // CHECK-NEXT: d32 misaligned -> 1 (last error cudaSuccess)
  // CHECK-NEXT: error: cuMemsetD16Async: misaligned pointer: dst 0x{{[0-9a-f]+}} is not 2-byte aligned
  // TRACE: trace: cuMemsetD16Async({{.*}}) -> CUDA_ERROR_INVALID_VALUE
  // CHECK-NEXT: d16 misaligned -> 1 (last error cudaSuccess)
  // CHECK-NEXT: error: cuMemsetD32Async: out-of-bounds: dst 0x[[DEV:[0-9a-f]+]] + 68 bytes (offset 0; 17 elements of 4 bytes) exceeds the 64-byte device allocation 0x[[DEV]] on cuda:0
  // TRACE: trace: cuMemsetD32Async(dst=0x[[TDEV]], value=0x0, 17 elements, stream=S1) -> CUDA_ERROR_INVALID_VALUE
  // CHECK-NEXT: d32 out of bounds -> 1 (last error cudaSuccess)
  // CHECK-NEXT: error: cuMemsetD8Async: invalid pointer: dst 0x{{[0-9a-f]+}} is pageable host memory; cuMemsetD8Async needs device or managed memory
  // TRACE: trace: cuMemsetD8Async
  // CHECK-NEXT: d8 host memory -> 1 (last error cudaSuccess)
  // CHECK-NEXT: error: cuMemsetD8Async: invalid pointer: dst is null in a memset of 1 bytes
  // TRACE: trace: cuMemsetD8Async
  // CHECK-NEXT: d8 null -> 1 (last error cudaSuccess)
  // CHECK-NEXT: error: cuMemsetD8Async: invalid stream handle 0x1234 (not created by cudaStreamCreate or cudaStreamCreateWithFlags)
  // TRACE: trace: cuMemsetD8Async({{.*}}, stream=0x1234) -> CUDA_ERROR_INVALID_HANDLE
  // CHECK-NEXT: d8 bad stream -> 400 (last error cudaSuccess)
  // CHECK-NEXT: error: cuMemsetD32Async: empty memset: N is 0; the simulator rejects memsets of 0 elements (undocumented for cuMemsetD32Async)
  // TRACE: trace: cuMemsetD32Async(dst=0x{{[0-9a-f]+}}, value=0x0, 0 elements, stream=S1) -> CUDA_ERROR_INVALID_VALUE
  // CHECK-NEXT: d32 nothing -> 1 (last error cudaSuccess)
  // TRACE: trace: cuMemsetD8Async({{.*}}, 1 elements, stream=S0)
  // CHECK-NEXT: d8 legacy stream -> 0 (last error cudaSuccess)
  // CHECK-NEXT: last byte: 7

  cudaStreamDestroy(S);
  cudaFree(Dev);
  return 0;
}
// CHECK-NEXT: stats: streams_created=1 streams_destroyed=1 syncs=1 copies=3 allocs=1 frees=1 memsets=4
// CHECK-NEXT: stats: copies:
// CHECK-NEXT: stats: calls: {{.*}} memset=11 {{.*}} other=11
// CHECK-NEXT: stats: entry-points: {{.*}} cuMemsetD8Async=5 cuMemsetD16Async=2 cuMemsetD32Async=4 {{.*}} cudaGetDriverEntryPointByVersion=11{{$}}

// An injected failure of a driver memset returns a CUresult, queues nothing
// and leaves the last error alone.
// FAIL: error: cuMemsetD32Async: injected failure: memset call #1 fails with CUDA_ERROR_INVALID_VALUE because ETCOPY_CUDA_SIM_FAIL=memset:1
// FAIL-NEXT: d32 -> 1 (last error cudaSuccess)
// FAIL: d32: -2.87352e-16 -2.87352e-16 -2.87352e-16 -2.87352e-16
