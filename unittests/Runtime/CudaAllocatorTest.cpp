//===- CudaAllocatorTest.cpp - Tests of the CUDA allocator ----------------===//
//
// Unit tests of CudaApi and of what is built on it (CudaAllocator,
// PinnedHostAllocator, HostRegistration) on three CUDA runtimes: the fake
// table of FakeCuda.h without memory pools (every error path, device
// switching and restoring, which calls are made), the CUDA simulator libetcopy_cuda_sim.so (when built; fault
// injection, statistics and the leak check run in fresh processes), and the
// real libcudart (skipped unless it loads and reports a device).
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestSupport.h"
#include "etcopy/Runtime/CudaApi.h"

#include "gtest/gtest.h"

#ifdef ETCOPY_HAVE_CUDA_SIM
#include "CudaRuntimeSubset.h"
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <numeric>
#include <string>
#include <unistd.h>
#include <vector>

using namespace etcopy::runtime;
using namespace etcopy::runtime::fakecuda;
using etcopy::runtime::testsupport::runAndExit;

//===----------------------------------------------------------------------===//
// The fake CUDA runtime (FakeCuda.h), without memory pools
//===----------------------------------------------------------------------===//

namespace {

class FakeCudaTest : public ::testing::Test {
protected:
  void SetUp() override {
    fake = &state;
    Expected<std::shared_ptr<CudaAllocator>> made =
        CudaAllocator::create(makeFakeApi());
    ASSERT_TRUE(made) << made.error().toString();
    allocator = std::move(*made);
  }

  void TearDown() override {
    EXPECT_TRUE(state.live.empty()) << "fake CUDA allocations leaked";
    EXPECT_TRUE(state.liveHost.empty()) << "fake pinned allocations leaked";
    EXPECT_TRUE(state.registered.empty()) << "fake registrations leaked";
    state.releaseLeftovers();
    fake = nullptr;
  }

  FakeCuda state;
  std::shared_ptr<CudaAllocator> allocator;
};

} // namespace

