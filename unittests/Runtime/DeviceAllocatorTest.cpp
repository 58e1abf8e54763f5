//===- DeviceAllocatorTest.cpp - Tests of the device-independent runtime --===//
//
// Unit tests of errors, device kinds, the host allocator, the allocator
// registry, DeviceBuffer ownership, arena allocation and the skip-h2d/d2h
// helpers, using the host allocator and a counting fake allocator.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Runtime/DeviceAllocator.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

using namespace etcopy::runtime;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kUnderAddressSanitizer = true;
#else
constexpr bool kUnderAddressSanitizer = false;
#endif
#else
constexpr bool kUnderAddressSanitizer = false;
#endif

/// A DeviceAllocator of a chosen kind on host memory that counts live
/// allocations, can fail its N-th allocation or every deallocation, and
/// records what it was asked.
class CountingAllocator : public DeviceAllocator {
public:
  explicit CountingAllocator(DeviceKind deviceKind = DeviceKind::CUDA,
                             int devices = 2)
      : deviceKind(deviceKind), devices(devices) {}

  DeviceKind kind() const override { return deviceKind; }
  Expected<int> getDeviceCount() override { return devices; }

  Expected<void *> allocate(std::size_t nbytes, int ordinal,
                            std::size_t alignment) override {
    std::lock_guard<std::mutex> lock(mutex);
    ++allocations;
    if (allocations == failAllocation)
      return Error(ErrorCode::OutOfMemory, "injected allocation failure");
    if (ordinal < 0 || ordinal >= devices)
      return Error(ErrorCode::InvalidArgument, "bad ordinal");
    if (nbytes == 0)
      return nullptr;
    void *ptr = std::aligned_alloc(alignment, (nbytes + alignment - 1) /
                                                  alignment * alignment);
    live.insert(ptr);
    return ptr;
  }

  Error deallocate(void *ptr, int /*ordinal*/) override {
    std::lock_guard<std::mutex> lock(mutex);
    if (!ptr)
      return Error::success();
    freed.push_back(ptr);
    if (failDeallocate)
      return Error(ErrorCode::DeviceError, "injected deallocation failure");
    live.erase(ptr);
    std::free(ptr);
    return Error::success();
  }

  Error copyHostToDevice(void *dst, const void *src, std::size_t nbytes,
                         int /*ordinal*/, void *stream = nullptr) override {
    ++copies;
    lastStream = stream;
    if (failCopies)
      return Error(ErrorCode::DeviceError, "injected copy failure");
    std::memcpy(dst, src, nbytes);
    return Error::success();
  }

  Error copyDeviceToHost(void *dst, const void *src, std::size_t nbytes,
                         int ordinal, void *stream = nullptr) override {
    return copyHostToDevice(dst, src, nbytes, ordinal, stream);
  }

  Error synchronize(int /*ordinal*/, void *stream = nullptr) override {
    ++synchronizations;
    lastStream = stream;
    return Error::success();
  }

  std::size_t liveCount() {
    std::lock_guard<std::mutex> lock(mutex);
    return live.size();
  }

  /// Frees what an injected deallocation failure left behind.
  void freeLeftovers() {
    std::lock_guard<std::mutex> lock(mutex);
    for (void *ptr : live)
      std::free(ptr);
    live.clear();
  }

  DeviceKind deviceKind;
  int devices;
  int allocations = 0;
  int failAllocation = 0;
  bool failDeallocate = false;
  bool failCopies = false;
  int copies = 0;
  int synchronizations = 0;
  void *lastStream = nullptr;
  std::vector<void *> freed;

private:
  std::mutex mutex;
  std::set<void *> live;
};

} // namespace

//===----------------------------------------------------------------------===//
// Error and Expected
//===----------------------------------------------------------------------===//

TEST(ErrorTest, SuccessAndFailure) {
  Error success;
  EXPECT_TRUE(success.ok());
  EXPECT_FALSE(static_cast<bool>(success));
  EXPECT_EQ(success.code(), ErrorCode::Ok);
  EXPECT_EQ(success.toString(), "Ok");

  Error failure(ErrorCode::NotFound, "no such thing");
  EXPECT_FALSE(failure.ok());
  EXPECT_TRUE(static_cast<bool>(failure));
  EXPECT_EQ(failure.message(), "no such thing");
  EXPECT_EQ(failure.toString(), "NotFound: no such thing");

  // A "failure" with code Ok is a programming error, kept visible.
  Error bogus(ErrorCode::Ok, "oops");
  EXPECT_EQ(bogus.code(), ErrorCode::Internal);
}

