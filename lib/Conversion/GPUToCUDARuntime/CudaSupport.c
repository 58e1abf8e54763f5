/*===- CudaSupport.c - Runtime support of the CUDA lowering -------*- C -*-===*\
|*                                                                            *|
|* The functions that code lowered by convert-gpu-to-cuda-runtime calls (see  *|
|* CudaSupport.h): one checked wrapper per CUDA entry point or fixed call     *|
|* sequence, the error policy, and the strided copy. The build compiles this  *|
|* file to LLVM IR with clang and imports it with mlir-translate; the pass     *|
|* copies the functions a module uses into it. The code may call only the     *|
|* CUDA Runtime API and libc, so that lowered programs link against libcudart *|
|* (or the simulator) alone.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* dprintf, dladdr, RTLD_DEFAULT */
#define _GNU_SOURCE

#include "CudaSupport.h"
#include "CudaSimKernels.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ETCOPY_AT file, line, column

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
__attribute__((noinline, cold)) static void
report(int err, ETCOPY_LOCATION, const char *call, const char *what,
       uint64_t bytes) {
  char location[4096];
  format_location(location, sizeof location, ETCOPY_AT);
  etcopy_cuda_error(err, location, call, what, bytes);
}

/* Reports `err` unless it is cudaSuccess (or CUDA_SUCCESS); returns whether
 * the call succeeded. */
static inline int check(int err, ETCOPY_LOCATION, const char *call,
                        const char *what, uint64_t bytes) {
  if (__builtin_expect(err == 0, 1))
    return 1;
  report(err, ETCOPY_AT, call, what, bytes);
  return 0;
}

/* A copy whose two sides differ in size is a bug of the program, not a
 * failure of CUDA: it is reported and the program exits, whatever the
 * policy, since the copy would overrun one side. */
