//===- EtCopyRuntime.h - C interface of the etcopy host runtime ---*- C -*-===//
//
// The C interface of libEtCopyRuntime: device allocator registries, raw
// allocations and copies, owning device buffers, pinned host memory, and the
// per-function arena metadata that compiled code exports. Every function that
// can fail returns an etcopy_status; the message of the last call on the
// calling thread is available from etcopy_last_error_message(). Nothing here
// throws or aborts. Includable from C99 and C++.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_RUNTIME_ETCOPYRUNTIME_H
#define ETCOPY_RUNTIME_ETCOPYRUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifndef ETCOPY_RUNTIME_EXPORT
#if defined(__GNUC__) || defined(__clang__)
#define ETCOPY_RUNTIME_EXPORT __attribute__((visibility("default")))
#else
#define ETCOPY_RUNTIME_EXPORT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

//===- Status codes and device kinds (stable ABI values) ------------------===//

// Result of every fallible function. The values equal those of the C++
// etcopy::runtime::ErrorCode enumerators.
typedef enum etcopy_status {
  ETCOPY_STATUS_OK = 0,
  ETCOPY_STATUS_INVALID_ARGUMENT = 1,
  ETCOPY_STATUS_NOT_FOUND = 2,
  ETCOPY_STATUS_ALREADY_EXISTS = 3,
  ETCOPY_STATUS_OUT_OF_MEMORY = 4,
  ETCOPY_STATUS_DEVICE_ERROR = 5,
  ETCOPY_STATUS_UNAVAILABLE = 6,
  ETCOPY_STATUS_INTERNAL = 7
} etcopy_status;

// Device kinds. These values are the ABI shared with the compiler's metadata
// (etcopy_arena_desc::device_kind) and with etcopy::runtime::DeviceKind.
typedef enum etcopy_device_kind {
  ETCOPY_DEVICE_CPU = 0,
  ETCOPY_DEVICE_CUDA = 1
} etcopy_device_kind;

//===- Arena metadata exported by compiled code ---------------------------===//

// One memory-planned arena: `size` bytes on device (device_kind, ordinal),
// aligned to `alignment` (a power of two).
typedef struct etcopy_arena_desc {
  int32_t device_kind;
  int32_t ordinal;
  uint64_t size;
  uint64_t alignment;
} etcopy_arena_desc;

// All arenas of one compiled function, in planner order.
typedef struct etcopy_function_arenas {
  uint64_t num_arenas;
  const etcopy_arena_desc *arenas;
} etcopy_function_arenas;

//===- Method signatures exported by compiled code ------------------------===//

// What an argument or result of a compiled method is. Stable ABI values,
// shared with the compiler's metadata (etcopy_value_desc::kind) and with
// etcopy::runtime::ValueKind.
typedef enum etcopy_value_kind {
  ETCOPY_VALUE_SCALAR = 0,
  ETCOPY_VALUE_MEMREF = 1,
  ETCOPY_VALUE_UNRANKED_MEMREF = 2
} etcopy_value_kind;

// One argument or result of a compiled method: for a memref, where its data
// lives (device_kind, ordinal), its rank (0 when unranked) and the bytes of
// one element; for a scalar, the host and its size.
typedef struct etcopy_value_desc {
  int32_t kind;
  int32_t device_kind;
  int32_t ordinal;
  int32_t rank;
  int64_t element_bytes;
} etcopy_value_desc;

// The arguments and results of one compiled method, in order, exported as
// `<method>_etcopy_signature` by etcopy-export-signatures. Under the
// skip-h2d / skip-d2h options and with caller-owned arenas, some memrefs
// are device memory: the caller passes (and receives) device pointers there.
typedef struct etcopy_method_signature {
  uint64_t num_arguments;
  const etcopy_value_desc *arguments;
  uint64_t num_results;
  const etcopy_value_desc *results;
} etcopy_method_signature;

//===- Opaque handles -----------------------------------------------------===//

// A map from device kind to allocator (etcopy::runtime::
// DeviceAllocatorRegistry).
typedef struct etcopy_registry etcopy_registry;
// One owned allocation (etcopy::runtime::DeviceBuffer).
typedef struct etcopy_device_buffer etcopy_device_buffer;
// The owned arenas of one function, allocated all-or-nothing.
typedef struct etcopy_arena_set etcopy_arena_set;
// A page-locked range of caller memory (etcopy::runtime::HostRegistration).
typedef struct etcopy_host_registration etcopy_host_registration;

//===- Errors and names ---------------------------------------------------===//

