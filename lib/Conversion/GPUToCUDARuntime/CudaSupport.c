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

/* dprintf */
#define _POSIX_C_SOURCE 200809L

#include "CudaSupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ETCOPY_AT file, line, column

/*===----------------------------------------------------------------------===*
 * Errors
 *===----------------------------------------------------------------------===*/

/* The default error policy: report and exit. Weak, so that a program that
 * embeds the generated code replaces it by defining the symbol. */
__attribute__((weak)) void etcopy_cuda_error(int err, const char *location,
                                             const char *call,
                                             const char *what,
                                             unsigned long long bytes) {
  const char *name = cudaGetErrorName((cudaError_t)err);
  const char *text = cudaGetErrorString((cudaError_t)err);
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

/*===----------------------------------------------------------------------===*
 * Streams and devices
 *===----------------------------------------------------------------------===*/

cudaStream_t __etcopy_stream_create(int32_t device, ETCOPY_LOCATION) {
  if (device >= 0)
    check(cudaSetDevice(device), ETCOPY_AT, "cudaSetDevice",
          "select the device", 0);
  /* A failed creation leaves the legacy default stream (null), which orders
   * the function's work as well, only with more waiting. */
  cudaStream_t stream = NULL;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), ETCOPY_AT,
        "cudaStreamCreateWithFlags", "create a stream", 0);
  return stream;
}

void __etcopy_stream_synchronize(cudaStream_t stream, ETCOPY_LOCATION) {
  check(cudaStreamSynchronize(stream), ETCOPY_AT, "cudaStreamSynchronize",
        "wait for the device work", 0);
}

void __etcopy_stream_destroy(cudaStream_t stream, int32_t synchronize,
                             ETCOPY_LOCATION) {
  if (synchronize)
    check(cudaStreamSynchronize(stream), ETCOPY_AT, "cudaStreamSynchronize",
          "wait for the function's device work", 0);
  if (stream)
    check(cudaStreamDestroy(stream), ETCOPY_AT, "cudaStreamDestroy",
          "destroy the stream", 0);
}

int32_t __etcopy_get_device(ETCOPY_LOCATION) {
  int device = 0;
  check(cudaGetDevice(&device), ETCOPY_AT, "cudaGetDevice",
        "save the current device", 0);
  return device;
}

void __etcopy_set_device(int32_t device, ETCOPY_LOCATION) {
  check(cudaSetDevice(device), ETCOPY_AT, "cudaSetDevice", "select the device",
        0);
}

void __etcopy_restore_device(int32_t device, ETCOPY_LOCATION) {
  check(cudaSetDevice(device), ETCOPY_AT, "cudaSetDevice",
        "restore the caller's device", 0);
}

void __etcopy_stream_join(cudaStream_t dependency, int32_t dependencyDevice,
                          cudaStream_t stream, int32_t device,
                          ETCOPY_LOCATION) {
  if (dependency == stream)
    return;
  /* The event is created and recorded on the dependency's device, as CUDA
   * requires; `device` is current again on return. */
  const char *what = "stream join";
  check(cudaSetDevice(dependencyDevice), ETCOPY_AT, "cudaSetDevice", what, 0);
  cudaEvent_t event = NULL;
  int created =
      check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
            ETCOPY_AT, "cudaEventCreateWithFlags", what, 0);
  if (created)
    check(cudaEventRecord(event, dependency), ETCOPY_AT, "cudaEventRecord",
          what, 0);
  check(cudaSetDevice(device), ETCOPY_AT, "cudaSetDevice", what, 0);
  if (!created)
    return;
  check(cudaStreamWaitEvent(stream, event, 0), ETCOPY_AT,
        "cudaStreamWaitEvent", what, 0);
  check(cudaEventDestroy(event), ETCOPY_AT, "cudaEventDestroy", what, 0);
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

