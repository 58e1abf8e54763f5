//===- DeviceAllocator.h - Device allocators, registry, buffers -*- C++ -*-===//
//
// The C++ interface of the etcopy host runtime: errors as values (Error,
// Expected<T>), device kinds and their "kind[:ordinal]" spelling, the
// DeviceAllocator interface with the built-in host allocator, the
// DeviceAllocatorRegistry mapping each device kind to one allocator, the
// move-only DeviceBuffer, and the helpers that allocate a compiled function's
// memory-planned arenas and move the inputs/outputs of methods compiled with
// skip-h2d / skip-d2h. The CUDA and pinned host allocators live in
// CudaApi.h. Nothing here depends on LLVM or MLIR, and nothing throws.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_RUNTIME_DEVICEALLOCATOR_H
#define ETCOPY_RUNTIME_DEVICEALLOCATOR_H

#include "etcopy/Runtime/EtCopyRuntime.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace etcopy::runtime {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// What went wrong. The values equal the C API's etcopy_status codes.
enum class ErrorCode : int32_t {
  Ok = ETCOPY_STATUS_OK,
  InvalidArgument = ETCOPY_STATUS_INVALID_ARGUMENT,
  NotFound = ETCOPY_STATUS_NOT_FOUND,
  AlreadyExists = ETCOPY_STATUS_ALREADY_EXISTS,
  OutOfMemory = ETCOPY_STATUS_OUT_OF_MEMORY,
  DeviceError = ETCOPY_STATUS_DEVICE_ERROR,
  Unavailable = ETCOPY_STATUS_UNAVAILABLE,
  Internal = ETCOPY_STATUS_INTERNAL,
};

/// "Ok", "InvalidArgument", ... ("Unknown" outside the enum).
ETCOPY_RUNTIME_EXPORT const char *toString(ErrorCode code);

/// A status: success, or an error code with a message. Like llvm::Error,
/// converts to `true` when it holds a failure, so that
/// `if (Error err = f()) return err;` propagates failures; unlike it, it needs
/// no explicit consumption and is freely copyable.
class [[nodiscard]] Error {
public:
  /// Success.
  Error() = default;
  /// A failure; `code` must not be ErrorCode::Ok (it becomes Internal).
  Error(ErrorCode code, std::string message)
      : errorCode(code == ErrorCode::Ok ? ErrorCode::Internal : code),
        errorMessage(std::move(message)) {}

  static Error success() { return Error(); }

  bool ok() const { return errorCode == ErrorCode::Ok; }
  /// True when this holds a failure.
  explicit operator bool() const { return !ok(); }

  ErrorCode code() const { return errorCode; }
  const std::string &message() const { return errorMessage; }
  /// "Code: message", or "Ok".
  ETCOPY_RUNTIME_EXPORT std::string toString() const;

private:
  ErrorCode errorCode = ErrorCode::Ok;
  std::string errorMessage;
};

/// Either a T or a failure Error. Converts to `true` when it holds a value.
template <typename T> class [[nodiscard]] Expected {
public:
  /// Holds `error`, which must be a failure (a success becomes Internal).
  Expected(Error error)
      : failure(error.ok() ? Error(ErrorCode::Internal,
                                   "Expected<T> constructed from success")
                           : std::move(error)) {}

  /// Holds a value constructed from `value`.
  template <typename U = T, typename = std::enable_if_t<
                                std::is_convertible_v<U &&, T> &&
                                !std::is_same_v<std::decay_t<U>, Error> &&
                                !std::is_same_v<std::decay_t<U>, Expected>>>
  Expected(U &&value) : storage(std::forward<U>(value)) {}

  bool hasValue() const { return storage.has_value(); }
  explicit operator bool() const { return hasValue(); }

  /// The value; only valid when hasValue().
  T &get() & { return *storage; }
  const T &get() const & { return *storage; }
  T &&get() && { return std::move(*storage); }
  T &operator*() & { return *storage; }
  const T &operator*() const & { return *storage; }
  T &&operator*() && { return std::move(*storage); }
  T *operator->() { return &*storage; }
  const T *operator->() const { return &*storage; }

  /// The failure, or success when a value is held.
  const Error &error() const { return failure; }
  /// Moves the failure out (success when a value is held).
  Error takeError() { return std::move(failure); }

private:
  std::optional<T> storage;
  Error failure;
};

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