__attribute__((noinline, cold, noreturn)) static void
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
static uint64_t get_env_bytes(const char *name, uint64_t fallback) {
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
static void release_at_exit(char *registered, void (*handler)(void *)) {
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
static int select_device(int32_t device, ETCOPY_LOCATION, const char *what) {
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

/* Host buffers of transfers are cached. The lowered code allocates a
 * buffer that a function copies to or from a device and frees itself
 * through __etcopy_malloc_host (pinned, with pinned-host-memory) or
 * __etcopy_malloc_pageable (otherwise), and frees it through the matching
 * free. Pinning maps and locks pages (about 1.1 ms per MiB on an H200), and
 * fresh pageable memory faults its pages in during the first copy that
 * touches it (a 256 MiB round trip through buffers malloc'ed at every call
 * took 4.7 times as long as the same copies from touched memory): a free
 * does not give the memory back but returns the block to its cache, and the
 * next request of the same size takes it. A function called in a loop
 * allocates its buffers at its first call only.
 *
 * Each block starts with a header of ETCOPY_HOST_BLOCK_HEADER bytes, which
 * keeps the buffer after it aligned to 256 bytes (the most a transfer
 * buffer's memref.alloc may ask for) and records its size and its place in
 * the idle lists.
 *
 * Like free(), the frees do not wait for the device: the program must have
 * waited for the copies that use the buffer (convert-etcopy-to-gpu places
 * that wait before every free of host memory a copy in flight uses).
 *
 * There are two caches per program (external, emitted linkonce_odr), each
 * guarded by a spin lock held only to push or pop a block. Idle blocks are
 * kept up to a number of bytes in all (an environment variable, read at the
 * first free; default 1 GiB, 0 disables the cache) and released at exit. */
#define ETCOPY_HOST_BLOCK_HEADER 256
#define ETCOPY_HOST_CACHE_BINS 64
#define ETCOPY_HOST_CACHE_DEFAULT_LIMIT (1ull << 30)

typedef struct etcopy_host_block {
  uint64_t bytes; /* What the buffer was requested with. */
  struct etcopy_host_block *next; /* The next idle block of its bin. */
} etcopy_host_block;

typedef struct {
  char lock;
  char limitKnown;
  uint64_t limit;
  uint64_t idleBytes;
  etcopy_host_block *bins[ETCOPY_HOST_CACHE_BINS];
} etcopy_host_cache;

/* Blocks of cudaMallocHost, and blocks of aligned_alloc. */
etcopy_host_cache __etcopy_pinned_cache;
etcopy_host_cache __etcopy_pageable_cache;

/* The bytes of a block holding a buffer of `bytes`, or 0 if they overflow. */
static uint64_t get_block_bytes(uint64_t bytes) {
  return bytes > UINT64_MAX - ETCOPY_HOST_BLOCK_HEADER
             ? 0
             : bytes + ETCOPY_HOST_BLOCK_HEADER;
}

/* An idle block for a buffer of `bytes` from `cache`, or null. */
static etcopy_host_block *take_host_block(etcopy_host_cache *cache,
                                          uint64_t bytes) {
  uint64_t hash = bytes * 0x9e3779b97f4a7c15ull;
  etcopy_host_block *block = NULL;
  while (__atomic_test_and_set(&cache->lock, __ATOMIC_ACQUIRE))
    ;
  for (etcopy_host_block **link = &cache->bins[hash >> 58]; *link;
       link = &(*link)->next) {
    if ((*link)->bytes == bytes) {
      block = *link;
      *link = block->next;
      cache->idleBytes -= get_block_bytes(bytes);
      break;
    }
  }
  __atomic_clear(&cache->lock, __ATOMIC_RELEASE);
  return block;
}

/* Returns `block` to `cache` if it fits within the limit that
 * $`limitVariable` sets; returns whether it did. */
static int keep_host_block(etcopy_host_cache *cache, const char *limitVariable,
                           etcopy_host_block *block) {
  uint64_t hash = block->bytes * 0x9e3779b97f4a7c15ull;
  uint64_t blockBytes = get_block_bytes(block->bytes);
  while (__atomic_test_and_set(&cache->lock, __ATOMIC_ACQUIRE))
    ;
  if (!cache->limitKnown) {
    cache->limit =
        get_env_bytes(limitVariable, ETCOPY_HOST_CACHE_DEFAULT_LIMIT);
    cache->limitKnown = 1;
  }
  int keep = blockBytes <= cache->limit - cache->idleBytes;
  if (keep) {
    etcopy_host_block **bin = &cache->bins[hash >> 58];
    block->next = *bin;
    *bin = block;
    cache->idleBytes += blockBytes;
  }
  __atomic_clear(&cache->lock, __ATOMIC_RELEASE);
  return keep;
}

/* Empties `cache` and returns its idle blocks as one list. */
static etcopy_host_block *take_all_host_blocks(etcopy_host_cache *cache) {
  etcopy_host_block *idle = NULL;
  while (__atomic_test_and_set(&cache->lock, __ATOMIC_ACQUIRE))
    ;
  for (int bin = 0; bin < ETCOPY_HOST_CACHE_BINS; ++bin) {
    while (cache->bins[bin]) {
      etcopy_host_block *block = cache->bins[bin];
      cache->bins[bin] = block->next;
      block->next = idle;
      idle = block;
    }
  }
  cache->idleBytes = 0;
  __atomic_clear(&cache->lock, __ATOMIC_RELEASE);
  return idle;
}

/* Frees the idle blocks of each cache (see "Release at exit"): one
 * destructor per cache, so that a module that uses one cache only does not
 * carry the other. */
__attribute__((destructor)) static void release_pinned_host_cache(void) {
  for (etcopy_host_block *block = take_all_host_blocks(&__etcopy_pinned_cache),
                         *next;
       block; block = next) {
    next = block->next;
    (void)cudaFreeHost(block);
  }
}

__attribute__((destructor)) static void release_pageable_host_cache(void) {
  for (etcopy_host_block *
           block = take_all_host_blocks(&__etcopy_pageable_cache),
          *next;
       block; block = next) {
    next = block->next;
    free(block);
  }
}

static void release_pinned_host_cache_at_exit(void *unused) {
  (void)unused;
  release_pinned_host_cache();
}

static void release_pageable_host_cache_at_exit(void *unused) {
  (void)unused;
  release_pageable_host_cache();
}

/* Records the size of a new block and returns its buffer, after the header. */
static void *init_host_block(void *base, uint64_t bytes) {
  etcopy_host_block *block = (etcopy_host_block *)base;
  block->bytes = bytes;
  return (char *)block + ETCOPY_HOST_BLOCK_HEADER;
}

static etcopy_host_block *get_host_block(void *pointer) {
  return (etcopy_host_block *)((char *)pointer - ETCOPY_HOST_BLOCK_HEADER);
}

void *__etcopy_malloc_host(uint64_t bytes, ETCOPY_LOCATION) {
  etcopy_host_block *block = take_host_block(&__etcopy_pinned_cache, bytes);
  if (block)
    return (char *)block + ETCOPY_HOST_BLOCK_HEADER;
  uint64_t blockBytes = get_block_bytes(bytes);
  void *base = NULL;
  if (!check(blockBytes ? cudaMallocHost(&base, blockBytes)
                        : cudaErrorMemoryAllocation,
             ETCOPY_AT, "cudaMallocHost", "allocate pinned host memory", bytes))
    return NULL;
  static char registered;
  release_at_exit(&registered, release_pinned_host_cache_at_exit);
  return init_host_block(base, bytes);
}

void __etcopy_free_host(void *pointer, ETCOPY_LOCATION) {
  const char *what = "free pinned host memory";
  if (!pointer) {
    /* An allocation that failed, reported already: report the free too. */
    check(cudaFreeHost(pointer), ETCOPY_AT, "cudaFreeHost", what, 0);
    return;
  }
  etcopy_host_block *block = get_host_block(pointer);
  if (!keep_host_block(&__etcopy_pinned_cache, "ETCOPY_PINNED_HOST_CACHE_BYTES",
                       block))
    check(cudaFreeHost(block), ETCOPY_AT, "cudaFreeHost", what, 0);
}

void *__etcopy_malloc_pageable(uint64_t bytes, ETCOPY_LOCATION) {
  etcopy_host_block *block = take_host_block(&__etcopy_pageable_cache, bytes);
  if (block)
    return (char *)block + ETCOPY_HOST_BLOCK_HEADER;
  /* aligned_alloc takes a multiple of the alignment. */
  uint64_t blockBytes = get_block_bytes(bytes);
  uint64_t rounded = (blockBytes + ETCOPY_HOST_BLOCK_HEADER - 1) &
                     ~(uint64_t)(ETCOPY_HOST_BLOCK_HEADER - 1);
  void *base = blockBytes && rounded >= blockBytes && rounded <= SIZE_MAX
                   ? aligned_alloc(ETCOPY_HOST_BLOCK_HEADER, (size_t)rounded)
                   : NULL;
  /* Reported as CUDA reports a failed allocation. */
  if (!check(base ? cudaSuccess : cudaErrorMemoryAllocation, ETCOPY_AT,
             "aligned_alloc", "allocate a host buffer for transfers", bytes))
    return NULL;
  static char registered;
  release_at_exit(&registered, release_pageable_host_cache_at_exit);
  return init_host_block(base, bytes);
}

void __etcopy_free_pageable(void *pointer, ETCOPY_LOCATION) {
  (void)file, (void)line, (void)column;
  /* Null: an allocation that failed, reported already. */
  if (!pointer)
    return;
  etcopy_host_block *block = get_host_block(pointer);
  if (!keep_host_block(&__etcopy_pageable_cache,
                       "ETCOPY_PAGEABLE_HOST_CACHE_BYTES", block))
    free(block);
}

/*===----------------------------------------------------------------------===*
 * Copies
 *===----------------------------------------------------------------------===*/

__attribute__((noinline)) static const char *describe_copy(int32_t kind) {
  switch (kind) {
  case cudaMemcpyHostToHost:
    return "host-to-host";
  case cudaMemcpyHostToDevice:
    return "host-to-device";
  case cudaMemcpyDeviceToHost:
    return "device-to-host";
  case cudaMemcpyDeviceToDevice:
    return "device-to-device";
  default:
    return "copy (direction inferred by the runtime)";
  }
}

/* No copy of 0 bytes reaches CUDA: the buffers of an empty memref may be
 * null (cudaMallocAsync of 0 bytes returns null), and cudaMemcpyBatchAsync
 * rejects a whole batch that holds such a copy (cudaErrorInvalidValue, seen
 * on an H200 with CUDA 13.0). Static empty copies are removed at compile
 * time; these checks catch the sizes known only at run time. */

void __etcopy_memcpy(void *dst, const void *src, uint64_t bytes, int32_t kind,
                     cudaStream_t stream, ETCOPY_LOCATION) {
  if (bytes == 0)
    return;
  check(cudaMemcpyAsync(dst, src, bytes, (enum cudaMemcpyKind)kind, stream),
        ETCOPY_AT, "cudaMemcpyAsync", describe_copy(kind), bytes);
}

/* Submits `count` copies, none empty, as one cudaMemcpyBatchAsync. */
static void submit_batch(void *const *dsts, const void *const *srcs,
                         const uint64_t *sizes, uint64_t count,
                         cudaStream_t stream, ETCOPY_LOCATION) {
  /* One attribute for every copy: sources are read in stream order, after
   * the work queued before the batch, as cudaMemcpyAsync reads them. */
  struct cudaMemcpyAttributes attributes;
  memset(&attributes, 0, sizeof attributes);
  attributes.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  size_t firstCopy = 0;
  int err = cudaMemcpyBatchAsync(dsts, srcs, (const size_t *)sizes,
                                 (size_t)count, &attributes, &firstCopy, 1,
                                 stream);
  if (__builtin_expect(err == 0, 1))
    return;
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < count; ++i)
    bytes += sizes[i];
  char what[64];
  snprintf(what, sizeof what, "batch of %llu copies",
           (unsigned long long)count);
  report(err, ETCOPY_AT, "cudaMemcpyBatchAsync", what, bytes);
}

/* The copies of a batch whose empty entries are left out are submitted in
 * chunks of at most this many, from arrays on the stack. */
#define ETCOPY_BATCH_CHUNK 128

void __etcopy_memcpy_batch(void *const *dsts, const void *const *srcs,
                           const uint64_t *sizes, uint64_t count,
                           cudaStream_t stream, ETCOPY_LOCATION) {
  if (!stream) {
    /* The function's stream could not be created and the policy returned:
     * batches reject the legacy default stream, single copies do not. */
    for (uint64_t i = 0; i < count; ++i)
      if (sizes[i] != 0)
        check(cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], cudaMemcpyDefault,
                              stream),
              ETCOPY_AT, "cudaMemcpyAsync", describe_copy(cudaMemcpyDefault),
              sizes[i]);
    return;
  }
  uint64_t empty = 0;
  for (uint64_t i = 0; i < count; ++i)
    empty += sizes[i] == 0;
  if (__builtin_expect(empty == 0, 1)) {
    submit_batch(dsts, srcs, sizes, count, stream, ETCOPY_AT);
    return;
  }
  /* Leave the empty copies out; a batch of empty copies makes no call. The
   * copies are independent, so submitting them in several batches on one
   * stream (which orders the batches) is correct. */
  void *chunkDsts[ETCOPY_BATCH_CHUNK];
  const void *chunkSrcs[ETCOPY_BATCH_CHUNK];
  uint64_t chunkSizes[ETCOPY_BATCH_CHUNK];
  uint64_t filled = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (sizes[i] == 0)
      continue;
    chunkDsts[filled] = dsts[i];
    chunkSrcs[filled] = srcs[i];
    chunkSizes[filled] = sizes[i];
    if (++filled == ETCOPY_BATCH_CHUNK) {
      submit_batch(chunkDsts, chunkSrcs, chunkSizes, filled, stream,
                   ETCOPY_AT);
      filled = 0;
    }
  }
  if (filled)
    submit_batch(chunkDsts, chunkSrcs, chunkSizes, filled, stream, ETCOPY_AT);
}