TEST(ErrorTest, CodeNamesAndAbiValues) {
  EXPECT_STREQ(toString(ErrorCode::InvalidArgument), "InvalidArgument");
  EXPECT_STREQ(toString(ErrorCode::AlreadyExists), "AlreadyExists");
  EXPECT_STREQ(toString(ErrorCode::OutOfMemory), "OutOfMemory");
  EXPECT_STREQ(toString(ErrorCode::DeviceError), "DeviceError");
  EXPECT_STREQ(toString(ErrorCode::Unavailable), "Unavailable");
  EXPECT_EQ(static_cast<int>(ErrorCode::DeviceError),
            ETCOPY_STATUS_DEVICE_ERROR);
}

TEST(ExpectedTest, ValueErrorAndConversions) {
  Expected<int> value = 42;
  ASSERT_TRUE(value);
  EXPECT_EQ(*value, 42);
  EXPECT_TRUE(value.error().ok());

  Expected<int> failure = Error(ErrorCode::InvalidArgument, "bad");
  ASSERT_FALSE(failure);
  EXPECT_EQ(failure.error().code(), ErrorCode::InvalidArgument);
  Error taken = failure.takeError();
  EXPECT_EQ(taken.message(), "bad");

  Expected<int> fromSuccess = Error::success();
  EXPECT_FALSE(fromSuccess);
  EXPECT_EQ(fromSuccess.error().code(), ErrorCode::Internal);

  Expected<void *> null = nullptr;
  ASSERT_TRUE(null);
  EXPECT_EQ(*null, nullptr);

  // Derived-to-base conversions and move-only values.
  Expected<std::shared_ptr<DeviceAllocator>> allocator =
      std::make_shared<HostAllocator>();
  ASSERT_TRUE(allocator);
  EXPECT_EQ((*allocator)->kind(), DeviceKind::CPU);
  Expected<std::unique_ptr<int>> owned = std::make_unique<int>(7);
  ASSERT_TRUE(owned);
  std::unique_ptr<int> moved = std::move(*owned);
  EXPECT_EQ(*moved, 7);
}

//===----------------------------------------------------------------------===//
// Device kinds
//===----------------------------------------------------------------------===//

TEST(DeviceKindTest, AbiValuesAndNames) {
  static_assert(static_cast<int>(DeviceKind::CPU) == 0);
  static_assert(static_cast<int>(DeviceKind::CUDA) == 1);
  EXPECT_STREQ(toString(DeviceKind::CPU), "cpu");
  EXPECT_STREQ(toString(DeviceKind::CUDA), "cuda");
  EXPECT_EQ(toString(Device{DeviceKind::CUDA, 3}), "cuda:3");

  Expected<DeviceKind> cuda = deviceKindFromValue(1);
  ASSERT_TRUE(cuda);
  EXPECT_EQ(*cuda, DeviceKind::CUDA);
  Expected<DeviceKind> bad = deviceKindFromValue(2);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::InvalidArgument);
  EXPECT_NE(bad.error().message().find("cpu, cuda"), std::string::npos);
  EXPECT_FALSE(deviceKindFromValue(-1));
}

TEST(DeviceKindTest, ParsesKindAndOrdinal) {
  struct Case {
    const char *spec;
    DeviceKind kind;
    int ordinal;
  };
  for (const Case &c :
       {Case{"cuda:1", DeviceKind::CUDA, 1}, Case{"CUDA", DeviceKind::CUDA, 0},
        Case{"Cuda:0", DeviceKind::CUDA, 0}, Case{"cpu", DeviceKind::CPU, 0},
        Case{"CPU:0", DeviceKind::CPU, 0},
        Case{"cuda:007", DeviceKind::CUDA, 7},
        Case{"cuda:2147483647", DeviceKind::CUDA, 2147483647}}) {
    Expected<Device> device = parseDevice(c.spec);
    ASSERT_TRUE(device) << c.spec << ": " << device.error().toString();
    EXPECT_EQ(device->kind, c.kind) << c.spec;
    EXPECT_EQ(device->ordinal, c.ordinal) << c.spec;
  }
  Expected<DeviceKind> kind = parseDeviceKind("cUdA");
  ASSERT_TRUE(kind);
  EXPECT_EQ(*kind, DeviceKind::CUDA);
}