/// Kinds of devices. The numeric values are the ABI shared with the
/// compiler's metadata (etcopy_arena_desc::device_kind).
enum class DeviceKind : int32_t {
  CPU = ETCOPY_DEVICE_CPU,
  CUDA = ETCOPY_DEVICE_CUDA,
};

/// Number of DeviceKind enumerators (they are numbered 0..N-1).
inline constexpr std::size_t kNumDeviceKinds = 2;

/// "cpu" or "cuda" ("unknown" outside the enum).
ETCOPY_RUNTIME_EXPORT const char *toString(DeviceKind kind);

/// The DeviceKind with ABI value `value`; InvalidArgument if there is none.
ETCOPY_RUNTIME_EXPORT Expected<DeviceKind> deviceKindFromValue(int64_t value);

/// Parses a kind name alone ("CUDA", "cpu"), case-insensitively. Unknown
/// kinds give InvalidArgument listing the valid ones.
ETCOPY_RUNTIME_EXPORT Expected<DeviceKind>
parseDeviceKind(std::string_view name);

/// A device: a kind and an ordinal ("index") among the devices of that kind.
struct Device {
  DeviceKind kind = DeviceKind::CPU;
  int ordinal = 0;

  bool operator==(const Device &other) const {
    return kind == other.kind && ordinal == other.ordinal;
  }
  bool operator!=(const Device &other) const { return !(*this == other); }
};

/// "cuda:1", "cpu:0".
ETCOPY_RUNTIME_EXPORT std::string toString(const Device &device);

/// Parses "kind[:ordinal]": the kind case-insensitively, the ordinal a
/// decimal number defaulting to 0 ("cuda" is cuda:0). Malformed ordinals and
/// unknown kinds ("tpu:0") give InvalidArgument naming the valid kinds.
ETCOPY_RUNTIME_EXPORT Expected<Device> parseDevice(std::string_view spec);

//===----------------------------------------------------------------------===//
// Allocators
//===----------------------------------------------------------------------===//

/// The alignment used when a caller does not choose one.
inline constexpr std::size_t kDefaultAlignment = 64;

/// Allocates memory on, and copies to and from, the devices of one kind.
///
/// Common rules for every implementation:
/// - `alignment` must be a power of two (0 is rejected) and is checked even
///   for zero-byte requests; a zero-byte allocation succeeds with nullptr.
/// - `deallocate(nullptr, ordinal)` and zero-byte copies do nothing.
/// - An ordinal outside [0, getDeviceCount()) is InvalidArgument.
/// - Copies without a stream are complete when they return. With a stream
///   (a cudaStream_t for CUDA) they are only enqueued on it: the host buffer
///   must stay valid, and for copyDeviceToHost must not be read, until
///   `synchronize(ordinal, stream)` has returned. Nothing ever blocks on a
///   stream implicitly: the caller decides when (and whether) to wait.
/// - Implementations are thread-safe.
class ETCOPY_RUNTIME_EXPORT DeviceAllocator {
public:
  virtual ~DeviceAllocator();

  virtual DeviceKind kind() const = 0;

  /// Number of addressable devices of this kind.
  virtual Expected<int> getDeviceCount() = 0;

  virtual Expected<void *> allocate(std::size_t nbytes, int ordinal,
                                    std::size_t alignment) = 0;
  virtual Error deallocate(void *ptr, int ordinal) = 0;

  virtual Error copyHostToDevice(void *dst, const void *src, std::size_t nbytes,
                                 int ordinal, void *stream = nullptr) = 0;
  virtual Error copyDeviceToHost(void *dst, const void *src, std::size_t nbytes,
                                 int ordinal, void *stream = nullptr) = 0;

  /// Waits until the work enqueued on `stream` has completed; with a null
  /// stream, until all work on the device has.
  virtual Error synchronize(int ordinal, void *stream = nullptr) = 0;
};

