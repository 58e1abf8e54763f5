//===- DeviceAllocator.cpp - Host runtime allocators and buffers ----------===//
//
// Implements the C++ host runtime: errors and device kinds, the host
// allocator, the allocator registry, device buffers, arena allocation and the
// skip-h2d/skip-d2h helpers, the run-time resolved CUDA Runtime API table,
// the lookup of the CUDA simulator library, and what is built on the table:
// the CUDA allocator, the pinned host allocator and host registrations.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Runtime/DeviceAllocator.h"
#include "etcopy/Runtime/CudaApi.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <iterator>
#include <mutex>

using namespace etcopy::runtime;

//===----------------------------------------------------------------------===//
// Errors and devices
//===----------------------------------------------------------------------===//

const char *etcopy::runtime::toString(ErrorCode code) {
  switch (code) {
  case ErrorCode::Ok:
    return "Ok";
  case ErrorCode::InvalidArgument:
    return "InvalidArgument";
  case ErrorCode::NotFound:
    return "NotFound";
  case ErrorCode::AlreadyExists:
    return "AlreadyExists";
  case ErrorCode::OutOfMemory:
    return "OutOfMemory";
  case ErrorCode::DeviceError:
    return "DeviceError";
  case ErrorCode::Unavailable:
    return "Unavailable";
  case ErrorCode::Internal:
    return "Internal";
  }
  return "Unknown";
}

std::string Error::toString() const {
  if (ok())
    return "Ok";
  return std::string(etcopy::runtime::toString(errorCode)) + ": " +
         errorMessage;
}

static Error invalidArgument(std::string message) {
  return Error(ErrorCode::InvalidArgument, std::move(message));
}

/// "0x7f0a00000000".
static std::string pointerText(const void *ptr) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%" PRIxPTR,
                reinterpret_cast<uintptr_t>(ptr));
  return text;
}

static constexpr DeviceKind kAllDeviceKinds[] = {DeviceKind::CPU,
                                                 DeviceKind::CUDA};
static_assert(std::size(kAllDeviceKinds) == kNumDeviceKinds,
              "kAllDeviceKinds must list every DeviceKind");

const char *etcopy::runtime::toString(DeviceKind kind) {
  switch (kind) {
  case DeviceKind::CPU:
    return "cpu";
  case DeviceKind::CUDA:
    return "cuda";
  }
  return "unknown";
}

/// "cpu, cuda".
static std::string validDeviceKinds() {
  std::string result;
  for (DeviceKind kind : kAllDeviceKinds) {
    if (!result.empty())
      result += ", ";
    result += toString(kind);
  }
  return result;
}

static bool isValidDeviceKind(int64_t value) {
  return value >= 0 && value < static_cast<int64_t>(kNumDeviceKinds);
}

Expected<DeviceKind> etcopy::runtime::deviceKindFromValue(int64_t value) {
  if (!isValidDeviceKind(value))
    return invalidArgument("invalid device kind value " +
                           std::to_string(value) + "; valid kinds are " +
                           validDeviceKinds() + " (0.." +
                           std::to_string(kNumDeviceKinds - 1) + ")");
  return static_cast<DeviceKind>(value);
}

static bool equalsIgnoringCase(std::string_view lhs, std::string_view rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (std::size_t i = 0; i < lhs.size(); ++i) {
    unsigned char l = static_cast<unsigned char>(lhs[i]);
    unsigned char r = static_cast<unsigned char>(rhs[i]);
    if (l >= 'A' && l <= 'Z')
      l = l - 'A' + 'a';
    if (r >= 'A' && r <= 'Z')
      r = r - 'A' + 'a';
    if (l != r)
      return false;
  }
  return true;
}

Expected<DeviceKind> etcopy::runtime::parseDeviceKind(std::string_view name) {
  for (DeviceKind kind : kAllDeviceKinds)
    if (equalsIgnoringCase(name, toString(kind)))
      return kind;
  return invalidArgument("unknown device kind '" + std::string(name) +
                         "'; valid kinds are " + validDeviceKinds());
}

std::string etcopy::runtime::toString(const Device &device) {
  return std::string(toString(device.kind)) + ":" +
         std::to_string(device.ordinal);
}

Expected<Device> etcopy::runtime::parseDevice(std::string_view spec) {
  std::size_t colon = spec.find(':');
  std::string_view kindName = spec.substr(0, colon);
  Expected<DeviceKind> kind = parseDeviceKind(kindName);
  if (!kind)
    return Error(ErrorCode::InvalidArgument,
                 "invalid device '" + std::string(spec) +
                     "': " + kind.error().message());
  Device device{*kind, 0};
  if (colon == std::string_view::npos)
    return device;

  std::string_view digits = spec.substr(colon + 1);
  auto badOrdinal = [&](const char *why) {
    return invalidArgument("invalid device '" + std::string(spec) +
                           "': the ordinal after ':' must be " + why);
  };
  if (digits.empty())
    return badOrdinal("a decimal number");
  int64_t ordinal = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return badOrdinal("a decimal number");
    ordinal = ordinal * 10 + (c - '0');
    if (ordinal > INT32_MAX)
      return badOrdinal("at most 2147483647");
  }
  device.ordinal = static_cast<int>(ordinal);
  return device;
}

//===----------------------------------------------------------------------===//
// HostAllocator
//===----------------------------------------------------------------------===//

DeviceAllocator::~DeviceAllocator() = default;

static bool isPowerOfTwo(std::size_t value) {
  return value != 0 && (value & (value - 1)) == 0;
}

static Error checkCopyPointers(void *dst, const void *src, std::size_t nbytes,
                               const char *operation) {
  if (nbytes != 0 && (!dst || !src))
    return invalidArgument(std::string(operation) + " of " +
                           std::to_string(nbytes) + " bytes with a null " +
                           (dst ? "source" : "destination") + " pointer");
  return Error::success();
}

static Error checkHostOrdinal(int ordinal, const char *operation) {
  if (ordinal != 0)
    return invalidArgument(std::string(operation) + ": device ordinal " +
                           std::to_string(ordinal) +
                           " is out of range: there is 1 cpu device");
  return Error::success();
}

Expected<void *> HostAllocator::allocate(std::size_t nbytes, int ordinal,
                                         std::size_t alignment) {
  if (!isPowerOfTwo(alignment))
    return invalidArgument("alignment " + std::to_string(alignment) +
                           " is not a power of two");
  if (Error err = checkHostOrdinal(ordinal, "allocate"))
    return err;
  if (nbytes == 0)
    return nullptr;
  void *ptr = nullptr;
  std::size_t effective =
      alignment < sizeof(void *) ? sizeof(void *) : alignment;
  int rc = ::posix_memalign(&ptr, effective, nbytes);
  if (rc == ENOMEM)
    return Error(ErrorCode::OutOfMemory,
                 "out of host memory allocating " + std::to_string(nbytes) +
                     " bytes aligned to " + std::to_string(alignment) +
                     " on cpu:0");
  if (rc != 0)
    return invalidArgument("posix_memalign(" + std::to_string(nbytes) +
                           " bytes, alignment " + std::to_string(alignment) +
                           ") failed: " + std::strerror(rc));
  return ptr;
}