TEST(DeviceKindTest, RejectsMalformedSpecs) {
  Expected<Device> tpu = parseDevice("tpu:0");
  ASSERT_FALSE(tpu);
  EXPECT_EQ(tpu.error().code(), ErrorCode::InvalidArgument);
  EXPECT_NE(tpu.error().message().find("unknown device kind 'tpu'"),
            std::string::npos)
      << tpu.error().message();
  EXPECT_NE(tpu.error().message().find("valid kinds are cpu, cuda"),
            std::string::npos)
      << tpu.error().message();

  for (const char *spec :
       {"", ":0", "cuda:", "cuda:x", "cuda:-1", "cuda:1:2", "cuda: 1", " cuda",
        "cuda:2147483648", "cuda:99999999999999999999"}) {
    Expected<Device> device = parseDevice(spec);
    EXPECT_FALSE(device) << "'" << spec << "' should not parse";
    if (!device) {
      EXPECT_EQ(device.error().code(), ErrorCode::InvalidArgument);
    }
  }
}

//===----------------------------------------------------------------------===//
// HostAllocator
//===----------------------------------------------------------------------===//

TEST(HostAllocatorTest, AllocatesAlignedMemory) {
  HostAllocator host;
  EXPECT_EQ(host.kind(), DeviceKind::CPU);
  for (std::size_t alignment : {1u, 8u, 64u, 4096u}) {
    Expected<void *> ptr = host.allocate(100, 0, alignment);
    ASSERT_TRUE(ptr) << ptr.error().toString();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*ptr) % alignment, 0u);
    std::memset(*ptr, 0xab, 100);
    EXPECT_TRUE(host.deallocate(*ptr, 0).ok());
  }
  Expected<void *> empty = host.allocate(0, 0, 64);
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, nullptr);
  EXPECT_TRUE(host.deallocate(nullptr, 0).ok());
}

TEST(HostAllocatorTest, RejectsBadArguments) {
  HostAllocator host;
  for (std::size_t alignment : {0u, 3u, 48u}) {
    Expected<void *> ptr = host.allocate(16, 0, alignment);
    ASSERT_FALSE(ptr) << alignment;
    EXPECT_EQ(ptr.error().code(), ErrorCode::InvalidArgument);
  }
  Expected<void *> wrongDevice = host.allocate(16, 1, 64);
  ASSERT_FALSE(wrongDevice);
  EXPECT_NE(wrongDevice.error().message().find("device ordinal 1"),
            std::string::npos);
  // AddressSanitizer aborts on impossible sizes instead of failing them.
  if (!kUnderAddressSanitizer) {
    Expected<void *> huge = host.allocate(SIZE_MAX / 2, 0, 64);
    ASSERT_FALSE(huge);
    EXPECT_EQ(huge.error().code(), ErrorCode::OutOfMemory);
  }

  char buffer[4];
  EXPECT_EQ(host.copyHostToDevice(nullptr, buffer, 4, 0).code(),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(host.copyDeviceToHost(buffer, nullptr, 4, 0).code(),
            ErrorCode::InvalidArgument);
  EXPECT_TRUE(host.copyHostToDevice(nullptr, nullptr, 0, 0).ok());
  EXPECT_TRUE(host.synchronize(0).ok());
  EXPECT_FALSE(host.synchronize(1).ok());
}

//===----------------------------------------------------------------------===//
// DeviceAllocatorRegistry
//===----------------------------------------------------------------------===//

TEST(RegistryTest, HostAllocatorIsRegisteredByDefault) {
  DeviceAllocatorRegistry registry;
  EXPECT_TRUE(registry.contains(DeviceKind::CPU));
  EXPECT_FALSE(registry.contains(DeviceKind::CUDA));
  Expected<std::shared_ptr<DeviceAllocator>> cpu =
      registry.lookup(DeviceKind::CPU);
  ASSERT_TRUE(cpu);
  EXPECT_EQ((*cpu)->kind(), DeviceKind::CPU);

  DeviceAllocatorRegistry empty(/*registerHostAllocator=*/false);
  EXPECT_FALSE(empty.contains(DeviceKind::CPU));
}

TEST(RegistryTest, RegisterLookupAndUnregister) {
  DeviceAllocatorRegistry registry;
  Expected<std::shared_ptr<DeviceAllocator>> missing =
      registry.lookup(DeviceKind::CUDA);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::NotFound);
  EXPECT_NE(missing.error().message().find("'cuda'"), std::string::npos)
      << missing.error().message();

  auto cuda = std::make_shared<CountingAllocator>();
  ASSERT_TRUE(registry.registerAllocator(cuda).ok());
  Expected<std::shared_ptr<DeviceAllocator>> found =
      registry.lookup(DeviceKind::CUDA);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->get(), cuda.get());

  ASSERT_TRUE(registry.unregisterAllocator(DeviceKind::CUDA).ok());
  EXPECT_FALSE(registry.contains(DeviceKind::CUDA));
  Error again = registry.unregisterAllocator(DeviceKind::CUDA);
  EXPECT_EQ(again.code(), ErrorCode::NotFound);
  EXPECT_EQ(registry.lookup(static_cast<DeviceKind>(9)).error().code(),
            ErrorCode::InvalidArgument);
}