void __etcopy_memcpy(void *dst, const void *src, uint64_t bytes, int32_t kind,
                     cudaStream_t stream, ETCOPY_LOCATION) {
  check(cudaMemcpyAsync(dst, src, bytes, (enum cudaMemcpyKind)kind, stream),
        ETCOPY_AT, "cudaMemcpyAsync", describe_copy(kind), bytes);
}

void __etcopy_memcpy_strided(const etcopy_memref *dst,
                             const etcopy_memref *src, int64_t rank,
                             int64_t elementBytes, int32_t kind,
                             cudaStream_t stream, ETCOPY_LOCATION) {
  const int64_t *sizes = src->shape, *srcStrides = src->shape + rank;
  const int64_t *dstStrides = dst->shape + rank;
  const char *what = describe_copy(kind);
  for (int64_t d = 0; d < rank; ++d)
    if (src->shape[d] != dst->shape[d])
      report_size_mismatch(ETCOPY_AT, what, d, src->shape[d], dst->shape[d]);
  char *dstBase = dst->aligned + dst->offset * elementBytes;
  const char *srcBase = src->aligned + src->offset * elementBytes;

  /* Innermost dimension first: the element count, and whether both sides
   * are row-major contiguous (dimensions of size 1 have no stride). */
  int64_t count = 1;
  int contiguous = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (sizes[d] != 1 && (srcStrides[d] != count || dstStrides[d] != count))
      contiguous = 0;
    count *= sizes[d];
  }
  if (count == 0)
    return;
  if (contiguous) {
    uint64_t bytes = (uint64_t)(count * elementBytes);
    check(cudaMemcpyAsync(dstBase, srcBase, bytes, (enum cudaMemcpyKind)kind,
                          stream),
          ETCOPY_AT, "cudaMemcpyAsync", what, bytes);
    return;
  }

  /* Pitched rows when both inner strides are 1, else one element per row;
   * the outer dimensions are iterated. */
  int64_t inner = rank - 1, outerRank, width, height, dpitch, spitch;
  if (rank >= 2 && srcStrides[inner] == 1 && dstStrides[inner] == 1) {
    outerRank = rank - 2;
    width = sizes[inner] * elementBytes;
    height = sizes[rank - 2];
    dpitch = dstStrides[rank - 2] * elementBytes;
    spitch = srcStrides[rank - 2] * elementBytes;
  } else {
    outerRank = inner;
    width = elementBytes;
    height = sizes[inner];
    dpitch = dstStrides[inner] * elementBytes;
    spitch = srcStrides[inner] * elementBytes;
  }
  int64_t outerCount = 1;
  for (int64_t d = 0; d < outerRank; ++d)
    outerCount *= sizes[d];
  for (int64_t index = 0; index < outerCount; ++index) {
    int64_t rest = index, dstOffset = 0, srcOffset = 0;
    for (int64_t d = outerRank - 1; d >= 0; --d) {
      int64_t coordinate = rest % sizes[d];
      rest /= sizes[d];
      dstOffset += coordinate * dstStrides[d];
      srcOffset += coordinate * srcStrides[d];
    }
    check(cudaMemcpy2DAsync(dstBase + dstOffset * elementBytes, dpitch,
                            srcBase + srcOffset * elementBytes, spitch, width,
                            height, (enum cudaMemcpyKind)kind, stream),
          ETCOPY_AT, "cudaMemcpy2DAsync", what, (uint64_t)(width * height));
  }
}

/*===----------------------------------------------------------------------===*
 * Memsets
 *===----------------------------------------------------------------------===*/

void __etcopy_memset(void *dst, uint32_t value, uint64_t count,
                     int32_t elementBytes, cudaStream_t stream,
                     ETCOPY_LOCATION) {
  (void)elementBytes; /* 1: the pass lowers byte patterns only. */
  check(cudaMemsetAsync(dst, (int)(value & 0xff), count, stream), ETCOPY_AT,
        "cudaMemsetAsync", "set device memory", count);
}