Error HostAllocator::deallocate(void *ptr, int ordinal) {
  if (Error err = checkHostOrdinal(ordinal, "deallocate"))
    return err;
  std::free(ptr);
  return Error::success();
}

/// A copy by an allocator of host memory (HostAllocator,
/// PinnedHostAllocator): a synchronous memmove on cpu:0.
static Error copyHostMemory(void *dst, const void *src, std::size_t nbytes,
                            int ordinal, const char *operation) {
  if (Error err = checkHostOrdinal(ordinal, operation))
    return err;
  if (Error err = checkCopyPointers(dst, src, nbytes, operation))
    return err;
  if (nbytes != 0)
    std::memmove(dst, src, nbytes);
  return Error::success();
}

Error HostAllocator::copyHostToDevice(void *dst, const void *src,
                                      std::size_t nbytes, int ordinal,
                                      void * /*stream*/) {
  return copyHostMemory(dst, src, nbytes, ordinal, "copyHostToDevice");
}

Error HostAllocator::copyDeviceToHost(void *dst, const void *src,
                                      std::size_t nbytes, int ordinal,
                                      void * /*stream*/) {
  return copyHostMemory(dst, src, nbytes, ordinal, "copyDeviceToHost");
}

Error HostAllocator::synchronize(int ordinal, void * /*stream*/) {
  return checkHostOrdinal(ordinal, "synchronize");
}

//===----------------------------------------------------------------------===//
// DeviceAllocatorRegistry
//===----------------------------------------------------------------------===//

static std::size_t indexOf(DeviceKind kind) {
  return static_cast<std::size_t>(kind);
}

DeviceAllocatorRegistry::DeviceAllocatorRegistry(bool registerHostAllocator) {
  if (registerHostAllocator)
    allocators[indexOf(DeviceKind::CPU)] = std::make_shared<HostAllocator>();
}

DeviceAllocatorRegistry &DeviceAllocatorRegistry::global() {
  // Leaked on purpose: buffers freed from static destructors may still need
  // it.
  static DeviceAllocatorRegistry *registry = new DeviceAllocatorRegistry();
  return *registry;
}

Error DeviceAllocatorRegistry::registerAllocator(
    std::shared_ptr<DeviceAllocator> allocator) {
  if (!allocator)
    return invalidArgument("cannot register a null device allocator");
  DeviceKind kind = allocator->kind();
  if (!isValidDeviceKind(static_cast<int64_t>(kind)))
    return invalidArgument("cannot register an allocator for invalid device "
                           "kind value " +
                           std::to_string(static_cast<int32_t>(kind)));
  std::unique_lock<std::shared_mutex> lock(mutex);
  std::shared_ptr<DeviceAllocator> &slot = allocators[indexOf(kind)];
  if (slot)
    return Error(ErrorCode::AlreadyExists,
                 std::string("an allocator is already registered for "
                             "device kind '") +
                     toString(kind) + "'");
  slot = std::move(allocator);
  return Error::success();
}

static Error notRegistered(DeviceKind kind) {
  return Error(ErrorCode::NotFound,
               std::string("no allocator registered for device kind '") +
                   toString(kind) + "'");
}

Error DeviceAllocatorRegistry::unregisterAllocator(DeviceKind kind) {
  if (!isValidDeviceKind(static_cast<int64_t>(kind)))
    return deviceKindFromValue(static_cast<int64_t>(kind)).takeError();
  std::shared_ptr<DeviceAllocator> removed;
  {
    std::unique_lock<std::shared_mutex> lock(mutex);
    removed = std::move(allocators[indexOf(kind)]);
  }
  // `removed` is released outside the lock.
  if (!removed)
    return notRegistered(kind);
  return Error::success();
}

Expected<std::shared_ptr<DeviceAllocator>>
DeviceAllocatorRegistry::lookup(DeviceKind kind) const {
  if (!isValidDeviceKind(static_cast<int64_t>(kind)))
    return deviceKindFromValue(static_cast<int64_t>(kind)).takeError();
  std::shared_lock<std::shared_mutex> lock(mutex);
  const std::shared_ptr<DeviceAllocator> &slot = allocators[indexOf(kind)];
  if (!slot)
    return notRegistered(kind);
  return slot;
}

bool DeviceAllocatorRegistry::contains(DeviceKind kind) const {
  if (!isValidDeviceKind(static_cast<int64_t>(kind)))
    return false;
  std::shared_lock<std::shared_mutex> lock(mutex);
  return allocators[indexOf(kind)] != nullptr;
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

Expected<DeviceBuffer> DeviceBuffer::allocate(DeviceAllocatorRegistry &registry,
                                              DeviceKind kind, int ordinal,
                                              std::size_t nbytes,
                                              std::size_t alignment) {
  Expected<std::shared_ptr<DeviceAllocator>> allocator = registry.lookup(kind);
  if (!allocator)
    return allocator.takeError();
  return allocate(std::move(*allocator), ordinal, nbytes, alignment);
}

Expected<DeviceBuffer>
DeviceBuffer::allocate(std::shared_ptr<DeviceAllocator> allocator, int ordinal,
                       std::size_t nbytes, std::size_t alignment) {
  if (!allocator)
    return invalidArgument("cannot allocate a device buffer through a null "
                           "allocator");
  Expected<void *> ptr = allocator->allocate(nbytes, ordinal, alignment);
  if (!ptr)
    return ptr.takeError();
  return adopt(std::move(allocator), ordinal, *ptr, nbytes);
}

DeviceBuffer DeviceBuffer::adopt(std::shared_ptr<DeviceAllocator> allocator,
                                 int ordinal, void *data, std::size_t nbytes) {
  DeviceBuffer buffer;
  if (allocator)
    buffer.device = Device{allocator->kind(), ordinal};
  buffer.allocator = std::move(allocator);
  buffer.ptr = data;
  buffer.nbytes = nbytes;
  return buffer;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : allocator(std::move(other.allocator)),
      ptr(std::exchange(other.ptr, nullptr)),
      nbytes(std::exchange(other.nbytes, 0)),
      device(std::exchange(other.device, Device())) {}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this == &other)
    return *this;
  (void)reset();
  allocator = std::move(other.allocator);
  ptr = std::exchange(other.ptr, nullptr);
  nbytes = std::exchange(other.nbytes, 0);
  device = std::exchange(other.device, Device());
  return *this;
}

