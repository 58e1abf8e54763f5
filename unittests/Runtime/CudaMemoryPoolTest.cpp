//===- CudaMemoryPoolTest.cpp - Tests of the CUDA allocator's pools -------===//
//
// Unit tests of CudaAllocator's memory pools: on the fake CUDA table of
// FakeCuda.h with pools, which calls it makes and in which order (the legacy
// stream, the synchronisations that keep allocate and deallocate
// synchronous, the pool policy applied once per device and never lowering a
// threshold), the fall-back to cudaMalloc, and every error path; on the CUDA
// simulator, that freed memory is reused without the pool mapping memory
// again, and that trimming gives it back.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestSupport.h"
#include "etcopy/Runtime/CudaApi.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace etcopy::runtime;
using namespace etcopy::runtime::fakecuda;
using etcopy::runtime::testsupport::runAndExit;

namespace {

//===----------------------------------------------------------------------===//
// The fake CUDA runtime (FakeCuda.h), with memory pools
//===----------------------------------------------------------------------===//

class FakePoolTest : public ::testing::Test {
protected:
  void SetUp() override { fake = &state; }

  void TearDown() override {
    EXPECT_TRUE(state.live.empty()) << "fake CUDA allocations leaked";
    state.releaseLeftovers();
    fake = nullptr;
  }

  std::shared_ptr<CudaAllocator>
  make(CudaAllocatorOptions options = {},
       CudaApi api = makeFakePoolApi()) {
    Expected<std::shared_ptr<CudaAllocator>> made =
        CudaAllocator::create(std::move(api), options);
    EXPECT_TRUE(made) << made.error().toString();
    return made ? std::move(*made) : nullptr;
  }