/* Bit `peer` of __etcopy_peer_claimed[device]: the program's lowered code
 * has set up, or is setting up, peer access from `device` to `peer`
 * (enabled it, or found it impossible). One per program, like the table of
 * default streams. Ordinals from 64 on are not cached: they are handled on
 * every copy. */
#define ETCOPY_PEER_CACHE_DEVICES 64
uint64_t __etcopy_peer_claimed[ETCOPY_PEER_CACHE_DEVICES];

/* Enables access from the current device `device` to the memory of `peer`
 * where the devices allow it. Access someone else enabled is fine.
 *
 * The first thread to claim a pair sets it up; a thread that finds the pair
 * claimed copies at once, staged by the driver until the access is enabled,
 * which is correct either way. (Without the claim, threads whose first
 * copies race all ask and enable, and all but one get
 * cudaErrorPeerAccessAlreadyEnabled.) A failed setup gives the claim back,
 * so that the next copy tries again. */
static void enable_peer_access(int32_t device, int32_t peer,
                               ETCOPY_LOCATION) {
  int cached = device >= 0 && device < ETCOPY_PEER_CACHE_DEVICES &&
               peer >= 0 && peer < ETCOPY_PEER_CACHE_DEVICES;
  uint64_t *claims = cached ? &__etcopy_peer_claimed[device] : NULL;
  uint64_t bit = cached ? (uint64_t)1 << peer : 0;
  if (claims && ((__atomic_load_n(claims, __ATOMIC_RELAXED) & bit) ||
                 (__atomic_fetch_or(claims, bit, __ATOMIC_RELAXED) & bit)))
    return;
  const char *what = "enable peer access for a device-to-device copy";
  int canAccess = 0;
  int err = cudaDeviceCanAccessPeer(&canAccess, device, peer);
  if (check(err, ETCOPY_AT, "cudaDeviceCanAccessPeer", what, 0) &&
      canAccess) {
    err = cudaDeviceEnablePeerAccess(peer, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError(); /* not an error here: forget it */
      err = cudaSuccess;
    }
    check(err, ETCOPY_AT, "cudaDeviceEnablePeerAccess", what, 0);
  }
  if (claims && err != cudaSuccess)
    __atomic_fetch_and(claims, ~bit, __ATOMIC_RELAXED);
}