TEST(CudaApiTest, CreateRejectsAnIncompleteTable) {
  CudaApi api = makeFakeApi();
  api.freeFn = nullptr;
  Expected<std::shared_ptr<CudaAllocator>> allocator =
      CudaAllocator::create(api);
  ASSERT_FALSE(allocator);
  EXPECT_EQ(allocator.error().code(), ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(allocator.error().message(), "cudaFree");

  // Optional entry points may be missing.
  api = makeFakeApi();
  api.deviceSynchronizeFn = nullptr;
  EXPECT_TRUE(api.checkComplete().ok());
}

TEST(CudaApiTest, LoadReportsMissingLibraries) {
  Expected<CudaApi> api = CudaApi::load("libetcopy-no-such-library.so");
  ASSERT_FALSE(api);
  EXPECT_EQ(api.error().code(), ErrorCode::Unavailable);
  EXPECT_CONTAINS(api.error().message(), "libetcopy-no-such-library.so");

  // libc loads but is no CUDA runtime.
  Expected<CudaApi> libc = CudaApi::load("libc.so.6");
  ASSERT_FALSE(libc);
  EXPECT_EQ(libc.error().code(), ErrorCode::Unavailable);
  EXPECT_CONTAINS(libc.error().message(), "cudaMalloc");

  EXPECT_EQ(CudaApi::load(nullptr).error().code(), ErrorCode::InvalidArgument);
}

TEST(CudaApiTest, FromProcessWithoutCudaSymbols) {
  if (::dlsym(RTLD_DEFAULT, "cudaMalloc"))
    GTEST_SKIP() << "this process exports CUDA Runtime API symbols";
  Expected<CudaApi> api = CudaApi::fromProcess();
  ASSERT_FALSE(api);
  EXPECT_EQ(api.error().code(), ErrorCode::Unavailable);
  EXPECT_CONTAINS(api.error().message(), "cudaMalloc");
  EXPECT_CONTAINS(api.error().message(), "<process>");
}

TEST_F(FakeCudaTest, AllocateSwitchesToTheOrdinalAndRestores) {
  Expected<void *> ptr = allocator->allocate(64, 1, 256);
  ASSERT_TRUE(ptr) << ptr.error().toString();
  EXPECT_EQ(state.live.at(*ptr).device, 1);
  EXPECT_EQ(state.current, 0);
  EXPECT_EQ(state.setDeviceCalls, (std::vector<int>{1, 0}));

  state.setDeviceCalls.clear();
  EXPECT_TRUE(allocator->deallocate(*ptr, 1).ok());
  EXPECT_EQ(state.setDeviceCalls, (std::vector<int>{1, 0}));
  EXPECT_EQ(state.current, 0);
}

TEST_F(FakeCudaTest, NoSwitchWhenTheOrdinalIsCurrent) {
  state.current = 1;
  Expected<void *> ptr = allocator->allocate(64, 1, 64);
  ASSERT_TRUE(ptr);
  EXPECT_TRUE(state.setDeviceCalls.empty());
  EXPECT_TRUE(allocator->deallocate(*ptr, 1).ok());
  EXPECT_TRUE(state.setDeviceCalls.empty());
  EXPECT_EQ(state.current, 1);
}

TEST_F(FakeCudaTest, RejectsUnsupportedAlignments) {
  for (std::size_t alignment : {0u, 3u, 96u, 512u, 4096u}) {
    Expected<void *> ptr = allocator->allocate(64, 0, alignment);
    ASSERT_FALSE(ptr) << alignment;
    EXPECT_EQ(ptr.error().code(), ErrorCode::InvalidArgument);
    EXPECT_CONTAINS(ptr.error().message(),
                    "alignment " + std::to_string(alignment));
    EXPECT_CONTAINS(ptr.error().message(), "256");
  }
  // Checked for zero-byte requests too.
  EXPECT_FALSE(allocator->allocate(0, 0, 512));
  EXPECT_EQ(state.mallocCalls, 0);

  for (std::size_t alignment : {1u, 16u, 256u}) {
    Expected<void *> ptr = allocator->allocate(8, 0, alignment);
    ASSERT_TRUE(ptr) << alignment;
    EXPECT_TRUE(allocator->deallocate(*ptr, 0).ok());
  }
}

TEST_F(FakeCudaTest, RejectsOrdinalsOutOfRange) {
  for (int ordinal : {2, 17, -1}) {
    Expected<void *> ptr = allocator->allocate(64, ordinal, 64);
    ASSERT_FALSE(ptr);
    EXPECT_EQ(ptr.error().code(), ErrorCode::InvalidArgument);
    EXPECT_CONTAINS(ptr.error().message(),
                    "device ordinal " + std::to_string(ordinal));
    EXPECT_CONTAINS(ptr.error().message(), "2 CUDA device(s)");
  }
  char host[4] = {};
  EXPECT_EQ(allocator->copyHostToDevice(host, host, 4, 2).code(),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(allocator->synchronize(5).code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(state.mallocCalls, 0);
  EXPECT_TRUE(state.setDeviceCalls.empty());
}

TEST_F(FakeCudaTest, ZeroBytesAllocateNothing) {
  Expected<void *> ptr = allocator->allocate(0, 1, 256);
  ASSERT_TRUE(ptr);
  EXPECT_EQ(*ptr, nullptr);
  EXPECT_EQ(state.mallocCalls, 0);
  EXPECT_TRUE(allocator->deallocate(nullptr, 1).ok());
  EXPECT_TRUE(allocator->copyHostToDevice(nullptr, nullptr, 0, 1).ok());
  EXPECT_EQ(state.memcpyCalls, 0);
}

TEST_F(FakeCudaTest, MallocFailuresNameTheCallAndRestoreTheDevice) {
  state.mallocStatus = 2;
  Expected<void *> oom = allocator->allocate(1024, 1, 256);
  ASSERT_FALSE(oom);
  EXPECT_EQ(oom.error().code(), ErrorCode::OutOfMemory);
  EXPECT_CONTAINS(oom.error().message(), "cudaMalloc(1024 bytes) on cuda:1");
  EXPECT_CONTAINS(oom.error().message(), "cudaErrorMemoryAllocation");
  EXPECT_CONTAINS(oom.error().message(), "out of memory");
  EXPECT_EQ(state.current, 0);
  EXPECT_EQ(state.setDeviceCalls, (std::vector<int>{1, 0}));

  state.mallocStatus = 700;
  Expected<void *> illegal = allocator->allocate(16, 1, 256);
  ASSERT_FALSE(illegal);
  EXPECT_EQ(illegal.error().code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(illegal.error().message(), "cudaErrorIllegalAddress");
  EXPECT_CONTAINS(illegal.error().message(),
                  "an illegal memory access was encountered");
  EXPECT_EQ(state.current, 0);
}

TEST_F(FakeCudaTest, FailedRestoreFreesTheAllocation) {
  state.failSetDeviceCall = 1; // The restoring cudaSetDevice(0).
  Expected<void *> ptr = allocator->allocate(64, 1, 256);
  ASSERT_FALSE(ptr);
  EXPECT_EQ(ptr.error().code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(ptr.error().message(),
                  "cudaSetDevice(0) restoring the previous device");
  EXPECT_CONTAINS(ptr.error().message(), "cudaErrorInvalidDevice");
  EXPECT_EQ(state.mallocCalls, 1);
  EXPECT_TRUE(state.live.empty());
}

TEST_F(FakeCudaTest, OperationAndRestoreFailuresAreBothReported) {
  state.mallocStatus = 2;
  state.failSetDeviceCall = 1;
  Expected<void *> ptr = allocator->allocate(64, 1, 256);
  ASSERT_FALSE(ptr);
  EXPECT_EQ(ptr.error().code(), ErrorCode::OutOfMemory);
  EXPECT_CONTAINS(ptr.error().message(), "cudaMalloc");
  EXPECT_CONTAINS(ptr.error().message(), "restoring the previous device");
}

TEST_F(FakeCudaTest, FailedSwitchMakesNoCall) {
  state.failSetDeviceCall = 0;
  Expected<void *> ptr = allocator->allocate(64, 1, 256);
  ASSERT_FALSE(ptr);
  EXPECT_EQ(ptr.error().code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(ptr.error().message(), "cudaSetDevice(1)");
  EXPECT_EQ(state.mallocCalls, 0);
  EXPECT_EQ(state.setDeviceCalls.size(), 1u);

  state.getDeviceStatus = 35;
  Expected<void *> noCurrent = allocator->allocate(64, 1, 256);
  ASSERT_FALSE(noCurrent);
  EXPECT_CONTAINS(noCurrent.error().message(), "cudaGetDevice");
}

TEST_F(FakeCudaTest, DeviceCountFailures) {
  state.getDeviceCountStatus = 35;
  Expected<void *> ptr = allocator->allocate(64, 0, 256);
  ASSERT_FALSE(ptr);
  EXPECT_EQ(ptr.error().code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(ptr.error().message(), "cudaGetDeviceCount");
  EXPECT_CONTAINS(ptr.error().message(), "cudaErrorInsufficientDriver");
  EXPECT_CONTAINS(ptr.error().message(), "CUDA driver version is insufficient");
  EXPECT_FALSE(allocator->getDeviceCount());
}

TEST_F(FakeCudaTest, SynchronousCopies) {
  Expected<void *> device = allocator->allocate(16, 1, 256);
  ASSERT_TRUE(device);
  const char input[16] = "etcopy h2d/d2h";
  char output[16] = {};
  ASSERT_TRUE(allocator->copyHostToDevice(*device, input, 16, 1).ok());
  EXPECT_EQ(state.memcpyCalls, 1);
  EXPECT_EQ(state.lastMemcpyKind, CudaApi::kMemcpyHostToDevice);
  EXPECT_EQ(state.lastMemcpyDevice, 1);
  // cudaMemcpy to the device may return before the device memory is
  // written: the legacy stream it ran on is waited for, on its device.
  EXPECT_EQ(state.streamSynchronizeCalls, 1);
  EXPECT_EQ(state.lastSynchronizeDevice, 1);
  ASSERT_TRUE(allocator->copyDeviceToHost(output, *device, 16, 1).ok());
  EXPECT_EQ(state.lastMemcpyKind, CudaApi::kMemcpyDeviceToHost);
  EXPECT_STREQ(output, input);
  EXPECT_EQ(state.memcpyAsyncCalls, 0);
  // cudaMemcpy to the host returns once the copy is complete.
  EXPECT_EQ(state.streamSynchronizeCalls, 1);
  EXPECT_EQ(state.current, 0);

  state.streamSynchronizeStatus = 700;
  Error unsynced = allocator->copyHostToDevice(*device, input, 16, 1);
  EXPECT_EQ(unsynced.code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(unsynced.message(),
                  "cudaStreamSynchronize(0) after cudaMemcpy(16 bytes, "
                  "cudaMemcpyHostToDevice) on cuda:1");
  EXPECT_EQ(state.current, 0);
  state.streamSynchronizeStatus = 0;

  state.memcpyStatus = 700;
  Error failed = allocator->copyDeviceToHost(output, *device, 16, 1);
  EXPECT_EQ(failed.code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(failed.message(),
                  "cudaMemcpy(16 bytes, cudaMemcpyDeviceToHost) on cuda:1");
  EXPECT_EQ(state.current, 0);

  EXPECT_EQ(allocator->copyHostToDevice(*device, nullptr, 16, 1).code(),
            ErrorCode::InvalidArgument);
  EXPECT_TRUE(allocator->deallocate(*device, 1).ok());
}

TEST_F(FakeCudaTest, StreamCopiesDoNotSynchronize) {
  Expected<void *> device = allocator->allocate(8, 1, 256);
  ASSERT_TRUE(device);
  void *stream = reinterpret_cast<void *>(0x5);
  const char input[8] = "abcdefg";
  char output[8] = {};
  ASSERT_TRUE(allocator->copyHostToDevice(*device, input, 8, 1, stream).ok());
  ASSERT_TRUE(allocator->copyDeviceToHost(output, *device, 8, 1, stream).ok());
  EXPECT_EQ(state.memcpyAsyncCalls, 2);
  EXPECT_EQ(state.memcpyCalls, 0);
  EXPECT_EQ(state.lastStream, stream);
  EXPECT_EQ(state.lastMemcpyDevice, 1);
  // The caller decides when to wait.
  EXPECT_EQ(state.streamSynchronizeCalls, 0);
  ASSERT_TRUE(allocator->synchronize(1, stream).ok());
  EXPECT_EQ(state.streamSynchronizeCalls, 1);
  EXPECT_EQ(state.lastSynchronizeDevice, 1);
  EXPECT_STREQ(output, input);

  // Without a stream: the whole device.
  ASSERT_TRUE(allocator->synchronize(1).ok());
  EXPECT_EQ(state.deviceSynchronizeCalls, 1);
  EXPECT_EQ(state.current, 0);
  EXPECT_TRUE(allocator->deallocate(*device, 1).ok());
}

TEST_F(FakeCudaTest, SynchronizeFallsBackToTheLegacyStream) {
  CudaApi api = makeFakeApi();
  api.deviceSynchronizeFn = nullptr;
  Expected<std::shared_ptr<CudaAllocator>> noDeviceSync =
      CudaAllocator::create(api);
  ASSERT_TRUE(noDeviceSync);
  ASSERT_TRUE((*noDeviceSync)->synchronize(0).ok());
  EXPECT_EQ(state.streamSynchronizeCalls, 1);
  EXPECT_EQ(state.lastStream, nullptr);
}

TEST_F(FakeCudaTest, DeallocateFailuresRestoreTheDevice) {
  Expected<void *> ptr = allocator->allocate(8, 1, 256);
  ASSERT_TRUE(ptr);
  state.freeStatus = 700;
  Error err = allocator->deallocate(*ptr, 1);
  EXPECT_EQ(err.code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(err.message(), "cudaFree on cuda:1");
  EXPECT_EQ(state.current, 0);
  state.freeStatus = 0;
  EXPECT_TRUE(allocator->deallocate(*ptr, 1).ok());
}

TEST_F(FakeCudaTest, MethodIoThroughTheRegistry) {
  DeviceAllocatorRegistry registry;
  ASSERT_TRUE(registry.registerAllocator(allocator).ok());
  std::vector<int> input(32);
  std::iota(input.begin(), input.end(), 0);
  void *stream = reinterpret_cast<void *>(0x9);
  Expected<DeviceBuffer> buffer =
      makeDeviceInput(registry, DeviceKind::CUDA, 1, input.data(),
                      input.size() * sizeof(int), stream);
  ASSERT_TRUE(buffer) << buffer.error().toString();
  EXPECT_EQ(state.memcpyAsyncCalls, 1);
  EXPECT_EQ(state.streamSynchronizeCalls, 0);

  std::vector<int> output(32, -1);
  ASSERT_TRUE(readDeviceOutput(*buffer, output.data(),
                               output.size() * sizeof(int), stream)
                  .ok());
  EXPECT_EQ(state.streamSynchronizeCalls, 1);
  EXPECT_EQ(output, input);

  // A failing H2D copy frees the new buffer.
  state.memcpyStatus = 700;
  Expected<DeviceBuffer> failed =
      makeDeviceInput(registry, DeviceKind::CUDA, 0, input.data(), 16);
  ASSERT_FALSE(failed);
  EXPECT_EQ(state.live.size(), 1u);
  EXPECT_TRUE(buffer->reset().ok());
}

//===----------------------------------------------------------------------===//
// Pinned host memory on the fake runtime
//===----------------------------------------------------------------------===//

namespace {

/// A pinned host allocator on the fake runtime.
std::shared_ptr<PinnedHostAllocator> makeFakePinned() {
  Expected<std::shared_ptr<PinnedHostAllocator>> made =
      PinnedHostAllocator::create(makeFakeApi());
  EXPECT_TRUE(made) << made.error().toString();
  return made ? std::move(*made) : nullptr;
}

bool isAligned(const void *ptr, std::size_t alignment) {
  return reinterpret_cast<uintptr_t>(ptr) % alignment == 0;
}

} // namespace

TEST_F(FakeCudaTest, PinnedCreateNeedsTheHostEntryPoints) {
  CudaApi api = makeFakeApi();
  api.freeHostFn = nullptr;
  Expected<std::shared_ptr<PinnedHostAllocator>> noFree =
      PinnedHostAllocator::create(api);
  ASSERT_FALSE(noFree);
  EXPECT_EQ(noFree.error().code(), ErrorCode::Unavailable);
  EXPECT_CONTAINS(noFree.error().message(), "'<fake>' has no cudaFreeHost");
  EXPECT_CONTAINS(noFree.error().message(), "pinned host allocator");

  // The rest of the table is checked as for CudaAllocator.
  api = makeFakeApi();
  api.getErrorNameFn = nullptr;
  Expected<std::shared_ptr<PinnedHostAllocator>> incomplete =
      PinnedHostAllocator::create(api);
  ASSERT_FALSE(incomplete);
  EXPECT_EQ(incomplete.error().code(), ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(incomplete.error().message(), "cudaGetErrorName");

  // A CUDA allocator does not need them.
  api = makeFakeApi();
  api.mallocHostFn = nullptr;
  api.hostUnregisterFn = nullptr;
  EXPECT_TRUE(CudaAllocator::create(api));
  char range[64];
  Expected<HostRegistration> noUnregister =
      HostRegistration::create(api, range, sizeof(range));
  ASSERT_FALSE(noUnregister);
  EXPECT_EQ(noUnregister.error().code(), ErrorCode::Unavailable);
  EXPECT_CONTAINS(noUnregister.error().message(), "cudaHostUnregister");
  EXPECT_EQ(state.hostRegisterCalls, 0);
}

TEST_F(FakeCudaTest, PinnedAllocationsAndHostCopies) {
  std::shared_ptr<PinnedHostAllocator> pinned = makeFakePinned();
  ASSERT_TRUE(pinned);
  EXPECT_EQ(pinned->kind(), DeviceKind::CPU);
  ASSERT_TRUE(pinned->getDeviceCount());
  EXPECT_EQ(*pinned->getDeviceCount(), 1);

  Expected<void *> ptr = pinned->allocate(100, 0, 64);
  ASSERT_TRUE(ptr) << ptr.error().toString();
  EXPECT_EQ(state.mallocHostCalls, 1);
  EXPECT_EQ(state.liveHost.count(*ptr), 1u);
  const char input[] = "pinned bytes";
  char output[sizeof(input)] = {};
  void *stream = reinterpret_cast<void *>(0x5);
  // Host-to-host: memmoves, whatever the stream; no CUDA copy is made.
  ASSERT_TRUE(
      pinned->copyHostToDevice(*ptr, input, sizeof(input), 0, stream).ok());
  ASSERT_TRUE(pinned->copyDeviceToHost(output, *ptr, sizeof(input), 0).ok());
  EXPECT_STREQ(output, input);
  EXPECT_EQ(state.memcpyCalls + state.memcpyAsyncCalls, 0);
  EXPECT_TRUE(pinned->synchronize(0, stream).ok());
  EXPECT_EQ(state.streamSynchronizeCalls + state.deviceSynchronizeCalls, 0);
  EXPECT_EQ(pinned->copyHostToDevice(*ptr, nullptr, 4, 0).code(),
            ErrorCode::InvalidArgument);

  EXPECT_TRUE(pinned->deallocate(*ptr, 0).ok());
  EXPECT_EQ(state.freeHostCalls, 1);
  // No device switching: pinned memory belongs to no device.
  EXPECT_TRUE(state.setDeviceCalls.empty());
}

TEST_F(FakeCudaTest, PinnedAlignmentAndOrdinalRules) {
  std::shared_ptr<PinnedHostAllocator> pinned = makeFakePinned();
  ASSERT_TRUE(pinned);
  for (std::size_t alignment : {0u, 3u, 96u, 8192u}) {
    Expected<void *> ptr = pinned->allocate(64, 0, alignment);
    ASSERT_FALSE(ptr) << alignment;
    EXPECT_EQ(ptr.error().code(), ErrorCode::InvalidArgument);
    EXPECT_CONTAINS(ptr.error().message(),
                    "alignment " + std::to_string(alignment));
    EXPECT_CONTAINS(ptr.error().message(), "4096");
  }
  // Checked for zero-byte requests too.
  EXPECT_FALSE(pinned->allocate(0, 0, 8192));
  EXPECT_EQ(state.mallocHostCalls, 0);

  for (std::size_t alignment : {1u, 256u, 4096u}) {
    Expected<void *> ptr = pinned->allocate(8, 0, alignment);
    ASSERT_TRUE(ptr) << alignment << ": " << ptr.error().toString();
    EXPECT_TRUE(isAligned(*ptr, alignment));
    EXPECT_TRUE(pinned->deallocate(*ptr, 0).ok());
  }

  Expected<void *> badOrdinal = pinned->allocate(64, 1, 64);
  ASSERT_FALSE(badOrdinal);
  EXPECT_EQ(badOrdinal.error().code(), ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(badOrdinal.error().message(), "device ordinal 1");
  char host[4] = {};
  EXPECT_EQ(pinned->copyHostToDevice(host, host + 2, 2, 1).code(),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(pinned->synchronize(1).code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(pinned->deallocate(nullptr, 1).code(), ErrorCode::InvalidArgument);

  // Zero bytes: nullptr, and no call either way.
  Expected<void *> empty = pinned->allocate(0, 0, 64);
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, nullptr);
  EXPECT_TRUE(pinned->deallocate(nullptr, 0).ok());
  EXPECT_EQ(state.mallocHostCalls, 3);
  EXPECT_EQ(state.freeHostCalls, 3);
}

TEST_F(FakeCudaTest, PinnedFailuresNameTheCall) {
  std::shared_ptr<PinnedHostAllocator> pinned = makeFakePinned();
  ASSERT_TRUE(pinned);
  state.mallocHostStatus = 2;
  Expected<void *> oom = pinned->allocate(1024, 0, 256);
  ASSERT_FALSE(oom);
  EXPECT_EQ(oom.error().code(), ErrorCode::OutOfMemory);
  EXPECT_CONTAINS(oom.error().message(),
                  "cudaMallocHost(1024 bytes) failed: "
                  "cudaErrorMemoryAllocation (out of memory)");

  state.mallocHostStatus = 35;
  Expected<void *> noDriver = pinned->allocate(16, 0, 64);
  ASSERT_FALSE(noDriver);
  EXPECT_EQ(noDriver.error().code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(noDriver.error().message(), "cudaErrorInsufficientDriver");

  state.mallocHostStatus = 0;
  Expected<void *> ptr = pinned->allocate(16, 0, 64);
  ASSERT_TRUE(ptr);
  state.freeHostStatus = 700;
  Error failed = pinned->deallocate(*ptr, 0);
  EXPECT_EQ(failed.code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(failed.message(), "cudaFreeHost(0x");
  EXPECT_CONTAINS(failed.message(), "cudaErrorIllegalAddress");
  // The memory is still allocated: freeing it again works.
  state.freeHostStatus = 0;
  EXPECT_TRUE(pinned->deallocate(*ptr, 0).ok());
}

TEST_F(FakeCudaTest, PinnedChecksTheAlignmentItGets) {
  std::shared_ptr<PinnedHostAllocator> pinned = makeFakePinned();
  ASSERT_TRUE(pinned);
  state.mallocHostOffset = 64;
  Expected<void *> misaligned = pinned->allocate(32, 0, 128);
  ASSERT_FALSE(misaligned);
  EXPECT_EQ(misaligned.error().code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(misaligned.error().message(), "cudaMallocHost(32 bytes) "
                                                "returned 0x");
  EXPECT_CONTAINS(misaligned.error().message(), "not aligned to 128 bytes");
  // It was freed.
  EXPECT_EQ(state.freeHostCalls, 1);
  EXPECT_TRUE(state.liveHost.empty());

  // What the pointer does satisfy is accepted.
  Expected<void *> ptr = pinned->allocate(32, 0, 64);
  ASSERT_TRUE(ptr) << ptr.error().toString();
  EXPECT_TRUE(pinned->deallocate(*ptr, 0).ok());

  state.mallocHostOffset = 0;
  state.mallocHostReturnsNull = true;
  Expected<void *> null = pinned->allocate(32, 0, 64);
  ASSERT_FALSE(null);
  EXPECT_CONTAINS(null.error().message(), "returned 0x0");
}

TEST_F(FakeCudaTest, PinnedArenasThroughARegistry) {
  std::shared_ptr<PinnedHostAllocator> pinned = makeFakePinned();
  ASSERT_TRUE(pinned);
  // A default registry has the HostAllocator for CPU already.
  DeviceAllocatorRegistry withHost;
  EXPECT_EQ(withHost.registerAllocator(pinned).code(),
            ErrorCode::AlreadyExists);

  DeviceAllocatorRegistry registry(/*registerHostAllocator=*/false);
  ASSERT_TRUE(registry.registerAllocator(pinned).ok());
  ASSERT_TRUE(registry.registerAllocator(allocator).ok());
  const etcopy_arena_desc descs[] = {{ETCOPY_DEVICE_CPU, 0, 512, 256},
                                     {ETCOPY_DEVICE_CUDA, 1, 256, 256},
                                     {ETCOPY_DEVICE_CPU, 0, 0, 256},
                                     {ETCOPY_DEVICE_CPU, 0, 128, 256}};
  {
    Expected<std::vector<DeviceBuffer>> arenas =
        allocateArenas(registry, etcopy_function_arenas{4, descs});
    ASSERT_TRUE(arenas) << arenas.error().toString();
    EXPECT_EQ(state.mallocHostCalls, 2);
    EXPECT_EQ(state.liveHost.count((*arenas)[0].data()), 1u);
    EXPECT_EQ(state.liveHost.count((*arenas)[3].data()), 1u);
    EXPECT_EQ((*arenas)[0].getAllocator(), pinned.get());

    // Every CPU buffer of the registry is pinned.
    Expected<DeviceBuffer> input =
        makeDeviceInput(registry, DeviceKind::CPU, 0, descs, sizeof(descs));
    ASSERT_TRUE(input) << input.error().toString();
    EXPECT_EQ(state.liveHost.count(input->data()), 1u);
  }
  EXPECT_TRUE(state.liveHost.empty());
  EXPECT_EQ(state.freeHostCalls, 3);

  // All-or-nothing: the failing second pinned arena frees the first one
  // and the CUDA one.
  state.failMallocHostCall = state.mallocHostCalls + 1;
  Expected<std::vector<DeviceBuffer>> arenas =
      allocateArenas(registry, etcopy_function_arenas{4, descs});
  ASSERT_FALSE(arenas);
  EXPECT_EQ(arenas.error().code(), ErrorCode::OutOfMemory);
  EXPECT_CONTAINS(arenas.error().message(),
                  "arena #3 (128 bytes on cpu:0): cudaMallocHost(128 bytes) "
                  "failed: cudaErrorMemoryAllocation");
  EXPECT_EQ(state.mallocHostCalls, 5);
  EXPECT_TRUE(state.liveHost.empty());
  EXPECT_TRUE(state.live.empty());
}

TEST_F(FakeCudaTest, HostRegistrationLifetime) {
  std::vector<char> memory(8192);
  {
    Expected<HostRegistration> registration = HostRegistration::create(
        makeFakeApi(), memory.data(), 4096, HostRegisterFlags::Portable);
    ASSERT_TRUE(registration) << registration.error().toString();
    EXPECT_EQ(state.lastRegisterFlags, 1u);
    EXPECT_EQ(state.registered.at(memory.data()), 4096u);
    EXPECT_TRUE(registration->isRegistered());
    EXPECT_EQ(registration->data(), memory.data());
    EXPECT_EQ(registration->size(), 4096u);
    EXPECT_EQ(registration->flags(), HostRegisterFlags::Portable);

    // Moving transfers the registration and unregisters nothing.
    HostRegistration moved = std::move(*registration);
    EXPECT_FALSE(registration->isRegistered());
    EXPECT_EQ(registration->data(), nullptr);
    EXPECT_EQ(registration->size(), 0u);
    EXPECT_EQ(state.registered.size(), 1u);

    // Move assignment unregisters the range it replaces.
    Expected<HostRegistration> second =
        HostRegistration::create(makeFakeApi(), memory.data() + 4096, 4096);
    ASSERT_TRUE(second) << second.error().toString();
    EXPECT_EQ(state.lastRegisterFlags, 0u);
    EXPECT_EQ(state.registered.size(), 2u);
    moved = std::move(*second);
    EXPECT_EQ(state.registered.size(), 1u);
    EXPECT_EQ(state.registered.count(memory.data() + 4096), 1u);
    EXPECT_EQ(moved.data(), memory.data() + 4096);
  }
  // The destructor unregistered the last one.
  EXPECT_TRUE(state.registered.empty());

  Expected<HostRegistration> again =
      HostRegistration::create(makeFakeApi(), memory.data(), 8192);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->reset().ok());
  EXPECT_TRUE(state.registered.empty());
  EXPECT_FALSE(again->isRegistered());
  EXPECT_TRUE(again->reset().ok()); // Nothing left to unregister.
}

TEST_F(FakeCudaTest, HostRegistrationArgumentErrors) {
  char memory[64];
  Expected<HostRegistration> null =
      HostRegistration::create(makeFakeApi(), nullptr, 64);
  ASSERT_FALSE(null);
  EXPECT_EQ(null.error().code(), ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(null.error().message(),
                  "cannot register 64 bytes of host memory at a null pointer");

  Expected<HostRegistration> empty =
      HostRegistration::create(makeFakeApi(), memory, 0);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code(), ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(empty.error().message(), "empty range");

  Expected<HostRegistration> mapped = HostRegistration::create(
      makeFakeApi(), memory, 64, static_cast<HostRegisterFlags>(2));
  ASSERT_FALSE(mapped);
  EXPECT_EQ(mapped.error().code(), ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(mapped.error().message(),
                  "invalid host registration flags 2");
  EXPECT_CONTAINS(mapped.error().message(), "cudaHostRegisterPortable (1)");
  EXPECT_EQ(state.hostRegisterCalls, 0);

  // The factories check the arguments before they load anything.
  Expected<HostRegistration> early =
      makeHostRegistration("libetcopy-no-such-library.so", nullptr, 64);
  ASSERT_FALSE(early);
  EXPECT_EQ(early.error().code(), ErrorCode::InvalidArgument);
  Expected<HostRegistration> late =
      makeHostRegistration("libetcopy-no-such-library.so", memory, 64);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code(), ErrorCode::Unavailable);
  EXPECT_CONTAINS(late.error().message(), "libetcopy-no-such-library.so");
}

TEST_F(FakeCudaTest, HostRegistrationOverlapsAreReported) {
  std::vector<char> memory(8192);
  Expected<HostRegistration> first =
      HostRegistration::create(makeFakeApi(), memory.data(), 4096);
  ASSERT_TRUE(first);
  for (std::size_t offset : {0u, 2048u}) {
    Expected<HostRegistration> clash =
        HostRegistration::create(makeFakeApi(), memory.data() + offset, 4096);
    ASSERT_FALSE(clash) << offset;
    EXPECT_EQ(clash.error().code(), ErrorCode::AlreadyExists);
    EXPECT_CONTAINS(clash.error().message(), "cudaHostRegister(0x");
    EXPECT_CONTAINS(clash.error().message(),
                    "4096 bytes, cudaHostRegisterDefault) failed: "
                    "cudaErrorHostMemoryAlreadyRegistered");
  }
  EXPECT_EQ(state.registered.size(), 1u);

  state.hostRegisterStatus = 2;
  Expected<HostRegistration> oom =
      HostRegistration::create(makeFakeApi(), memory.data() + 4096, 16);
  ASSERT_FALSE(oom);
  EXPECT_EQ(oom.error().code(), ErrorCode::OutOfMemory);
}

TEST_F(FakeCudaTest, HostRegistrationReportsUnregisterFailures) {
  std::vector<char> memory(4096);
  Expected<HostRegistration> registration =
      HostRegistration::create(makeFakeApi(), memory.data(), 4096);
  ASSERT_TRUE(registration);
  state.hostUnregisterStatus = 713;
  Error err = registration->reset();
  EXPECT_EQ(err.code(), ErrorCode::NotFound);
  EXPECT_CONTAINS(err.message(), "cudaHostUnregister(0x");
  EXPECT_CONTAINS(err.message(), ") of 4096 registered bytes failed: "
                                 "cudaErrorHostMemoryNotRegistered");
  EXPECT_FALSE(registration->isRegistered());
  // The fake kept the range; release it for the leak check.
  EXPECT_EQ(state.registered.erase(memory.data()), 1u);
}

//===----------------------------------------------------------------------===//
// The CUDA simulator
//===----------------------------------------------------------------------===//

namespace {

/// Loads the simulator or skips the test when the build has none.
#ifdef ETCOPY_HAVE_CUDA_SIM
#define REQUIRE_SIMULATOR()                                                    \
  do {                                                                         \
  } while (false)
#else
#define REQUIRE_SIMULATOR()                                                    \
  GTEST_SKIP() << "the CUDA simulator is not part of this build"
#endif

class SimulatorTest : public ::testing::Test {
protected:
  void SetUp() override {
    REQUIRE_SIMULATOR();
    Expected<std::shared_ptr<CudaAllocator>> made = makeSimulatorAllocator();
    ASSERT_TRUE(made) << made.error().toString();
    allocator = std::move(*made);
    Expected<int> count = allocator->getDeviceCount();
    ASSERT_TRUE(count) << count.error().toString();
    deviceCount = *count;
  }

  int currentDevice() {
    int device = -1;
    EXPECT_EQ(allocator->getApi().getDeviceFn(&device), 0);
    return device;
  }

  std::shared_ptr<CudaAllocator> allocator;
  int deviceCount = 0;
};

/// Skips unless the simulator has at least two devices.
#define REQUIRE_TWO_DEVICES()                                                  \
  do {                                                                         \
    if (deviceCount < 2)                                                       \
      GTEST_SKIP() << "needs ETCOPY_CUDA_SIM_DEVICES >= 2, have "              \
                   << deviceCount;                                             \
  } while (false)

} // namespace

TEST_F(SimulatorTest, LoadsWithTheConfiguredDevices) {
  EXPECT_GE(deviceCount, 1);
  const char *requested = std::getenv("ETCOPY_CUDA_SIM_DEVICES");
  if (requested) {
    EXPECT_EQ(deviceCount, std::atoi(requested));
  }
  EXPECT_CONTAINS(allocator->getApi().origin, kCudaSimulatorLibraryName);
}

TEST_F(SimulatorTest, RoundTripCopies) {
  for (int ordinal = 0; ordinal < deviceCount && ordinal < 2; ++ordinal) {
    std::vector<float> input(1000);
    std::iota(input.begin(), input.end(), 0.5f);
    std::size_t nbytes = input.size() * sizeof(float);

    Expected<void *> device = allocator->allocate(nbytes, ordinal, 256);
    ASSERT_TRUE(device) << device.error().toString();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*device) % 256, 0u);
    ASSERT_TRUE(
        allocator->copyHostToDevice(*device, input.data(), nbytes, ordinal)
            .ok());
    std::vector<float> output(input.size(), -1.0f);
    Error read =
        allocator->copyDeviceToHost(output.data(), *device, nbytes, ordinal);
    EXPECT_TRUE(read.ok()) << read.toString();
    EXPECT_EQ(output, input);
    EXPECT_TRUE(allocator->deallocate(*device, ordinal).ok());
  }
}

TEST_F(SimulatorTest, RoundTripOnAStream) {
  const CudaApi &api = allocator->getApi();
  if (!api.streamCreateFn || !api.streamDestroyFn)
    GTEST_SKIP() << "the simulator exports no cudaStreamCreate";
  void *stream = nullptr;
  ASSERT_EQ(api.streamCreateFn(&stream), 0);

  DeviceAllocatorRegistry registry;
  ASSERT_TRUE(registry.registerAllocator(allocator).ok());
  std::vector<int> input(256);
  std::iota(input.begin(), input.end(), 7);
  std::size_t nbytes = input.size() * sizeof(int);
  {
    Expected<DeviceBuffer> buffer = makeDeviceInput(
        registry, DeviceKind::CUDA, 0, input.data(), nbytes, stream);
    ASSERT_TRUE(buffer) << buffer.error().toString();
    std::vector<int> output(input.size(), 0);
    ASSERT_TRUE(
        allocator
            ->copyDeviceToHost(output.data(), buffer->data(), nbytes, 0, stream)
            .ok());
    Error synced = allocator->synchronize(0, stream);
    EXPECT_TRUE(synced.ok()) << synced.toString();
    EXPECT_EQ(output, input);

    std::vector<int> again(input.size(), 0);
    Error read = readDeviceOutput(*buffer, again.data(), nbytes, stream);
    EXPECT_TRUE(read.ok()) << read.toString();
    EXPECT_EQ(again, input);
  }
  EXPECT_EQ(api.streamDestroyFn(stream), 0);
}

TEST_F(SimulatorTest, InputWithoutAStreamIsCompleteForNonBlockingStreams) {
  // cudaMemcpy from pageable memory to the device may return before the
  // device memory is written, on the legacy default stream, which
  // non-blocking streams (the lowered code's) do not wait for; the
  // simulator queues it there. A copy without a stream must still be
  // complete when it returns.
  void *library =
      ::dlopen(allocator->getApi().origin.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(library, nullptr);
  auto createWithFlags = reinterpret_cast<int (*)(void **, unsigned)>(
      ::dlsym(library, "cudaStreamCreateWithFlags"));
  ::dlclose(library);
  ASSERT_NE(createWithFlags, nullptr);
  const CudaApi &api = allocator->getApi();
  void *nonBlocking = nullptr;
  ASSERT_EQ(createWithFlags(&nonBlocking, /*cudaStreamNonBlocking=*/1), 0);

  DeviceAllocatorRegistry registry;
  ASSERT_TRUE(registry.registerAllocator(allocator).ok());
  std::vector<int> input(64);
  std::iota(input.begin(), input.end(), 3);
  std::size_t nbytes = input.size() * sizeof(int);
  {
    Expected<DeviceBuffer> buffer =
        makeDeviceInput(registry, DeviceKind::CUDA, 0, input.data(), nbytes);
    ASSERT_TRUE(buffer) << buffer.error().toString();
    std::vector<int> output(input.size(), 0);
    ASSERT_TRUE(allocator
                    ->copyDeviceToHost(output.data(), buffer->data(), nbytes,
                                       0, nonBlocking)
                    .ok());
    Error synced = allocator->synchronize(0, nonBlocking);
    EXPECT_TRUE(synced.ok()) << synced.toString();
    EXPECT_EQ(output, input);
  }
  EXPECT_EQ(api.streamDestroyFn(nonBlocking), 0);
}

TEST_F(SimulatorTest, RestoresTheCurrentDevice) {
  REQUIRE_TWO_DEVICES();
  ASSERT_EQ(currentDevice(), 0);
  Expected<void *> onOne = allocator->allocate(128, 1, 256);
  ASSERT_TRUE(onOne) << onOne.error().toString();
  EXPECT_EQ(currentDevice(), 0);

  // And the other way round.
  ASSERT_EQ(allocator->getApi().setDeviceFn(1), 0);
  Expected<void *> onZero = allocator->allocate(128, 0, 256);
  ASSERT_TRUE(onZero) << onZero.error().toString();
  EXPECT_EQ(currentDevice(), 1);
  int value = 42;
  EXPECT_TRUE(allocator->copyHostToDevice(*onZero, &value, 4, 0).ok());
  EXPECT_EQ(currentDevice(), 1);
  EXPECT_TRUE(allocator->deallocate(*onOne, 1).ok());
  EXPECT_EQ(currentDevice(), 1);
  EXPECT_TRUE(allocator->deallocate(*onZero, 0).ok());
  ASSERT_EQ(allocator->getApi().setDeviceFn(0), 0);
}

TEST_F(SimulatorTest, RejectsBadAlignmentAndOrdinal) {
  Expected<void *> badAlignment = allocator->allocate(64, 0, 512);
  ASSERT_FALSE(badAlignment);
  EXPECT_EQ(badAlignment.error().code(), ErrorCode::InvalidArgument);

  Expected<void *> badOrdinal = allocator->allocate(64, deviceCount, 256);
  ASSERT_FALSE(badOrdinal);
  EXPECT_EQ(badOrdinal.error().code(), ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(badOrdinal.error().message(),
                  "device ordinal " + std::to_string(deviceCount));
  EXPECT_EQ(currentDevice(), 0);
}

TEST_F(SimulatorTest, ArenasAreAllOrNothing) {
  REQUIRE_TWO_DEVICES();
  DeviceAllocatorRegistry registry;
  ASSERT_TRUE(registry.registerAllocator(allocator).ok());
  const etcopy_arena_desc good[] = {{ETCOPY_DEVICE_CPU, 0, 64, 64},
                                    {ETCOPY_DEVICE_CUDA, 0, 1024, 256},
                                    {ETCOPY_DEVICE_CUDA, 1, 2048, 128}};
  {
    Expected<std::vector<DeviceBuffer>> arenas =
        allocateArenas(registry, etcopy_function_arenas{3, good});
    ASSERT_TRUE(arenas) << arenas.error().toString();
    EXPECT_EQ((*arenas)[2].ordinal(), 1);
    std::vector<char> bytes(2048, 'x');
    EXPECT_TRUE(readDeviceOutput((*arenas)[2], bytes.data(), 2048).ok());
  }
  // The last arena names a device that does not exist: the earlier ones,
  // on both devices, are freed (the simulator's exit-time leak check would
  // fail the whole binary otherwise).
  const etcopy_arena_desc bad[] = {{ETCOPY_DEVICE_CUDA, 0, 1024, 256},
                                   {ETCOPY_DEVICE_CUDA, 1, 1024, 256},
                                   {ETCOPY_DEVICE_CUDA, 7, 1024, 256}};
  Expected<std::vector<DeviceBuffer>> arenas =
      allocateArenas(registry, etcopy_function_arenas{3, bad});
  ASSERT_FALSE(arenas);
  EXPECT_EQ(arenas.error().code(), ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(arenas.error().message(), "arena #2 (1024 bytes on cuda:7)");
  EXPECT_EQ(currentDevice(), 0);
}

TEST(SimulatorProcessTest, InjectedAllocationFailure) {
  REQUIRE_SIMULATOR();
  // The simulator must be loaded after the variable is set, and count
  // allocations from zero: run in a freshly exec'ed process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      runAndExit([]() -> std::string {
        ::setenv("ETCOPY_CUDA_SIM_FAIL_ALLOC", "3", 1);
        Expected<std::shared_ptr<CudaAllocator>> sim = makeSimulatorAllocator();
        if (!sim)
          return sim.error().toString();
        DeviceAllocatorRegistry registry;
        if (Error err = registry.registerAllocator(*sim))
          return err.toString();
        // Allocations 1 and 2 succeed, 3 fails: all-or-nothing.
        const etcopy_arena_desc descs[] = {{ETCOPY_DEVICE_CUDA, 0, 256, 256},
                                           {ETCOPY_DEVICE_CUDA, 0, 512, 256},
                                           {ETCOPY_DEVICE_CUDA, 0, 1024, 256}};
        Expected<std::vector<DeviceBuffer>> arenas =
            allocateArenas(registry, etcopy_function_arenas{3, descs});
        if (arenas)
          return "the third allocation did not fail";
        const std::string &message = arenas.error().message();
        if (arenas.error().code() != ErrorCode::OutOfMemory ||
            message.find("arena #2") == std::string::npos ||
            message.find("cudaMalloc") == std::string::npos ||
            message.find("cudaErrorMemoryAllocation") == std::string::npos)
          return "unexpected error: " + arenas.error().toString();
        // Later allocations succeed again.
        Expected<DeviceBuffer> after =
            DeviceBuffer::allocate(registry, DeviceKind::CUDA, 0, 64, 256);
        if (!after)
          return "allocation after the injected failure: " +
                 after.error().toString();
        return "";
      }),
      ::testing::ExitedWithCode(0), "");
}

TEST(SimulatorProcessTest, FromProcessFindsAGlobalSimulator) {
  REQUIRE_SIMULATOR();
  // Promoting the simulator to RTLD_GLOBAL must not leak into this process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      runAndExit([]() -> std::string {
        Expected<std::shared_ptr<CudaAllocator>> sim = makeSimulatorAllocator();
        if (!sim)
          return sim.error().toString();
        const std::string &path = (*sim)->getApi().origin;
        if (!::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD))
          return "cannot promote " + path;
        Expected<std::shared_ptr<CudaAllocator>> fromProcess =
            makeCudaAllocator(nullptr);
        if (!fromProcess)
          return fromProcess.error().toString();
        if ((*fromProcess)->getApi().mallocFn != (*sim)->getApi().mallocFn)
          return "fromProcess resolved another cudaMalloc";
        Expected<void *> ptr = (*fromProcess)->allocate(32, 0, 256);
        if (!ptr)
          return ptr.error().toString();
        if (Error err = (*fromProcess)->deallocate(*ptr, 0))
          return err.toString();
        return "";
      }),
      ::testing::ExitedWithCode(0), "");
}

TEST(SimulatorProcessTest, SharesAnAlreadyLoadedSimulator) {
  REQUIRE_SIMULATOR();
  // A simulator loaded from elsewhere before the runtime looks for one must
  // be reused: a second copy would be a second machine.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      runAndExit([]() -> std::string {
        Dl_info info;
        if (!::dladdr(reinterpret_cast<void *>(&makeSimulatorAllocator),
                      &info) ||
            !info.dli_fname)
          return "cannot locate libEtCopyRuntime.so";
        std::string built = info.dli_fname;
        built =
            built.substr(0, built.rfind('/') + 1) + kCudaSimulatorLibraryName;
        char directory[] = "/tmp/etcopy-sim-copy-XXXXXX";
        if (!::mkdtemp(directory))
          return "mkdtemp failed";
        std::string copy =
            std::string(directory) + "/" + kCudaSimulatorLibraryName;
        std::string command = "cp '" + built + "' '" + copy + "'";
        if (std::system(command.c_str()) != 0)
          return "cannot copy " + built;
        void *handle = ::dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
        ::unlink(copy.c_str());
        ::rmdir(directory);
        if (!handle)
          return std::string("cannot load the copy: ") + ::dlerror();

        Expected<std::shared_ptr<CudaAllocator>> sim = makeSimulatorAllocator();
        if (!sim)
          return sim.error().toString();
        if (reinterpret_cast<void *>((*sim)->getApi().mallocFn) !=
            ::dlsym(handle, "cudaMalloc"))
          return "loaded a second simulator from " + (*sim)->getApi().origin;
        if ((*sim)->getApi().origin != copy)
          return "origin is " + (*sim)->getApi().origin + ", not " + copy;
        Expected<void *> ptr = (*sim)->allocate(32, 0, 256);
        if (!ptr)
          return ptr.error().toString();
        if (Error err = (*sim)->deallocate(*ptr, 0))
          return err.toString();
        return "";
      }),
      ::testing::ExitedWithCode(0), "");
}

TEST(SimulatorProcessTest, LeakedMemoryFailsTheProcess) {
  REQUIRE_SIMULATOR();
  // Guards the other tests' meaning: the simulator's exit-time leak check
  // really makes a process with live device or pinned host memory exit 1.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(runAndExit([]() -> std::string {
                ::setenv("ETCOPY_CUDA_SIM_LEAK_CHECK", "1", 1);
                Expected<std::shared_ptr<CudaAllocator>> sim =
                    makeSimulatorAllocator();
                if (!sim)
                  return sim.error().toString();
                Expected<void *> ptr = (*sim)->allocate(32, 0, 256);
                if (!ptr)
                  return ptr.error().toString();
                Expected<std::shared_ptr<PinnedHostAllocator>> pinned =
                    makeSimulatorPinnedHostAllocator();
                if (!pinned)
                  return pinned.error().toString();
                Expected<void *> host = (*pinned)->allocate(48, 0, 64);
                if (!host)
                  return host.error().toString();
                return "";
              }),
              ::testing::ExitedWithCode(1),
              "leak: 1 device allocation\\(s\\), 32 bytes.*"
              "leak: 1 pinned host allocation\\(s\\), 48 bytes");
}

//===----------------------------------------------------------------------===//
// Pinned host memory on the CUDA simulator
//===----------------------------------------------------------------------===//

namespace {

/// The simulator's cudaPointerGetAttributes(ptr).type (a cudaMemoryType), or
/// -1 when it cannot say.
int memoryType(const CudaApi &api, const void *ptr) {
#ifdef ETCOPY_HAVE_CUDA_SIM
  void *library = ::dlopen(api.origin.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!library)
    return -1;
  auto getAttributes =
      reinterpret_cast<cudaError_t (*)(cudaPointerAttributes *, const void *)>(
          ::dlsym(library, "cudaPointerGetAttributes"));
  cudaPointerAttributes attributes;
  int type = getAttributes && getAttributes(&attributes, ptr) == cudaSuccess
                 ? attributes.type
                 : -1;
  ::dlclose(library);
  return type;
#else
  (void)api;
  (void)ptr;
  return -1;
#endif
}

// cudaMemoryType values.
constexpr int kUnregistered = 0;
constexpr int kHostMemory = 1;
constexpr int kDeviceMemory = 2;

class PinnedSimulatorTest : public SimulatorTest {
protected:
  void SetUp() override {
    SimulatorTest::SetUp();
    if (IsSkipped() || HasFatalFailure())
      return;
    Expected<std::shared_ptr<PinnedHostAllocator>> made =
        makeSimulatorPinnedHostAllocator();
    ASSERT_TRUE(made) << made.error().toString();
    pinned = std::move(*made);
  }

  std::shared_ptr<PinnedHostAllocator> pinned;
};

/// A registry with the simulator's pinned host and CUDA allocators.
std::string makePinnedRegistry(DeviceAllocatorRegistry &registry) {
  Expected<std::shared_ptr<PinnedHostAllocator>> pinned =
      makeSimulatorPinnedHostAllocator();
  if (!pinned)
    return pinned.error().toString();
  Expected<std::shared_ptr<CudaAllocator>> cuda = makeSimulatorAllocator();
  if (!cuda)
    return cuda.error().toString();
  if (Error err = registry.registerAllocator(*pinned))
    return err.toString();
  if (Error err = registry.registerAllocator(*cuda))
    return err.toString();
  return "";
}

} // namespace

TEST_F(PinnedSimulatorTest, ArenasAndBuffersArePinned) {
  REQUIRE_TWO_DEVICES();
  // One simulated machine for both allocators.
  EXPECT_EQ(pinned->getApi().mallocHostFn, allocator->getApi().mallocHostFn);

  DeviceAllocatorRegistry registry(/*registerHostAllocator=*/false);
  ASSERT_TRUE(registry.registerAllocator(pinned).ok());
  ASSERT_TRUE(registry.registerAllocator(allocator).ok());
  const etcopy_arena_desc descs[] = {{ETCOPY_DEVICE_CPU, 0, 4096, 256},
                                     {ETCOPY_DEVICE_CUDA, 0, 4096, 256},
                                     {ETCOPY_DEVICE_CUDA, 1, 4096, 256}};
  Expected<std::vector<DeviceBuffer>> arenas =
      allocateArenas(registry, etcopy_function_arenas{3, descs});
  ASSERT_TRUE(arenas) << arenas.error().toString();
  DeviceBuffer &host = (*arenas)[0];
  std::vector<float> pageable(1024);
  EXPECT_EQ(memoryType(pinned->getApi(), host.data()), kHostMemory);
  EXPECT_EQ(memoryType(pinned->getApi(), (*arenas)[1].data()), kDeviceMemory);
  EXPECT_EQ(memoryType(pinned->getApi(), pageable.data()), kUnregistered);

  // Pinned host arena -> cuda:0 -> cuda:1 through the host arena -> back.
  float *values = static_cast<float *>(host.data());
  std::iota(values, values + 1024, 0.25f);
  std::vector<float> expected(values, values + 1024);
  ASSERT_TRUE(
      allocator->copyHostToDevice((*arenas)[1].data(), values, 4096, 0).ok());
  std::fill(values, values + 1024, -1.0f);
  ASSERT_TRUE(readDeviceOutput((*arenas)[1], values, 4096).ok());
  ASSERT_TRUE(
      allocator->copyHostToDevice((*arenas)[2].data(), values, 4096, 1).ok());
  ASSERT_TRUE(readDeviceOutput((*arenas)[2], pageable.data(), 4096).ok());
  EXPECT_EQ(pageable, expected);

  // Any CPU buffer of the registry is pinned too.
  Expected<DeviceBuffer> input =
      makeDeviceInput(registry, DeviceKind::CPU, 0, pageable.data(), 4096);
  ASSERT_TRUE(input) << input.error().toString();
  EXPECT_EQ(memoryType(pinned->getApi(), input->data()), kHostMemory);
  EXPECT_EQ(std::memcmp(input->data(), expected.data(), 4096), 0);
}

TEST_F(PinnedSimulatorTest, RegistrationPinsCallerMemory) {
  std::vector<char> memory(8192);
  const CudaApi &api = pinned->getApi();
  {
    Expected<HostRegistration> registration = makeSimulatorHostRegistration(
        memory.data(), 4096, HostRegisterFlags::Portable);
    ASSERT_TRUE(registration) << registration.error().toString();
    EXPECT_EQ(memoryType(api, memory.data()), kHostMemory);
    EXPECT_EQ(memoryType(api, memory.data() + 4095), kHostMemory);
    EXPECT_EQ(memoryType(api, memory.data() + 4096), kUnregistered);

    for (std::size_t offset : {0u, 2048u}) {
      Expected<HostRegistration> clash =
          makeSimulatorHostRegistration(memory.data() + offset, 4096);
      ASSERT_FALSE(clash) << offset;
      EXPECT_EQ(clash.error().code(), ErrorCode::AlreadyExists);
      EXPECT_CONTAINS(clash.error().message(), "cudaHostRegister(0x");
      EXPECT_CONTAINS(clash.error().message(),
                      "cudaErrorHostMemoryAlreadyRegistered");
    }
    EXPECT_TRUE(registration->reset().ok());
    EXPECT_EQ(memoryType(api, memory.data()), kUnregistered);
  }

  // The destructor unregisters: the range can be registered again after.
  {
    Expected<HostRegistration> whole =
        makeSimulatorHostRegistration(memory.data(), memory.size());
    ASSERT_TRUE(whole) << whole.error().toString();
  }
  EXPECT_EQ(memoryType(api, memory.data()), kUnregistered);
  Expected<HostRegistration> again =
      makeSimulatorHostRegistration(memory.data(), memory.size());
  ASSERT_TRUE(again) << again.error().toString();

  // Memory that is pinned already cannot be registered.
  Expected<void *> ptr = pinned->allocate(4096, 0, 4096);
  ASSERT_TRUE(ptr) << ptr.error().toString();
  Expected<HostRegistration> pinnedTwice =
      HostRegistration::create(api, *ptr, 4096);
  ASSERT_FALSE(pinnedTwice);
  EXPECT_CONTAINS(pinnedTwice.error().message(), "cudaHostRegister(0x");
  EXPECT_TRUE(pinned->deallocate(*ptr, 0).ok());

  Expected<HostRegistration> empty =
      makeSimulatorHostRegistration(memory.data(), 0);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code(), ErrorCode::InvalidArgument);
}

TEST_F(PinnedSimulatorTest, PinnedCopiesDoNotBlockTheHost) {
  // The simulator's timing model (docs/CudaSimulator.md): an asynchronous
  // copy from pageable memory is staged by the driver and holds the host
  // until it ends; one from pinned memory only costs the launch, and moves
  // the data at PCIe speed.
  void *library =
      ::dlopen(allocator->getApi().origin.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(library, nullptr);
  auto reset = reinterpret_cast<void (*)()>(
      ::dlsym(library, "etcopy_cuda_sim_reset_modelled_time"));
  auto now = reinterpret_cast<unsigned long long (*)()>(
      ::dlsym(library, "etcopy_cuda_sim_modelled_time_ns"));
  ::dlclose(library);
  ASSERT_TRUE(reset && now);
  const CudaApi &api = allocator->getApi();
  void *stream = nullptr;
  ASSERT_EQ(api.streamCreateFn(&stream), 0);

  constexpr std::size_t kBytes = 16 << 20;
  Expected<DeviceBuffer> device =
      DeviceBuffer::allocate(allocator, 0, kBytes, 256);
  Expected<DeviceBuffer> pinnedHost =
      DeviceBuffer::allocate(pinned, 0, kBytes, 4096);
  ASSERT_TRUE(device && pinnedHost);
  std::vector<char> pageableHost(kBytes, 1);
  std::memset(pinnedHost->data(), 1, kBytes);

  /// Host time to enqueue the copy, and until it has completed.
  auto timeCopy = [&](const void *host) {
    EXPECT_TRUE(allocator->synchronize(0).ok());
    reset();
    EXPECT_TRUE(
        allocator->copyHostToDevice(device->data(), host, kBytes, 0, stream)
            .ok());
    unsigned long long enqueued = now();
    EXPECT_TRUE(allocator->synchronize(0, stream).ok());
    return std::make_pair(enqueued, now());
  };
  auto [pinnedEnqueue, pinnedDone] = timeCopy(pinnedHost->data());
  auto [pageableEnqueue, pageableDone] = timeCopy(pageableHost.data());
  EXPECT_LT(pinnedEnqueue * 100, pageableEnqueue)
      << "pinned " << pinnedEnqueue << " ns, pageable " << pageableEnqueue
      << " ns";
  EXPECT_LT(pinnedDone * 3, pageableDone)
      << "pinned " << pinnedDone << " ns, pageable " << pageableDone << " ns";
  EXPECT_EQ(api.streamDestroyFn(stream), 0);
}

TEST(SimulatorProcessTest, PinnedCopiesCountAsPinned) {
  REQUIRE_SIMULATOR();
  // The statistics are printed at exit: read them from a fresh process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      runAndExit([]() -> std::string {
        ::setenv("ETCOPY_CUDA_SIM_STATS", "1", 1);
        DeviceAllocatorRegistry registry(/*registerHostAllocator=*/false);
        if (std::string failure = makePinnedRegistry(registry);
            !failure.empty())
          return failure;
        const etcopy_arena_desc descs[] = {{ETCOPY_DEVICE_CPU, 0, 4096, 256},
                                           {ETCOPY_DEVICE_CUDA, 0, 4096, 256},
                                           {ETCOPY_DEVICE_CUDA, 1, 4096, 256}};
        Expected<std::vector<DeviceBuffer>> arenas =
            allocateArenas(registry, etcopy_function_arenas{3, descs});
        if (!arenas)
          return arenas.error().toString();
        Expected<std::shared_ptr<DeviceAllocator>> cuda =
            registry.lookup(DeviceKind::CUDA);
        Expected<CudaApi> api = CudaApi::loadSimulator();
        if (!cuda || !api)
          return "no CUDA allocator or simulator";
        void *host = (*arenas)[0].data();
        std::memset(host, 7, 4096);
        std::vector<char> registered(2048, 1), pageable(1024, 2);
        Expected<HostRegistration> registration = HostRegistration::create(
            *api, registered.data(), registered.size());
        if (!registration)
          return registration.error().toString();
        void *stream = nullptr;
        if (api->streamCreateFn(&stream) != 0)
          return "cudaStreamCreate failed";
        // h2d_pinned: the arena on a stream and synchronously, the
        // registered vector; d2h_pinned: back into the arena;
        // h2d_pageable: the plain vector.
        DeviceAllocator &device = **cuda;
        Error errors[] = {
            device.copyHostToDevice((*arenas)[1].data(), host, 4096, 0, stream),
            device.synchronize(0, stream),
            device.copyHostToDevice((*arenas)[2].data(), host, 4096, 1),
            device.copyDeviceToHost(host, (*arenas)[2].data(), 4096, 1),
            device.copyHostToDevice((*arenas)[1].data(), registered.data(),
                                    registered.size(), 0),
            device.copyHostToDevice((*arenas)[1].data(), pageable.data(),
                                    pageable.size(), 0),
            registration->reset(),
        };
        for (const Error &err : errors)
          if (err)
            return err.toString();
        if (api->streamDestroyFn(stream) != 0)
          return "cudaStreamDestroy failed";
        return "";
      }),
      ::testing::ExitedWithCode(0),
      "copies: pinned=4 pinned_bytes=14336 pageable=1 pageable_bytes=1024 "
      ".*h2d_pinned=3 h2d_pinned_bytes=10240 h2d_pageable=1 "
      "h2d_pageable_bytes=1024 d2h_pinned=1 d2h_pinned_bytes=4096 "
      "d2h_pageable=0 ");
}

TEST(SimulatorProcessTest, InjectedPinnedAllocationFailure) {
  REQUIRE_SIMULATOR();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      runAndExit([]() -> std::string {
        ::setenv("ETCOPY_CUDA_SIM_FAIL", "host-alloc:2", 1);
        DeviceAllocatorRegistry registry(/*registerHostAllocator=*/false);
        if (std::string failure = makePinnedRegistry(registry);
            !failure.empty())
          return failure;
        // The second cudaMallocHost fails: the first pinned arena and the
        // CUDA arena are freed (the leak check would fail the process).
        const etcopy_arena_desc descs[] = {{ETCOPY_DEVICE_CPU, 0, 256, 256},
                                           {ETCOPY_DEVICE_CUDA, 0, 512, 256},
                                           {ETCOPY_DEVICE_CPU, 0, 1024, 256}};
        Expected<std::vector<DeviceBuffer>> arenas =
            allocateArenas(registry, etcopy_function_arenas{3, descs});
        if (arenas)
          return "the second pinned allocation did not fail";
        if (arenas.error().code() != ErrorCode::OutOfMemory ||
            arenas.error().message().find(
                "arena #2 (1024 bytes on cpu:0): cudaMallocHost(1024 bytes) "
                "failed: cudaErrorMemoryAllocation") == std::string::npos)
          return "unexpected error: " + arenas.error().toString();
        // Later allocations succeed again.
        Expected<std::vector<DeviceBuffer>> again =
            allocateArenas(registry, etcopy_function_arenas{3, descs});
        if (!again)
          return "allocation after the injected failure: " +
                 again.error().toString();
        return "";
      }),
      ::testing::ExitedWithCode(0), "");
}