  FakeCuda state;
};

using Calls = std::vector<std::string>;

/// Sets an environment variable for the lifetime of the object.
class ScopedEnvironment {
public:
  ScopedEnvironment(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      previous = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnvironment() {
    if (previous.empty())
      ::unsetenv(name);
    else
      ::setenv(name, previous.c_str(), 1);
  }

private:
  const char *name;
  std::string previous;
};

} // namespace

TEST_F(FakePoolTest, AllocateAndFreeOnTheLegacyStreamKeepTheContract) {
  std::shared_ptr<CudaAllocator> allocator = make();
  EXPECT_EQ(allocator->getPoolReleaseThreshold(), UINT64_MAX);
  Expected<void *> ptr = allocator->allocate(1024, 1, 256);
  ASSERT_TRUE(ptr) << ptr.error().toString();
  // The policy once, then the allocation, waited for so that any stream may
  // use the memory; the threshold is attribute 4,
  // cudaMemPoolAttrReleaseThreshold.
  EXPECT_EQ(state.calls,
            (Calls{"cudaDeviceGetMemPool(1)", "cudaMemPoolGetAttribute(1, 4)",
                   "cudaMemPoolSetAttribute(1, 4, 18446744073709551615)",
                   "cudaMallocAsync(legacy)@1",
                   "cudaStreamSynchronize(legacy)@1"}));
  EXPECT_EQ(state.current, 0);

  // The free waits for every stream of the device, as cudaFree does, then
  // gives the memory back to the pool, and waits for that.
  state.calls.clear();
  ASSERT_TRUE(allocator->deallocate(*ptr, 1).ok());
  EXPECT_EQ(state.calls,
            (Calls{"cudaDeviceSynchronize@1", "cudaFreeAsync(legacy)@1",
                   "cudaStreamSynchronize(legacy)@1"}));
  EXPECT_EQ(state.current, 0);

  // The policy is applied once per device.
  state.calls.clear();
  Expected<void *> again = allocator->allocate(64, 1, 64);
  ASSERT_TRUE(again);
  EXPECT_EQ(state.calls, (Calls{"cudaMallocAsync(legacy)@1",
                                "cudaStreamSynchronize(legacy)@1"}));
  ASSERT_TRUE(allocator->deallocate(*again, 1).ok());
  EXPECT_EQ(state.threshold[0], 0u) << "cuda:0 was never used";
  Expected<bool> pooled = allocator->usesMemoryPool(1);
  ASSERT_TRUE(pooled);
  EXPECT_TRUE(*pooled);
}

TEST_F(FakePoolTest, ThePolicyNeverLowersAThreshold) {
  state.threshold[0] = 1 << 20;
  CudaAllocatorOptions options;
  options.poolReleaseThreshold = 4096;
  std::shared_ptr<CudaAllocator> allocator = make(options);
  Expected<void *> ptr = allocator->allocate(16, 0, 256);
  ASSERT_TRUE(ptr);
  EXPECT_EQ(state.calls,
            (Calls{"cudaDeviceGetMemPool(0)", "cudaMemPoolGetAttribute(0, 4)",
                   "cudaMallocAsync(legacy)@0",
                   "cudaStreamSynchronize(legacy)@0"}));
  EXPECT_EQ(state.threshold[0], uint64_t(1) << 20);
  ASSERT_TRUE(allocator->deallocate(*ptr, 0).ok());

  // A bound above the pool's is applied.
  state.threshold[1] = 100;
  Expected<void *> onOne = allocator->allocate(16, 1, 256);
  ASSERT_TRUE(onOne);
  EXPECT_EQ(state.threshold[1], 4096u);
  ASSERT_TRUE(allocator->deallocate(*onOne, 1).ok());
}

TEST_F(FakePoolTest, AThresholdOfZeroLeavesThePoolAlone) {
  CudaAllocatorOptions options;
  options.poolReleaseThreshold = 0;
  std::shared_ptr<CudaAllocator> allocator = make(options);
  Expected<void *> ptr = allocator->allocate(16, 0, 256);
  ASSERT_TRUE(ptr);
  EXPECT_EQ(state.calls, (Calls{"cudaDeviceGetMemPool(0)",
                                "cudaMallocAsync(legacy)@0",
                                "cudaStreamSynchronize(legacy)@0"}));
  ASSERT_TRUE(allocator->deallocate(*ptr, 0).ok());
}

TEST_F(FakePoolTest, TheEnvironmentSetsTheThreshold) {
  {
    ScopedEnvironment bound(kPoolReleaseThresholdVariable, "65536");
    std::shared_ptr<CudaAllocator> allocator = make();
    EXPECT_EQ(allocator->getPoolReleaseThreshold(), 65536u);
    Expected<void *> ptr = allocator->allocate(16, 0, 256);
    ASSERT_TRUE(ptr);
    EXPECT_EQ(state.threshold[0], 65536u);
    ASSERT_TRUE(allocator->deallocate(*ptr, 0).ok());

    // An explicit option wins over the environment.
    CudaAllocatorOptions options;
    options.poolReleaseThreshold = 7;
    EXPECT_EQ(make(options)->getPoolReleaseThreshold(), 7u);
  }
  state.calls.clear();
  for (const char *bad : {"", "lots", "12kB", "-1", " 5",
                          "18446744073709551616"}) {
    ScopedEnvironment invalid(kPoolReleaseThresholdVariable, bad);
    Expected<std::shared_ptr<CudaAllocator>> made =
        CudaAllocator::create(makeFakePoolApi());
    ASSERT_FALSE(made) << "'" << bad << "'";
    EXPECT_EQ(made.error().code(), ErrorCode::InvalidArgument);
    EXPECT_CONTAINS(made.error().message(),
                    std::string("invalid ETCOPY_POOL_RELEASE_THRESHOLD='") +
                        bad + "'");
  }
  EXPECT_TRUE(state.calls.empty());
}

TEST_F(FakePoolTest, FallsBackToCudaMalloc) {
  // Without the stream-ordered allocator in the table.
  CudaApi withoutPools = makeFakePoolApi();
  withoutPools.mallocAsyncFn = nullptr;
  std::shared_ptr<CudaAllocator> allocator = make({}, withoutPools);
  Expected<void *> ptr = allocator->allocate(16, 1, 256);
  ASSERT_TRUE(ptr);
  ASSERT_TRUE(allocator->deallocate(*ptr, 1).ok());
  EXPECT_EQ(state.calls, (Calls{"cudaMalloc@1", "cudaFree@1"}));
  ASSERT_TRUE(allocator->trimMemoryPool(1).ok());

  // When asked to.
  state.calls.clear();
  CudaAllocatorOptions options;
  options.useMemoryPool = false;
  allocator = make(options);
  ptr = allocator->allocate(16, 0, 256);
  ASSERT_TRUE(ptr);
  ASSERT_TRUE(allocator->deallocate(*ptr, 0).ok());
  EXPECT_EQ(state.calls, (Calls{"cudaMalloc@0", "cudaFree@0"}));

  // On a device without memory pools.
  state.calls.clear();
  state.getPoolStatus = 801; // cudaErrorNotSupported
  allocator = make();
  ptr = allocator->allocate(16, 0, 256);
  ASSERT_TRUE(ptr) << ptr.error().toString();
  ASSERT_TRUE(allocator->deallocate(*ptr, 0).ok());
  EXPECT_EQ(state.calls, (Calls{"cudaDeviceGetMemPool(0)", "cudaMalloc@0",
                                "cudaFree@0"}));
  Expected<bool> pooled = allocator->usesMemoryPool(0);
  ASSERT_TRUE(pooled);
  EXPECT_FALSE(*pooled);
}

TEST_F(FakePoolTest, PolicyFailuresAreReportedAndRetried) {
  std::shared_ptr<CudaAllocator> allocator = make();
  state.getPoolStatus = 700;
  Expected<void *> ptr = allocator->allocate(16, 1, 256);
  ASSERT_FALSE(ptr);
  EXPECT_EQ(ptr.error().code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(ptr.error().message(),
                  "cudaDeviceGetMemPool on cuda:1 failed: "
                  "cudaErrorIllegalAddress");
  EXPECT_EQ(state.current, 0);

  state.getPoolStatus = 0;
  state.getAttributeStatus = 1;
  ptr = allocator->allocate(16, 1, 256);
  ASSERT_FALSE(ptr);
  EXPECT_CONTAINS(ptr.error().message(),
                  "cudaMemPoolGetAttribute(cudaMemPoolAttrReleaseThreshold) "
                  "on cuda:1 failed: cudaErrorInvalidValue");

  state.getAttributeStatus = 0;
  state.setAttributeStatus = 1;
  ptr = allocator->allocate(16, 1, 256);
  ASSERT_FALSE(ptr);
  EXPECT_CONTAINS(ptr.error().message(),
                  "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold, "
                  "18446744073709551615 bytes) on cuda:1 failed");
  EXPECT_EQ(state.current, 0);

  // The next operation applies the policy again, and succeeds.
  state.setAttributeStatus = 0;
  state.calls.clear();
  ptr = allocator->allocate(16, 1, 256);
  ASSERT_TRUE(ptr) << ptr.error().toString();
  EXPECT_EQ(state.calls.front(), "cudaDeviceGetMemPool(1)");
  EXPECT_EQ(state.threshold[1], UINT64_MAX);
  ASSERT_TRUE(allocator->deallocate(*ptr, 1).ok());
}

TEST_F(FakePoolTest, AllocationFailuresNameTheCall) {
  std::shared_ptr<CudaAllocator> allocator = make();
  state.mallocAsyncStatus = 2;
  Expected<void *> oom = allocator->allocate(1024, 1, 256);
  ASSERT_FALSE(oom);
  EXPECT_EQ(oom.error().code(), ErrorCode::OutOfMemory);
  EXPECT_CONTAINS(oom.error().message(),
                  "cudaMallocAsync(1024 bytes) on cuda:1 failed: "
                  "cudaErrorMemoryAllocation (out of memory)");
  EXPECT_EQ(state.current, 0);

  // A failing synchronisation after the allocation gives the memory back.
  state.mallocAsyncStatus = 0;
  state.streamSynchronizeStatus = 700;
  Expected<void *> unsynced = allocator->allocate(32, 1, 256);
  ASSERT_FALSE(unsynced);
  EXPECT_EQ(unsynced.error().code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(unsynced.error().message(),
                  "cudaStreamSynchronize(0) after cudaMallocAsync(32 bytes) "
                  "on cuda:1 failed: cudaErrorIllegalAddress");
  EXPECT_TRUE(state.live.empty());
  EXPECT_EQ(state.current, 0);
}

TEST_F(FakePoolTest, FreeFailuresNameTheCall) {
  std::shared_ptr<CudaAllocator> allocator = make();
  Expected<void *> ptr = allocator->allocate(8, 1, 256);
  ASSERT_TRUE(ptr);

  // A failing wait frees nothing: the memory may still be in use.
  state.deviceSynchronizeStatus = 700;
  state.calls.clear();
  Error err = allocator->deallocate(*ptr, 1);
  EXPECT_EQ(err.code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(err.message(),
                  "cudaDeviceSynchronize before cudaFreeAsync(0x");
  EXPECT_CONTAINS(err.message(),
                  ") on cuda:1 failed: cudaErrorIllegalAddress");
  EXPECT_EQ(state.calls, (Calls{"cudaDeviceSynchronize@1"}));
  EXPECT_EQ(state.current, 0);

  state.deviceSynchronizeStatus = 0;
  state.freeAsyncStatus = 1;
  err = allocator->deallocate(*ptr, 1);
  EXPECT_EQ(err.code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(err.message(), "cudaFreeAsync(0x");
  EXPECT_CONTAINS(err.message(), ") on cuda:1 failed: cudaErrorInvalidValue");
  EXPECT_EQ(state.current, 0);

  state.freeAsyncStatus = 0;
  EXPECT_TRUE(allocator->deallocate(*ptr, 1).ok());

  // The wait for the free: the memory was freed.
  ptr = allocator->allocate(8, 1, 256);
  ASSERT_TRUE(ptr);
  state.streamSynchronizeStatus = 700;
  err = allocator->deallocate(*ptr, 1);
  EXPECT_CONTAINS(err.message(),
                  "cudaStreamSynchronize(0) after cudaFreeAsync(0x");
  EXPECT_TRUE(state.live.empty());
}

TEST_F(FakePoolTest, Trimming) {
  std::shared_ptr<CudaAllocator> allocator = make();
  ASSERT_TRUE(allocator->trimMemoryPool(1, 4096).ok());
  EXPECT_EQ(state.calls.back(), "cudaMemPoolTrimTo(1, 4096)");
  EXPECT_EQ(state.current, 0);

  state.trimStatus = 1;
  Error err = allocator->trimMemoryPool(1);
  EXPECT_EQ(err.code(), ErrorCode::DeviceError);
  EXPECT_CONTAINS(err.message(), "cudaMemPoolTrimTo(0 bytes) on cuda:1 failed");

  EXPECT_EQ(allocator->trimMemoryPool(2).code(), ErrorCode::InvalidArgument);

  CudaApi withoutTrim = makeFakePoolApi();
  withoutTrim.memPoolTrimToFn = nullptr;
  err = make({}, withoutTrim)->trimMemoryPool(0);
  EXPECT_EQ(err.code(), ErrorCode::Unavailable);
  EXPECT_CONTAINS(err.message(), "has no cudaMemPoolTrimTo");
}

//===----------------------------------------------------------------------===//
// Memory pools on the CUDA simulator
//===----------------------------------------------------------------------===//

#ifdef ETCOPY_HAVE_CUDA_SIM

namespace {

/// cudaMemPoolAttrReservedMemCurrent of the current pool of `ordinal`: the
/// bytes the pool has mapped.
uint64_t reservedBytes(const CudaApi &api, int ordinal) {
  void *pool = nullptr;
  uint64_t bytes = UINT64_MAX;
  EXPECT_EQ(api.deviceGetMemPoolFn(&pool, ordinal), 0);
  EXPECT_EQ(api.memPoolGetAttributeFn(
                pool, CudaApi::kMemPoolAttrReservedMemCurrent, &bytes),
            0);
  return bytes;
}

/// Allocates and frees `size` bytes on cuda:0 `times` times through a
/// simulator allocator made with `options`.
std::string allocateAndFree(CudaAllocatorOptions options, std::size_t size,
                            int times) {
  Expected<std::shared_ptr<CudaAllocator>> made =
      makeSimulatorAllocator(options);
  if (!made)
    return made.error().toString();
  for (int i = 0; i < times; ++i) {
    Expected<void *> ptr = (*made)->allocate(size, 0, 256);
    if (!ptr)
      return ptr.error().toString();
    if (Error err = (*made)->deallocate(*ptr, 0))
      return err.toString();
  }
  return "";
}

} // namespace

TEST(SimulatorPoolTest, FreedMemoryIsReusedWithoutNewMappings) {
  Expected<std::shared_ptr<CudaAllocator>> made = makeSimulatorAllocator();
  ASSERT_TRUE(made) << made.error().toString();
  CudaAllocator &allocator = **made;
  const CudaApi &api = allocator.getApi();
  ASSERT_TRUE(api.mallocAsyncFn && api.memPoolTrimToFn)
      << "the simulator exports the stream-ordered allocator";
  Expected<bool> pooled = allocator.usesMemoryPool(0);
  ASSERT_TRUE(pooled) << pooled.error().toString();
  EXPECT_TRUE(*pooled);

  // The policy is the pool's release threshold.
  void *pool = nullptr;
  ASSERT_EQ(api.deviceGetMemPoolFn(&pool, 0), 0);
  uint64_t threshold = 0;
  ASSERT_EQ(api.memPoolGetAttributeFn(
                pool, CudaApi::kMemPoolAttrReleaseThreshold, &threshold),
            0);
  EXPECT_EQ(threshold, UINT64_MAX);

  // Data round-trips through pool memory, and memory freed and allocated
  // again is the pool's: what it holds does not grow.
  std::vector<int> input(1 << 18, 7), output(input.size(), 0);
  std::size_t nbytes = input.size() * sizeof(int);
  uint64_t reserved = 0;
  for (int i = 0; i < 5; ++i) {
    Expected<void *> ptr = allocator.allocate(nbytes, 0, 256);
    ASSERT_TRUE(ptr) << ptr.error().toString();
    ASSERT_TRUE(allocator.copyHostToDevice(*ptr, input.data(), nbytes, 0).ok());
    ASSERT_TRUE(
        allocator.copyDeviceToHost(output.data(), *ptr, nbytes, 0).ok());
    EXPECT_EQ(output, input);
    ASSERT_TRUE(allocator.deallocate(*ptr, 0).ok());
    if (i == 0)
      reserved = reservedBytes(api, 0);
    EXPECT_EQ(reservedBytes(api, 0), reserved) << "call " << i;
  }
  EXPECT_GE(reserved, nbytes);

  // Trimming gives the free memory back.
  ASSERT_TRUE(allocator.trimMemoryPool(0, 0).ok());
  EXPECT_EQ(reservedBytes(api, 0), 0u);
}

TEST(SimulatorPoolTest, PoolGrowthsWithAndWithoutThePolicy) {
  // The simulator counts the times a pool maps memory (pool_growths, in the
  // statistics printed at exit): once for ten allocations with the policy,
  // at every allocation with the threshold CUDA starts with (0), which the
  // allocator leaves alone when asked for 0.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(runAndExit([] {
                ::setenv("ETCOPY_CUDA_SIM_STATS", "1", 1);
                return allocateAndFree({}, 1 << 20, 10);
              }),
              ::testing::ExitedWithCode(0),
              "entry-points:.* cudaMallocAsync=10 .*\n.*pool_growths=1 ");
  EXPECT_EXIT(runAndExit([] {
                ::setenv("ETCOPY_CUDA_SIM_STATS", "1", 1);
                CudaAllocatorOptions options;
                options.poolReleaseThreshold = 0;
                return allocateAndFree(options, 1 << 20, 10);
              }),
              ::testing::ExitedWithCode(0), "pool_growths=10 ");
  // A bound below the allocations' size (1 MiB against 4 MiB) makes the
  // pool give most of its memory back at every synchronisation.
  EXPECT_EXIT(runAndExit([] {
                ::setenv("ETCOPY_CUDA_SIM_STATS", "1", 1);
                ::setenv("ETCOPY_POOL_RELEASE_THRESHOLD", "1048576", 1);
                return allocateAndFree({}, 4 << 20, 10);
              }),
              ::testing::ExitedWithCode(0), "pool_growths=10 ");
}

TEST(SimulatorPoolTest, InjectedFailuresAreReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(runAndExit([]() -> std::string {
                ::setenv("ETCOPY_CUDA_SIM_FAIL_ALLOC", "2", 1);
                std::string failure = allocateAndFree({}, 4096, 2);
                if (failure.find("OutOfMemory: cudaMallocAsync(4096 bytes) "
                                 "on cuda:0 failed: "
                                 "cudaErrorMemoryAllocation") ==
                    std::string::npos)
                  return "unexpected: '" + failure + "'";
                return "";
              }),
              ::testing::ExitedWithCode(0), "");
}

#endif // ETCOPY_HAVE_CUDA_SIM
