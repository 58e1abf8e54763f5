// The memory pools of the stream-ordered allocator: cudaMallocAsync takes
// memory from the current pool of its stream's device, which gives unused
// memory back at a synchronisation while it holds more than its release
// threshold (0 by default), keeps it below, and releases it on
// cudaMemPoolTrimTo. Handles, attributes and pool properties are checked as
// CUDA 13's Runtime API documents them.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_STATS=1 %t 2>&1 | FileCheck %s
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_POOL_CHUNK=64K %t 2>&1 | FileCheck %s --check-prefix=CHUNK
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_POOL_CHUNK=0 %t 2>&1 | FileCheck %s --check-prefix=BAD-CHUNK

#include "CudaRuntimeSubset.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "Inputs/check-cuda.h"

static void report(const char *What, cudaError_t Status) {
  printf("%s -> %s\n", What, cudaGetErrorName(Status));
}

/// Prints the pool's reserved and used bytes.
static void show(const char *When, cudaMemPool_t Pool) {
  uint64_t Reserved = 0, Used = 0;
  cudaMemPoolGetAttribute(Pool, cudaMemPoolAttrReservedMemCurrent, &Reserved);
  cudaMemPoolGetAttribute(Pool, cudaMemPoolAttrUsedMemCurrent, &Used);
  printf("%s: reserved=%llu used=%llu\n", When, (unsigned long long)Reserved,
         (unsigned long long)Used);
}