void __etcopy_memcpy_peer(void *dst, int32_t dstDevice, const void *src,
                          int32_t srcDevice, uint64_t bytes,
                          cudaStream_t stream, ETCOPY_LOCATION) {
  if (bytes == 0)
    return;
  enable_peer_access(dstDevice, srcDevice, ETCOPY_AT);
  /* Without peer access the driver stages the copy through host memory. */
  check(cudaMemcpyPeerAsync(dst, dstDevice, src, srcDevice, bytes, stream),
        ETCOPY_AT, "cudaMemcpyPeerAsync", "device-to-device copy between devices",
        bytes);
}

/* One dimension of a strided copy: its size and both strides, in elements. */
typedef struct {
  int64_t size;
  int64_t src;
  int64_t dst;
} copy_dim;

/* The largest pitch of a 2-D copy (cudaDevAttrMaxPitch on current GPUs). */
#define ETCOPY_MAX_PITCH 2147483647

/* Whether any two elements of the `rank` dimensions, `stride` elements
 * apart along each (`dst` strides if `ofDst`, else `src`), may share an
 * address: sorted by stride, each stride must exceed the extent of the
 * smaller ones. Sufficient, not necessary: an interleaving the test cannot
 * prove apart is treated as overlapping. */
static int may_overlap(const copy_dim *dims, int64_t rank, int ofDst) {
  int64_t strides[rank + 1], sizes[rank + 1];
  for (int64_t i = 0; i < rank; ++i) {
    int64_t stride = ofDst ? dims[i].dst : dims[i].src;
    stride = stride < 0 ? -stride : stride;
    int64_t j = i;
    for (; j > 0 && strides[j - 1] > stride; --j) {
      strides[j] = strides[j - 1];
      sizes[j] = sizes[j - 1];
    }
    strides[j] = stride;
    sizes[j] = dims[i].size;
  }
  int64_t extent = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (strides[i] <= extent)
      return 1;
    extent += (sizes[i] - 1) * strides[i];
  }
  return 0;
}