// The message of the most recent call on this thread; "" after a call that
// succeeded. The pointer stays valid until the next etcopy_* call on this
// thread. Never NULL.
ETCOPY_RUNTIME_EXPORT const char *etcopy_last_error_message(void);

// "Ok", "InvalidArgument", ...; "Unknown" for values outside the enum. It
// takes the status as an int32_t (the enum's ABI) so that any value, such
// as one read from elsewhere, can be named without undefined behaviour.
ETCOPY_RUNTIME_EXPORT const char *etcopy_status_name(int32_t status);

// "cpu" or "cuda"; NULL for an unknown kind.
ETCOPY_RUNTIME_EXPORT const char *etcopy_device_kind_name(int32_t device_kind);

// Parses "kind[:ordinal]" (case-insensitive kind, ordinal defaults to 0),
// e.g. "cuda:1". Either output pointer may be NULL.
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_parse_device(const char *spec,
                                                        int32_t *device_kind,
                                                        int32_t *ordinal);

//===- Registries ---------------------------------------------------------===//

// Flag for etcopy_registry_create: do not pre-register the host (CPU)
// allocator.
#define ETCOPY_REGISTRY_NO_HOST_ALLOCATOR 1u

// Creates an independent registry. Unless `flags` contains
// ETCOPY_REGISTRY_NO_HOST_ALLOCATOR, the built-in host allocator is
// registered for ETCOPY_DEVICE_CPU.
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_registry_create(uint32_t flags, etcopy_registry **out);

// Destroys a registry made by etcopy_registry_create. Buffers and arena sets
// allocated through it stay valid (they keep their allocator alive).
// Destroying NULL or the process-wide registry does nothing.
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_registry_destroy(etcopy_registry *registry);

// The process-wide registry (host allocator pre-registered).
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_registry_global(etcopy_registry **out);

// Registers a CUDA allocator for ETCOPY_DEVICE_CUDA. With library_path NULL
// the CUDA Runtime API symbols are resolved in the process (libcudart or the
// simulator must already be linked/loaded globally); otherwise the library is
// dlopen'ed. ETCOPY_STATUS_ALREADY_EXISTS when CUDA already has one.
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_registry_register_cuda(
    etcopy_registry *registry, const char *library_path);

// Registers a CUDA allocator backed by the CUDA simulator
// (libetcopy_cuda_sim.so, see etcopy::runtime::makeSimulatorAllocator).
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_registry_register_simulator(etcopy_registry *registry);

// Registers a pinned host allocator for ETCOPY_DEVICE_CPU: host memory from
// cudaMallocHost, freed with cudaFreeHost, through the CUDA runtime at
// library_path (NULL: the process's symbols, as etcopy_registry_register_cuda).
// Every CPU allocation through the registry is then page-locked, CPU arenas
// included, and copies between it and a device run at full bandwidth without
// blocking the host. Alignments are powers of two up to 4096. The registry
// must not have a CPU allocator already (ETCOPY_STATUS_ALREADY_EXISTS):
// create it with ETCOPY_REGISTRY_NO_HOST_ALLOCATOR, or unregister
// ETCOPY_DEVICE_CPU first.
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_registry_register_pinned_host(
    etcopy_registry *registry, const char *library_path);

// The same on the CUDA simulator (the machine etcopy_registry_register_
// simulator uses).
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_registry_register_pinned_host_simulator(etcopy_registry *registry);

// Removes the allocator of a kind; ETCOPY_STATUS_NOT_FOUND if none.
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_registry_unregister(etcopy_registry *registry, int32_t device_kind);

// *out = 1 if an allocator is registered for the kind, else 0.
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_registry_has_allocator(
    const etcopy_registry *registry, int32_t device_kind, int *out);

// Number of devices the allocator of `device_kind` can address.
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_device_count(
    etcopy_registry *registry, int32_t device_kind, int32_t *out);

//===- CUDA allocator options and memory pools ----------------------------===//

// The release threshold that keeps all freed memory in a pool (the pool then
// holds at most the peak of what was allocated from it): the default pool
// policy of CUDA allocators and of the lowered code.
#define ETCOPY_POOL_RELEASE_THRESHOLD_KEEP_ALL UINT64_MAX