int main(void) {
  cudaMemPool_t Default, Current, Other;
  cudaStream_t S;
  CHECK_CUDA(cudaStreamCreate(&S));
  CHECK_CUDA(cudaDeviceGetDefaultMemPool(&Default, 0));
  CHECK_CUDA(cudaDeviceGetMemPool(&Current, 0));
  CHECK_CUDA(cudaDeviceGetDefaultMemPool(&Other, 1));
  printf("current is default: %d, devices share it: %d\n", Current == Default,
         Other == Default);
  // CHECK: current is default: 1, devices share it: 0

  // The defaults: release threshold 0, every reuse policy enabled.
  uint64_t Threshold = 1;
  int Reuse = 0;
  CHECK_CUDA(cudaMemPoolGetAttribute(Default, cudaMemPoolAttrReleaseThreshold,
                                     &Threshold));
  CHECK_CUDA(cudaMemPoolGetAttribute(
      Default, cudaMemPoolReuseAllowOpportunistic, &Reuse));
  printf("threshold=%llu opportunistic=%d\n", (unsigned long long)Threshold,
         Reuse);
  // CHECK-NEXT: threshold=0 opportunistic=1

  // Threshold 0: the pool maps whole chunks (1 MiB) for what does not fit,
  // and gives them back at the next synchronisation once they are unused.
  void *A = NULL, *B = NULL;
  CHECK_CUDA(cudaMallocAsync(&A, 3000, S));
  CHECK_CUDA(cudaMallocAsync(&B, 1 << 20, S));
  show("two allocations", Default);
  // CHECK-NEXT: two allocations: reserved=2097152 used=1051576
  // CHUNK: two allocations: reserved=1114112 used=1051576
  CHECK_CUDA(cudaFreeAsync(B, S));
  show("one freed", Default);
  // CHECK-NEXT: one freed: reserved=2097152 used=3000
  CHECK_CUDA(cudaStreamSynchronize(S));
  show("synchronised", Default);
  // CHECK-NEXT: synchronised: reserved=1048576 used=3000
  // CHUNK: synchronised: reserved=65536 used=3000
  CHECK_CUDA(cudaFreeAsync(A, S));
  CHECK_CUDA(cudaDeviceSynchronize());
  show("all freed", Default);
  // CHECK-NEXT: all freed: reserved=0 used=0

  // A threshold keeps up to that many bytes across synchronisations;
  // cudaMemPoolTrimTo releases the rest on request.
  Threshold = UINT64_MAX;
  CHECK_CUDA(cudaMemPoolSetAttribute(Default, cudaMemPoolAttrReleaseThreshold,
                                     &Threshold));
  CHECK_CUDA(cudaMallocAsync(&A, 3 << 20, S));
  CHECK_CUDA(cudaFreeAsync(A, S));
  CHECK_CUDA(cudaStreamSynchronize(S));
  show("kept", Default);
  // CHECK-NEXT: kept: reserved=3145728 used=0
  CHECK_CUDA(cudaMallocAsync(&A, 2 << 20, S));
  show("reused", Default);
  // CHECK-NEXT: reused: reserved=3145728 used=2097152
  CHECK_CUDA(cudaMemPoolTrimTo(Default, 0));
  show("trimmed while in use", Default);
  // CHECK-NEXT: trimmed while in use: reserved=2097152 used=2097152
  CHECK_CUDA(cudaFreeAsync(A, S));
  CHECK_CUDA(cudaStreamSynchronize(S));
  CHECK_CUDA(cudaMemPoolTrimTo(Default, 1 << 20));
  show("trimmed to 1 MiB", Default);
  // CHECK-NEXT: trimmed to 1 MiB: reserved=1048576 used=0
  uint64_t High = 0;
  CHECK_CUDA(cudaMemPoolGetAttribute(Default, cudaMemPoolAttrReservedMemHigh,
                                     &High));
  printf("reserved high=%llu\n", (unsigned long long)High);
  // CHECK-NEXT: reserved high=3145728
  High = 0;
  CHECK_CUDA(cudaMemPoolSetAttribute(Default, cudaMemPoolAttrReservedMemHigh,
                                     &High));
  CHECK_CUDA(cudaMemPoolGetAttribute(Default, cudaMemPoolAttrReservedMemHigh,
                                     &High));
  printf("reserved high after reset=%llu\n", (unsigned long long)High);
  // CHECK-NEXT: reserved high after reset=1048576

  // Attributes: the current amounts are read-only, a high watermark can
  // only be reset to 0, reuse policies take 0 or 1.
  uint64_t Bytes = 5;
  report("set used", cudaMemPoolSetAttribute(
                         Default, cudaMemPoolAttrUsedMemCurrent, &Bytes));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemPoolSetAttribute: cudaMemPoolAttrUsedMemCurrent is read-only
  // CHECK-NEXT: set used -> cudaErrorInvalidValue
  report("set high", cudaMemPoolSetAttribute(
                         Default, cudaMemPoolAttrUsedMemHigh, &Bytes));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemPoolSetAttribute: invalid value 5 for cudaMemPoolAttrUsedMemHigh: a high watermark can only be reset to 0
  // CHECK-NEXT: set high -> cudaErrorInvalidValue
  Reuse = 2;
  report("set reuse", cudaMemPoolSetAttribute(
                          Default, cudaMemPoolReuseAllowOpportunistic, &Reuse));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemPoolSetAttribute: invalid value 2 for cudaMemPoolReuseAllowOpportunistic (expected an int, 0 or 1)
  // CHECK-NEXT: set reuse -> cudaErrorInvalidValue
  report("get unknown",
         cudaMemPoolGetAttribute(Default, (enum cudaMemPoolAttr)9, &Bytes));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemPoolGetAttribute: invalid attribute 9 (not a cudaMemPoolAttr)
  // CHECK-NEXT: get unknown -> cudaErrorInvalidValue
  report("get null", cudaMemPoolGetAttribute(
                         Default, cudaMemPoolAttrReleaseThreshold, NULL));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemPoolGetAttribute: invalid argument: value is null (reading cudaMemPoolAttrReleaseThreshold)
  // CHECK-NEXT: get null -> cudaErrorInvalidValue

  // Handles and devices.
  report("bogus pool", cudaMemPoolTrimTo((cudaMemPool_t)0x1234, 0));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemPoolTrimTo: invalid memory pool 0x1234 (not returned by cudaDeviceGetDefaultMemPool, cudaDeviceGetMemPool or cudaMemPoolCreate)
  // CHECK-NEXT: bogus pool -> cudaErrorInvalidValue
  report("bad device", cudaDeviceGetDefaultMemPool(&Other, 2));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaDeviceGetDefaultMemPool: invalid device ordinal 2 for device (2 device(s) simulated)
  // CHECK-NEXT: bad device -> cudaErrorInvalidDevice
  report("null out", cudaDeviceGetMemPool(NULL, 0));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaDeviceGetMemPool: invalid argument: memPool is null
  // CHECK-NEXT: null out -> cudaErrorInvalidValue
  report("destroy default", cudaMemPoolDestroy(Default));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemPoolDestroy: P0 is the default memory pool of cuda:0, which cannot be destroyed
  // CHECK-NEXT: destroy default -> cudaErrorInvalidValue

  // A pool of one's own: local to its device, bounded by maxSize, the
  // device's current pool until it is destroyed.
  struct cudaMemPoolProps Props;
  memset(&Props, 0, sizeof(Props));
  Props.allocType = cudaMemAllocationTypePinned;
  Props.location.type = cudaMemLocationTypeDevice;
  Props.location.id = 1;
  Props.maxSize = 2 << 20;
  cudaMemPool_t Own;
  CHECK_CUDA(cudaMemPoolCreate(&Own, &Props));
  report("set on another device", cudaDeviceSetMemPool(0, Own));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaDeviceSetMemPool: invalid argument: P1 holds memory of cuda:1, not of cuda:0; a device's current pool must be local to it
  // CHECK-NEXT: set on another device -> cudaErrorInvalidValue
  CHECK_CUDA(cudaDeviceSetMemPool(1, Own));
  CHECK_CUDA(cudaDeviceGetMemPool(&Current, 1));
  printf("current is own: %d\n", Current == Own);
  // CHECK-NEXT: current is own: 1
  // The pool may belong to another device than the stream.
  CHECK_CUDA(cudaMallocFromPoolAsync(&A, 1 << 20, Own, S));
  struct cudaPointerAttributes Attributes;
  CHECK_CUDA(cudaPointerGetAttributes(&Attributes, A));
  printf("allocated on cuda:%d\n", Attributes.device);
  // CHECK-NEXT: allocated on cuda:1
  report("beyond maxSize", cudaMallocFromPoolAsync(&B, (1 << 20) + 1, Own, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMallocFromPoolAsync: out of memory: 1048577 bytes requested from P1, which holds 1048576 bytes (1048576 in use) of its maxSize of 2097152
  // CHECK-NEXT: beyond maxSize -> cudaErrorMemoryAllocation
  // Destroying a pool with outstanding allocations returns at once; they
  // stay valid until freed, and the device's current pool is its default.
  CHECK_CUDA(cudaMemPoolDestroy(Own));
  CHECK_CUDA(cudaDeviceGetMemPool(&Current, 1));
  CHECK_CUDA(cudaDeviceGetDefaultMemPool(&Other, 1));
  printf("current is default again: %d\n", Current == Other);
  // CHECK-NEXT: current is default again: 1
  report("use destroyed", cudaMallocFromPoolAsync(&B, 16, Own, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMallocFromPoolAsync: invalid memory pool 0x{{[0-9a-f]+}} (P1 was destroyed by cudaMemPoolDestroy)
  // CHECK-NEXT: use destroyed -> cudaErrorInvalidValue
  CHECK_CUDA(cudaFreeAsync(A, S));

  // Properties the simulator cannot model are refused, not ignored.
  Props.location.type = cudaMemLocationTypeHostNumaCurrent;
  report("numa current", cudaMemPoolCreate(&Own, &Props));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemPoolCreate: invalid argument: poolProps->location.type is 4 (expected cudaMemLocationTypeDevice, Host or HostNuma)
  // CHECK-NEXT: numa current -> cudaErrorInvalidValue
  Props.location.type = cudaMemLocationTypeDevice;
  Props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  report("shareable", cudaMemPoolCreate(&Own, &Props));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemPoolCreate: poolProps->handleTypes 0x1: pools that export shareable handles are not simulated (use cudaMemHandleTypeNone)
  // CHECK-NEXT: shareable -> cudaErrorNotSupported
  Props.handleTypes = cudaMemHandleTypeNone;
  Props.reserved[3] = 1;
  report("reserved", cudaMemPoolCreate(&Own, &Props));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemPoolCreate: invalid argument: poolProps->reserved[3] is 1; the reserved bytes must be 0
  // CHECK-NEXT: reserved -> cudaErrorInvalidValue

  CHECK_CUDA(cudaStreamSynchronize(S));
  CHECK_CUDA(cudaStreamDestroy(S));
  printf("done\n");
  // CHECK-NEXT: done
  // CHECK-NOT: etcopy-cuda-sim: error
  // The allocations that mapped memory: the first two and the 3 MiB one in
  // the default pool, the one from the pool of cuda:1.
  // CHECK: etcopy-cuda-sim: stats: model: host_ns={{[0-9]+}} pool_growths=4 fresh_pages=0
  // BAD-CHUNK: etcopy-cuda-sim: warning: ignoring ETCOPY_CUDA_SIM_POOL_CHUNK='0': expected a byte count above 0 with an optional K, M or G suffix; using 1048576
  // BAD-CHUNK: done
  return 0;
}
