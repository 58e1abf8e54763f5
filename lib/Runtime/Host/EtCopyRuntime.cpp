//===- EtCopyRuntime.cpp - C interface of the etcopy host runtime ---------===//
//
// Implements the C functions of EtCopyRuntime.h on the C++ runtime. Every
// entry point validates its pointers, records its outcome in the thread-local
// last-error message and returns an etcopy_status; none throws or aborts.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Runtime/EtCopyRuntime.h"
#include "etcopy/Runtime/CudaApi.h"
#include "etcopy/Runtime/DeviceAllocator.h"

#include <cstddef>
#include <new>

using namespace etcopy::runtime;

static_assert(sizeof(etcopy_arena_desc) == 24 &&
                  offsetof(etcopy_arena_desc, device_kind) == 0 &&
                  offsetof(etcopy_arena_desc, ordinal) == 4 &&
                  offsetof(etcopy_arena_desc, size) == 8 &&
                  offsetof(etcopy_arena_desc, alignment) == 16,
              "etcopy_arena_desc layout is ABI");
static_assert(sizeof(etcopy_function_arenas) == 16 &&
                  offsetof(etcopy_function_arenas, arenas) == 8,
              "etcopy_function_arenas layout is ABI");
static_assert(static_cast<int>(ErrorCode::Internal) == ETCOPY_STATUS_INTERNAL,
              "ErrorCode and etcopy_status must agree");

struct etcopy_registry {
  DeviceAllocatorRegistry *registry;
  bool owned;
};

struct etcopy_device_buffer {
  DeviceBuffer buffer;
};

struct etcopy_arena_set {
  std::vector<DeviceBuffer> buffers;
  std::vector<void *> pointers;
};

struct etcopy_host_registration {
  HostRegistration registration;
};

//===----------------------------------------------------------------------===//
// Status bookkeeping
//===----------------------------------------------------------------------===//

static thread_local std::string lastErrorMessage;

/// Records `err` as the outcome of the current call and returns its status.
static etcopy_status finish(const Error &err) {
  lastErrorMessage = err.message();
  return static_cast<etcopy_status>(err.code());
}

static etcopy_status succeed() { return finish(Error::success()); }

static etcopy_status fail(ErrorCode code, std::string message) {
  return finish(Error(code, std::move(message)));
}

static etcopy_status nullArgument(const char *function, const char *argument) {
  return fail(ErrorCode::InvalidArgument, std::string(function) +
                                              ": argument '" + argument +
                                              "' must not be null");
}