TEST(SimulatorProcessTest, InjectedHostFreeAndRegistrationFailures) {
  REQUIRE_SIMULATOR();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      runAndExit([]() -> std::string {
        // host-alloc calls: 1 cudaMallocHost, 2 cudaFreeHost (fails),
        // 3 cudaFreeHost, 4 cudaHostRegister (fails), 5 cudaHostRegister,
        // 6 cudaHostUnregister (fails), 7 cudaHostRegister, 8
        // cudaHostUnregister.
        ::setenv("ETCOPY_CUDA_SIM_FAIL",
                 "host-alloc:2,host-alloc:4,host-alloc:6", 1);
        Expected<std::shared_ptr<PinnedHostAllocator>> pinned =
            makeSimulatorPinnedHostAllocator();
        if (!pinned)
          return pinned.error().toString();
        auto expectFailure = [](const Error &err, ErrorCode code,
                                const char *call,
                                const char *cudaError) -> std::string {
          if (err.code() != code ||
              err.message().find(call) == std::string::npos ||
              err.message().find(cudaError) == std::string::npos)
            return std::string("expected ") + call + " to fail with " +
                   cudaError + ", got " + err.toString();
          return "";
        };
        Expected<void *> ptr = (*pinned)->allocate(64, 0, 64);
        if (!ptr)
          return ptr.error().toString();
        std::string failure = expectFailure(
            (*pinned)->deallocate(*ptr, 0), ErrorCode::DeviceError,
            "cudaFreeHost(0x", "cudaErrorInvalidValue");
        if (!failure.empty())
          return failure;
        // Still allocated: this free succeeds and the leak check passes.
        if (Error err = (*pinned)->deallocate(*ptr, 0))
          return "second cudaFreeHost: " + err.toString();

        const CudaApi &api = (*pinned)->getApi();
        std::vector<char> memory(4096);
        Expected<HostRegistration> failed =
            HostRegistration::create(api, memory.data(), memory.size());
        if (failed)
          return "the injected cudaHostRegister failure was not reported";
        failure =
            expectFailure(failed.error(), ErrorCode::OutOfMemory,
                          "cudaHostRegister(0x", "cudaErrorMemoryAllocation");
        if (!failure.empty())
          return failure;
        // Nothing was registered: registering the range works.
        Expected<HostRegistration> registration =
            HostRegistration::create(api, memory.data(), memory.size());
        if (!registration)
          return registration.error().toString();
        failure =
            expectFailure(registration->reset(), ErrorCode::DeviceError,
                          "cudaHostUnregister(0x", "cudaErrorInvalidValue");
        if (!failure.empty())
          return failure;
        // The range is still registered, as the error said.
        Expected<HostRegistration> clash =
            HostRegistration::create(api, memory.data(), memory.size());
        if (clash || clash.error().code() != ErrorCode::AlreadyExists)
          return "the range is no longer registered";
        if (api.hostUnregisterFn(memory.data()) != 0)
          return "cudaHostUnregister failed";
        return "";
      }),
      ::testing::ExitedWithCode(0), "");
}