/// The built-in CPU allocator: aligned host memory (posix_memalign), memcpy
/// copies, one device (ordinal 0), any power-of-two alignment. Streams are
/// ignored: every copy is synchronous.
class ETCOPY_RUNTIME_EXPORT HostAllocator final : public DeviceAllocator {
public:
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
};

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

/// Maps each device kind to at most one allocator. All member functions are
/// thread-safe; lookups take a shared lock. Allocators are held by
/// shared_ptr, so buffers made through a registry outlive it safely.
class ETCOPY_RUNTIME_EXPORT DeviceAllocatorRegistry {
public:
  /// An empty registry, or (by default) one with a HostAllocator registered
  /// for DeviceKind::CPU.
  explicit DeviceAllocatorRegistry(bool registerHostAllocator = true);
  DeviceAllocatorRegistry(const DeviceAllocatorRegistry &) = delete;
  DeviceAllocatorRegistry &operator=(const DeviceAllocatorRegistry &) = delete;

  /// The process-wide registry (with the host allocator). It is never
  /// destroyed, so it may be used from static destructors.
  static DeviceAllocatorRegistry &global();

  /// Registers `allocator` for its kind(). AlreadyExists if the kind has one
  /// (the registry is unchanged), InvalidArgument for a null allocator.
  Error registerAllocator(std::shared_ptr<DeviceAllocator> allocator);

  /// Removes the allocator of `kind`; NotFound if there is none.
  Error unregisterAllocator(DeviceKind kind);

  /// The allocator of `kind`; NotFound naming the kind if there is none.
  Expected<std::shared_ptr<DeviceAllocator>> lookup(DeviceKind kind) const;

  bool contains(DeviceKind kind) const;

private:
  mutable std::shared_mutex mutex;
  std::array<std::shared_ptr<DeviceAllocator>, kNumDeviceKinds> allocators;
};

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

/// Owns one allocation of `size()` bytes on device (kind(), ordinal()) and
/// frees it through its allocator when destroyed. Move-only: a moved-from
/// buffer is empty (no allocator, null data, size 0). A zero-byte buffer owns
/// nothing but still records its device.
class ETCOPY_RUNTIME_EXPORT DeviceBuffer {
public:
  /// An empty buffer.
  DeviceBuffer() = default;

  /// Allocates through the allocator registered for `kind` in `registry`.
  static Expected<DeviceBuffer>
  allocate(DeviceAllocatorRegistry &registry, DeviceKind kind, int ordinal,
           std::size_t nbytes, std::size_t alignment = kDefaultAlignment);
  /// Allocates through `allocator`.
  static Expected<DeviceBuffer>
  allocate(std::shared_ptr<DeviceAllocator> allocator, int ordinal,
           std::size_t nbytes, std::size_t alignment = kDefaultAlignment);
  /// Takes ownership of `data`, which `allocator` allocated on `ordinal`.
  static DeviceBuffer adopt(std::shared_ptr<DeviceAllocator> allocator,
                            int ordinal, void *data, std::size_t nbytes);

  DeviceBuffer(DeviceBuffer &&other) noexcept;
  /// Frees the current allocation, then takes over `other`'s.
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  /// Frees the allocation; a failing deallocation is ignored (use reset() to
  /// observe it).
  ~DeviceBuffer();

  void *data() const { return ptr; }
  std::size_t size() const { return nbytes; }
  DeviceKind kind() const { return device.kind; }
  int ordinal() const { return device.ordinal; }
  Device getDevice() const { return device; }
  /// The owning allocator; null for an empty buffer.
  DeviceAllocator *getAllocator() const { return allocator.get(); }
  /// True when the buffer owns an allocation (possibly of zero bytes).
  bool isOwning() const { return allocator != nullptr; }

  /// Gives up ownership and returns the pointer, leaving the buffer empty;
  /// the caller must free it with the allocator's deallocate(ptr, ordinal()).
  void *release();

  /// Frees the allocation now, leaving the buffer empty, and reports a
  /// failing deallocation.
  Error reset();

private:
  std::shared_ptr<DeviceAllocator> allocator;
  void *ptr = nullptr;
  std::size_t nbytes = 0;
  Device device;
};