// How a CUDA allocator allocates (etcopy::runtime::CudaAllocatorOptions).
// Fill it with etcopy_cuda_allocator_options_init, then change what you need;
// the flags are 0 or 1 (anything else is ETCOPY_STATUS_INVALID_ARGUMENT, so
// that an uninitialised struct is caught).
typedef struct etcopy_cuda_allocator_options {
  // 1 (default): allocate from each device's current memory pool
  // (cudaMallocAsync); 0: with cudaMalloc. cudaMalloc is used anyway where
  // the CUDA runtime lacks the stream-ordered allocator or a device has no
  // memory pools.
  int32_t use_memory_pool;
  // 1: pool_release_threshold is the pool policy. 0 (default): the policy is
  // $ETCOPY_POOL_RELEASE_THRESHOLD (decimal bytes) when set, else
  // ETCOPY_POOL_RELEASE_THRESHOLD_KEEP_ALL.
  int32_t has_pool_release_threshold;
  // The bytes of freed memory each device's pool keeps at a synchronisation
  // (cudaMemPoolAttrReleaseThreshold), set at the allocator's first
  // operation on the device. A pool's threshold is only ever raised, never
  // lowered below what the program set; 0 leaves the pools as they are.
  uint64_t pool_release_threshold;
} etcopy_cuda_allocator_options;

// Sets `options` to the defaults (use_memory_pool 1, no threshold: the
// environment's or ETCOPY_POOL_RELEASE_THRESHOLD_KEEP_ALL).
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_cuda_allocator_options_init(etcopy_cuda_allocator_options *options);

// etcopy_registry_register_cuda and etcopy_registry_register_simulator with
// `options`. ETCOPY_STATUS_INVALID_ARGUMENT for a flag other than 0 or 1, or
// for an unset threshold while $ETCOPY_POOL_RELEASE_THRESHOLD is not a
// decimal number of bytes.
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_registry_register_cuda_with_options(
    etcopy_registry *registry, const char *library_path,
    const etcopy_cuda_allocator_options *options);
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_registry_register_simulator_with_options(
    etcopy_registry *registry, const etcopy_cuda_allocator_options *options);

// *out = the release threshold the registry's CUDA allocator gives the
// pools (its options', or the environment's, or the default).
// ETCOPY_STATUS_NOT_FOUND without a CUDA allocator; ETCOPY_STATUS_UNAVAILABLE
// if the registry's CUDA allocator is not etcopy's (a C++ program registered
// its own).
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_cuda_pool_release_threshold(
    const etcopy_registry *registry, uint64_t *out);

// Gives the free memory that the memory pool of device `ordinal` keeps
// beyond `min_bytes_to_keep` back to the system (cudaMemPoolTrimTo; memory in
// use is never released), e.g. after a burst of work, where the pool policy
// keeps everything. Nothing to do where the allocator does not allocate from
// a pool. ETCOPY_STATUS_NOT_FOUND without a CUDA allocator,
// ETCOPY_STATUS_INVALID_ARGUMENT for an ordinal out of range,
// ETCOPY_STATUS_UNAVAILABLE if the CUDA runtime lacks cudaMemPoolTrimTo or
// the allocator is not etcopy's, ETCOPY_STATUS_DEVICE_ERROR if CUDA fails.
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_cuda_trim_memory_pool(
    etcopy_registry *registry, int32_t ordinal, uint64_t min_bytes_to_keep);

//===- Raw allocations and copies -----------------------------------------===//

// Allocates `nbytes` on (device_kind, ordinal). A zero-byte request succeeds
// with *out = NULL. Free with etcopy_deallocate.
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_allocate(etcopy_registry *registry, int32_t device_kind, int32_t ordinal,
                uint64_t nbytes, uint64_t alignment, void **out);

ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_deallocate(etcopy_registry *registry,
                                                      int32_t device_kind,
                                                      int32_t ordinal,
                                                      void *ptr);

// Copies host `src` to device `dst`. With `stream` NULL the copy is
// synchronous; otherwise it is enqueued on the stream (a cudaStream_t) and
// `src` must stay valid until etcopy_synchronize on that stream.
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_copy_host_to_device(
    etcopy_registry *registry, int32_t device_kind, int32_t ordinal, void *dst,
    const void *src, uint64_t nbytes, void *stream);

// Copies device `src` to host `dst`. With `stream` NULL the copy is complete
// on return; otherwise it is only enqueued and `dst` must not be read before
// etcopy_synchronize on that stream returns.
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_copy_device_to_host(
    etcopy_registry *registry, int32_t device_kind, int32_t ordinal, void *dst,
    const void *src, uint64_t nbytes, void *stream);

// Waits for `stream`, or for the whole device when `stream` is NULL.
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_synchronize(etcopy_registry *registry, int32_t device_kind,
                   int32_t ordinal, void *stream);