/* The bytes [first, last) the elements of one side span. */
static void get_span(const char *base, const copy_dim *dims, int64_t rank,
                     int ofDst, int64_t elementBytes, uintptr_t *first,
                     uintptr_t *last) {
  int64_t low = 0, high = 0;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t reach = (dims[i].size - 1) * (ofDst ? dims[i].dst : dims[i].src);
    if (reach < 0)
      low += reach;
    else
      high += reach;
  }
  *first = (uintptr_t)(base + low * elementBytes);
  *last = (uintptr_t)(base + (high + 1) * elementBytes);
}

/* Copies element by element in row-major order, so that where the
 * destination overlaps itself the last write wins, as in memref.copy. */
static void copy_elements(char *dst, const char *src, const copy_dim *dims,
                          int64_t rank, int64_t elementBytes, int32_t kind,
                          cudaStream_t stream, ETCOPY_LOCATION) {
  int64_t index[rank + 1];
  for (int64_t i = 0; i < rank; ++i)
    index[i] = 0;
  for (;;) {
    int64_t srcOffset = 0, dstOffset = 0;
    for (int64_t i = 0; i < rank; ++i) {
      srcOffset += index[i] * dims[i].src;
      dstOffset += index[i] * dims[i].dst;
    }
    check(cudaMemcpyAsync(dst + dstOffset * elementBytes,
                          src + srcOffset * elementBytes, elementBytes,
                          (enum cudaMemcpyKind)kind, stream),
          ETCOPY_AT, "cudaMemcpyAsync", describe_copy(kind),
          (uint64_t)elementBytes);
    int64_t i = rank - 1;
    for (; i >= 0 && ++index[i] == dims[i].size; --i)
      index[i] = 0;
    if (i < 0)
      return;
  }
}

/* Copies between layouts whose elements are in one-to-one correspondence
 * in any order: the destination does not overlap itself nor the source.
 * The largest run contiguous on both sides is one copy; the dimension with
 * the most rows that both sides can step with a valid pitch (at least the
 * run, at most ETCOPY_MAX_PITCH) makes it a 2-D copy; the other dimensions
 * are iterated. */
static void copy_in_any_order(char *dst, const char *src, copy_dim *dims,
                              int64_t rank, int64_t elementBytes, int32_t kind,
                              cudaStream_t stream, ETCOPY_LOCATION) {
  /* Iterating a dimension backwards is as good as forwards: make every
   * source stride non-negative. */
  for (int64_t i = 0; i < rank; ++i) {
    if (dims[i].src >= 0)
      continue;
    src += (dims[i].size - 1) * dims[i].src * elementBytes;
    dst += (dims[i].size - 1) * dims[i].dst * elementBytes;
    dims[i].src = -dims[i].src;
    dims[i].dst = -dims[i].dst;
  }

  /* The contiguous run: dimensions whose strides are the run's length on
   * both sides, in any order. */
  int used[rank + 1];
  for (int64_t i = 0; i < rank; ++i)
    used[i] = 0;
  int64_t run = 1;
  for (int grew = 1; grew;) {
    grew = 0;
    for (int64_t i = 0; i < rank; ++i)
      if (!used[i] && dims[i].src == run && dims[i].dst == run) {
        run *= dims[i].size;
        used[i] = 1;
        grew = 1;
      }
  }
  int64_t width = run * elementBytes;

  int64_t pitched = -1;
  for (int64_t i = 0; i < rank; ++i) {
    if (used[i] || dims[i].src <= 0 || dims[i].dst <= 0)
      continue;
    int64_t srcPitch = dims[i].src * elementBytes;
    int64_t dstPitch = dims[i].dst * elementBytes;
    if (srcPitch < width || dstPitch < width || srcPitch > ETCOPY_MAX_PITCH ||
        dstPitch > ETCOPY_MAX_PITCH)
      continue;
    if (pitched < 0 || dims[i].size > dims[pitched].size)
      pitched = i;
  }
  if (pitched >= 0)
    used[pitched] = 1;

  int64_t outer[rank + 1], numOuter = 0;
  for (int64_t i = 0; i < rank; ++i)
    if (!used[i])
      outer[numOuter++] = i;
  int64_t index[rank + 1];
  for (int64_t i = 0; i < numOuter; ++i)
    index[i] = 0;
  const char *what = describe_copy(kind);
  for (;;) {
    int64_t srcOffset = 0, dstOffset = 0;
    for (int64_t i = 0; i < numOuter; ++i) {
      srcOffset += index[i] * dims[outer[i]].src;
      dstOffset += index[i] * dims[outer[i]].dst;
    }
    char *to = dst + dstOffset * elementBytes;
    const char *from = src + srcOffset * elementBytes;
    if (pitched >= 0) {
      int64_t height = dims[pitched].size;
      check(cudaMemcpy2DAsync(to, (size_t)(dims[pitched].dst * elementBytes),
                              from, (size_t)(dims[pitched].src * elementBytes),
                              (size_t)width, (size_t)height,
                              (enum cudaMemcpyKind)kind, stream),
            ETCOPY_AT, "cudaMemcpy2DAsync", what, (uint64_t)(width * height));
    } else {
      check(cudaMemcpyAsync(to, from, (size_t)width, (enum cudaMemcpyKind)kind,
                            stream),
            ETCOPY_AT, "cudaMemcpyAsync", what, (uint64_t)width);
    }
    int64_t i = numOuter - 1;
    for (; i >= 0 && ++index[i] == dims[outer[i]].size; --i)
      index[i] = 0;
    if (i < 0)
      return;
  }
}