TEST(RegistryTest, DuplicateRegistrationIsAnError) {
  DeviceAllocatorRegistry registry;
  auto first = std::make_shared<CountingAllocator>();
  auto second = std::make_shared<CountingAllocator>();
  ASSERT_TRUE(registry.registerAllocator(first).ok());
  Error duplicate = registry.registerAllocator(second);
  EXPECT_EQ(duplicate.code(), ErrorCode::AlreadyExists);
  EXPECT_NE(duplicate.message().find("'cuda'"), std::string::npos);
  // The first registration stays.
  EXPECT_EQ(registry.lookup(DeviceKind::CUDA)->get(), first.get());

  Error host = registry.registerAllocator(std::make_shared<HostAllocator>());
  EXPECT_EQ(host.code(), ErrorCode::AlreadyExists);
  EXPECT_EQ(registry.registerAllocator(nullptr).code(),
            ErrorCode::InvalidArgument);
}

TEST(RegistryTest, ConcurrentLookups) {
  DeviceAllocatorRegistry registry;
  auto cuda = std::make_shared<CountingAllocator>();
  ASSERT_TRUE(registry.registerAllocator(cuda).ok());

  constexpr int kReaders = 8;
  constexpr int kIterations = 20000;
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  // A writer toggles the CUDA slot while readers look up both kinds: CPU
  // lookups must always succeed, CUDA lookups must see the allocator or
  // NotFound, never anything else.
  std::thread writer([&] {
    while (!stop.load()) {
      (void)registry.unregisterAllocator(DeviceKind::CUDA);
      (void)registry.registerAllocator(cuda);
    }
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&] {
      for (int i = 0; i < kIterations; ++i) {
        Expected<std::shared_ptr<DeviceAllocator>> cpu =
            registry.lookup(DeviceKind::CPU);
        if (!cpu || (*cpu)->kind() != DeviceKind::CPU)
          ++failures;
        Expected<std::shared_ptr<DeviceAllocator>> gpu =
            registry.lookup(DeviceKind::CUDA);
        if (gpu ? gpu->get() != cuda.get()
                : gpu.error().code() != ErrorCode::NotFound)
          ++failures;
      }
    });
  }
  for (std::thread &reader : readers)
    reader.join();
  stop = true;
  writer.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(RegistryTest, GlobalRegistry) {
  DeviceAllocatorRegistry &global = DeviceAllocatorRegistry::global();
  EXPECT_EQ(&global, &DeviceAllocatorRegistry::global());
  EXPECT_TRUE(global.contains(DeviceKind::CPU));
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

TEST(DeviceBufferTest, AllocateThroughRegistry) {
  DeviceAllocatorRegistry registry;
  Expected<DeviceBuffer> buffer =
      DeviceBuffer::allocate(registry, DeviceKind::CPU, 0, 256, 128);
  ASSERT_TRUE(buffer) << buffer.error().toString();
  EXPECT_NE(buffer->data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % 128, 0u);
  EXPECT_EQ(buffer->size(), 256u);
  EXPECT_EQ(buffer->kind(), DeviceKind::CPU);
  EXPECT_EQ(buffer->ordinal(), 0);
  EXPECT_TRUE(buffer->isOwning());

  Expected<DeviceBuffer> missing =
      DeviceBuffer::allocate(registry, DeviceKind::CUDA, 0, 16);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::NotFound);

  Expected<DeviceBuffer> badOrdinal =
      DeviceBuffer::allocate(registry, DeviceKind::CPU, 3, 16);
  ASSERT_FALSE(badOrdinal);
  EXPECT_EQ(badOrdinal.error().code(), ErrorCode::InvalidArgument);
}