//===----------------------------------------------------------------------===//
// The real CUDA runtime
//===----------------------------------------------------------------------===//

namespace {

constexpr const char *kCudartLibrary = "libcudart.so.13";

class RealCudaTest : public ::testing::Test {
protected:
  void SetUp() override {
    Expected<std::shared_ptr<CudaAllocator>> made =
        makeCudaAllocator(kCudartLibrary);
    if (!made)
      GTEST_SKIP() << made.error().toString();
    Expected<int> count = (*made)->getDeviceCount();
    if (!count)
      GTEST_SKIP() << "no usable CUDA device: " << count.error().toString();
    if (*count < 1)
      GTEST_SKIP() << "cudaGetDeviceCount reports no device";
    allocator = std::move(*made);
    deviceCount = *count;
  }

  std::shared_ptr<CudaAllocator> allocator;
  int deviceCount = 0;
};

} // namespace

TEST_F(RealCudaTest, RoundTripAndRestore) {
  int before = -1;
  ASSERT_EQ(allocator->getApi().getDeviceFn(&before), 0);
  int ordinal = deviceCount - 1;
  std::vector<double> input(4096);
  std::iota(input.begin(), input.end(), 1.0);
  std::size_t nbytes = input.size() * sizeof(double);
  Expected<void *> device = allocator->allocate(nbytes, ordinal, 256);
  ASSERT_TRUE(device) << device.error().toString();
  int after = -1;
  ASSERT_EQ(allocator->getApi().getDeviceFn(&after), 0);
  EXPECT_EQ(after, before);
  ASSERT_TRUE(
      allocator->copyHostToDevice(*device, input.data(), nbytes, ordinal).ok());
  std::vector<double> output(input.size());
  ASSERT_TRUE(
      allocator->copyDeviceToHost(output.data(), *device, nbytes, ordinal)
          .ok());
  EXPECT_EQ(output, input);
  EXPECT_TRUE(allocator->deallocate(*device, ordinal).ok());
  EXPECT_FALSE(allocator->allocate(64, 0, 512));
  EXPECT_FALSE(allocator->allocate(64, deviceCount, 256));
}