static void copy_dims(char *dst, const char *src, copy_dim *dims, int64_t rank,
                      int64_t elementBytes, int32_t kind, cudaStream_t stream,
                      ETCOPY_LOCATION);

/* Copies through a temporary device buffer: the source is read completely
 * before the destination is written. */
static void copy_staged(char *dst, const char *src, const copy_dim *dims,
                        int64_t rank, int64_t elementBytes, int32_t kind,
                        cudaStream_t stream, ETCOPY_LOCATION) {
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i)
    count *= dims[i].size;
  uint64_t bytes = (uint64_t)(count * elementBytes);
  void *staging = NULL;
  if (!check(cudaMallocAsync(&staging, bytes, stream), ETCOPY_AT,
             "cudaMallocAsync", "allocate a staging buffer for an overlapping copy",
             bytes))
    return;
  /* The staging buffer holds the elements row-major. */
  copy_dim in[rank + 1], out[rank + 1];
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    in[i] = (copy_dim){dims[i].size, dims[i].src, stride};
    out[i] = (copy_dim){dims[i].size, stride, dims[i].dst};
    stride *= dims[i].size;
  }
  int srcOnHost = kind == cudaMemcpyHostToHost;
  int dstOnHost = kind == cudaMemcpyHostToHost;
  int32_t inKind = kind == cudaMemcpyDefault  ? cudaMemcpyDefault
                   : srcOnHost                ? cudaMemcpyHostToDevice
                                              : cudaMemcpyDeviceToDevice;
  int32_t outKind = kind == cudaMemcpyDefault ? cudaMemcpyDefault
                    : dstOnHost               ? cudaMemcpyDeviceToHost
                                              : cudaMemcpyDeviceToDevice;
  copy_dims(staging, src, in, rank, elementBytes, inKind, stream, ETCOPY_AT);
  copy_dims(dst, staging, out, rank, elementBytes, outKind, stream, ETCOPY_AT);
  check(cudaFreeAsync(staging, stream), ETCOPY_AT, "cudaFreeAsync",
        "free the staging buffer of an overlapping copy", 0);
}

/* Copies the elements of `dims` (sizes above 1) with the semantics of
 * memref.copy: element by element in row-major order, except that the
 * source is read before the destination is written where they overlap. */
static void copy_dims(char *dst, const char *src, copy_dim *dims, int64_t rank,
                      int64_t elementBytes, int32_t kind, cudaStream_t stream,
                      ETCOPY_LOCATION) {
  /* Along a dimension of destination stride 0 every element is written to
   * the same address and the last one wins: copy only that one. */
  int64_t kept = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (dims[i].dst == 0)
      src += (dims[i].size - 1) * dims[i].src * elementBytes;
    else
      dims[kept++] = dims[i];
  }
  rank = kept;

  /* Host and device memory never overlap; memory of one kind may. */
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost) {
    uintptr_t srcFirst, srcLast, dstFirst, dstLast;
    get_span(src, dims, rank, /*ofDst=*/0, elementBytes, &srcFirst, &srcLast);
    get_span(dst, dims, rank, /*ofDst=*/1, elementBytes, &dstFirst, &dstLast);
    if (srcFirst < dstLast && dstFirst < srcLast) {
      copy_staged(dst, src, dims, rank, elementBytes, kind, stream, ETCOPY_AT);
      return;
    }
  }
  if (may_overlap(dims, rank, /*ofDst=*/1))
    copy_elements(dst, src, dims, rank, elementBytes, kind, stream, ETCOPY_AT);
  else
    copy_in_any_order(dst, src, dims, rank, elementBytes, kind, stream,
                      ETCOPY_AT);
}