TEST(DeviceBufferTest, MoveConstructionTransfersOwnership) {
  auto allocator = std::make_shared<CountingAllocator>();
  {
    Expected<DeviceBuffer> made = DeviceBuffer::allocate(allocator, 1, 64);
    ASSERT_TRUE(made);
    void *data = made->data();
    DeviceBuffer moved(std::move(*made));
    EXPECT_EQ(moved.data(), data);
    EXPECT_EQ(moved.size(), 64u);
    EXPECT_EQ(moved.kind(), DeviceKind::CUDA);
    EXPECT_EQ(moved.ordinal(), 1);
    // The source is empty and frees nothing.
    EXPECT_EQ(made->data(), nullptr);
    EXPECT_EQ(made->size(), 0u);
    EXPECT_FALSE(made->isOwning());
    EXPECT_EQ(allocator->liveCount(), 1u);
  }
  EXPECT_EQ(allocator->liveCount(), 0u);
  EXPECT_EQ(allocator->freed.size(), 1u);
}

TEST(DeviceBufferTest, MoveAssignmentFreesThePreviousAllocation) {
  auto allocator = std::make_shared<CountingAllocator>();
  Expected<DeviceBuffer> first = DeviceBuffer::allocate(allocator, 0, 32);
  Expected<DeviceBuffer> second = DeviceBuffer::allocate(allocator, 1, 48);
  ASSERT_TRUE(first && second);
  void *firstData = first->data();
  void *secondData = second->data();
  EXPECT_EQ(allocator->liveCount(), 2u);

  *first = std::move(*second);
  ASSERT_EQ(allocator->freed.size(), 1u);
  EXPECT_EQ(allocator->freed[0], firstData);
  EXPECT_EQ(first->data(), secondData);
  EXPECT_EQ(first->size(), 48u);
  EXPECT_EQ(first->ordinal(), 1);
  EXPECT_EQ(second->data(), nullptr);
  EXPECT_FALSE(second->isOwning());
  EXPECT_EQ(allocator->liveCount(), 1u);

  // Assigning an empty buffer frees too.
  *first = DeviceBuffer();
  EXPECT_EQ(allocator->liveCount(), 0u);
  EXPECT_FALSE(first->isOwning());
}

TEST(DeviceBufferTest, ReleaseGivesUpOwnership) {
  auto allocator = std::make_shared<CountingAllocator>();
  void *released = nullptr;
  {
    Expected<DeviceBuffer> buffer = DeviceBuffer::allocate(allocator, 0, 16);
    ASSERT_TRUE(buffer);
    void *data = buffer->data();
    released = buffer->release();
    EXPECT_EQ(released, data);
    EXPECT_EQ(buffer->data(), nullptr);
    EXPECT_FALSE(buffer->isOwning());
  }
  EXPECT_TRUE(allocator->freed.empty());
  EXPECT_EQ(allocator->liveCount(), 1u);
  EXPECT_TRUE(allocator->deallocate(released, 0).ok());
  EXPECT_EQ(allocator->liveCount(), 0u);
}