TEST_F(RealCudaTest, TwoDevicesRoundTripAndRestore) {
  // Like lit's `cuda-gpus-2` feature: a one-GPU machine skips, saying so.
  if (deviceCount < 2)
    GTEST_SKIP() << "needs 2 CUDA devices, cudaGetDeviceCount reports "
                 << deviceCount;
  const CudaApi &api = allocator->getApi();
  for (int current : {0, 1}) {
    ASSERT_EQ(api.setDeviceFn(current), 0);
    for (int ordinal : {0, 1}) {
      std::vector<int> input(1024);
      std::iota(input.begin(), input.end(), 100 * ordinal);
      std::size_t nbytes = input.size() * sizeof(int);
      Expected<void *> device = allocator->allocate(nbytes, ordinal, 256);
      ASSERT_TRUE(device) << device.error().toString();
      ASSERT_TRUE(
          allocator->copyHostToDevice(*device, input.data(), nbytes, ordinal)
              .ok());
      std::vector<int> output(input.size(), -1);
      ASSERT_TRUE(
          allocator->copyDeviceToHost(output.data(), *device, nbytes, ordinal)
              .ok());
      EXPECT_EQ(output, input) << "on cuda:" << ordinal;
      EXPECT_TRUE(allocator->deallocate(*device, ordinal).ok());
      int after = -1;
      ASSERT_EQ(api.getDeviceFn(&after), 0);
      EXPECT_EQ(after, current) << "after using cuda:" << ordinal;
    }
  }
  ASSERT_EQ(api.setDeviceFn(0), 0);
}