DeviceBuffer::~DeviceBuffer() { (void)reset(); }

void *DeviceBuffer::release() {
  allocator.reset();
  nbytes = 0;
  device = Device();
  return std::exchange(ptr, nullptr);
}

Error DeviceBuffer::reset() {
  std::shared_ptr<DeviceAllocator> owner = std::move(allocator);
  allocator.reset();
  int ordinal = device.ordinal;
  void *data = std::exchange(ptr, nullptr);
  nbytes = 0;
  device = Device();
  if (!owner || !data)
    return Error::success();
  return owner->deallocate(data, ordinal);
}

//===----------------------------------------------------------------------===//
// Arenas and method inputs/outputs
//===----------------------------------------------------------------------===//

Expected<std::vector<DeviceBuffer>>
etcopy::runtime::allocateArenas(DeviceAllocatorRegistry &registry,
                                const etcopy_function_arenas &arenas) {
  if (arenas.num_arenas != 0 && !arenas.arenas)
    return invalidArgument("function arena table lists " +
                           std::to_string(arenas.num_arenas) +
                           " arenas but its array is null");
  std::vector<DeviceBuffer> buffers;
  buffers.reserve(static_cast<std::size_t>(arenas.num_arenas));
  for (uint64_t i = 0; i < arenas.num_arenas; ++i) {
    const etcopy_arena_desc &desc = arenas.arenas[i];
    std::string what = "arena #" + std::to_string(i);
    Expected<DeviceKind> kind = deviceKindFromValue(desc.device_kind);
    if (!kind)
      return Error(kind.error().code(), what + ": " + kind.error().message());
    what += " (" + std::to_string(desc.size) + " bytes on " +
            toString(Device{*kind, desc.ordinal}) + ")";
    if constexpr (sizeof(std::size_t) < sizeof(uint64_t)) {
      if (desc.size > SIZE_MAX || desc.alignment > SIZE_MAX)
        return invalidArgument(what + ": size or alignment exceeds the "
                                      "address space");
    }
    Expected<DeviceBuffer> buffer = DeviceBuffer::allocate(
        registry, *kind, desc.ordinal, static_cast<std::size_t>(desc.size),
        static_cast<std::size_t>(desc.alignment));
    // On failure, returning destroys `buffers`, freeing earlier arenas.
    if (!buffer)
      return Error(buffer.error().code(),
                   what + ": " + buffer.error().message());
    buffers.push_back(std::move(*buffer));
  }
  return buffers;
}

Expected<DeviceBuffer> etcopy::runtime::makeDeviceInput(
    DeviceAllocatorRegistry &registry, DeviceKind kind, int ordinal,
    const void *host, std::size_t nbytes, void *stream, std::size_t alignment) {
  if (nbytes != 0 && !host)
    return invalidArgument("device input of " + std::to_string(nbytes) +
                           " bytes from a null host pointer");
  Expected<DeviceBuffer> buffer =
      DeviceBuffer::allocate(registry, kind, ordinal, nbytes, alignment);
  if (!buffer)
    return buffer.takeError();
  if (Error err = buffer->getAllocator()->copyHostToDevice(
          buffer->data(), host, nbytes, ordinal, stream))
    return err; // `buffer` frees the allocation.
  return buffer;
}

static Error readThrough(DeviceAllocator &allocator, int ordinal,
                         const void *device, void *host, std::size_t nbytes,
                         void *stream) {
  if (Error err =
          allocator.copyDeviceToHost(host, device, nbytes, ordinal, stream))
    return err;
  if (stream && nbytes != 0)
    return allocator.synchronize(ordinal, stream);
  return Error::success();
}

Error etcopy::runtime::readDeviceOutput(const DeviceBuffer &buffer, void *host,
                                        std::size_t nbytes, void *stream) {
  if (nbytes > buffer.size())
    return invalidArgument("cannot read " + std::to_string(nbytes) +
                           " bytes from a device buffer of " +
                           std::to_string(buffer.size()) + " bytes");
  if (nbytes == 0)
    return Error::success();
  if (!buffer.getAllocator())
    return invalidArgument("cannot read from a device buffer that owns no "
                           "allocation");
  return readThrough(*buffer.getAllocator(), buffer.ordinal(), buffer.data(),
                     host, nbytes, stream);
}

Error etcopy::runtime::readDeviceOutput(DeviceAllocatorRegistry &registry,
                                        DeviceKind kind, int ordinal,
                                        const void *device, void *host,
                                        std::size_t nbytes, void *stream) {
  Expected<std::shared_ptr<DeviceAllocator>> allocator = registry.lookup(kind);
  if (!allocator)
    return allocator.takeError();
  return readThrough(**allocator, ordinal, device, host, nbytes, stream);
}

//===----------------------------------------------------------------------===//
// CudaApi
//===----------------------------------------------------------------------===//

namespace {
/// One entry of the symbol table: its name, where it goes, whether required.
struct CudaSymbol {
  const char *name;
  void **slot;
  bool required;
};
} // namespace

/// Every entry point of `api`, in declaration order.
static std::vector<CudaSymbol> cudaSymbols(CudaApi &api) {
  auto slot = [](auto &fn) { return reinterpret_cast<void **>(&fn); };
  return {
      {"cudaMalloc", slot(api.mallocFn), true},
      {"cudaFree", slot(api.freeFn), true},
      {"cudaMemcpy", slot(api.memcpyFn), true},
      {"cudaMemcpyAsync", slot(api.memcpyAsyncFn), true},
      {"cudaStreamSynchronize", slot(api.streamSynchronizeFn), true},
      {"cudaGetDevice", slot(api.getDeviceFn), true},
      {"cudaSetDevice", slot(api.setDeviceFn), true},
      {"cudaGetDeviceCount", slot(api.getDeviceCountFn), true},
      {"cudaGetErrorName", slot(api.getErrorNameFn), true},
      {"cudaGetErrorString", slot(api.getErrorStringFn), true},
      {"cudaDeviceSynchronize", slot(api.deviceSynchronizeFn), false},
      {"cudaStreamCreate", slot(api.streamCreateFn), false},
      {"cudaStreamDestroy", slot(api.streamDestroyFn), false},
      {"cudaMallocHost", slot(api.mallocHostFn), false},
      {"cudaFreeHost", slot(api.freeHostFn), false},
      {"cudaHostRegister", slot(api.hostRegisterFn), false},
      {"cudaHostUnregister", slot(api.hostUnregisterFn), false},
      {"cudaMallocAsync", slot(api.mallocAsyncFn), false},
      {"cudaFreeAsync", slot(api.freeAsyncFn), false},
      {"cudaDeviceGetMemPool", slot(api.deviceGetMemPoolFn), false},
      {"cudaMemPoolGetAttribute", slot(api.memPoolGetAttributeFn), false},
      {"cudaMemPoolSetAttribute", slot(api.memPoolSetAttributeFn), false},
      {"cudaMemPoolTrimTo", slot(api.memPoolTrimToFn), false},
  };
}