TEST(DeviceBufferTest, ResetReportsDeallocationFailures) {
  auto allocator = std::make_shared<CountingAllocator>();
  Expected<DeviceBuffer> buffer = DeviceBuffer::allocate(allocator, 0, 16);
  ASSERT_TRUE(buffer);
  allocator->failDeallocate = true;
  Error err = buffer->reset();
  EXPECT_EQ(err.code(), ErrorCode::DeviceError);
  EXPECT_FALSE(buffer->isOwning());
  // A second reset has nothing to free.
  EXPECT_TRUE(buffer->reset().ok());
  EXPECT_EQ(allocator->freed.size(), 1u);
  allocator->freeLeftovers();
}

TEST(DeviceBufferTest, ZeroBytesAndOutlivingTheRegistry) {
  auto allocator = std::make_shared<CountingAllocator>();
  Expected<DeviceBuffer> buffer = DeviceBuffer::allocate(allocator, 1, 0);
  ASSERT_TRUE(buffer);
  EXPECT_EQ(buffer->data(), nullptr);
  EXPECT_EQ(buffer->size(), 0u);
  EXPECT_EQ(buffer->ordinal(), 1);
  EXPECT_TRUE(buffer->reset().ok());
  EXPECT_TRUE(allocator->freed.empty());

  DeviceBuffer survivor;
  {
    DeviceAllocatorRegistry registry;
    ASSERT_TRUE(registry.registerAllocator(allocator).ok());
    Expected<DeviceBuffer> made =
        DeviceBuffer::allocate(registry, DeviceKind::CUDA, 0, 8);
    ASSERT_TRUE(made);
    survivor = std::move(*made);
  }
  EXPECT_EQ(allocator->liveCount(), 1u);
  EXPECT_TRUE(survivor.reset().ok());
  EXPECT_EQ(allocator->liveCount(), 0u);
}

//===----------------------------------------------------------------------===//
// Arenas and method inputs/outputs
//===----------------------------------------------------------------------===//

TEST(ArenaTest, AllocatesEveryArenaOnItsDevice) {
  DeviceAllocatorRegistry registry;
  auto cuda = std::make_shared<CountingAllocator>();
  ASSERT_TRUE(registry.registerAllocator(cuda).ok());
  const etcopy_arena_desc descs[] = {
      {ETCOPY_DEVICE_CPU, 0, 1000, 256},
      {ETCOPY_DEVICE_CUDA, 1, 4096, 256},
      {ETCOPY_DEVICE_CUDA, 0, 0, 64},
      {ETCOPY_DEVICE_CPU, 0, 8, 4096},
  };
  etcopy_function_arenas arenas{4, descs};
  {
    Expected<std::vector<DeviceBuffer>> buffers =
        allocateArenas(registry, arenas);
    ASSERT_TRUE(buffers) << buffers.error().toString();
    ASSERT_EQ(buffers->size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
      const DeviceBuffer &buffer = (*buffers)[i];
      EXPECT_EQ(static_cast<int32_t>(buffer.kind()), descs[i].device_kind);
      EXPECT_EQ(buffer.ordinal(), descs[i].ordinal);
      EXPECT_EQ(buffer.size(), descs[i].size);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % descs[i].alignment,
                0u);
    }
    EXPECT_EQ((*buffers)[2].data(), nullptr);
    std::memset((*buffers)[0].data(), 1, 1000);
    EXPECT_EQ(cuda->liveCount(), 1u);
  }
  EXPECT_EQ(cuda->liveCount(), 0u);

  Expected<std::vector<DeviceBuffer>> none =
      allocateArenas(registry, etcopy_function_arenas{0, nullptr});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(ArenaTest, AllOrNothing) {
  DeviceAllocatorRegistry registry;
  auto cuda = std::make_shared<CountingAllocator>();
  ASSERT_TRUE(registry.registerAllocator(cuda).ok());
  const etcopy_arena_desc descs[] = {
      {ETCOPY_DEVICE_CUDA, 0, 128, 64},
      {ETCOPY_DEVICE_CPU, 0, 128, 64},
      {ETCOPY_DEVICE_CUDA, 1, 128, 64},
      {ETCOPY_DEVICE_CUDA, 1, 128, 64},
  };
  // The third CUDA allocation (arena #3) fails: arenas #0..#2 are freed.
  cuda->failAllocation = 3;
  Expected<std::vector<DeviceBuffer>> buffers =
      allocateArenas(registry, etcopy_function_arenas{4, descs});
  ASSERT_FALSE(buffers);
  EXPECT_EQ(buffers.error().code(), ErrorCode::OutOfMemory);
  EXPECT_NE(buffers.error().message().find("arena #3 (128 bytes on cuda:1)"),
            std::string::npos)
      << buffers.error().message();
  EXPECT_EQ(cuda->liveCount(), 0u);
  EXPECT_EQ(cuda->freed.size(), 2u);

  // An unknown device kind and a kind without allocator fail the same way.
  const etcopy_arena_desc badKind[] = {{ETCOPY_DEVICE_CUDA, 0, 16, 16},
                                       {7, 0, 16, 16}};
  Expected<std::vector<DeviceBuffer>> invalid =
      allocateArenas(registry, etcopy_function_arenas{2, badKind});
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().code(), ErrorCode::InvalidArgument);
  EXPECT_NE(invalid.error().message().find("arena #1"), std::string::npos);
  EXPECT_EQ(cuda->liveCount(), 0u);

  DeviceAllocatorRegistry hostOnly;
  Expected<std::vector<DeviceBuffer>> unregistered =
      allocateArenas(hostOnly, etcopy_function_arenas{2, badKind});
  ASSERT_FALSE(unregistered);
  EXPECT_EQ(unregistered.error().code(), ErrorCode::NotFound);

  Expected<std::vector<DeviceBuffer>> nullTable =
      allocateArenas(registry, etcopy_function_arenas{3, nullptr});
  ASSERT_FALSE(nullTable);
  EXPECT_EQ(nullTable.error().code(), ErrorCode::InvalidArgument);
}

