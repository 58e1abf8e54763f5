//===- FakeCuda.h - A fake CUDA runtime for the runtime's unit tests -*- C++ -*-===//
//
// One fake CUDA Runtime API table for the unit tests of CudaAllocator (with
// and without memory pools), PinnedHostAllocator and HostRegistration. Its
// functions act on the FakeCuda that `fake` points to: they keep the devices,
// the live allocations, the pinned blocks, the registered ranges and one
// memory pool per device; log the calls whose order tests check (`calls`);
// count calls and remember their last arguments; and fail a call with the
// cudaError_t a test puts in its *Status field. makeFakeApi() is the table
// without the stream-ordered allocator (CudaAllocator then uses cudaMalloc),
// makeFakePoolApi() the table with it.
//
//===----------------------------------------------------------------------===//

#ifndef UNITTESTS_RUNTIME_FAKECUDA_H
#define UNITTESTS_RUNTIME_FAKECUDA_H

#include "etcopy/Runtime/CudaApi.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace etcopy::runtime::fakecuda {

/// The devices that have a memory pool (ordinals 0 and 1).
constexpr int kPoolDevices = 2;

/// A live device allocation: the device current when it was made, and
/// whether it came from the pool (cudaMallocAsync) or from cudaMalloc.
struct Allocation {
  int device = 0;
  bool pooled = false;
};

/// The state of the fake CUDA runtime.
struct FakeCuda {
  int deviceCount = 2;
  int current = 0;

  /// The calls of cudaMalloc, cudaFree, the synchronisations, the
  /// stream-ordered allocator and the pools, in order, with the stream
  /// ("legacy" or "stream") and the current device:
  /// "cudaMallocAsync(legacy)@1", "cudaMemPoolGetAttribute(1, 4)".
  std::vector<std::string> calls;
  /// The device of every cudaSetDevice call, in order.
  std::vector<int> setDeviceCalls;

  // The error each call fails with (0: it succeeds).
  int getDeviceCountStatus = 0;
  int getDeviceStatus = 0;
  int mallocStatus = 0;
  int freeStatus = 0;
  int memcpyStatus = 0;
  int streamSynchronizeStatus = 0;
  int deviceSynchronizeStatus = 0;
  int mallocAsyncStatus = 0;
  int freeAsyncStatus = 0;
  int getPoolStatus = 0;
  int getAttributeStatus = 0;
  int setAttributeStatus = 0;
  int trimStatus = 0;
  int mallocHostStatus = 0;
  int freeHostStatus = 0;
  int hostRegisterStatus = 0;
  int hostUnregisterStatus = 0;
  /// Index (0-based) of the cudaSetDevice call that fails with
  /// cudaErrorInvalidDevice, or -1.
  int failSetDeviceCall = -1;
  /// Index (0-based) of the cudaMallocHost call that fails with
  /// cudaErrorMemoryAllocation, or -1.
  int failMallocHostCall = -1;

  // Counts and last arguments.
  int mallocCalls = 0;
  int memcpyCalls = 0;
  int memcpyAsyncCalls = 0;
  int lastMemcpyKind = -1;
  int lastMemcpyDevice = -1;
  void *lastStream = nullptr;
  int streamSynchronizeCalls = 0;
  int deviceSynchronizeCalls = 0;
  int lastSynchronizeDevice = -1;
  int mallocHostCalls = 0;
  int freeHostCalls = 0;
  int hostRegisterCalls = 0;
  unsigned lastRegisterFlags = ~0u;

  /// Live device allocations.
  std::map<void *, Allocation> live;
  /// The release threshold of each device's pool.
  uint64_t threshold[kPoolDevices] = {0, 0};

  // Pinned host memory and registrations.
  /// Bytes past a page boundary at which cudaMallocHost places its result.
  std::size_t mallocHostOffset = 0;
  /// cudaMallocHost succeeds with a null pointer.
  bool mallocHostReturnsNull = false;
  /// Live pinned allocations: the pointer returned and the block holding it.
  std::map<void *, void *> liveHost;
  /// Registered ranges: start and size.
  std::map<char *, std::size_t> registered;

  /// Frees what is still allocated (after a test has reported it as leaked).
  void releaseLeftovers();
};

/// The fake the table's functions act on; a test points it at its state
/// for its duration.
extern FakeCuda *fake;

/// The table of the fake without the stream-ordered allocator and pools.
CudaApi makeFakeApi();
/// The table of the fake with the stream-ordered allocator and pools.
CudaApi makeFakePoolApi();

} // namespace etcopy::runtime::fakecuda

#endif // UNITTESTS_RUNTIME_FAKECUDA_H
