//===- CudaApi.h - CUDA Runtime API table and CUDA allocator ----*- C++ -*-===//
//
// CudaApi is a table of pointers to the subset of the CUDA Runtime API the
// runtime uses, resolved at run time (from the process, or from a dlopen'ed
// library), so that the runtime builds without the CUDA toolkit and runs on
// the real libcudart or on etcopy's CUDA simulator (libetcopy_cuda_sim.so)
// alike. On such a table, CudaAllocator implements DeviceAllocator for CUDA
// devices, PinnedHostAllocator implements it for the host with page-locked
// memory, and HostRegistration page-locks memory the caller owns.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_RUNTIME_CUDAAPI_H
#define ETCOPY_RUNTIME_CUDAAPI_H

#include "etcopy/Runtime/DeviceAllocator.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace etcopy::runtime {

/// The CUDA Runtime API entry points the runtime calls, with CUDA 13's
/// signatures: cudaError_t and enum cudaMemcpyKind are passed as `int`,
/// cudaStream_t as `void *` (ABI-identical). Tests may fill a table by hand.
struct CudaApi {
  /// cudaError_t values the runtime interprets.
  static constexpr int kSuccess = 0;               // cudaSuccess
  static constexpr int kErrorMemoryAllocation = 2; // cudaErrorMemoryAllocation
  static constexpr int kErrorHostMemoryAlreadyRegistered = 712;
  static constexpr int kErrorHostMemoryNotRegistered = 713;
  static constexpr int kErrorNotSupported = 801; // cudaErrorNotSupported
  /// cudaMemcpyKind values.
  static constexpr int kMemcpyHostToDevice = 1;
  static constexpr int kMemcpyDeviceToHost = 2;
  /// cudaMemPoolAttr values.
  static constexpr int kMemPoolAttrReleaseThreshold = 4;
  static constexpr int kMemPoolAttrReservedMemCurrent = 5;

  // Required entry points.
  int (*mallocFn)(void **devPtr, std::size_t size) = nullptr;
  int (*freeFn)(void *devPtr) = nullptr;
  int (*memcpyFn)(void *dst, const void *src, std::size_t count,
                  int kind) = nullptr;
  int (*memcpyAsyncFn)(void *dst, const void *src, std::size_t count, int kind,
                       void *stream) = nullptr;
  int (*streamSynchronizeFn)(void *stream) = nullptr;
  int (*getDeviceFn)(int *device) = nullptr;
  int (*setDeviceFn)(int device) = nullptr;
  int (*getDeviceCountFn)(int *count) = nullptr;
  const char *(*getErrorNameFn)(int error) = nullptr;
  const char *(*getErrorStringFn)(int error) = nullptr;

  // Optional entry points (null when the library lacks them).
  int (*deviceSynchronizeFn)() = nullptr;
  int (*streamCreateFn)(void **stream) = nullptr;
  int (*streamDestroyFn)(void *stream) = nullptr;
  // Page-locked host memory: PinnedHostAllocator needs the first two,
  // HostRegistration the last two.
  int (*mallocHostFn)(void **ptr, std::size_t size) = nullptr;
  int (*freeHostFn)(void *ptr) = nullptr;
  int (*hostRegisterFn)(void *ptr, std::size_t size,
                        unsigned int flags) = nullptr;
  int (*hostUnregisterFn)(void *ptr) = nullptr;
  // The stream-ordered allocator: CudaAllocator allocates from the device's
  // memory pool when the table has all of these (and cudaDeviceSynchronize),
  // with cudaMalloc and cudaFree otherwise. cudaMemPool_t is `void *`.
  int (*mallocAsyncFn)(void **devPtr, std::size_t size,
                       void *stream) = nullptr;
  int (*freeAsyncFn)(void *devPtr, void *stream) = nullptr;
  int (*deviceGetMemPoolFn)(void **memPool, int device) = nullptr;
  int (*memPoolGetAttributeFn)(void *memPool, int attr, void *value) = nullptr;
  int (*memPoolSetAttributeFn)(void *memPool, int attr, void *value) = nullptr;
  int (*memPoolTrimToFn)(void *memPool, std::size_t minBytesToKeep) = nullptr;

