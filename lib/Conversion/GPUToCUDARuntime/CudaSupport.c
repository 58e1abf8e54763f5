/*===- CudaSupport.c - Runtime support of the CUDA lowering -------*- C -*-===*\
|*                                                                            *|
|* The functions that code lowered by convert-gpu-to-cuda-runtime calls (see  *|
|* CudaSupport.h): one checked wrapper per CUDA entry point or fixed call     *|
|* sequence. This file holds the error policy and its helpers, the release    *|
|* at exit, the default streams, the kernels, the memory pools, the device    *|
|* switches, the join events and device memory; CudaSupportTransfers.c holds  *|
|* the host buffer caches, the copies (batches, peers, strided) and the       *|
|* memsets, and CudaSupportGraphs.c the CUDA graphs. The build compiles each  *|
|* file to LLVM IR with clang, links them with llvm-link and internalizes     *|
|* all but the public symbols (lib/Conversion/CMakeLists.txt), so that what   *|
|* CudaSupportInternal.h shares stays internal like this file's statics; it   *|
|* imports the result with mlir-translate, and the pass copies the functions  *|
|* a module uses into it. The code may call only the CUDA Runtime API and     *|
|* libc, so that lowered programs link against libcudart (or the simulator)   *|
|* alone.                                                                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "CudaSupportInternal.h"
#include "CudaSimKernels.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*===----------------------------------------------------------------------===*
 * Errors
 *===----------------------------------------------------------------------===*/

/* True when `call` names a driver function, whose result is a CUresult. */
static int is_driver_call(const char *call) {
  return call[0] == 'c' && call[1] == 'u' && strncmp(call, "cuda", 4) != 0;
}

/* The name and description of a CUresult: from the driver when it provides
 * cuGetErrorName and cuGetErrorString, else from the codes the memsets
 * document. */
static void describe_driver_error(int err, const char **name,
                                  const char **text) {
  typedef int (*describe_fn)(int, const char **);
  void *get_name = NULL, *get_text = NULL;
  *name = NULL;
  *text = NULL;
  if (cudaGetDriverEntryPointByVersion("cuGetErrorName", &get_name, 6000,
                                       cudaEnableDefault, NULL) == 0 &&
      cudaGetDriverEntryPointByVersion("cuGetErrorString", &get_text, 6000,
                                       cudaEnableDefault, NULL) == 0 &&
      get_name && get_text &&
      ((describe_fn)get_name)(err, name) == 0 &&
      ((describe_fn)get_text)(err, text) == 0 && *name && *text)
    return;
  switch (err) {
  case 1:
    *name = "CUDA_ERROR_INVALID_VALUE";
    *text = "invalid argument";
    return;
  case 2:
    *name = "CUDA_ERROR_OUT_OF_MEMORY";
    *text = "out of memory";
    return;
  case 3:
    *name = "CUDA_ERROR_NOT_INITIALIZED";
    *text = "initialization error";
    return;
  case 4:
    *name = "CUDA_ERROR_DEINITIALIZED";
    *text = "driver shutting down";
    return;
  case 100:
    *name = "CUDA_ERROR_NO_DEVICE";
    *text = "no CUDA-capable device is detected";
    return;
  case 101:
    *name = "CUDA_ERROR_INVALID_DEVICE";
    *text = "invalid device ordinal";
    return;
  case 201:
    *name = "CUDA_ERROR_INVALID_CONTEXT";
    *text = "invalid device context";
    return;
  case 400:
    *name = "CUDA_ERROR_INVALID_HANDLE";
    *text = "invalid resource handle";
    return;
  case 700:
    *name = "CUDA_ERROR_ILLEGAL_ADDRESS";
    *text = "an illegal memory access was encountered";
    return;
  case 999:
    *name = "CUDA_ERROR_UNKNOWN";
    *text = "unknown error";
    return;
  default:
    *name = "CUresult";
    *text = "unrecognized error code";
    return;
  }
}

