//===- CudaApi.h - CUDA Runtime API table and CUDA allocator ----*- C++ -*-===//
//
// CudaApi is a table of pointers to the subset of the CUDA Runtime API the
// runtime uses, resolved at run time (from the process, or from a dlopen'ed
// library), so that the runtime builds without the CUDA toolkit and runs on
// the real libcudart or on etcopy's CUDA simulator (libetcopy_cuda_sim.so)
// alike. CudaAllocator implements DeviceAllocator on such a table.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_RUNTIME_CUDAAPI_H
#define ETCOPY_RUNTIME_CUDAAPI_H

#include "etcopy/Runtime/DeviceAllocator.h"

#include <cstddef>
#include <memory>
#include <string>

namespace etcopy::runtime {

/// The CUDA Runtime API entry points the runtime calls, with CUDA 13's
/// signatures: cudaError_t and enum cudaMemcpyKind are passed as `int`,
/// cudaStream_t as `void *` (ABI-identical). Tests may fill a table by hand.
struct CudaApi {
  /// cudaError_t values the runtime interprets.
  static constexpr int kSuccess = 0;               // cudaSuccess
  static constexpr int kErrorMemoryAllocation = 2; // cudaErrorMemoryAllocation
  /// cudaMemcpyKind values.
  static constexpr int kMemcpyHostToDevice = 1;
  static constexpr int kMemcpyDeviceToHost = 2;

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

  /// InvalidArgument naming the first null required entry point.
  ETCOPY_RUNTIME_EXPORT Error checkComplete() const;
};

/// A DeviceAllocator on the CUDA Runtime API.
///
/// - Each operation validates `ordinal` against cudaGetDeviceCount
///   (InvalidArgument naming it), makes it current with cudaSetDevice when it
///   is not already, and restores the previous current device afterwards, on
///   error paths too. (The current device is per host thread in CUDA, so
///   concurrent callers do not disturb one another.)
/// - Memory comes from cudaMalloc, which aligns to 256 bytes: alignments that
///   are not a power of two or exceed 256 are InvalidArgument.
/// - Copies use cudaMemcpy, or cudaMemcpyAsync on the caller's stream (no
///   implicit synchronization; see DeviceAllocator and synchronize()).
/// - A failing CUDA call becomes a DeviceError whose message holds the call,
///   cudaGetErrorName and cudaGetErrorString, e.g.
///   "cudaMalloc(1024 bytes) on cuda:1 failed: cudaErrorMemoryAllocation (out
///   of memory)"; cudaErrorMemoryAllocation gives OutOfMemory instead.
class ETCOPY_RUNTIME_EXPORT CudaAllocator final : public DeviceAllocator {
public:
  /// The alignment cudaMalloc guarantees, and the largest one accepted.
  static constexpr std::size_t kMaxAlignment = 256;

  /// An allocator on `api`; InvalidArgument if the table is incomplete.
  static Expected<std::shared_ptr<CudaAllocator>> create(CudaApi api);

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

  const CudaApi &getApi() const { return api; }

private:
  explicit CudaAllocator(CudaApi api) : api(std::move(api)) {}

  Error checkOrdinal(int ordinal, const char *operation);
  Error copy(void *dst, const void *src, std::size_t nbytes, int ordinal,
             void *stream, int memcpyKind);

  CudaApi api;
};

/// File name of the CUDA simulator library.
inline constexpr const char *kCudaSimulatorLibraryName =
    "libetcopy_cuda_sim.so";

/// A CudaAllocator over CudaApi::load(libraryPath), or over
/// CudaApi::fromProcess() when `libraryPath` is null.
ETCOPY_RUNTIME_EXPORT Expected<std::shared_ptr<CudaAllocator>>
makeCudaAllocator(const char *libraryPath = nullptr);

/// A CudaAllocator over the CUDA simulator. The library is
/// 1. $ETCOPY_CUDA_SIM_LIBRARY, when set (and then only that);
/// 2. the libetcopy_cuda_sim.so the process has already loaded, if any, so
///    that everyone shares one simulated machine;
/// 3. libetcopy_cuda_sim.so in the directory holding libEtCopyRuntime.so
///    itself (found with dladdr), i.e. build/lib or the install's lib/;
/// 4. libetcopy_cuda_sim.so through the default dlopen search.
/// Unavailable listing the attempts when none loads.
ETCOPY_RUNTIME_EXPORT Expected<std::shared_ptr<CudaAllocator>>
makeSimulatorAllocator();

} // namespace etcopy::runtime

#endif // ETCOPY_RUNTIME_CUDAAPI_H