  /// Where the symbols came from: a library path, or "<process>".
  std::string origin;

  /// Resolves the symbols with dlsym(RTLD_DEFAULT, ...): whatever the process
  /// linked or loaded with RTLD_GLOBAL (libcudart or the simulator).
  /// Unavailable naming the first missing required symbol.
  ETCOPY_RUNTIME_EXPORT static Expected<CudaApi> fromProcess();

  /// dlopen()s `libraryPath` (RTLD_NOW | RTLD_LOCAL; a bare name goes through
  /// the normal search path) and resolves the symbols in it. The library is
  /// never closed. Unavailable with dlerror()'s text on failure.
  ETCOPY_RUNTIME_EXPORT static Expected<CudaApi> load(const char *libraryPath);

  /// The CUDA simulator's table. The library is
  /// 1. $ETCOPY_CUDA_SIM_LIBRARY, when set (and then only that);
  /// 2. the libetcopy_cuda_sim.so the process has already loaded, if any, so
  ///    that everyone shares one simulated machine;
  /// 3. libetcopy_cuda_sim.so in the directory holding libEtCopyRuntime.so
  ///    itself (found with dladdr), i.e. build/lib or the install's lib/;
  /// 4. libetcopy_cuda_sim.so through the default dlopen search.
  /// Unavailable listing the attempts when none loads.
  ETCOPY_RUNTIME_EXPORT static Expected<CudaApi> loadSimulator();

  /// InvalidArgument naming the first null required entry point.
  ETCOPY_RUNTIME_EXPORT Error checkComplete() const;
};

/// The release threshold CudaAllocator gives memory pools by default: keep
/// all freed memory (the pool then holds at most the peak of what was
/// allocated from it), as the lowered code's pool policy does
/// (ETCOPY_DEFAULT_POOL_RELEASE_THRESHOLD).
inline constexpr uint64_t kDefaultPoolReleaseThreshold = UINT64_MAX;

/// The environment variable that sets the release threshold, in decimal
/// bytes, for CudaAllocator and the lowered code alike.
inline constexpr const char *kPoolReleaseThresholdVariable =
    "ETCOPY_POOL_RELEASE_THRESHOLD";

/// How a CudaAllocator allocates device memory.
struct CudaAllocatorOptions {
  /// Allocate from each device's current memory pool (cudaMallocAsync)
  /// rather than with cudaMalloc. Ignored (cudaMalloc is used) when the
  /// CUDA table lacks the stream-ordered allocator or a device does not
  /// support memory pools.
  bool useMemoryPool = true;
  /// The pool policy: the bytes of freed memory each device's pool keeps at
  /// a synchronisation (cudaMemPoolAttrReleaseThreshold). Unset:
  /// $ETCOPY_POOL_RELEASE_THRESHOLD when set, else
  /// kDefaultPoolReleaseThreshold. The threshold is only ever raised, never
  /// lowered below what the program set; 0 leaves the pools as they are.
  std::optional<uint64_t> poolReleaseThreshold;
};