/* The default error policy: report and exit. Weak, so that a program that
 * embeds the generated code replaces it by defining the symbol. */
__attribute__((weak)) void etcopy_cuda_error(int err, const char *location,
                                             const char *call,
                                             const char *what,
                                             unsigned long long bytes) {
  const char *name, *text;
  if (is_driver_call(call)) {
    describe_driver_error(err, &name, &text);
  } else {
    name = cudaGetErrorName((cudaError_t)err);
    text = cudaGetErrorString((cudaError_t)err);
  }
  if (bytes)
    dprintf(2, "%s: error: %s failed (%s, %llu bytes): %s: %s\n", location,
            call, what, bytes, name, text);
  else
    dprintf(2, "%s: error: %s failed (%s): %s: %s\n", location, call, what,
            name, text);
  exit(1);
}

/* "file:line:column", or the file alone without a line. */
static void format_location(char *buffer, size_t size, ETCOPY_LOCATION) {
  if (line > 0)
    snprintf(buffer, size, "%s:%d:%d", file, (int)line, (int)column);
  else
    snprintf(buffer, size, "%s", file);
}

/* Hands a failed call to the policy. */
__attribute__((noinline, cold)) void
report(int err, ETCOPY_LOCATION, const char *call, const char *what,
       uint64_t bytes) {
  char location[4096];
  format_location(location, sizeof location, ETCOPY_AT);
  etcopy_cuda_error(err, location, call, what, bytes);
}

/* Reports `err` unless it is cudaSuccess (or CUDA_SUCCESS); returns whether
 * the call succeeded. */
inline int check(int err, ETCOPY_LOCATION, const char *call,
                 const char *what, uint64_t bytes) {
  if (__builtin_expect(err == 0, 1))
    return 1;
  report(err, ETCOPY_AT, call, what, bytes);
  return 0;
}

/* A copy whose two sides differ in size is a bug of the program, not a
 * failure of CUDA: it is reported and the program exits, whatever the
 * policy, since the copy would overrun one side. */
__attribute__((noinline, cold, noreturn)) void
report_size_mismatch(ETCOPY_LOCATION, const char *what, int64_t dim,
                     int64_t srcSize, int64_t dstSize) {
  char location[4096];
  format_location(location, sizeof location, ETCOPY_AT);
  dprintf(2,
          "%s: error: %s: size mismatch in dimension %lld: source has %lld "
          "elements, destination %lld\n",
          location, what, (long long)dim, (long long)srcSize,
          (long long)dstSize);
  exit(1);
}

/* The number of bytes the environment variable `name` gives (decimal), or
 * `fallback` when it is unset or not a number. */
uint64_t get_env_bytes(const char *name, uint64_t fallback) {
  const char *text = getenv(name);
  char *end = NULL;
  unsigned long long value = text ? strtoull(text, &end, 10) : 0;
  return text && *text && end && !*end ? (uint64_t)value : fallback;
}

/*===----------------------------------------------------------------------===*
 * Release at exit
 *===----------------------------------------------------------------------===*/

/* What the lowered code keeps across calls (the default streams, the idle
 * host blocks) goes back to CUDA (or libc) while the CUDA runtime is still
 * alive. libcudart tears itself down from an exit handler that it registers
 * when it initialises; exit handlers run in the reverse order of their
 * registration, and only then do static destructors run (the executable's
 * .fini_array), when every CUDA call fails with cudaErrorCudartUnloading and
 * compute-sanitizer reports what was not freed. So the first time the code
 * keeps something, after CUDA has initialised, it registers an exit handler
 * of its own, which runs before libcudart's.
 *
 * Code that a JIT compiled (mlir-runner, an ExecutionEngine) is unloaded
 * before the process exits: an exit handler would then point into freed
 * memory. Such code lies in no loaded object (dladdr finds none), and the
 * JIT runs its static destructors when it unloads it, with CUDA alive: each
 * release is also a destructor. Releasing twice is harmless: a release takes
 * the resources it frees. Failures are ignored: the error policy must not
 * run from an exit handler or a destructor. */