static_assert(sizeof(void *) == sizeof(int (*)(int)),
              "function pointers must be object-pointer sized for dlsym");

/// Fills `api` from `handle` (a dlopen handle or RTLD_DEFAULT).
static Error resolveCudaSymbols(CudaApi &api, void *handle) {
  for (const CudaSymbol &symbol : cudaSymbols(api)) {
    void *address = ::dlsym(handle, symbol.name);
    if (!address && symbol.required)
      return Error(ErrorCode::Unavailable,
                   std::string("the CUDA Runtime API symbol ") + symbol.name +
                       " is missing from " + api.origin);
    std::memcpy(symbol.slot, &address, sizeof(address));
  }
  return Error::success();
}

Expected<CudaApi> CudaApi::fromProcess() {
  CudaApi api;
  api.origin = "<process>";
  if (Error err = resolveCudaSymbols(api, RTLD_DEFAULT))
    return Error(err.code(), err.message() +
                                 " (link libcudart or libetcopy_cuda_sim, "
                                 "or use CudaApi::load)");
  return api;
}

/// dlopen()s `libraryPath` with `flags` and resolves the table in it.
static Expected<CudaApi> loadCudaLibrary(const char *libraryPath, int flags) {
  // Once resolved, never dlclose'd: the CUDA runtime registers exit handlers,
  // and the table's pointers must stay valid in every copy of it.
  ::dlerror();
  void *handle = ::dlopen(libraryPath, flags);
  if (!handle) {
    const char *why = ::dlerror();
    if (!why)
      why = (flags & RTLD_NOLOAD) ? "not loaded" : "unknown error";
    return Error(ErrorCode::Unavailable,
                 std::string("cannot load CUDA runtime library '") +
                     libraryPath + "': " + why);
  }
  CudaApi api;
  api.origin = libraryPath;
  if (Error err = resolveCudaSymbols(api, handle)) {
    // Not a CUDA runtime; no pointer into it escaped.
    ::dlclose(handle);
    return err;
  }
  return api;
}

Expected<CudaApi> CudaApi::load(const char *libraryPath) {
  if (!libraryPath || !*libraryPath)
    return invalidArgument("CudaApi::load needs a library path");
  return loadCudaLibrary(libraryPath, RTLD_NOW | RTLD_LOCAL);
}

static bool hasEntry(const CudaSymbol &symbol) {
  void *address = nullptr;
  std::memcpy(&address, symbol.slot, sizeof(address));
  return address != nullptr;
}

Error CudaApi::checkComplete() const {
  CudaApi copy = *this;
  for (const CudaSymbol &symbol : cudaSymbols(copy))
    if (symbol.required && !hasEntry(symbol))
      return invalidArgument(std::string("CUDA API table from '") + origin +
                             "' has no entry for " + symbol.name);
  return Error::success();
}

/// Checks that `api` is complete and has the optional entry points `names`,
/// which `user` needs: Unavailable naming the first one missing.
static Error checkOptionalEntries(const CudaApi &api,
                                  std::initializer_list<const char *> names,
                                  const char *user) {
  if (Error err = api.checkComplete())
    return err;
  CudaApi copy = api;
  for (const CudaSymbol &symbol : cudaSymbols(copy))
    for (const char *name : names)
      if (std::strcmp(symbol.name, name) == 0 && !hasEntry(symbol))
        return Error(ErrorCode::Unavailable,
                     std::string("the CUDA Runtime API from '") + api.origin +
                         "' has no " + name + ", which " + user + " needs");
  return Error::success();
}

/// CudaApi::load(libraryPath), or CudaApi::fromProcess() for null.
static Expected<CudaApi> loadCudaApi(const char *libraryPath) {
  return libraryPath ? CudaApi::load(libraryPath) : CudaApi::fromProcess();
}

/// The directory holding this library (with a trailing '/'), or "".
static std::string runtimeLibraryDirectory() {
  Dl_info info;
  if (!::dladdr(reinterpret_cast<void *>(&runtimeLibraryDirectory), &info) ||
      !info.dli_fname)
    return "";
  std::string path = info.dli_fname;
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return "";
  return path.substr(0, slash + 1);
}

Expected<CudaApi> CudaApi::loadSimulator() {
  if (const char *explicitPath = std::getenv("ETCOPY_CUDA_SIM_LIBRARY");
      explicitPath && *explicitPath) {
    Expected<CudaApi> api = CudaApi::load(explicitPath);
    if (!api)
      return Error(api.error().code(),
                   api.error().message() + " (from ETCOPY_CUDA_SIM_LIBRARY)");
    return api;
  }

  // A simulator the process already loaded (it links one, or compiled code
  // was loaded with one) must be shared: a second copy, loaded from another
  // directory, would be a second simulated machine whose pointers the first
  // does not know.
  Expected<CudaApi> loaded =
      loadCudaLibrary(kCudaSimulatorLibraryName, RTLD_NOW | RTLD_NOLOAD);
  if (loaded) {
    Dl_info info;
    if (::dladdr(reinterpret_cast<void *>(loaded->mallocFn), &info) &&
        info.dli_fname)
      loaded->origin = info.dli_fname;
    return loaded;
  }

  std::vector<std::string> candidates;
  std::string directory = runtimeLibraryDirectory();
  if (!directory.empty())
    candidates.push_back(directory + kCudaSimulatorLibraryName);
  candidates.push_back(kCudaSimulatorLibraryName);
  std::string attempts;
  for (const std::string &candidate : candidates) {
    Expected<CudaApi> api = CudaApi::load(candidate.c_str());
    if (api)
      return api;
    attempts += "\n  " + api.error().message();
  }
  return Error(ErrorCode::Unavailable,
               std::string("cannot load the CUDA simulator ") +
                   kCudaSimulatorLibraryName + ":" + attempts);
}

//===----------------------------------------------------------------------===//
// CudaAllocator
//===----------------------------------------------------------------------===//

namespace {
/// Turns cudaError_t values into Errors naming the call.
class CudaErrors {
public:
  explicit CudaErrors(const CudaApi &api) : api(api) {}