void __etcopy_memcpy_strided(const etcopy_memref *dst,
                             const etcopy_memref *src, int64_t rank,
                             int64_t elementBytes, int32_t kind,
                             cudaStream_t stream, ETCOPY_LOCATION) {
  const int64_t *sizes = src->shape;
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] != dst->shape[i])
      report_size_mismatch(ETCOPY_AT, describe_copy(kind), i, sizes[i],
                           dst->shape[i]);
  /* Dimensions of size 1 move nothing; with one of size 0 nothing moves. */
  copy_dim dims[rank + 1];
  int64_t kept = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (sizes[i] == 0)
      return;
    if (sizes[i] != 1)
      dims[kept++] =
          (copy_dim){sizes[i], src->shape[rank + i], dst->shape[rank + i]};
  }
  copy_dims(dst->aligned + dst->offset * elementBytes,
            src->aligned + src->offset * elementBytes, dims, kept,
            elementBytes, kind, stream, ETCOPY_AT);
}

/*===----------------------------------------------------------------------===*
 * Memsets
 *===----------------------------------------------------------------------===*/

typedef CUresult (*memset16_fn)(CUdeviceptr, unsigned short, size_t,
                                CUstream);
typedef CUresult (*memset32_fn)(CUdeviceptr, unsigned int, size_t, CUstream);

/* cuMemsetD16Async and cuMemsetD32Async, looked up once per process. */
static void *driver_memsets[2];

/* The driver function `symbol` (cached in `*slot`), or null after reporting
 * why it is unavailable. */
static void *get_driver_function(void **slot, const char *symbol,
                                 const char *what, ETCOPY_LOCATION) {
  void *function = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (function)
    return function;
  enum cudaDriverEntryPointQueryResult status =
      cudaDriverEntryPointSymbolNotFound;
  /* 3020: the ABI of the memsets, unchanged since CUDA 3.2. */
  int err = cudaGetDriverEntryPointByVersion(symbol, &function, 3020,
                                             cudaEnableDefault, &status);
  if (err == cudaSuccess && (status != cudaDriverEntryPointSuccess ||
                             !function)) {
    err = status == cudaDriverEntryPointVersionNotSufficent
              ? cudaErrorCallRequiresNewerDriver
              : cudaErrorNotSupported;
    function = NULL;
  }
  if (!check(err, ETCOPY_AT, "cudaGetDriverEntryPointByVersion", what, 0))
    return NULL;
  __atomic_store_n(slot, function, __ATOMIC_RELEASE);
  return function;
}

void __etcopy_memset(void *dst, uint32_t value, uint64_t count,
                     int32_t elementBytes, cudaStream_t stream,
                     ETCOPY_LOCATION) {
  const char *what = "set device memory";
  uint64_t bytes = count * (uint64_t)elementBytes;
  if (count == 0)
    return;
  if (elementBytes == 1) {
    check(cudaMemsetAsync(dst, (int)(value & 0xff), count, stream), ETCOPY_AT,
          "cudaMemsetAsync", what, bytes);
    return;
  }
  if (elementBytes == 2) {
    memset16_fn memset16 = (memset16_fn)get_driver_function(
        &driver_memsets[0], "cuMemsetD16Async", "find cuMemsetD16Async",
        ETCOPY_AT);
    if (memset16)
      check(memset16((CUdeviceptr)(uintptr_t)dst, (unsigned short)value,
                     count, (CUstream)stream),
            ETCOPY_AT, "cuMemsetD16Async", what, bytes);
    return;
  }
  memset32_fn memset32 = (memset32_fn)get_driver_function(
      &driver_memsets[1], "cuMemsetD32Async", "find cuMemsetD32Async",
      ETCOPY_AT);
  if (memset32)
    check(memset32((CUdeviceptr)(uintptr_t)dst, value, count,
                   (CUstream)stream),
          ETCOPY_AT, "cuMemsetD32Async", what, bytes);
}

/*===----------------------------------------------------------------------===*
 * Graphs (GraphLowering.cpp, docs/CUDALowering.md "CUDA graphs")
 *===----------------------------------------------------------------------===*/

/* The cells of every lowered module's captured functions, for the release
 * at exit, recorded at their first capture (like the library cells). */
#define ETCOPY_MAX_GRAPHS 256
etcopy_graph_cell *__etcopy_graph_cells[ETCOPY_MAX_GRAPHS];
uint32_t __etcopy_graph_count;

static void release_graph_cell(etcopy_graph_cell *cell) {
  cudaGraphExec_t exec =
      __atomic_exchange_n(&cell->exec, NULL, __ATOMIC_ACQ_REL);
  if (exec)
    (void)cudaGraphExecDestroy(exec);
  cudaStream_t stream =
      __atomic_exchange_n(&cell->stream, NULL, __ATOMIC_ACQ_REL);
  if (stream)
    (void)cudaStreamDestroy(stream);
}

/* Destroys every instance and capture stream (see "Release at exit"). */
__attribute__((destructor)) static void release_graphs(void) {
  uint32_t count = __atomic_load_n(&__etcopy_graph_count, __ATOMIC_ACQUIRE);
  if (count > ETCOPY_MAX_GRAPHS)
    count = ETCOPY_MAX_GRAPHS;
  for (uint32_t i = 0; i < count; ++i) {
    etcopy_graph_cell *cell =
        __atomic_load_n(&__etcopy_graph_cells[i], __ATOMIC_ACQUIRE);
    if (cell)
      release_graph_cell(cell);
  }
}