/// A DeviceAllocator on the CUDA Runtime API.
///
/// - Each operation validates `ordinal` against cudaGetDeviceCount
///   (InvalidArgument naming it), makes it current with cudaSetDevice when it
///   is not already, and restores the previous current device afterwards, on
///   error paths too. (The current device is per host thread in CUDA, so
///   concurrent callers do not disturb one another.)
/// - Memory comes from the device's current memory pool: cudaMallocAsync on
///   the legacy default stream, then cudaStreamSynchronize of that stream,
///   so that the memory is usable on every stream and by synchronous copies
///   when allocate() returns, as cudaMalloc's is. deallocate() waits for the
///   device (cudaDeviceSynchronize: work still queued on any stream may use
///   the memory, and cudaFree would have waited for it too), then gives the
///   memory back with cudaFreeAsync on the legacy stream and waits for that,
///   so that the next allocate() reuses it and nothing stays queued. At the
///   first operation on a device the pool's
///   release threshold is raised to the pool policy
///   (CudaAllocatorOptions::poolReleaseThreshold), so that memory freed and
///   allocated again is not unmapped and mapped again at every
///   synchronisation. Without the stream-ordered allocator (see CudaApi), on
///   a device without memory pools, or with useMemoryPool off, memory comes
///   from cudaMalloc and goes back with cudaFree.
/// - Either way allocations are aligned to 256 bytes: alignments that are
///   not a power of two or exceed 256 are InvalidArgument.
/// - Copies use cudaMemcpy, or cudaMemcpyAsync on the caller's stream (no
///   implicit synchronization; see DeviceAllocator and synchronize()).
/// - A failing CUDA call becomes a DeviceError whose message holds the call,
///   cudaGetErrorName and cudaGetErrorString, e.g.
///   "cudaMallocAsync(1024 bytes) on cuda:1 failed: cudaErrorMemoryAllocation
///   (out of memory)"; cudaErrorMemoryAllocation gives OutOfMemory instead.
class ETCOPY_RUNTIME_EXPORT CudaAllocator final : public DeviceAllocator {
public:
  /// The alignment cudaMalloc and memory pools guarantee, and the largest
  /// one accepted.
  static constexpr std::size_t kMaxAlignment = 256;

  /// An allocator on `api`; InvalidArgument if the table is incomplete or
  /// $ETCOPY_POOL_RELEASE_THRESHOLD (read when `options` sets no threshold)
  /// is not a decimal number of bytes.
  static Expected<std::shared_ptr<CudaAllocator>>
  create(CudaApi api, CudaAllocatorOptions options = {});

  DeviceKind kind() const override { return DeviceKind::CUDA; }
  Expected<int> getDeviceCount() override;
  Expected<void *> allocate(std::size_t nbytes, int ordinal,
                            std::size_t alignment) override;
  Error deallocate(void *ptr, int ordinal) override;
  Error copyHostToDevice(void *dst, const void *src, std::size_t nbytes,
                         int ordinal, void *stream = nullptr) override;
  Error copyDeviceToHost(void *dst, const void *src, std::size_t nbytes,
                         int ordinal, void *stream = nullptr) override;
  /// cudaStreamSynchronize(stream); with a null stream cudaDeviceSynchronize
  /// on `ordinal` (cudaStreamSynchronize(0) if the library lacks it).
  Error synchronize(int ordinal, void *stream = nullptr) override;

  /// Gives the free memory that the memory pool of `ordinal` keeps beyond
  /// `minBytesToKeep` back to the system (cudaMemPoolTrimTo; memory in use
  /// is never released). Nothing to do on a device that does not allocate
  /// from a pool; Unavailable if the table lacks cudaMemPoolTrimTo.
  Error trimMemoryPool(int ordinal, std::size_t minBytesToKeep = 0);

  /// Whether allocations on `ordinal` come from its memory pool (configuring
  /// the pool if no operation has yet).
  Expected<bool> usesMemoryPool(int ordinal);

  /// The release threshold this allocator gives the pools.
  uint64_t getPoolReleaseThreshold() const { return poolReleaseThreshold; }

  const CudaApi &getApi() const { return api; }

private:
  CudaAllocator(CudaApi api, bool useMemoryPool,
                uint64_t poolReleaseThreshold)
      : api(std::move(api)), useMemoryPool(useMemoryPool),
        poolReleaseThreshold(poolReleaseThreshold) {}

  /// What the allocator knows of a device's memory pool.
  struct DevicePool {
    bool configured = false;
    /// Allocations come from `pool`, else from cudaMalloc.
    bool pooled = false;
    void *pool = nullptr;
  };

  Error checkOrdinal(int ordinal, const char *operation);
  Error copy(void *dst, const void *src, std::size_t nbytes, int ordinal,
             void *stream, int memcpyKind);
  /// The pool state of `ordinal`, the current device, configuring it at the
  /// first call.
  Expected<DevicePool> getDevicePool(int ordinal);
  /// Checks `ordinal`, makes it current, runs `body(DevicePool)` (returning
  /// an Error) on its configured pool and restores the previous device.
  template <typename Body>
  Error withDevicePool(int ordinal, const char *operation, Body body);