  /// Success for cudaSuccess, else an Error "<call> failed: <name>
  /// (<string>)".
  Error check(int status, const std::string &call) const {
    if (status == CudaApi::kSuccess)
      return Error::success();
    const char *name = api.getErrorNameFn(status);
    const char *description = api.getErrorStringFn(status);
    std::string message =
        call + " failed: " + (name ? name : "unknown CUDA error") + " (" +
        (description ? description : "no description") + ")";
    if (name == nullptr || std::strncmp(name, "cuda", 4) != 0)
      message += " [cudaError_t " + std::to_string(status) + "]";
    return Error(codeOf(status), std::move(message));
  }

private:
  /// OutOfMemory, AlreadyExists and NotFound for the cudaError_t values that
  /// mean them; DeviceError for the others.
  static ErrorCode codeOf(int status) {
    switch (status) {
    case CudaApi::kErrorMemoryAllocation:
      return ErrorCode::OutOfMemory;
    case CudaApi::kErrorHostMemoryAlreadyRegistered:
      return ErrorCode::AlreadyExists;
    case CudaApi::kErrorHostMemoryNotRegistered:
      return ErrorCode::NotFound;
    default:
      return ErrorCode::DeviceError;
    }
  }

private:
  const CudaApi &api;
};

/// Makes `ordinal` the current device while an operation runs and restores
/// the previous one when asked, reporting both failures when both fail.
class DeviceSwitch {
public:
  DeviceSwitch(const CudaApi &api, int ordinal)
      : api(api), errors(api), ordinal(ordinal) {}

  /// Makes `ordinal` current (no call when it already is).
  Error enter() {
    if (Error err = errors.check(api.getDeviceFn(&previous), "cudaGetDevice"))
      return err;
    if (previous == ordinal)
      return Error::success();
    if (Error err =
            errors.check(api.setDeviceFn(ordinal),
                         "cudaSetDevice(" + std::to_string(ordinal) + ")"))
      return err;
    switched = true;
    return Error::success();
  }

  /// Restores the previous device. Returns `result` when the restore
  /// succeeds, the restore failure when `result` was a success, and
  /// `result` with the restore failure appended otherwise.
  Error leave(Error result) {
    if (!switched)
      return result;
    switched = false;
    Error restore = errors.check(api.setDeviceFn(previous),
                                 "cudaSetDevice(" + std::to_string(previous) +
                                     ") restoring the previous device");
    if (!restore)
      return result;
    if (!result)
      return restore;
    return Error(result.code(),
                 result.message() + "; then " + restore.message());
  }

private:
  const CudaApi &api;
  CudaErrors errors;
  int ordinal;
  int previous = 0;
  bool switched = false;
};
} // namespace

/// The pool policy of the environment: $ETCOPY_POOL_RELEASE_THRESHOLD, a
/// decimal number of bytes, when set, else kDefaultPoolReleaseThreshold.
static Expected<uint64_t> poolReleaseThresholdFromEnvironment() {
  const char *text = std::getenv(kPoolReleaseThresholdVariable);
  if (!text)
    return kDefaultPoolReleaseThreshold;
  char *end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (!*text || *end || errno == ERANGE || *text == '-' || *text == '+' ||
      *text == ' ')
    return invalidArgument(std::string("invalid ") +
                           kPoolReleaseThresholdVariable + "='" + text +
                           "': expected a decimal number of bytes (at most "
                           "18446744073709551615)");
  return static_cast<uint64_t>(value);
}

Expected<std::shared_ptr<CudaAllocator>>
CudaAllocator::create(CudaApi api, CudaAllocatorOptions options) {
  if (Error err = api.checkComplete())
    return err;
  uint64_t threshold = kDefaultPoolReleaseThreshold;
  if (options.poolReleaseThreshold) {
    threshold = *options.poolReleaseThreshold;
  } else if (options.useMemoryPool) {
    Expected<uint64_t> fromEnvironment = poolReleaseThresholdFromEnvironment();
    if (!fromEnvironment)
      return fromEnvironment.takeError();
    threshold = *fromEnvironment;
  }
  return std::shared_ptr<CudaAllocator>(
      new CudaAllocator(std::move(api), options.useMemoryPool, threshold));
}

Expected<int> CudaAllocator::getDeviceCount() {
  int count = 0;
  if (Error err = CudaErrors(api).check(api.getDeviceCountFn(&count),
                                        "cudaGetDeviceCount"))
    return err;
  return count;
}

Error CudaAllocator::checkOrdinal(int ordinal, const char *operation) {
  Expected<int> count = getDeviceCount();
  if (!count)
    return Error(count.error().code(), std::string(operation) + " on cuda:" +
                                           std::to_string(ordinal) + ": " +
                                           count.error().message());
  if (ordinal < 0 || ordinal >= *count)
    return invalidArgument(std::string(operation) + ": device ordinal " +
                           std::to_string(ordinal) +
                           " is out of range: cudaGetDeviceCount reports " +
                           std::to_string(*count) + " CUDA device(s)");
  return Error::success();
}

/// Whether `api` has every entry point that allocating from memory pools
/// needs.
static bool hasStreamOrderedAllocator(const CudaApi &api) {
  return api.mallocAsyncFn && api.freeAsyncFn && api.deviceGetMemPoolFn &&
         api.memPoolGetAttributeFn && api.memPoolSetAttributeFn &&
         api.deviceSynchronizeFn;
}

Expected<CudaAllocator::DevicePool> CudaAllocator::getDevicePool(int ordinal) {
  std::lock_guard<std::mutex> lock(poolMutex);
  if (devicePools.size() <= static_cast<std::size_t>(ordinal))
    devicePools.resize(static_cast<std::size_t>(ordinal) + 1);
  DevicePool &state = devicePools[static_cast<std::size_t>(ordinal)];
  if (state.configured)
    return state;

  DevicePool configured;
  configured.configured = true;
  if (!useMemoryPool || !hasStreamOrderedAllocator(api))
    return state = configured;
  std::string where = " on cuda:" + std::to_string(ordinal);
  CudaErrors errors(api);
  void *pool = nullptr;
  int status = api.deviceGetMemPoolFn(&pool, ordinal);
  // A device without memory pools (cudaDevAttrMemoryPoolsSupported 0)
  // allocates with cudaMalloc.
  if (status == CudaApi::kErrorNotSupported)
    return state = configured;
  if (Error err = errors.check(status, "cudaDeviceGetMemPool" + where))
    return err;
  // The pool policy: raise the release threshold, never lower it. A failure
  // leaves the device unconfigured, to be tried again at its next operation.
  if (poolReleaseThreshold != 0) {
    uint64_t current = 0;
    if (Error err = errors.check(
            api.memPoolGetAttributeFn(
                pool, CudaApi::kMemPoolAttrReleaseThreshold, &current),
            "cudaMemPoolGetAttribute(cudaMemPoolAttrReleaseThreshold)" +
                where))
      return err;
    uint64_t threshold = poolReleaseThreshold;
    if (current < threshold)
      if (Error err = errors.check(
              api.memPoolSetAttributeFn(
                  pool, CudaApi::kMemPoolAttrReleaseThreshold, &threshold),
              "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold, " +
                  std::to_string(threshold) + " bytes)" + where))
        return err;
  }
  configured.pooled = true;
  configured.pool = pool;
  return state = configured;
}