TEST_F(RealCudaTest, PinnedMemoryAndRegistrations) {
  Expected<std::shared_ptr<PinnedHostAllocator>> pinned =
      makePinnedHostAllocator(kCudartLibrary);
  ASSERT_TRUE(pinned) << pinned.error().toString();
  std::size_t nbytes = 1 << 20;
  Expected<DeviceBuffer> host = DeviceBuffer::allocate(
      *pinned, 0, nbytes, PinnedHostAllocator::kMaxAlignment);
  ASSERT_TRUE(host) << host.error().toString();
  Expected<DeviceBuffer> device =
      DeviceBuffer::allocate(allocator, 0, nbytes, 256);
  ASSERT_TRUE(device) << device.error().toString();
  std::memset(host->data(), 0x5a, nbytes);
  ASSERT_TRUE(
      allocator->copyHostToDevice(device->data(), host->data(), nbytes, 0)
          .ok());

  std::vector<unsigned char> memory(2 * nbytes);
  Expected<HostRegistration> registration = makeHostRegistration(
      kCudartLibrary, memory.data(), nbytes, HostRegisterFlags::Portable);
  ASSERT_TRUE(registration) << registration.error().toString();
  Expected<HostRegistration> twice =
      makeHostRegistration(kCudartLibrary, memory.data(), nbytes);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code(), ErrorCode::AlreadyExists)
      << twice.error().toString();
  ASSERT_TRUE(readDeviceOutput(*device, memory.data(), nbytes).ok());
  EXPECT_EQ(memory[nbytes - 1], 0x5a);
  EXPECT_TRUE(registration->reset().ok());
}

TEST(RealCudaWithoutDeviceTest, ReportsTheDriverError) {
  Expected<std::shared_ptr<CudaAllocator>> made =
      makeCudaAllocator(kCudartLibrary);
  if (!made)
    GTEST_SKIP() << made.error().toString();
  int count = 0;
  int status = (*made)->getApi().getDeviceCountFn(&count);
  if (status == 0)
    GTEST_SKIP() << "the CUDA runtime works here";
  Expected<void *> ptr = (*made)->allocate(64, 0, 256);
  ASSERT_FALSE(ptr);
  EXPECT_EQ(ptr.error().code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(ptr.error().message(), "cudaGetDeviceCount");
  EXPECT_CONTAINS(ptr.error().message(),
                  (*made)->getApi().getErrorNameFn(status));
}