#define ETCOPY_REQUIRE(ARG)                                                    \
  do {                                                                         \
    if (!(ARG))                                                                \
      return nullArgument(__func__, #ARG);                                     \
  } while (false)

/// Looks up the allocator of `kind`, reporting failures.
static Expected<std::shared_ptr<DeviceAllocator>>
lookupAllocator(const etcopy_registry *registry, int32_t kind) {
  Expected<DeviceKind> deviceKind = deviceKindFromValue(kind);
  if (!deviceKind)
    return deviceKind.takeError();
  return registry->registry->lookup(*deviceKind);
}

template <typename T> static T *newOrNull() { return new (std::nothrow) T(); }

/// Moves the value of `result` into a new `Handle` (whose only member holds
/// it) stored to `*out`; `what` names the handle when memory runs out.
template <typename Handle, typename T>
static etcopy_status wrapHandle(Expected<T> result, Handle **out,
                                const char *what) {
  if (!result)
    return finish(result.error());
  Handle *handle = new (std::nothrow) Handle{std::move(*result)};
  if (!handle)
    return fail(ErrorCode::OutOfMemory,
                std::string("out of host memory for ") + what);
  *out = handle;
  return succeed();
}

//===----------------------------------------------------------------------===//
// Errors and names
//===----------------------------------------------------------------------===//

const char *etcopy_last_error_message(void) { return lastErrorMessage.c_str(); }

const char *etcopy_status_name(int32_t status) {
  // ErrorCode has a fixed underlying type: any int32_t is a valid value.
  return toString(static_cast<ErrorCode>(status));
}

const char *etcopy_device_kind_name(int32_t device_kind) {
  Expected<DeviceKind> kind = deviceKindFromValue(device_kind);
  return kind ? toString(*kind) : nullptr;
}

etcopy_status etcopy_parse_device(const char *spec, int32_t *device_kind,
                                  int32_t *ordinal) {
  ETCOPY_REQUIRE(spec);
  Expected<Device> device = parseDevice(spec);
  if (!device)
    return finish(device.error());
  if (device_kind)
    *device_kind = static_cast<int32_t>(device->kind);
  if (ordinal)
    *ordinal = device->ordinal;
  return succeed();
}

//===----------------------------------------------------------------------===//
// Registries
//===----------------------------------------------------------------------===//

etcopy_status etcopy_registry_create(uint32_t flags, etcopy_registry **out) {
  ETCOPY_REQUIRE(out);
  *out = nullptr;
  if (flags & ~ETCOPY_REGISTRY_NO_HOST_ALLOCATOR)
    return fail(ErrorCode::InvalidArgument,
                "etcopy_registry_create: unknown flags " +
                    std::to_string(flags));
  auto *registry = new (std::nothrow)
      DeviceAllocatorRegistry(!(flags & ETCOPY_REGISTRY_NO_HOST_ALLOCATOR));
  auto *handle = new (std::nothrow) etcopy_registry{registry, true};
  if (!registry || !handle) {
    delete registry;
    delete handle;
    return fail(ErrorCode::OutOfMemory, "etcopy_registry_create: out of "
                                        "memory");
  }
  *out = handle;
  return succeed();
}

etcopy_status etcopy_registry_destroy(etcopy_registry *registry) {
  if (registry && registry->owned) {
    delete registry->registry;
    delete registry;
  }
  return succeed();
}

etcopy_status etcopy_registry_global(etcopy_registry **out) {
  ETCOPY_REQUIRE(out);
  static etcopy_registry global{&DeviceAllocatorRegistry::global(), false};
  *out = &global;
  return succeed();
}

/// Registers `allocator` (or reports why there is none) in `registry`.
template <typename AllocatorT>
static etcopy_status
registerAllocator(etcopy_registry *registry,
                  Expected<std::shared_ptr<AllocatorT>> allocator) {
  if (!allocator)
    return finish(allocator.error());
  return finish(registry->registry->registerAllocator(std::move(*allocator)));
}

etcopy_status etcopy_registry_register_cuda(etcopy_registry *registry,
                                            const char *library_path) {
  ETCOPY_REQUIRE(registry);
  return registerAllocator(registry, makeCudaAllocator(library_path));
}

etcopy_status etcopy_registry_register_simulator(etcopy_registry *registry) {
  ETCOPY_REQUIRE(registry);
  return registerAllocator(registry, makeSimulatorAllocator());
}

/// Registers a pinned host allocator, or reports why not; a CPU allocator
/// already there (the built-in one, usually) gets a hint.
static etcopy_status
registerPinnedHost(etcopy_registry *registry,
                   Expected<std::shared_ptr<PinnedHostAllocator>> allocator) {
  etcopy_status status = registerAllocator(registry, std::move(allocator));
  if (status == ETCOPY_STATUS_ALREADY_EXISTS)
    return fail(ErrorCode::AlreadyExists,
                lastErrorMessage + "; create the registry with "
                                   "ETCOPY_REGISTRY_NO_HOST_ALLOCATOR or "
                                   "unregister ETCOPY_DEVICE_CPU first");
  return status;
}

etcopy_status etcopy_registry_register_pinned_host(etcopy_registry *registry,
                                                   const char *library_path) {
  ETCOPY_REQUIRE(registry);
  return registerPinnedHost(registry, makePinnedHostAllocator(library_path));
}

etcopy_status
etcopy_registry_register_pinned_host_simulator(etcopy_registry *registry) {
  ETCOPY_REQUIRE(registry);
  return registerPinnedHost(registry, makeSimulatorPinnedHostAllocator());
}

etcopy_status etcopy_registry_unregister(etcopy_registry *registry,
                                         int32_t device_kind) {
  ETCOPY_REQUIRE(registry);
  Expected<DeviceKind> kind = deviceKindFromValue(device_kind);
  if (!kind)
    return finish(kind.error());
  return finish(registry->registry->unregisterAllocator(*kind));
}

etcopy_status etcopy_registry_has_allocator(const etcopy_registry *registry,
                                            int32_t device_kind, int *out) {
  ETCOPY_REQUIRE(registry);
  ETCOPY_REQUIRE(out);
  *out = 0;
  Expected<DeviceKind> kind = deviceKindFromValue(device_kind);
  if (!kind)
    return finish(kind.error());
  *out = registry->registry->contains(*kind) ? 1 : 0;
  return succeed();
}

etcopy_status etcopy_device_count(etcopy_registry *registry,
                                  int32_t device_kind, int32_t *out) {
  ETCOPY_REQUIRE(registry);
  ETCOPY_REQUIRE(out);
  *out = 0;
  Expected<std::shared_ptr<DeviceAllocator>> allocator =
      lookupAllocator(registry, device_kind);
  if (!allocator)
    return finish(allocator.error());
  Expected<int> count = (*allocator)->getDeviceCount();
  if (!count)
    return finish(count.error());
  *out = *count;
  return succeed();
}

//===----------------------------------------------------------------------===//
// CUDA allocator options and memory pools
//===----------------------------------------------------------------------===//

static_assert(sizeof(etcopy_cuda_allocator_options) == 16 &&
                  offsetof(etcopy_cuda_allocator_options, use_memory_pool) ==
                      0 &&
                  offsetof(etcopy_cuda_allocator_options,
                           has_pool_release_threshold) == 4 &&
                  offsetof(etcopy_cuda_allocator_options,
                           pool_release_threshold) == 8,
              "etcopy_cuda_allocator_options layout is ABI");
static_assert(ETCOPY_POOL_RELEASE_THRESHOLD_KEEP_ALL ==
                  kDefaultPoolReleaseThreshold,
              "the C and C++ default pool policies must agree");

etcopy_status
etcopy_cuda_allocator_options_init(etcopy_cuda_allocator_options *options) {
  ETCOPY_REQUIRE(options);
  CudaAllocatorOptions defaults;
  options->use_memory_pool = defaults.useMemoryPool ? 1 : 0;
  options->has_pool_release_threshold = 0;
  options->pool_release_threshold = 0;
  return succeed();
}

/// The C++ options of `options`, or InvalidArgument naming the field that
/// is not a flag.
static Expected<CudaAllocatorOptions>
toCudaAllocatorOptions(const char *function,
                       const etcopy_cuda_allocator_options &options) {
  auto checkFlag = [&](const char *field, int32_t value) -> Error {
    if (value == 0 || value == 1)
      return Error::success();
    return Error(ErrorCode::InvalidArgument,
                 std::string(function) + ": options->" + field + " is " +
                     std::to_string(value) +
                     ", not 0 or 1 (initialise the options with "
                     "etcopy_cuda_allocator_options_init)");
  };
  if (Error err = checkFlag("use_memory_pool", options.use_memory_pool))
    return err;
  if (Error err = checkFlag("has_pool_release_threshold",
                            options.has_pool_release_threshold))
    return err;
  CudaAllocatorOptions result;
  result.useMemoryPool = options.use_memory_pool != 0;
  if (options.has_pool_release_threshold)
    result.poolReleaseThreshold = options.pool_release_threshold;
  return result;
}

etcopy_status etcopy_registry_register_cuda_with_options(
    etcopy_registry *registry, const char *library_path,
    const etcopy_cuda_allocator_options *options) {
  ETCOPY_REQUIRE(registry);
  ETCOPY_REQUIRE(options);
  Expected<CudaAllocatorOptions> converted =
      toCudaAllocatorOptions(__func__, *options);
  if (!converted)
    return finish(converted.error());
  return registerAllocator(registry,
                           makeCudaAllocator(library_path, *converted));
}

etcopy_status etcopy_registry_register_simulator_with_options(
    etcopy_registry *registry, const etcopy_cuda_allocator_options *options) {
  ETCOPY_REQUIRE(registry);
  ETCOPY_REQUIRE(options);
  Expected<CudaAllocatorOptions> converted =
      toCudaAllocatorOptions(__func__, *options);
  if (!converted)
    return finish(converted.error());
  return registerAllocator(registry, makeSimulatorAllocator(*converted));
}

/// The registry's CUDA allocator if it is a CudaAllocator: NotFound without
/// one, Unavailable for another implementation.
static Expected<std::shared_ptr<CudaAllocator>>
lookupCudaAllocator(const etcopy_registry *registry, const char *function) {
  Expected<std::shared_ptr<DeviceAllocator>> allocator =
      lookupAllocator(registry, ETCOPY_DEVICE_CUDA);
  if (!allocator)
    return allocator.takeError();
  std::shared_ptr<CudaAllocator> cuda =
      std::dynamic_pointer_cast<CudaAllocator>(std::move(*allocator));
  if (!cuda)
    return Error(ErrorCode::Unavailable,
                 std::string(function) +
                     ": the registry's allocator for 'cuda' is not "
                     "etcopy's CUDA allocator, which has memory pools");
  return cuda;
}

etcopy_status etcopy_cuda_pool_release_threshold(
    const etcopy_registry *registry, uint64_t *out) {
  ETCOPY_REQUIRE(registry);
  ETCOPY_REQUIRE(out);
  *out = 0;
  Expected<std::shared_ptr<CudaAllocator>> cuda =
      lookupCudaAllocator(registry, __func__);
  if (!cuda)
    return finish(cuda.error());
  *out = (*cuda)->getPoolReleaseThreshold();
  return succeed();
}

etcopy_status etcopy_cuda_trim_memory_pool(etcopy_registry *registry,
                                           int32_t ordinal,
                                           uint64_t min_bytes_to_keep) {
  ETCOPY_REQUIRE(registry);
  Expected<std::shared_ptr<CudaAllocator>> cuda =
      lookupCudaAllocator(registry, __func__);
  if (!cuda)
    return finish(cuda.error());
  return finish((*cuda)->trimMemoryPool(
      ordinal, static_cast<std::size_t>(min_bytes_to_keep)));
}

//===----------------------------------------------------------------------===//
// Raw allocations and copies
//===----------------------------------------------------------------------===//

/// Runs `operation` (returning an Error) on the allocator registered for
/// `kind`: the shape of every per-allocator call of the C API.
template <typename Operation>
static etcopy_status callAllocator(const etcopy_registry *registry,
                                   int32_t kind, Operation &&operation) {
  Expected<std::shared_ptr<DeviceAllocator>> allocator =
      lookupAllocator(registry, kind);
  if (!allocator)
    return finish(allocator.error());
  return finish(operation(**allocator));
}

etcopy_status etcopy_allocate(etcopy_registry *registry, int32_t device_kind,
                              int32_t ordinal, uint64_t nbytes,
                              uint64_t alignment, void **out) {
  ETCOPY_REQUIRE(registry);
  ETCOPY_REQUIRE(out);
  *out = nullptr;
  Expected<std::shared_ptr<DeviceAllocator>> allocator =
      lookupAllocator(registry, device_kind);
  if (!allocator)
    return finish(allocator.error());
  Expected<void *> ptr =
      (*allocator)
          ->allocate(static_cast<std::size_t>(nbytes), ordinal,
                     static_cast<std::size_t>(alignment));
  if (!ptr)
    return finish(ptr.error());
  *out = *ptr;
  return succeed();
}

etcopy_status etcopy_deallocate(etcopy_registry *registry, int32_t device_kind,
                                int32_t ordinal, void *ptr) {
  ETCOPY_REQUIRE(registry);
  return callAllocator(registry, device_kind, [&](DeviceAllocator &allocator) {
    return allocator.deallocate(ptr, ordinal);
  });
}

etcopy_status etcopy_copy_host_to_device(etcopy_registry *registry,
                                         int32_t device_kind, int32_t ordinal,
                                         void *dst, const void *src,
                                         uint64_t nbytes, void *stream) {
  ETCOPY_REQUIRE(registry);
  return callAllocator(registry, device_kind, [&](DeviceAllocator &allocator) {
    return allocator.copyHostToDevice(
        dst, src, static_cast<std::size_t>(nbytes), ordinal, stream);
  });
}

etcopy_status etcopy_copy_device_to_host(etcopy_registry *registry,
                                         int32_t device_kind, int32_t ordinal,
                                         void *dst, const void *src,
                                         uint64_t nbytes, void *stream) {
  ETCOPY_REQUIRE(registry);
  return callAllocator(registry, device_kind, [&](DeviceAllocator &allocator) {
    return allocator.copyDeviceToHost(
        dst, src, static_cast<std::size_t>(nbytes), ordinal, stream);
  });
}

etcopy_status etcopy_synchronize(etcopy_registry *registry, int32_t device_kind,
                                 int32_t ordinal, void *stream) {
  ETCOPY_REQUIRE(registry);
  return callAllocator(registry, device_kind, [&](DeviceAllocator &allocator) {
    return allocator.synchronize(ordinal, stream);
  });
}

//===----------------------------------------------------------------------===//
// Device buffers
//===----------------------------------------------------------------------===//

/// Wraps `buffer` in a new handle stored to `*out`.
static etcopy_status wrapBuffer(Expected<DeviceBuffer> buffer,
                                etcopy_device_buffer **out) {
  return wrapHandle(std::move(buffer), out, "a device buffer handle");
}

etcopy_status etcopy_device_buffer_create(etcopy_registry *registry,
                                          int32_t device_kind, int32_t ordinal,
                                          uint64_t nbytes, uint64_t alignment,
                                          etcopy_device_buffer **out) {
  ETCOPY_REQUIRE(registry);
  ETCOPY_REQUIRE(out);
  *out = nullptr;
  Expected<DeviceKind> kind = deviceKindFromValue(device_kind);
  if (!kind)
    return finish(kind.error());
  return wrapBuffer(DeviceBuffer::allocate(*registry->registry, *kind, ordinal,
                                           static_cast<std::size_t>(nbytes),
                                           static_cast<std::size_t>(alignment)),
                    out);
}

etcopy_status etcopy_device_buffer_create_from_host(
    etcopy_registry *registry, int32_t device_kind, int32_t ordinal,
    const void *host, uint64_t nbytes, void *stream,
    etcopy_device_buffer **out) {
  ETCOPY_REQUIRE(registry);
  ETCOPY_REQUIRE(out);
  *out = nullptr;
  Expected<DeviceKind> kind = deviceKindFromValue(device_kind);
  if (!kind)
    return finish(kind.error());
  return wrapBuffer(makeDeviceInput(*registry->registry, *kind, ordinal, host,
                                    static_cast<std::size_t>(nbytes), stream),
                    out);
}

etcopy_status etcopy_device_buffer_read(const etcopy_device_buffer *buffer,
                                        void *host, uint64_t nbytes,
                                        void *stream) {
  ETCOPY_REQUIRE(buffer);
  return finish(readDeviceOutput(buffer->buffer, host,
                                 static_cast<std::size_t>(nbytes), stream));
}

etcopy_status etcopy_device_buffer_destroy(etcopy_device_buffer *buffer) {
  if (!buffer)
    return succeed();
  Error err = buffer->buffer.reset();
  delete buffer;
  return finish(err);
}

etcopy_status etcopy_device_buffer_data(const etcopy_device_buffer *buffer,
                                        void **out) {
  ETCOPY_REQUIRE(buffer);
  ETCOPY_REQUIRE(out);
  *out = buffer->buffer.data();
  return succeed();
}

etcopy_status etcopy_device_buffer_size(const etcopy_device_buffer *buffer,
                                        uint64_t *out) {
  ETCOPY_REQUIRE(buffer);
  ETCOPY_REQUIRE(out);
  *out = buffer->buffer.size();
  return succeed();
}

etcopy_status etcopy_device_buffer_device(const etcopy_device_buffer *buffer,
                                          int32_t *device_kind,
                                          int32_t *ordinal) {
  ETCOPY_REQUIRE(buffer);
  if (device_kind)
    *device_kind = static_cast<int32_t>(buffer->buffer.kind());
  if (ordinal)
    *ordinal = buffer->buffer.ordinal();
  return succeed();
}

//===----------------------------------------------------------------------===//
// Arenas
//===----------------------------------------------------------------------===//

etcopy_status etcopy_arenas_allocate(etcopy_registry *registry,
                                     const etcopy_function_arenas *arenas,
                                     etcopy_arena_set **out) {
  ETCOPY_REQUIRE(registry);
  ETCOPY_REQUIRE(arenas);
  ETCOPY_REQUIRE(out);
  *out = nullptr;
  Expected<std::vector<DeviceBuffer>> buffers =
      allocateArenas(*registry->registry, *arenas);
  if (!buffers)
    return finish(buffers.error());
  etcopy_arena_set *set = newOrNull<etcopy_arena_set>();
  if (!set)
    return fail(ErrorCode::OutOfMemory, "out of host memory for an arena "
                                        "set handle");
  set->buffers = std::move(*buffers);
  set->pointers.reserve(set->buffers.size());
  for (const DeviceBuffer &buffer : set->buffers)
    set->pointers.push_back(buffer.data());
  *out = set;
  return succeed();
}

etcopy_status etcopy_arena_set_count(const etcopy_arena_set *set,
                                     uint64_t *out) {
  ETCOPY_REQUIRE(set);
  ETCOPY_REQUIRE(out);
  *out = set->buffers.size();
  return succeed();
}

etcopy_status etcopy_arena_set_data(const etcopy_arena_set *set, uint64_t index,
                                    void **out) {
  ETCOPY_REQUIRE(set);
  ETCOPY_REQUIRE(out);
  *out = nullptr;
  if (index >= set->buffers.size())
    return fail(ErrorCode::InvalidArgument,
                "etcopy_arena_set_data: arena index " + std::to_string(index) +
                    " is out of range (the set has " +
                    std::to_string(set->buffers.size()) + " arenas)");
  *out = set->buffers[index].data();
  return succeed();
}

etcopy_status etcopy_arena_set_pointers(const etcopy_arena_set *set,
                                        void *const **out) {
  ETCOPY_REQUIRE(set);
  ETCOPY_REQUIRE(out);
  *out = set->pointers.data();
  return succeed();
}

etcopy_status etcopy_arena_set_destroy(etcopy_arena_set *set) {
  if (!set)
    return succeed();
  Error first;
  for (DeviceBuffer &buffer : set->buffers) {
    Error err = buffer.reset();
    if (err && first.ok())
      first = std::move(err);
  }
  delete set;
  return finish(first);
}

//===----------------------------------------------------------------------===//
// Registration of caller memory
//===----------------------------------------------------------------------===//

/// Wraps `registration` in a new handle stored to `*out`.
static etcopy_status wrapRegistration(Expected<HostRegistration> registration,
                                      etcopy_host_registration **out) {
  return wrapHandle(std::move(registration), out, "a host registration handle");
}

etcopy_status etcopy_host_register(const char *library_path, void *ptr,
                                   uint64_t nbytes, uint32_t flags,
                                   etcopy_host_registration **out) {
  ETCOPY_REQUIRE(out);
  *out = nullptr;
  return wrapRegistration(
      makeHostRegistration(library_path, ptr, static_cast<std::size_t>(nbytes),
                           static_cast<HostRegisterFlags>(flags)),
      out);
}

etcopy_status etcopy_host_register_simulator(void *ptr, uint64_t nbytes,
                                             uint32_t flags,
                                             etcopy_host_registration **out) {
  ETCOPY_REQUIRE(out);
  *out = nullptr;
  return wrapRegistration(
      makeSimulatorHostRegistration(ptr, static_cast<std::size_t>(nbytes),
                                    static_cast<HostRegisterFlags>(flags)),
      out);
}

etcopy_status
etcopy_host_registration_destroy(etcopy_host_registration *registration) {
  if (!registration)
    return succeed();
  Error err = registration->registration.reset();
  delete registration;
  return finish(err);
}

//===----------------------------------------------------------------------===//
// Method signatures
//===----------------------------------------------------------------------===//

etcopy_status
etcopy_signature_validate(const etcopy_method_signature *signature) {
  ETCOPY_REQUIRE(signature);
  Expected<MethodSignature> read = readSignature(*signature);
  return read ? succeed() : finish(read.error());
}

int etcopy_value_is_on_device(const etcopy_value_desc *value) {
  return value && value->kind != ETCOPY_VALUE_SCALAR &&
         value->device_kind != ETCOPY_DEVICE_CPU;
}