template <typename Body>
Error CudaAllocator::withDevicePool(int ordinal, const char *operation,
                                   Body body) {
  if (Error err = checkOrdinal(ordinal, operation))
    return err;
  DeviceSwitch deviceSwitch(api, ordinal);
  if (Error err = deviceSwitch.enter())
    return err;
  Expected<DevicePool> pool = getDevicePool(ordinal);
  return deviceSwitch.leave(pool ? body(*pool) : pool.takeError());
}

Expected<bool> CudaAllocator::usesMemoryPool(int ordinal) {
  bool pooled = false;
  if (Error err = withDevicePool(ordinal, "usesMemoryPool",
                                 [&](const DevicePool &pool) {
                                   pooled = pool.pooled;
                                   return Error::success();
                                 }))
    return err;
  return pooled;
}

Expected<void *> CudaAllocator::allocate(std::size_t nbytes, int ordinal,
                                         std::size_t alignment) {
  if (!isPowerOfTwo(alignment) || alignment > kMaxAlignment)
    return invalidArgument("alignment " + std::to_string(alignment) +
                           " is not supported by the CUDA allocator: it must "
                           "be a power of two no greater than 256 (the "
                           "alignment cudaMalloc guarantees)");
  if (Error err = checkOrdinal(ordinal, "allocate"))
    return err;
  if (nbytes == 0)
    return nullptr;

  DeviceSwitch deviceSwitch(api, ordinal);
  if (Error err = deviceSwitch.enter())
    return err;
  Expected<DevicePool> pool = getDevicePool(ordinal);
  if (!pool)
    return deviceSwitch.leave(pool.takeError());
  CudaErrors errors(api);
  std::string where = " on cuda:" + std::to_string(ordinal);
  std::string size = "(" + std::to_string(nbytes) + " bytes)";
  void *ptr = nullptr;
  Error result;
  if (!pool->pooled) {
    result =
        errors.check(api.mallocFn(&ptr, nbytes), "cudaMalloc" + size + where);
  } else {
    // On the legacy stream, then waited for: the memory is usable on any
    // stream when allocate returns.
    result = errors.check(api.mallocAsyncFn(&ptr, nbytes, nullptr),
                          "cudaMallocAsync" + size + where);
    if (result.ok()) {
      result = errors.check(api.streamSynchronizeFn(nullptr),
                            "cudaStreamSynchronize(0) after cudaMallocAsync" +
                                size + where);
      if (result) {
        (void)api.freeAsyncFn(ptr, nullptr);
        ptr = nullptr;
      }
    }
  }
  bool allocated = result.ok() && ptr;
  result = deviceSwitch.leave(std::move(result));
  if (result) {
    // The allocation succeeded but the previous device could not be
    // restored: do not leak it.
    if (allocated)
      (void)(pool->pooled ? api.freeAsyncFn(ptr, nullptr) : api.freeFn(ptr));
    return result;
  }
  return ptr;
}

Error CudaAllocator::deallocate(void *ptr, int ordinal) {
  if (!ptr)
    return Error::success();
  return withDevicePool(ordinal, "deallocate", [&](const DevicePool &pool) {
    CudaErrors errors(api);
    std::string where = " on cuda:" + std::to_string(ordinal);
    if (!pool.pooled)
      return errors.check(api.freeFn(ptr), "cudaFree" + where);
    // Copies still queued on any stream may use the memory: wait for them,
    // as cudaFree would, before the pool may hand the memory out again. Then
    // the free, waited for too: the memory is back in the pool when
    // deallocate returns, and no work of the allocator's is left queued.
    std::string call = "cudaFreeAsync(" + pointerText(ptr) + ")";
    if (Error err =
            errors.check(api.deviceSynchronizeFn(),
                         "cudaDeviceSynchronize before " + call + where))
      return err;
    if (Error err = errors.check(api.freeAsyncFn(ptr, nullptr), call + where))
      return err;
    return errors.check(api.streamSynchronizeFn(nullptr),
                        "cudaStreamSynchronize(0) after " + call + where);
  });
}

Error CudaAllocator::trimMemoryPool(int ordinal, std::size_t minBytesToKeep) {
  return withDevicePool(
      ordinal, "trimMemoryPool", [&](const DevicePool &pool) -> Error {
        if (!pool.pooled)
          return Error::success();
        if (!api.memPoolTrimToFn)
          return Error(ErrorCode::Unavailable,
                       "the CUDA Runtime API from '" + api.origin +
                           "' has no cudaMemPoolTrimTo, which trimming a "
                           "memory pool needs");
        return CudaErrors(api).check(
            api.memPoolTrimToFn(pool.pool, minBytesToKeep),
            "cudaMemPoolTrimTo(" + std::to_string(minBytesToKeep) +
                " bytes) on cuda:" + std::to_string(ordinal));
      });
}

Error CudaAllocator::copy(void *dst, const void *src, std::size_t nbytes,
                          int ordinal, void *stream, int memcpyKind) {
  const char *operation = memcpyKind == CudaApi::kMemcpyHostToDevice
                              ? "copyHostToDevice"
                              : "copyDeviceToHost";
  if (Error err = checkOrdinal(ordinal, operation))
    return err;
  if (Error err = checkCopyPointers(dst, src, nbytes, operation))
    return err;
  if (nbytes == 0)
    return Error::success();

  DeviceSwitch deviceSwitch(api, ordinal);
  if (Error err = deviceSwitch.enter())
    return err;
  std::string direction = memcpyKind == CudaApi::kMemcpyHostToDevice
                              ? "cudaMemcpyHostToDevice"
                              : "cudaMemcpyDeviceToHost";
  std::string detail = "(" + std::to_string(nbytes) + " bytes, " + direction +
                       ") on cuda:" + std::to_string(ordinal);
  int status = stream ? api.memcpyAsyncFn(dst, src, nbytes, memcpyKind, stream)
                      : api.memcpyFn(dst, src, nbytes, memcpyKind);
  Error result = CudaErrors(api).check(
      status, (stream ? "cudaMemcpyAsync" : "cudaMemcpy") + detail);
  // cudaMemcpy from pageable memory to the device returns once the source
  // is staged, maybe before the device memory is written (CUDA 13, "API
  // synchronization behavior"), and the legacy default stream it runs on
  // does not order non-blocking streams, such as the lowered code's. A copy
  // without a stream is complete when it returns: wait for that stream.
  if (result.ok() && !stream && memcpyKind == CudaApi::kMemcpyHostToDevice)
    result = CudaErrors(api).check(api.streamSynchronizeFn(nullptr),
                                   "cudaStreamSynchronize(0) after cudaMemcpy" +
                                       detail);
  return deviceSwitch.leave(std::move(result));
}