extern void *__dso_handle __attribute__((visibility("hidden")));
int __cxa_atexit(void (*function)(void *), void *argument, void *dso);

/* Registers `handler` to run at exit (and, for a shared library, when it is
 * unloaded) once per module (`*registered` is this module's flag), when the
 * module's code lies in a loaded object. */
void release_at_exit(char *registered, void (*handler)(void *)) {
  if (__atomic_load_n(registered, __ATOMIC_ACQUIRE) ||
      __atomic_test_and_set(registered, __ATOMIC_ACQ_REL))
    return;
  Dl_info object;
  if (dladdr((void *)handler, &object) && object.dli_fbase)
    (void)__cxa_atexit(handler, NULL, &__dso_handle);
}

/*===----------------------------------------------------------------------===*
 * Streams and devices
 *===----------------------------------------------------------------------===*/

/* The default streams: one per device, created on first use and shared by
 * every lowered function (and module: the table has external linkage and is
 * emitted linkonce_odr). */
cudaStream_t __etcopy_streams[ETCOPY_MAX_DEVICES];

/* Destroys the default streams (see "Release at exit"). Lowered functions
 * synchronise before they return, so nothing is queued. */
__attribute__((destructor)) static void release_streams(void) {
  for (int device = 0; device < ETCOPY_MAX_DEVICES; ++device) {
    cudaStream_t stream =
        __atomic_exchange_n(&__etcopy_streams[device], NULL, __ATOMIC_ACQ_REL);
    if (stream)
      (void)cudaStreamDestroy(stream);
  }
}

static void release_streams_at_exit(void *unused) {
  (void)unused;
  release_streams();
}

/* The default stream provider. Weak, so that a program that embeds the
 * generated code supplies its own streams by defining the symbol. Called
 * with `device` current; threads racing to create a device's stream keep
 * the first one published. */
__attribute__((weak)) int etcopy_get_stream(int32_t device,
                                            cudaStream_t *stream) {
  *stream = NULL;
  if (device < 0 || device >= ETCOPY_MAX_DEVICES)
    return cudaErrorInvalidDevice;
  cudaStream_t cached =
      __atomic_load_n(&__etcopy_streams[device], __ATOMIC_ACQUIRE);
  if (!cached) {
    cudaStream_t created = NULL;
    int err = cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking);
    if (err != cudaSuccess)
      return err;
    if (__atomic_compare_exchange_n(&__etcopy_streams[device], &cached,
                                    created, /*weak=*/0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      static char registered;
      cached = created;
      release_at_exit(&registered, release_streams_at_exit);
    } else {
      (void)cudaStreamDestroy(created); /* Another thread published one. */
    }
  }
  *stream = cached;
  return cudaSuccess;
}

/*===----------------------------------------------------------------------===*
 * Kernels
 *===----------------------------------------------------------------------===*/

/* The library handles of the gpu.binary objects of every lowered module in
 * the process, for the release at exit: each module's binaries have one
 * handle cell each (a global of the module), recorded here when its library
 * is loaded. The table is shared like the table of streams; binaries
 * loaded beyond its size stay loaded until the process ends. */
#define ETCOPY_MAX_LIBRARIES 256
cudaLibrary_t *__etcopy_library_cells[ETCOPY_MAX_LIBRARIES];
uint32_t __etcopy_library_count;

/* Unloads every library loaded so far (see "Release at exit"). */
__attribute__((destructor)) static void release_libraries(void) {
  uint32_t count = __atomic_load_n(&__etcopy_library_count, __ATOMIC_ACQUIRE);
  if (count > ETCOPY_MAX_LIBRARIES)
    count = ETCOPY_MAX_LIBRARIES;
  for (uint32_t i = 0; i < count; ++i) {
    cudaLibrary_t *cell =
        __atomic_load_n(&__etcopy_library_cells[i], __ATOMIC_ACQUIRE);
    cudaLibrary_t library =
        cell ? __atomic_exchange_n(cell, NULL, __ATOMIC_ACQ_REL) : NULL;
    if (library)
      (void)cudaLibraryUnload(library);
  }
}