  CudaApi api;
  bool useMemoryPool;
  uint64_t poolReleaseThreshold;
  std::mutex poolMutex;
  std::vector<DevicePool> devicePools;
};

/// File name of the CUDA simulator library.
inline constexpr const char *kCudaSimulatorLibraryName =
    "libetcopy_cuda_sim.so";

/// A CudaAllocator over CudaApi::load(libraryPath), or over
/// CudaApi::fromProcess() when `libraryPath` is null.
ETCOPY_RUNTIME_EXPORT Expected<std::shared_ptr<CudaAllocator>>
makeCudaAllocator(const char *libraryPath = nullptr,
                  CudaAllocatorOptions options = {});

/// A CudaAllocator over the CUDA simulator (CudaApi::loadSimulator()).
ETCOPY_RUNTIME_EXPORT Expected<std::shared_ptr<CudaAllocator>>
makeSimulatorAllocator(CudaAllocatorOptions options = {});

//===----------------------------------------------------------------------===//
// Pinned (page-locked) host memory
//===----------------------------------------------------------------------===//

/// A DeviceAllocator for DeviceKind::CPU whose memory is page-locked:
/// cudaMallocHost / cudaFreeHost. Copies between such memory and a device
/// run at full PCIe bandwidth, and cudaMemcpyAsync from or to it returns
/// without waiting, where pageable memory is staged by the driver and
/// blocks the host. Registered in a registry in place of the HostAllocator,
/// it makes every CPU allocation through the registry pinned, CPU arenas
/// (allocateArenas) included.
///
/// - One device, ordinal 0 (InvalidArgument otherwise), as HostAllocator.
/// - `alignment` must be a power of two no greater than kMaxAlignment, the
///   page size: cudaMallocHost page-locks whole pages and returns page-aligned
///   memory. Every pointer is checked against the requested alignment (a
///   misaligned one is freed and reported as DeviceError). Zero bytes give
///   nullptr without a CUDA call.
/// - Copies are host-to-host memmoves (streams are ignored, as for
///   HostAllocator); synchronize does nothing.
/// - Failures name the call: "cudaMallocHost(4096 bytes) failed:
///   cudaErrorMemoryAllocation (out of memory)" is OutOfMemory, any other
///   failing call DeviceError.
/// - Pinning is expensive and page-locked allocation synchronizes
///   implicitly: allocate pinned buffers once and reuse them, rather than
///   per call.
/// - With unified addressing (every 64-bit CUDA platform) the memory is
///   pinned for every device, whichever is current when it is allocated.
class ETCOPY_RUNTIME_EXPORT PinnedHostAllocator final : public DeviceAllocator {
public:
  /// The largest alignment accepted: the page size cudaMallocHost aligns to.
  static constexpr std::size_t kMaxAlignment = 4096;

  /// An allocator on `api`: InvalidArgument if the table is incomplete,
  /// Unavailable if it lacks cudaMallocHost or cudaFreeHost.
  static Expected<std::shared_ptr<PinnedHostAllocator>> create(CudaApi api);

  DeviceKind kind() const override { return DeviceKind::CPU; }
  Expected<int> getDeviceCount() override { return 1; }
  Expected<void *> allocate(std::size_t nbytes, int ordinal,
                            std::size_t alignment) override;
  Error deallocate(void *ptr, int ordinal) override;
  Error copyHostToDevice(void *dst, const void *src, std::size_t nbytes,
                         int ordinal, void *stream = nullptr) override;
  Error copyDeviceToHost(void *dst, const void *src, std::size_t nbytes,
                         int ordinal, void *stream = nullptr) override;
  Error synchronize(int ordinal, void *stream = nullptr) override;

  const CudaApi &getApi() const { return api; }

private:
  explicit PinnedHostAllocator(CudaApi api) : api(std::move(api)) {}

  CudaApi api;
};

/// A PinnedHostAllocator over CudaApi::load(libraryPath), or over
/// CudaApi::fromProcess() when `libraryPath` is null.
ETCOPY_RUNTIME_EXPORT Expected<std::shared_ptr<PinnedHostAllocator>>
makePinnedHostAllocator(const char *libraryPath = nullptr);