Error CudaAllocator::copyHostToDevice(void *dst, const void *src,
                                      std::size_t nbytes, int ordinal,
                                      void *stream) {
  return copy(dst, src, nbytes, ordinal, stream, CudaApi::kMemcpyHostToDevice);
}

Error CudaAllocator::copyDeviceToHost(void *dst, const void *src,
                                      std::size_t nbytes, int ordinal,
                                      void *stream) {
  return copy(dst, src, nbytes, ordinal, stream, CudaApi::kMemcpyDeviceToHost);
}

Error CudaAllocator::synchronize(int ordinal, void *stream) {
  if (Error err = checkOrdinal(ordinal, "synchronize"))
    return err;
  DeviceSwitch deviceSwitch(api, ordinal);
  if (Error err = deviceSwitch.enter())
    return err;
  std::string where = " on cuda:" + std::to_string(ordinal);
  Error result;
  if (stream)
    result = CudaErrors(api).check(api.streamSynchronizeFn(stream),
                                   "cudaStreamSynchronize" + where);
  else if (api.deviceSynchronizeFn)
    result = CudaErrors(api).check(api.deviceSynchronizeFn(),
                                   "cudaDeviceSynchronize" + where);
  else
    result = CudaErrors(api).check(api.streamSynchronizeFn(nullptr),
                                   "cudaStreamSynchronize(0)" + where);
  return deviceSwitch.leave(std::move(result));
}

//===----------------------------------------------------------------------===//
// PinnedHostAllocator
//===----------------------------------------------------------------------===//

Expected<std::shared_ptr<PinnedHostAllocator>>
PinnedHostAllocator::create(CudaApi api) {
  if (Error err = checkOptionalEntries(api, {"cudaMallocHost", "cudaFreeHost"},
                                       "a pinned host allocator"))
    return err;
  return std::shared_ptr<PinnedHostAllocator>(
      new PinnedHostAllocator(std::move(api)));
}

Expected<void *> PinnedHostAllocator::allocate(std::size_t nbytes, int ordinal,
                                               std::size_t alignment) {
  if (!isPowerOfTwo(alignment) || alignment > kMaxAlignment)
    return invalidArgument("alignment " + std::to_string(alignment) +
                           " is not supported by the pinned host allocator: "
                           "it must be a power of two no greater than 4096 "
                           "(the page size cudaMallocHost aligns to)");
  if (Error err = checkHostOrdinal(ordinal, "allocate"))
    return err;
  if (nbytes == 0)
    return nullptr;
  void *ptr = nullptr;
  std::string call = "cudaMallocHost(" + std::to_string(nbytes) + " bytes)";
  if (Error err = CudaErrors(api).check(api.mallocHostFn(&ptr, nbytes), call))
    return err;
  if (!ptr || reinterpret_cast<uintptr_t>(ptr) % alignment != 0) {
    if (ptr)
      (void)api.freeHostFn(ptr);
    return Error(ErrorCode::DeviceError,
                 call + " returned " + pointerText(ptr) +
                     ", which is not aligned to " + std::to_string(alignment) +
                     " bytes");
  }
  return ptr;
}

Error PinnedHostAllocator::deallocate(void *ptr, int ordinal) {
  if (Error err = checkHostOrdinal(ordinal, "deallocate"))
    return err;
  if (!ptr)
    return Error::success();
  return CudaErrors(api).check(api.freeHostFn(ptr),
                               "cudaFreeHost(" + pointerText(ptr) + ")");
}

Error PinnedHostAllocator::copyHostToDevice(void *dst, const void *src,
                                            std::size_t nbytes, int ordinal,
                                            void * /*stream*/) {
  return copyHostMemory(dst, src, nbytes, ordinal, "copyHostToDevice");
}

Error PinnedHostAllocator::copyDeviceToHost(void *dst, const void *src,
                                            std::size_t nbytes, int ordinal,
                                            void * /*stream*/) {
  return copyHostMemory(dst, src, nbytes, ordinal, "copyDeviceToHost");
}

Error PinnedHostAllocator::synchronize(int ordinal, void * /*stream*/) {
  return checkHostOrdinal(ordinal, "synchronize");
}

//===----------------------------------------------------------------------===//
// HostRegistration
//===----------------------------------------------------------------------===//

static const char *flagsName(HostRegisterFlags flags) {
  return flags == HostRegisterFlags::Portable ? "cudaHostRegisterPortable"
                                              : "cudaHostRegisterDefault";
}

/// The checks of a registration's arguments made before any CUDA call.
static Error checkRegistration(void *ptr, std::size_t nbytes,
                               HostRegisterFlags flags) {
  if (!ptr)
    return invalidArgument("cannot register " + std::to_string(nbytes) +
                           " bytes of host memory at a null pointer");
  if (nbytes == 0)
    return invalidArgument("cannot register an empty range of host memory "
                           "at " +
                           pointerText(ptr));
  if (flags != HostRegisterFlags::Default &&
      flags != HostRegisterFlags::Portable)
    return invalidArgument("invalid host registration flags " +
                           std::to_string(static_cast<uint32_t>(flags)) +
                           "; valid flags are cudaHostRegisterDefault (0) and "
                           "cudaHostRegisterPortable (1)");
  return Error::success();
}

Expected<HostRegistration> HostRegistration::create(const CudaApi &api,
                                                    void *ptr,
                                                    std::size_t nbytes,
                                                    HostRegisterFlags flags) {
  if (Error err = checkRegistration(ptr, nbytes, flags))
    return err;
  if (Error err =
          checkOptionalEntries(api, {"cudaHostRegister", "cudaHostUnregister"},
                               "a host memory registration"))
    return err;
  if (Error err = CudaErrors(api).check(
          api.hostRegisterFn(ptr, nbytes, static_cast<unsigned>(flags)),
          "cudaHostRegister(" + pointerText(ptr) + ", " +
              std::to_string(nbytes) + " bytes, " + flagsName(flags) + ")"))
    return err;
  HostRegistration registration;
  registration.api = api;
  registration.ptr = ptr;
  registration.nbytes = nbytes;
  registration.registerFlags = flags;
  return registration;
}

HostRegistration::HostRegistration(HostRegistration &&other) noexcept
    : api(std::move(other.api)), ptr(std::exchange(other.ptr, nullptr)),
      nbytes(std::exchange(other.nbytes, 0)),
      registerFlags(
          std::exchange(other.registerFlags, HostRegisterFlags::Default)) {}