static void release_libraries_at_exit(void *unused) {
  (void)unused;
  release_libraries();
}

/* Gives the CUDA simulator the host versions of the kernels of `loaded`
 * (CudaSimKernels.h). Against the real libcudart the simulator's function
 * does not exist and there is nothing to do: the library has its device
 * code. Returns 0 if the simulator refused the table (reported). */
static int attach_host_kernels(cudaLibrary_t loaded,
                               const etcopy_host_kernel_table *hostKernels,
                               ETCOPY_LOCATION) {
  if (!hostKernels)
    return 1;
  etcopy_cuda_sim_attach_host_kernels_fn attach =
      (etcopy_cuda_sim_attach_host_kernels_fn)dlsym(
          RTLD_DEFAULT, ETCOPY_CUDA_SIM_ATTACH_HOST_KERNELS);
  return !attach ||
         check(attach(loaded, hostKernels), ETCOPY_AT,
               ETCOPY_CUDA_SIM_ATTACH_HOST_KERNELS,
               "give the CUDA simulator the host versions of the kernels", 0);
}

/* The library of `image`, loaded on first use, with `hostKernels` attached
 * on the simulator. */
static cudaLibrary_t get_library(cudaLibrary_t *cell, const void *image,
                                 const etcopy_host_kernel_table *hostKernels,
                                 ETCOPY_LOCATION) {
  cudaLibrary_t cached = __atomic_load_n(cell, __ATOMIC_ACQUIRE);
  if (cached)
    return cached;
  cudaLibrary_t loaded = NULL;
  if (!check(cudaLibraryLoadData(&loaded, image, NULL, NULL, 0, NULL, NULL, 0),
             ETCOPY_AT, "cudaLibraryLoadData",
             "load the device code of the kernels", 0) ||
      !loaded)
    return NULL;
  if (!attach_host_kernels(loaded, hostKernels, ETCOPY_AT)) {
    (void)cudaLibraryUnload(loaded);
    return NULL;
  }
  if (__atomic_compare_exchange_n(cell, &cached, loaded, /*weak=*/0,
                                  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    static char registered;
    uint32_t index =
        __atomic_fetch_add(&__etcopy_library_count, 1, __ATOMIC_ACQ_REL);
    if (index < ETCOPY_MAX_LIBRARIES)
      __atomic_store_n(&__etcopy_library_cells[index], cell, __ATOMIC_RELEASE);
    release_at_exit(&registered, release_libraries_at_exit);
    return loaded;
  }
  (void)cudaLibraryUnload(loaded); /* Another thread published one. */
  return cached;
}

cudaKernel_t __etcopy_get_kernel(cudaLibrary_t *library, const void *image,
                                 const void *hostKernels, cudaKernel_t *kernel,
                                 const char *name, ETCOPY_LOCATION) {
  cudaKernel_t cached = __atomic_load_n(kernel, __ATOMIC_ACQUIRE);
  if (cached)
    return cached;
  cudaLibrary_t loaded = get_library(library, image, hostKernels, ETCOPY_AT);
  if (!loaded)
    return NULL;
  cudaKernel_t found = NULL;
  if (!check(cudaLibraryGetKernel(&found, loaded, name), ETCOPY_AT,
             "cudaLibraryGetKernel", "find the kernel", 0))
    return NULL;
  /* Every thread finds the same handle: no race to settle. */
  __atomic_store_n(kernel, found, __ATOMIC_RELEASE);
  return found;
}

void __etcopy_launch_kernel(cudaKernel_t kernel, const char *name,
                            uint64_t gridX, uint64_t gridY, uint64_t gridZ,
                            uint64_t blockX, uint64_t blockY, uint64_t blockZ,
                            uint32_t sharedBytes, cudaStream_t stream,
                            void **args, ETCOPY_LOCATION) {
  (void)name;
  const char *what = "launch the kernel";
  if (!kernel) {
    /* The load or look-up failed and was reported: launch nothing. */
    report(cudaErrorInvalidResourceHandle, ETCOPY_AT, "cudaLaunchKernel", what,
           0);
    return;
  }
  /* dim3 holds 32-bit sizes: a larger one is an invalid configuration, not
   * a truncated launch. */
  if ((gridX | gridY | gridZ | blockX | blockY | blockZ) > UINT32_MAX) {
    report(cudaErrorInvalidConfiguration, ETCOPY_AT, "cudaLaunchKernel", what,
           0);
    return;
  }
  dim3 grid = {(unsigned)gridX, (unsigned)gridY, (unsigned)gridZ};
  dim3 block = {(unsigned)blockX, (unsigned)blockY, (unsigned)blockZ};
  check(cudaLaunchKernel((const void *)kernel, grid, block, args, sharedBytes,
                         stream),
        ETCOPY_AT, "cudaLaunchKernel", what, 0);
}

/*===----------------------------------------------------------------------===*
 * Memory pools
 *===----------------------------------------------------------------------===*/

/* Device memory comes from cudaMallocAsync, that is from the device's
 * current memory pool. With CUDA's default release threshold (0) the pool
 * gives its free memory back at every synchronisation, and the next
 * cudaMallocAsync maps it again: 87-129 us per 1 MiB allocation on an H200,
 * against 2.6 us when the pool keeps it. So the first stream request for a
 * device raises the release threshold of the device's current pool to what
 * the pool policy asks for. It never lowers a threshold the program set
 * higher. */

/* The default pool policy. Weak, so that a program that embeds the
 * generated code chooses by defining the symbol. */
__attribute__((weak)) uint64_t
etcopy_get_pool_release_threshold(int32_t device) {
  (void)device;
  return get_env_bytes("ETCOPY_POOL_RELEASE_THRESHOLD",
                       ETCOPY_DEFAULT_POOL_RELEASE_THRESHOLD);
}

/* Whether the policy was applied to each device's pool: one flag per device
 * and program (external, emitted linkonce_odr, like the table of streams). */
char __etcopy_pools_configured[ETCOPY_MAX_DEVICES];

/* Applies the pool policy to `device`, the current device, once per device
 * (ordinals from ETCOPY_MAX_DEVICES on: at every request). A failed call is
 * reported, and the policy is applied again at the next request. */
static void configure_pool(int32_t device, ETCOPY_LOCATION) {
  char *configured = device >= 0 && device < ETCOPY_MAX_DEVICES
                         ? &__etcopy_pools_configured[device]
                         : NULL;
  if (configured && (__atomic_load_n(configured, __ATOMIC_ACQUIRE) ||
                     __atomic_test_and_set(configured, __ATOMIC_ACQ_REL)))
    return;
  uint64_t threshold = etcopy_get_pool_release_threshold(device);
  if (threshold == 0)
    return;
  const char *what = "keep freed device memory in the memory pool";
  cudaMemPool_t pool = NULL;
  uint64_t current = 0;
  int applied = check(cudaDeviceGetMemPool(&pool, device), ETCOPY_AT,
                      "cudaDeviceGetMemPool", what, 0) &&
                check(cudaMemPoolGetAttribute(
                          pool, cudaMemPoolAttrReleaseThreshold, &current),
                      ETCOPY_AT, "cudaMemPoolGetAttribute", what, 0) &&
                (current >= threshold ||
                 check(cudaMemPoolSetAttribute(
                           pool, cudaMemPoolAttrReleaseThreshold, &threshold),
                       ETCOPY_AT, "cudaMemPoolSetAttribute", what, 0));
  if (!applied && configured)
    __atomic_clear(configured, __ATOMIC_RELEASE);
}

/* Makes `device` current unless it already is: cudaGetDevice reads the
 * thread's current device, while cudaSetDevice may switch the thread's
 * context. A failed cudaGetDevice is reported, and the device is then set.
 * Returns whether `device` is current. */
int select_device(int32_t device, ETCOPY_LOCATION, const char *what) {
  int current = -1;
  if (check(cudaGetDevice(&current), ETCOPY_AT, "cudaGetDevice", what, 0) &&
      current == device)
    return 1;
  return check(cudaSetDevice(device), ETCOPY_AT, "cudaSetDevice", what, 0);
}

cudaStream_t __etcopy_get_stream(int32_t device, ETCOPY_LOCATION) {
  const char *what = "get the device's stream";
  if (device >= 0) {
    (void)select_device(device, ETCOPY_AT, "select the device");
  } else {
    /* Device 0 if cudaGetDevice fails and the policy returns. */
    int current = 0;
    check(cudaGetDevice(&current), ETCOPY_AT, "cudaGetDevice", what, 0);
    device = current;
  }
  configure_pool(device, ETCOPY_AT);
  /* Without a stream the legacy default stream (null) orders the
   * function's work as well, only with more waiting. */
  cudaStream_t stream = NULL;
  if (!check(etcopy_get_stream(device, &stream), ETCOPY_AT,
             "etcopy_get_stream", what, 0))
    stream = NULL;
  return stream;
}

void __etcopy_stream_synchronize(cudaStream_t stream, ETCOPY_LOCATION) {
  check(cudaStreamSynchronize(stream), ETCOPY_AT, "cudaStreamSynchronize",
        "wait for the device work", 0);
}

int32_t __etcopy_get_device(ETCOPY_LOCATION) {
  int device = 0;
  check(cudaGetDevice(&device), ETCOPY_AT, "cudaGetDevice",
        "save the current device", 0);
  return device;
}

void __etcopy_set_device(int32_t device, ETCOPY_LOCATION) {
  (void)select_device(device, ETCOPY_AT, "select the device");
}

void __etcopy_restore_device(int32_t device, ETCOPY_LOCATION) {
  (void)select_device(device, ETCOPY_AT, "restore the caller's device");
}

/* The events of stream joins: one per stream (with its device), created on
 * the stream's device at the first join that waits for it and recorded
 * again at every later one. Re-recording is sound: cudaStreamWaitEvent
 * waits for the work before the event's most recent record, and a stream
 * runs its work in order, so a record that another thread made later on the
 * same stream covers everything the earlier one did. A fixed table with
 * open addressing (external linkage: shared by every lowered module, like
 * the streams); a join whose stream finds no slot (more than
 * ETCOPY_MAX_JOIN_EVENTS streams, a slot being filled by another thread, or
 * the legacy null stream) uses an event of its own, created and destroyed
 * around it. */
enum { ETCOPY_MAX_JOIN_EVENTS = 64 };
struct etcopy_join_event {
  cudaStream_t stream; /* Null: free. Claimed with a compare-and-swap. */
  int32_t device;      /* Written before `event` is published. */
  cudaEvent_t event;   /* Null until created. */
};
struct etcopy_join_event __etcopy_join_events[ETCOPY_MAX_JOIN_EVENTS];

/* Destroys the events of joins (see "Release at exit"). */
__attribute__((destructor)) static void release_join_events(void) {
  for (int i = 0; i < ETCOPY_MAX_JOIN_EVENTS; ++i) {
    cudaEvent_t event = __atomic_exchange_n(&__etcopy_join_events[i].event,
                                            NULL, __ATOMIC_ACQ_REL);
    if (event)
      (void)cudaEventDestroy(event);
  }
}

static void release_join_events_at_exit(void *unused) {
  (void)unused;
  release_join_events();
}

/* The slot of `stream` on `device`, claimed if new; null where none is
 * free. */
static struct etcopy_join_event *find_join_event(cudaStream_t stream,
                                                 int32_t device) {
  if (!stream)
    return NULL;
  uintptr_t hash = (uintptr_t)stream;
  hash ^= hash >> 17;
  for (int probe = 0; probe < ETCOPY_MAX_JOIN_EVENTS; ++probe) {
    struct etcopy_join_event *slot =
        &__etcopy_join_events[(hash + probe) % ETCOPY_MAX_JOIN_EVENTS];
    cudaStream_t owner = __atomic_load_n(&slot->stream, __ATOMIC_ACQUIRE);
    if (!owner) {
      cudaStream_t expected = NULL;
      if (__atomic_compare_exchange_n(&slot->stream, &expected, stream,
                                      /*weak=*/0, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&slot->device, device, __ATOMIC_RELEASE);
        return slot;
      }
      owner = expected;
    }
    if (owner == stream)
      return slot;
  }
  return NULL;
}

/* The event of `stream` (on `device`): its slot's, created on the stream's
 * device at the first request; where the stream has no slot, a new event
 * the caller owns (`*owned` set) and destroys. Null if creating one
 * failed. */
static cudaEvent_t get_stream_event(cudaStream_t stream, int32_t device,
                                    int *owned, const char *what,
                                    ETCOPY_LOCATION) {
  *owned = 0;
  struct etcopy_join_event *slot = find_join_event(stream, device);
  cudaEvent_t event =
      slot ? __atomic_load_n(&slot->event, __ATOMIC_ACQUIRE) : NULL;
  if (event && __atomic_load_n(&slot->device, __ATOMIC_ACQUIRE) != device)
    event = NULL; /* A recycled stream handle on another device. */
  if (event)
    return event;
  /* Events belong to the device current when they are created (CUDA
   * Programming Guide, "Multi-Device System"); recording one on a stream of
   * another device fails, whatever device is current. */
  int previous = -1;
  check(cudaGetDevice(&previous), ETCOPY_AT, "cudaGetDevice", what, 0);
  if (!select_device(device, ETCOPY_AT, what))
    return NULL;
  int created =
      check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
            ETCOPY_AT, "cudaEventCreateWithFlags", what, 0);
  if (previous >= 0)
    (void)select_device(previous, ETCOPY_AT, what);
  if (!created)
    return NULL;
  cudaEvent_t expected = NULL;
  if (slot && __atomic_load_n(&slot->device, __ATOMIC_ACQUIRE) == device &&
      __atomic_compare_exchange_n(&slot->event, &expected, event,
                                  /*weak=*/0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    static char registered;
    release_at_exit(&registered, release_join_events_at_exit);
  } else {
    *owned = 1;
  }
  return event;
}

void __etcopy_stream_join(cudaStream_t dependency, int32_t dependencyDevice,
                          cudaStream_t stream, int32_t device,
                          ETCOPY_LOCATION) {
  (void)device;
  if (dependency == stream)
    return;
  const char *what = "stream join";
  int owned = 0;
  cudaEvent_t event =
      get_stream_event(dependency, dependencyDevice, &owned, what, ETCOPY_AT);
  if (!event)
    return;
  /* Neither call needs a particular device current: the event and the
   * stream it is recorded on share a device, and a stream may wait for an
   * event of another device. */
  if (check(cudaEventRecord(event, dependency), ETCOPY_AT, "cudaEventRecord",
            what, 0))
    check(cudaStreamWaitEvent(stream, event, 0), ETCOPY_AT,
          "cudaStreamWaitEvent", what, 0);
  if (owned)
    check(cudaEventDestroy(event), ETCOPY_AT, "cudaEventDestroy", what, 0);
}

/* The device `device` names: itself, or the current one for -1. */
static int32_t resolve_device(int32_t device, const char *what,
                              ETCOPY_LOCATION) {
  if (device >= 0)
    return device;
  int current = 0;
  check(cudaGetDevice(&current), ETCOPY_AT, "cudaGetDevice", what, 0);
  return current;
}

int32_t __etcopy_stream_record(cudaStream_t stream, int32_t device,
                               ETCOPY_LOCATION) {
  const char *what = "mark a copy the host will wait for";
  device = resolve_device(device, what, ETCOPY_AT);
  int owned = 0;
  cudaEvent_t event = get_stream_event(stream, device, &owned, what, ETCOPY_AT);
  if (!event)
    return 0;
  /* An event of its own would be gone before the wait, which then waits for
   * the stream. */
  if (owned) {
    check(cudaEventDestroy(event), ETCOPY_AT, "cudaEventDestroy", what, 0);
    return 0;
  }
  return check(cudaEventRecord(event, stream), ETCOPY_AT, "cudaEventRecord",
               what, 0);
}

void __etcopy_stream_wait_record(cudaStream_t stream, int32_t device,
                                 int32_t recorded, ETCOPY_LOCATION) {
  const char *what = "wait for a copy";
  if (recorded) {
    /* The slot's event, which __etcopy_stream_record recorded: published
     * once, it stays until the code is unloaded. */
    device = resolve_device(device, what, ETCOPY_AT);
    struct etcopy_join_event *slot = find_join_event(stream, device);
    cudaEvent_t event =
        slot ? __atomic_load_n(&slot->event, __ATOMIC_ACQUIRE) : NULL;
    if (event) {
      check(cudaEventSynchronize(event), ETCOPY_AT, "cudaEventSynchronize",
            what, 0);
      return;
    }
  }
  check(cudaStreamSynchronize(stream), ETCOPY_AT, "cudaStreamSynchronize",
        what, 0);
}

int32_t __etcopy_enter_device(int32_t device, ETCOPY_LOCATION) {
  /* `device` itself if cudaGetDevice fails and the policy returns. */
  int previous = device;
  check(cudaGetDevice(&previous), ETCOPY_AT, "cudaGetDevice",
        "make the delegate's device current", 0);
  if (previous != device)
    check(cudaSetDevice(device), ETCOPY_AT, "cudaSetDevice",
          "make the delegate's device current", 0);
  return previous;
}

void __etcopy_leave_device(int32_t previous, int32_t device,
                           ETCOPY_LOCATION) {
  if (previous != device)
    check(cudaSetDevice(previous), ETCOPY_AT, "cudaSetDevice",
          "restore the device after the delegate", 0);
}

/*===----------------------------------------------------------------------===*
 * Memory
 *===----------------------------------------------------------------------===*/

void *__etcopy_malloc(uint64_t bytes, cudaStream_t stream, ETCOPY_LOCATION) {
  void *pointer = NULL;
  check(cudaMallocAsync(&pointer, bytes, stream), ETCOPY_AT, "cudaMallocAsync",
        "allocate device memory", bytes);
  return pointer;
}

void *__etcopy_malloc_managed(uint64_t bytes, ETCOPY_LOCATION) {
  void *pointer = NULL;
  check(cudaMallocManaged(&pointer, bytes, cudaMemAttachGlobal), ETCOPY_AT,
        "cudaMallocManaged", "allocate host-shared memory", bytes);
  return pointer;
}

void __etcopy_free(void *pointer, cudaStream_t stream, ETCOPY_LOCATION) {
  /* Null: the buffer of an empty memref (cudaMallocAsync of 0 bytes returns
   * null), or an allocation that failed and was reported. */
  if (!pointer)
    return;
  check(cudaFreeAsync(pointer, stream), ETCOPY_AT, "cudaFreeAsync",
        "free device memory", 0);
}

void __etcopy_free_managed(void *pointer, cudaStream_t stream,
                           ETCOPY_LOCATION) {
  /* Managed memory is not stream-ordered: finish the work using it. */
  check(cudaStreamSynchronize(stream), ETCOPY_AT, "cudaStreamSynchronize",
        "wait before freeing host-shared memory", 0);
  check(cudaFree(pointer), ETCOPY_AT, "cudaFree", "free host-shared memory",
        0);
}