/// A PinnedHostAllocator over the CUDA simulator (CudaApi::loadSimulator()),
/// the same simulated machine as makeSimulatorAllocator()'s.
ETCOPY_RUNTIME_EXPORT Expected<std::shared_ptr<PinnedHostAllocator>>
makeSimulatorPinnedHostAllocator();

/// Flags of a host memory registration: the cudaHostRegister flags the
/// runtime accepts, with their values. With unified addressing (every 64-bit
/// CUDA platform) both give memory that every device sees as pinned and
/// mapped; Portable says so on any platform.
enum class HostRegisterFlags : uint32_t {
  Default = ETCOPY_HOST_REGISTER_DEFAULT,   // cudaHostRegisterDefault
  Portable = ETCOPY_HOST_REGISTER_PORTABLE, // cudaHostRegisterPortable
};

/// Page-locks a range of memory the caller owns (cudaHostRegister) for as
/// long as the object lives, and unregisters it (cudaHostUnregister) when
/// destroyed or reset. Copies from and to the range then run as from
/// PinnedHostAllocator memory. Move-only: a moved-from registration is empty.
///
/// - The range must stay allocated while registered, and copies using it
///   must have completed (synchronize their stream) before it is
///   unregistered.
/// - A null pointer, a zero size or unknown flags are InvalidArgument,
///   checked before any CUDA call. A range that overlaps a registered one
///   (registering twice included) is AlreadyExists, as CUDA reports it
///   (cudaErrorHostMemoryAlreadyRegistered); other failures are
///   OutOfMemory (cudaErrorMemoryAllocation) or DeviceError, naming the call.
class ETCOPY_RUNTIME_EXPORT HostRegistration {
public:
  /// An empty registration.
  HostRegistration() = default;

  /// Registers [ptr, ptr + nbytes) with the CUDA runtime of `api`;
  /// Unavailable if the table lacks cudaHostRegister or cudaHostUnregister.
  static Expected<HostRegistration>
  create(const CudaApi &api, void *ptr, std::size_t nbytes,
         HostRegisterFlags flags = HostRegisterFlags::Default);

  HostRegistration(HostRegistration &&other) noexcept;
  /// Unregisters the current range, then takes over `other`'s.
  HostRegistration &operator=(HostRegistration &&other) noexcept;
  HostRegistration(const HostRegistration &) = delete;
  HostRegistration &operator=(const HostRegistration &) = delete;
  /// Unregisters the range; a failing cudaHostUnregister is ignored (use
  /// reset() to observe it).
  ~HostRegistration();

  void *data() const { return ptr; }
  std::size_t size() const { return nbytes; }
  HostRegisterFlags flags() const { return registerFlags; }
  /// True while a range is registered.
  bool isRegistered() const { return ptr != nullptr; }

  /// Unregisters the range now, leaving the registration empty, and reports
  /// a failing cudaHostUnregister (the range may then still be registered).
  Error reset();

private:
  CudaApi api;
  void *ptr = nullptr;
  std::size_t nbytes = 0;
  HostRegisterFlags registerFlags = HostRegisterFlags::Default;
};

/// HostRegistration::create on CudaApi::load(libraryPath), or on
/// CudaApi::fromProcess() when `libraryPath` is null. The arguments are
/// checked before the library is loaded.
ETCOPY_RUNTIME_EXPORT Expected<HostRegistration>
makeHostRegistration(const char *libraryPath, void *ptr, std::size_t nbytes,
                     HostRegisterFlags flags = HostRegisterFlags::Default);

/// HostRegistration::create on the CUDA simulator (CudaApi::loadSimulator()).
ETCOPY_RUNTIME_EXPORT Expected<HostRegistration> makeSimulatorHostRegistration(
    void *ptr, std::size_t nbytes,
    HostRegisterFlags flags = HostRegisterFlags::Default);

} // namespace etcopy::runtime

#endif // ETCOPY_RUNTIME_CUDAAPI_H