//===----------------------------------------------------------------------===//
// Arenas and method inputs/outputs
//===----------------------------------------------------------------------===//

/// Allocates every arena of a compiled function on its device, in order:
/// arena i is element i of the result, `size` bytes aligned to `alignment`.
/// CPU arenas go through the registry's DeviceKind::CPU allocator like any
/// other kind (the HostAllocator a registry has by default, or a
/// PinnedHostAllocator registered in its place). All-or-nothing:
/// on the first failure every arena allocated so far is freed and the error
/// names the failing arena and its device.
ETCOPY_RUNTIME_EXPORT Expected<std::vector<DeviceBuffer>>
allocateArenas(DeviceAllocatorRegistry &registry,
               const etcopy_function_arenas &arenas);

/// The input of a method compiled with skip-h2d: allocates `nbytes` on
/// (kind, ordinal) and copies `host` into it. With a stream the copy is only
/// enqueued (see DeviceAllocator); on any failure nothing stays allocated.
ETCOPY_RUNTIME_EXPORT Expected<DeviceBuffer>
makeDeviceInput(DeviceAllocatorRegistry &registry, DeviceKind kind, int ordinal,
                const void *host, std::size_t nbytes, void *stream = nullptr,
                std::size_t alignment = kDefaultAlignment);

/// The output of a method compiled with skip-d2h: copies the first `nbytes`
/// of `buffer` into `host`. Unlike DeviceAllocator::copyDeviceToHost, this
/// always returns with the data in `host`: with a stream, the copy is
/// enqueued after the work already on it and the stream is then synchronized.
/// InvalidArgument if `nbytes` exceeds the buffer.
ETCOPY_RUNTIME_EXPORT Error readDeviceOutput(const DeviceBuffer &buffer,
                                             void *host, std::size_t nbytes,
                                             void *stream = nullptr);

/// The same for device memory not owned by a DeviceBuffer: `device` lives on
/// (kind, ordinal) and is read through the registry's allocator.
ETCOPY_RUNTIME_EXPORT Error readDeviceOutput(DeviceAllocatorRegistry &registry,
                                             DeviceKind kind, int ordinal,
                                             const void *device, void *host,
                                             std::size_t nbytes,
                                             void *stream = nullptr);

//===----------------------------------------------------------------------===//
// Method signatures
//===----------------------------------------------------------------------===//

/// What an argument or result of a compiled method is. The values equal the
/// C API's etcopy_value_kind.
enum class ValueKind : int32_t {
  Scalar = ETCOPY_VALUE_SCALAR,
  MemRef = ETCOPY_VALUE_MEMREF,
  UnrankedMemRef = ETCOPY_VALUE_UNRANKED_MEMREF,
};

/// One argument or result of a compiled method (etcopy_value_desc, checked).
struct ValueDescription {
  ValueKind kind = ValueKind::Scalar;
  /// Where a memref's data lives; the host for a scalar.
  Device device;
  /// The rank of a ranked memref; 0 otherwise.
  int rank = 0;
  /// The bytes of one element of a memref, or of the scalar.
  std::size_t elementBytes = 0;

  /// True for a memref whose data is device memory: the caller passes (or
  /// receives) a device pointer there.
  bool isOnDevice() const {
    return kind != ValueKind::Scalar && device.kind != DeviceKind::CPU;
  }
};

/// "rank-2 memref of 4-byte elements on cuda:0", "8-byte scalar", ...
ETCOPY_RUNTIME_EXPORT std::string toString(const ValueDescription &value);

/// The arguments and results of a compiled method, in order.
struct MethodSignature {
  std::vector<ValueDescription> arguments;
  std::vector<ValueDescription> results;
};

/// Reads the signature a method exports (`<method>_etcopy_signature`),
/// checking every entry; InvalidArgument names the first bad one.
ETCOPY_RUNTIME_EXPORT Expected<MethodSignature>
readSignature(const etcopy_method_signature &signature);

} // namespace etcopy::runtime

#endif // ETCOPY_RUNTIME_DEVICEALLOCATOR_H