TEST(MethodIoTest, DeviceInputAndOutput) {
  DeviceAllocatorRegistry registry;
  auto cuda = std::make_shared<CountingAllocator>();
  ASSERT_TRUE(registry.registerAllocator(cuda).ok());
  const float input[4] = {1, 2, 3, 4};

  Expected<DeviceBuffer> buffer =
      makeDeviceInput(registry, DeviceKind::CUDA, 1, input, sizeof(input));
  ASSERT_TRUE(buffer) << buffer.error().toString();
  EXPECT_EQ(buffer->size(), sizeof(input));
  EXPECT_EQ(buffer->ordinal(), 1);

  float output[4] = {};
  ASSERT_TRUE(readDeviceOutput(*buffer, output, sizeof(output)).ok());
  EXPECT_EQ(std::memcmp(input, output, sizeof(input)), 0);
  EXPECT_EQ(cuda->synchronizations, 0);

  // With a stream, the read synchronizes that stream before returning.
  void *stream = reinterpret_cast<void *>(0x1234);
  float partial[2] = {};
  ASSERT_TRUE(readDeviceOutput(*buffer, partial, sizeof(partial), stream).ok());
  EXPECT_EQ(partial[1], 2.0f);
  EXPECT_EQ(cuda->synchronizations, 1);
  EXPECT_EQ(cuda->lastStream, stream);

  float raw[4] = {};
  ASSERT_TRUE(readDeviceOutput(registry, DeviceKind::CUDA, 1, buffer->data(),
                               raw, sizeof(raw))
                  .ok());
  EXPECT_EQ(raw[3], 4.0f);

  Error tooMuch = readDeviceOutput(*buffer, output, sizeof(output) + 1);
  EXPECT_EQ(tooMuch.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(readDeviceOutput(DeviceBuffer(), output, 4).code(),
            ErrorCode::InvalidArgument);

  // A failing copy leaves nothing allocated.
  cuda->failCopies = true;
  Expected<DeviceBuffer> failed =
      makeDeviceInput(registry, DeviceKind::CUDA, 0, input, sizeof(input));
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code(), ErrorCode::DeviceError);
  EXPECT_EQ(cuda->liveCount(), 1u);
  EXPECT_TRUE(buffer->reset().ok());
  EXPECT_EQ(cuda->liveCount(), 0u);

  Expected<DeviceBuffer> nullHost =
      makeDeviceInput(registry, DeviceKind::CPU, 0, nullptr, 4);
  ASSERT_FALSE(nullHost);
  EXPECT_EQ(nullHost.error().code(), ErrorCode::InvalidArgument);
}