static void release_graphs_at_exit(void *unused) {
  (void)unused;
  release_graphs();
}

static void release_cell(etcopy_graph_cell *cell) {
  __atomic_store_n(&cell->busy, 0, __ATOMIC_RELEASE);
}

/* `busy` of a cell whose holder could not begin its capture (the policy
 * returned): the work runs directly, and __etcopy_graph_end only releases
 * the cell, which no other thread could take meanwhile. */
#define ETCOPY_GRAPH_HELD_UNCAPTURED 2

static cudaStream_t run_uncaptured(etcopy_graph_cell *cell,
                                   cudaStream_t stream) {
  __atomic_store_n(&cell->busy, ETCOPY_GRAPH_HELD_UNCAPTURED,
                   __ATOMIC_RELAXED);
  return stream;
}

int32_t __etcopy_graph_replay(etcopy_graph_cell *cell, const int64_t *key,
                              uint64_t count, cudaStream_t stream,
                              ETCOPY_LOCATION) {
  /* Another thread is capturing or launching: run the calls directly. */
  if (__atomic_exchange_n(&cell->busy, 1, __ATOMIC_ACQUIRE))
    return ETCOPY_GRAPH_DIRECT;
  if (cell->exec && memcmp(cell->key, key, count * sizeof(int64_t)) == 0) {
    check(cudaGraphLaunch(cell->exec, stream), ETCOPY_AT, "cudaGraphLaunch",
          "replay the function's graph", 0);
    release_cell(cell);
    return ETCOPY_GRAPH_REPLAYED;
  }
  return ETCOPY_GRAPH_CAPTURING;
}

cudaStream_t __etcopy_graph_begin(etcopy_graph_cell *cell, int32_t state,
                                  cudaStream_t stream, ETCOPY_LOCATION) {
  if (state != ETCOPY_GRAPH_CAPTURING)
    return stream;
  int device = 0;
  if (!check(cudaGetDevice(&device), ETCOPY_AT, "cudaGetDevice",
             "find the device of the function's graph", 0))
    return run_uncaptured(cell, stream);
  if (cell->stream && cell->device != device)
    release_graph_cell(cell);
  if (!cell->stream) {
    cudaStream_t created = NULL;
    if (!check(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking),
               ETCOPY_AT, "cudaStreamCreateWithFlags",
               "create the stream that captures the function's work", 0))
      return run_uncaptured(cell, stream);
    __atomic_store_n(&cell->stream, created, __ATOMIC_RELEASE);
    cell->device = device;
    if (!cell->registered) {
      static char registered;
      cell->registered = 1;
      uint32_t index =
          __atomic_fetch_add(&__etcopy_graph_count, 1, __ATOMIC_ACQ_REL);
      if (index < ETCOPY_MAX_GRAPHS)
        __atomic_store_n(&__etcopy_graph_cells[index], cell, __ATOMIC_RELEASE);
      release_at_exit(&registered, release_graphs_at_exit);
    }
  }
  if (!check(cudaStreamBeginCapture(cell->stream,
                                    cudaStreamCaptureModeThreadLocal),
             ETCOPY_AT, "cudaStreamBeginCapture",
             "capture the function's work into a graph", 0))
    return run_uncaptured(cell, stream);
  return cell->stream;
}

void __etcopy_graph_end(etcopy_graph_cell *cell, int32_t state,
                        const int64_t *key, uint64_t count,
                        cudaStream_t stream, ETCOPY_LOCATION) {
  if (state != ETCOPY_GRAPH_CAPTURING)
    return;
  /* Other threads test the flag (and find it set) meanwhile. */
  if (__atomic_load_n(&cell->busy, __ATOMIC_RELAXED) ==
      ETCOPY_GRAPH_HELD_UNCAPTURED) {
    release_cell(cell);
    return;
  }
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  if (check(cudaStreamEndCapture(cell->stream, &graph), ETCOPY_AT,
            "cudaStreamEndCapture", "capture the function's work into a graph",
            0) &&
      graph) {
    int instantiated =
        check(cudaGraphInstantiate(&exec, graph, 0), ETCOPY_AT,
              "cudaGraphInstantiate", "instantiate the function's graph", 0);
    check(cudaGraphDestroy(graph), ETCOPY_AT, "cudaGraphDestroy",
          "destroy the captured graph once instantiated", 0);
    if (instantiated && exec) {
      cudaGraphExec_t previous =
          __atomic_exchange_n(&cell->exec, exec, __ATOMIC_ACQ_REL);
      if (previous)
        check(cudaGraphExecDestroy(previous), ETCOPY_AT,
              "cudaGraphExecDestroy",
              "destroy the graph of the function's previous inputs", 0);
      memcpy(cell->key, key, count * sizeof(int64_t));
      check(cudaGraphLaunch(exec, stream), ETCOPY_AT, "cudaGraphLaunch",
            "launch the function's graph", 0);
    }
  }
  release_cell(cell);
}
