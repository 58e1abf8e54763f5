//===- CudaAllocatorTest.cpp - Tests of the CUDA allocator ----------------===//
//
// Unit tests of CudaApi and CudaAllocator on three CUDA runtimes: a fake
// table (every error path, device switching and restoring, which calls are
// made), the CUDA simulator libetcopy_cuda_sim.so (when built; fault
// injection runs in fresh processes), and the real libcudart (skipped unless
// it loads and reports a device).
//
//===----------------------------------------------------------------------===//

#include "etcopy/Runtime/CudaApi.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <numeric>
#include <string>
#include <unistd.h>
#include <vector>

using namespace etcopy::runtime;

/// Expects `text` to contain `part`.
#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "'" << (text) << "' does not contain '" << (part) << "'"

//===----------------------------------------------------------------------===//
// A fake CUDA runtime
//===----------------------------------------------------------------------===//

namespace {

/// State of the fake CUDA runtime; tests set the *Status fields to make a
/// call fail with that cudaError_t.
struct FakeCuda {
  int deviceCount = 2;
  int current = 0;
  int getDeviceCountStatus = 0;
  int getDeviceStatus = 0;
  int mallocStatus = 0;
  int freeStatus = 0;
  int memcpyStatus = 0;
  /// Index (0-based) of the cudaSetDevice call that fails, or -1.
  int failSetDeviceCall = -1;
  std::vector<int> setDeviceCalls;
  /// Live allocations and the device current when each was made.
  std::map<void *, int> live;
  int mallocCalls = 0;
  int memcpyCalls = 0;
  int memcpyAsyncCalls = 0;
  int lastMemcpyKind = -1;
  int lastMemcpyDevice = -1;
  void *lastStream = nullptr;
  int streamSynchronizeCalls = 0;
  int deviceSynchronizeCalls = 0;
  int lastSynchronizeDevice = -1;
};

FakeCuda *fake = nullptr;

int fakeGetDeviceCount(int *count) {
  if (fake->getDeviceCountStatus)
    return fake->getDeviceCountStatus;
  *count = fake->deviceCount;
  return 0;
}
int fakeGetDevice(int *device) {
  if (fake->getDeviceStatus)
    return fake->getDeviceStatus;
  *device = fake->current;
  return 0;
}
int fakeSetDevice(int device) {
  int index = static_cast<int>(fake->setDeviceCalls.size());
  fake->setDeviceCalls.push_back(device);
  if (index == fake->failSetDeviceCall)
    return 101; // cudaErrorInvalidDevice
  fake->current = device;
  return 0;
}
int fakeMalloc(void **ptr, std::size_t size) {
  ++fake->mallocCalls;
  if (fake->mallocStatus)
    return fake->mallocStatus;
  *ptr = std::malloc(size);
  fake->live[*ptr] = fake->current;
  return 0;
}
int fakeFree(void *ptr) {
  if (fake->freeStatus)
    return fake->freeStatus;
  if (ptr && !fake->live.erase(ptr))
    return 1; // cudaErrorInvalidValue
  std::free(ptr);
  return 0;
}
int fakeMemcpy(void *dst, const void *src, std::size_t count, int kind) {
  ++fake->memcpyCalls;
  fake->lastMemcpyKind = kind;
  fake->lastMemcpyDevice = fake->current;
  if (fake->memcpyStatus)
    return fake->memcpyStatus;
  std::memcpy(dst, src, count);
  return 0;
}
int fakeMemcpyAsync(void *dst, const void *src, std::size_t count, int kind,
                    void *stream) {
  ++fake->memcpyAsyncCalls;
  fake->lastStream = stream;
  fake->lastMemcpyKind = kind;
  fake->lastMemcpyDevice = fake->current;
  if (fake->memcpyStatus)
    return fake->memcpyStatus;
  std::memcpy(dst, src, count);
  return 0;
}
int fakeStreamSynchronize(void *stream) {
  ++fake->streamSynchronizeCalls;
  fake->lastStream = stream;
  fake->lastSynchronizeDevice = fake->current;
  return 0;
}
int fakeDeviceSynchronize() {
  ++fake->deviceSynchronizeCalls;
  fake->lastSynchronizeDevice = fake->current;
  return 0;
}
const char *fakeGetErrorName(int error) {
  switch (error) {
  case 0:
    return "cudaSuccess";
  case 1:
    return "cudaErrorInvalidValue";
  case 2:
    return "cudaErrorMemoryAllocation";
  case 35:
    return "cudaErrorInsufficientDriver";
  case 101:
    return "cudaErrorInvalidDevice";
  case 700:
    return "cudaErrorIllegalAddress";
  }
  return "unrecognized error code";
}
const char *fakeGetErrorString(int error) {
  switch (error) {
  case 2:
    return "out of memory";
  case 35:
    return "CUDA driver version is insufficient for CUDA runtime version";
  case 101:
    return "invalid device ordinal";
  case 700:
    return "an illegal memory access was encountered";
  }
  return "some error";
}

CudaApi makeFakeApi() {
  CudaApi api;
  api.mallocFn = fakeMalloc;
  api.freeFn = fakeFree;
  api.memcpyFn = fakeMemcpy;
  api.memcpyAsyncFn = fakeMemcpyAsync;
  api.streamSynchronizeFn = fakeStreamSynchronize;
  api.getDeviceFn = fakeGetDevice;
  api.setDeviceFn = fakeSetDevice;
  api.getDeviceCountFn = fakeGetDeviceCount;
  api.getErrorNameFn = fakeGetErrorName;
  api.getErrorStringFn = fakeGetErrorString;
  api.deviceSynchronizeFn = fakeDeviceSynchronize;
  api.origin = "<fake>";
  return api;
}

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
    for (auto &entry : state.live)
      std::free(entry.first);
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
  EXPECT_EQ(state.live.at(*ptr), 1);
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
  ASSERT_TRUE(allocator->copyDeviceToHost(output, *device, 16, 1).ok());
  EXPECT_EQ(state.lastMemcpyKind, CudaApi::kMemcpyDeviceToHost);
  EXPECT_STREQ(output, input);
  EXPECT_EQ(state.memcpyAsyncCalls, 0);
  EXPECT_EQ(state.streamSynchronizeCalls, 0);
  EXPECT_EQ(state.current, 0);

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

/// Runs `body` (returning a failure description, empty on success) and exits
/// the process: 0 on success, 3 after printing the failure. Used as the
/// statement of death tests that need a process of their own.
template <typename Body> [[noreturn]] void runAndExit(Body body) {
  std::string failure = body();
  if (!failure.empty()) {
    std::fprintf(stderr, "child failure: %s\n", failure.c_str());
    std::fflush(stderr);
    std::exit(3);
  }
  // A plain exit runs the simulator's leak check.
  std::exit(0);
}

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
  // really makes a process with live device memory exit 1.
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
                return "";
              }),
              ::testing::ExitedWithCode(1), "leak");
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