HostRegistration &
HostRegistration::operator=(HostRegistration &&other) noexcept {
  if (this == &other)
    return *this;
  (void)reset();
  api = std::move(other.api);
  ptr = std::exchange(other.ptr, nullptr);
  nbytes = std::exchange(other.nbytes, 0);
  registerFlags =
      std::exchange(other.registerFlags, HostRegisterFlags::Default);
  return *this;
}

HostRegistration::~HostRegistration() { (void)reset(); }

Error HostRegistration::reset() {
  void *range = std::exchange(ptr, nullptr);
  std::size_t size = std::exchange(nbytes, 0);
  registerFlags = HostRegisterFlags::Default;
  if (!range)
    return Error::success();
  return CudaErrors(api).check(api.hostUnregisterFn(range),
                               "cudaHostUnregister(" + pointerText(range) +
                                   ") of " + std::to_string(size) +
                                   " registered bytes");
}

//===----------------------------------------------------------------------===//
// Factories
//===----------------------------------------------------------------------===//

/// T::create on `api`, or its failure.
template <typename T>
static Expected<std::shared_ptr<T>> createOn(Expected<CudaApi> api) {
  if (!api)
    return api.takeError();
  return T::create(std::move(*api));
}

Expected<std::shared_ptr<CudaAllocator>>
etcopy::runtime::makeCudaAllocator(const char *libraryPath,
                                   CudaAllocatorOptions options) {
  Expected<CudaApi> api = loadCudaApi(libraryPath);
  if (!api)
    return api.takeError();
  return CudaAllocator::create(std::move(*api), options);
}

Expected<std::shared_ptr<CudaAllocator>>
etcopy::runtime::makeSimulatorAllocator(CudaAllocatorOptions options) {
  Expected<CudaApi> api = CudaApi::loadSimulator();
  if (!api)
    return api.takeError();
  return CudaAllocator::create(std::move(*api), options);
}

Expected<std::shared_ptr<PinnedHostAllocator>>
etcopy::runtime::makePinnedHostAllocator(const char *libraryPath) {
  return createOn<PinnedHostAllocator>(loadCudaApi(libraryPath));
}

Expected<std::shared_ptr<PinnedHostAllocator>>
etcopy::runtime::makeSimulatorPinnedHostAllocator() {
  return createOn<PinnedHostAllocator>(CudaApi::loadSimulator());
}

/// HostRegistration::create on the table `load` returns, once the arguments
/// are known to be valid.
template <typename LoadApi>
static Expected<HostRegistration> registerWith(LoadApi load, void *ptr,
                                               std::size_t nbytes,
                                               HostRegisterFlags flags) {
  if (Error err = checkRegistration(ptr, nbytes, flags))
    return err;
  Expected<CudaApi> api = load();
  if (!api)
    return api.takeError();
  return HostRegistration::create(*api, ptr, nbytes, flags);
}

Expected<HostRegistration>
etcopy::runtime::makeHostRegistration(const char *libraryPath, void *ptr,
                                      std::size_t nbytes,
                                      HostRegisterFlags flags) {
  return registerWith([&] { return loadCudaApi(libraryPath); }, ptr, nbytes,
                      flags);
}

Expected<HostRegistration>
etcopy::runtime::makeSimulatorHostRegistration(void *ptr, std::size_t nbytes,
                                               HostRegisterFlags flags) {
  return registerWith(&CudaApi::loadSimulator, ptr, nbytes, flags);
}

//===----------------------------------------------------------------------===//
// Method signatures
//===----------------------------------------------------------------------===//

std::string etcopy::runtime::toString(const ValueDescription &value) {
  std::string bytes = std::to_string(value.elementBytes) + "-byte";
  switch (value.kind) {
  case ValueKind::Scalar:
    return bytes + " scalar";
  case ValueKind::MemRef:
    return "rank-" + std::to_string(value.rank) + " memref of " + bytes +
           " elements on " + toString(value.device);
  case ValueKind::UnrankedMemRef:
    return "unranked memref of " + bytes + " elements on " +
           toString(value.device);
  }
  return "unknown value";
}

/// Checks one exported etcopy_value_desc; `what` names it in errors.
static Expected<ValueDescription> readValue(const etcopy_value_desc &desc,
                                            const std::string &what) {
  ValueDescription value;
  switch (desc.kind) {
  case ETCOPY_VALUE_SCALAR:
  case ETCOPY_VALUE_MEMREF:
  case ETCOPY_VALUE_UNRANKED_MEMREF:
    value.kind = static_cast<ValueKind>(desc.kind);
    break;
  default:
    return invalidArgument(what + ": invalid value kind " +
                           std::to_string(desc.kind) +
                           " (0 scalar, 1 memref, 2 unranked memref)");
  }
  Expected<DeviceKind> kind = deviceKindFromValue(desc.device_kind);
  if (!kind)
    return Error(kind.error().code(), what + ": " + kind.error().message());
  if (desc.ordinal < 0 || (*kind == DeviceKind::CPU && desc.ordinal != 0))
    return invalidArgument(what + ": invalid ordinal " +
                           std::to_string(desc.ordinal) + " for " +
                           toString(*kind));
  if (value.kind == ValueKind::Scalar && *kind != DeviceKind::CPU)
    return invalidArgument(what + ": a scalar cannot live on " +
                           toString(Device{*kind, desc.ordinal}));
  if (desc.rank < 0 || (value.kind != ValueKind::MemRef && desc.rank != 0))
    return invalidArgument(what + ": invalid rank " +
                           std::to_string(desc.rank));
  if (desc.element_bytes <= 0)
    return invalidArgument(what + ": invalid element size " +
                           std::to_string(desc.element_bytes));
  value.device = Device{*kind, desc.ordinal};
  value.rank = desc.rank;
  value.elementBytes = static_cast<std::size_t>(desc.element_bytes);
  return value;
}

Expected<MethodSignature>
etcopy::runtime::readSignature(const etcopy_method_signature &signature) {
  MethodSignature result;
  struct List {
    const char *name;
    uint64_t count;
    const etcopy_value_desc *entries;
    std::vector<ValueDescription> &out;
  } lists[] = {
      {"argument", signature.num_arguments, signature.arguments,
       result.arguments},
      {"result", signature.num_results, signature.results, result.results},
  };
  for (List &list : lists) {
    if (list.count != 0 && !list.entries)
      return invalidArgument(std::string("signature lists ") +
                             std::to_string(list.count) + " " + list.name +
                             "(s) but its array is null");
    for (uint64_t i = 0; i < list.count; ++i) {
      Expected<ValueDescription> value = readValue(
          list.entries[i], std::string(list.name) + " #" + std::to_string(i));
      if (!value)
        return value.takeError();
      list.out.push_back(*value);
    }
  }
  return result;
}