//===----------------------------------------------------------------------===//
// Method signatures
//===----------------------------------------------------------------------===//

TEST(SignatureTest, ReadsEveryKind) {
  const etcopy_value_desc values[] = {
      {ETCOPY_VALUE_MEMREF, ETCOPY_DEVICE_CUDA, 1, 2, 2},
      {ETCOPY_VALUE_UNRANKED_MEMREF, ETCOPY_DEVICE_CPU, 0, 0, 4},
      {ETCOPY_VALUE_SCALAR, ETCOPY_DEVICE_CPU, 0, 0, 8}};
  Expected<MethodSignature> signature =
      readSignature(etcopy_method_signature{2, values, 1, values + 2});
  ASSERT_TRUE(signature) << signature.error().toString();
  ASSERT_EQ(signature->arguments.size(), 2u);
  ASSERT_EQ(signature->results.size(), 1u);
  const ValueDescription &input = signature->arguments[0];
  EXPECT_EQ(input.kind, ValueKind::MemRef);
  EXPECT_EQ(input.device, (Device{DeviceKind::CUDA, 1}));
  EXPECT_EQ(input.rank, 2);
  EXPECT_EQ(input.elementBytes, 2u);
  EXPECT_TRUE(input.isOnDevice());
  EXPECT_FALSE(signature->arguments[1].isOnDevice());
  EXPECT_FALSE(signature->results[0].isOnDevice());
  EXPECT_EQ(toString(input), "rank-2 memref of 2-byte elements on cuda:1");
  EXPECT_EQ(toString(signature->arguments[1]),
            "unranked memref of 4-byte elements on cpu:0");
  EXPECT_EQ(toString(signature->results[0]), "8-byte scalar");

  Expected<MethodSignature> empty =
      readSignature(etcopy_method_signature{0, nullptr, 0, nullptr});
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->arguments.empty());
}

TEST(SignatureTest, RejectsBadEntries) {
  auto expectRejected = [](etcopy_value_desc desc, const std::string &part) {
    Expected<MethodSignature> signature =
        readSignature(etcopy_method_signature{0, nullptr, 1, &desc});
    ASSERT_FALSE(signature);
    EXPECT_EQ(signature.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(signature.error().message().find(part), std::string::npos)
        << signature.error().message();
  };
  expectRejected({3, ETCOPY_DEVICE_CPU, 0, 0, 4},
                 "result #0: invalid value kind 3");
  expectRejected({ETCOPY_VALUE_MEMREF, 9, 0, 1, 4},
                 "result #0: invalid device kind value 9");
  expectRejected({ETCOPY_VALUE_MEMREF, ETCOPY_DEVICE_CUDA, -1, 1, 4},
                 "result #0: invalid ordinal -1 for cuda");
  expectRejected({ETCOPY_VALUE_MEMREF, ETCOPY_DEVICE_CPU, 2, 1, 4},
                 "result #0: invalid ordinal 2 for cpu");
  expectRejected({ETCOPY_VALUE_SCALAR, ETCOPY_DEVICE_CUDA, 0, 0, 4},
                 "result #0: a scalar cannot live on cuda:0");
  expectRejected({ETCOPY_VALUE_SCALAR, ETCOPY_DEVICE_CPU, 0, 1, 4},
                 "result #0: invalid rank 1");
  expectRejected({ETCOPY_VALUE_MEMREF, ETCOPY_DEVICE_CPU, 0, -2, 4},
                 "result #0: invalid rank -2");
  expectRejected({ETCOPY_VALUE_MEMREF, ETCOPY_DEVICE_CPU, 0, 1, 0},
                 "result #0: invalid element size 0");

  Expected<MethodSignature> nullArray =
      readSignature(etcopy_method_signature{2, nullptr, 0, nullptr});
  ASSERT_FALSE(nullArray);
  EXPECT_NE(nullArray.error().message().find(
                "signature lists 2 argument(s) but its array is null"),
            std::string::npos);
}