//===- Device buffers -----------------------------------------------------===//

ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_device_buffer_create(
    etcopy_registry *registry, int32_t device_kind, int32_t ordinal,
    uint64_t nbytes, uint64_t alignment, etcopy_device_buffer **out);

// Allocates `nbytes` on the device and copies `host` into it (the input of a
// method compiled with skip-h2d). With a stream the copy is asynchronous (see
// etcopy_copy_host_to_device).
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_device_buffer_create_from_host(
    etcopy_registry *registry, int32_t device_kind, int32_t ordinal,
    const void *host, uint64_t nbytes, void *stream,
    etcopy_device_buffer **out);

// Copies the first `nbytes` of the buffer into `host` (the output of a method
// compiled with skip-d2h). Always returns with the data in `host`: with a
// stream the copy is ordered after earlier work on it, then the stream is
// synchronized.
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_device_buffer_read(const etcopy_device_buffer *buffer, void *host,
                          uint64_t nbytes, void *stream);

// Frees the allocation and the handle; reports a failing deallocation (the
// handle is freed regardless). NULL does nothing.
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_device_buffer_destroy(etcopy_device_buffer *buffer);

ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_device_buffer_data(const etcopy_device_buffer *buffer, void **out);

ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_device_buffer_size(const etcopy_device_buffer *buffer, uint64_t *out);

// Either output pointer may be NULL.
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_device_buffer_device(
    const etcopy_device_buffer *buffer, int32_t *device_kind, int32_t *ordinal);

//===- Arenas -------------------------------------------------------------===//

// Allocates every arena of `arenas` on its device (CPU arenas through the
// registry's host allocator). All-or-nothing: on failure nothing stays
// allocated and *out is NULL.
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_arenas_allocate(
    etcopy_registry *registry, const etcopy_function_arenas *arenas,
    etcopy_arena_set **out);

ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_arena_set_count(const etcopy_arena_set *set, uint64_t *out);

// Base pointer of arena `index` (NULL for a zero-byte arena).
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_arena_set_data(const etcopy_arena_set *set, uint64_t index, void **out);

// An array of all base pointers, in arena order, owned by the set and valid
// until it is destroyed: the form compiled code takes.
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_arena_set_pointers(const etcopy_arena_set *set, void *const **out);

// Frees every arena and the handle. NULL does nothing.
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_arena_set_destroy(etcopy_arena_set *set);

//===- Registration of caller memory --------------------------------------===//

// Flags of etcopy_host_register, with the values of cudaHostRegister's. With
// unified addressing (every 64-bit CUDA platform) both give memory that every
// device sees as pinned; PORTABLE says so on any platform.
#define ETCOPY_HOST_REGISTER_DEFAULT 0u
#define ETCOPY_HOST_REGISTER_PORTABLE 1u

// Page-locks [ptr, ptr + nbytes), memory the caller owns, with
// cudaHostRegister of the CUDA runtime at library_path (NULL: the process's
// symbols), until etcopy_host_registration_destroy. A NULL ptr, a zero size
// or unknown flags are ETCOPY_STATUS_INVALID_ARGUMENT (checked before the
// library is loaded); a range overlapping a registered one is
// ETCOPY_STATUS_ALREADY_EXISTS. The memory must stay allocated while
// registered.
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_host_register(const char *library_path, void *ptr, uint64_t nbytes,
                     uint32_t flags, etcopy_host_registration **out);

// The same on the CUDA simulator.
ETCOPY_RUNTIME_EXPORT etcopy_status etcopy_host_register_simulator(
    void *ptr, uint64_t nbytes, uint32_t flags, etcopy_host_registration **out);

// Unregisters the range (cudaHostUnregister) and frees the handle; reports a
// failing unregistration (the handle is freed regardless). Copies using the
// range must have completed. NULL does nothing.
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_host_registration_destroy(etcopy_host_registration *registration);

//===- Method signatures --------------------------------------------------===//

// Checks every entry of `signature` (kind, device kind, ordinal, rank, element
// size): INVALID_ARGUMENT naming the first bad one, e.g. a signature read
// from a different version of the compiler.
ETCOPY_RUNTIME_EXPORT etcopy_status
etcopy_signature_validate(const etcopy_method_signature *signature);

// Whether `value` is a memref whose data is device memory: 1 if so, 0 for a
// host memref, a scalar or NULL.
ETCOPY_RUNTIME_EXPORT int etcopy_value_is_on_device(
    const etcopy_value_desc *value);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // ETCOPY_RUNTIME_ETCOPYRUNTIME_H
