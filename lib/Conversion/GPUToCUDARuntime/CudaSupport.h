/*===- CudaSupport.h - Runtime support of the CUDA lowering -------*- C -*-===*\
|*                                                                            *|
|* The C interface of the functions that convert-gpu-to-cuda-runtime emits    *|
|* into every module it lowers (CudaSupport*.c, compiled to LLVM IR at build  *|
|* time and imported into the module on demand). Generated code calls them   *|
|* instead of the CUDA Runtime API: each wraps one CUDA entry point (or one   *|
|* fixed sequence of them), checks every cudaError_t and CUresult, and on     *|
|* failure calls the error policy `etcopy_cuda_error` with the location of    *|
|* the op that made the call.                                                 *|
|*                                                                            *|
|* Every function returns a defined result when the policy returns instead    *|
|* of exiting: a null pointer or stream, or the device it was asked for. A    *|
|* copy, memset or free of a null pointer then fails in turn and is reported, *|
|* so that nothing reads memory the failed call did not write.                *|
|*                                                                            *|
|* This header is for C and C++ programs that call the functions directly    *|
|* (the tests); generated code has them in its own module.                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ETCOPY_CONVERSION_GPUTOCUDARUNTIME_CUDASUPPORT_H
#define ETCOPY_CONVERSION_GPUTOCUDARUNTIME_CUDASUPPORT_H

#include "CudaRuntimeSubset.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every function takes the location of the op it lowers last: the file
 * name, the line and the column (a line of 0 means no line is known). */
#define ETCOPY_LOCATION const char *file, int32_t line, int32_t column

/* A ranked memref descriptor as MLIR's LLVM lowering lays it out: sizes
 * [rank] then strides [rank] follow the offset. Sizes, strides and the
 * offset count elements. */
typedef struct {
  void *allocated;
  char *aligned;
  int64_t offset;
  int64_t shape[];
} etcopy_memref;

/* The error policy. The definition in every lowered module is weak: it
 * prints "<location>: error: <call> failed (<what>[, <bytes> bytes]):
 * <name>: <text>" and exits with status 1. `err` is a cudaError_t, or a
 * CUresult when `call` is a driver function (its name starts with "cu" but
 * not "cuda"). */
void etcopy_cuda_error(int err, const char *location, const char *call,
                       const char *what, unsigned long long bytes);

/* The stream provider. The lowered code runs all its work on `device` on
 * the stream this returns (with `device` current when it is called): 0 and
 * the stream, or a cudaError_t and a null stream. The definition in every
 * lowered module is weak: it creates one non-blocking stream per device
 * (ordinals below ETCOPY_MAX_DEVICES) on first use, shares it with every
 * later call, and destroys it at exit (before the CUDA runtime tears itself
 * down) or when the code is unloaded. A program that defines the symbol
 * supplies its own streams and owns them. */
#define ETCOPY_MAX_DEVICES 64
int etcopy_get_stream(int32_t device, cudaStream_t *stream);

/* The pool policy: how many bytes of freed device memory the current memory
 * pool of `device` (the one cudaMallocAsync allocates from) keeps for reuse
 * at a synchronisation instead of giving them back to the system. At the
 * first stream request for a device (with `device` current), the lowered
 * code raises the pool's cudaMemPoolAttrReleaseThreshold to this value; 0,
 * or a threshold the program already set higher, leaves the pool as it is.
 * The definition in every lowered module is weak: it returns
 * $ETCOPY_POOL_RELEASE_THRESHOLD (decimal bytes) when set, else
 * ETCOPY_DEFAULT_POOL_RELEASE_THRESHOLD (keep all: the pool then holds at
 * most the peak of the memory allocated from it). A program that defines
 * the symbol chooses per device. */
#define ETCOPY_DEFAULT_POOL_RELEASE_THRESHOLD UINT64_MAX
uint64_t etcopy_get_pool_release_threshold(int32_t device);

/* Streams and devices. `device` -1 is the current device. */
cudaStream_t __etcopy_get_stream(int32_t device, ETCOPY_LOCATION);
void __etcopy_stream_synchronize(cudaStream_t stream, ETCOPY_LOCATION);
void __etcopy_stream_join(cudaStream_t dependency, int32_t dependencyDevice,
                          cudaStream_t stream, int32_t device,
                          ETCOPY_LOCATION);
/* A host wait for one copy rather than for the whole stream: after the
 * copy, __etcopy_stream_record records the event of `stream` (the event of
 * its joins, created once, recorded again each time); where the host needs
 * the copy done, __etcopy_stream_wait_record waits for that event's latest
 * record (cudaEventSynchronize), which does not wait for the work queued
 * after it. A later record (another wait's, a join's, another thread's)
 * covers more work: waiting for it is sound. The record returns whether it
 * recorded the stream's event; where it did not (no event slot for the
 * stream, a failed call), the wait, given that result, waits for the whole
 * stream. `device` -1 is the current device. */
int32_t __etcopy_stream_record(cudaStream_t stream, int32_t device,
                               ETCOPY_LOCATION);
void __etcopy_stream_wait_record(cudaStream_t stream, int32_t device,
                                 int32_t recorded, ETCOPY_LOCATION);
int32_t __etcopy_get_device(ETCOPY_LOCATION);
void __etcopy_set_device(int32_t device, ETCOPY_LOCATION);
void __etcopy_restore_device(int32_t device, ETCOPY_LOCATION);
int32_t __etcopy_enter_device(int32_t device, ETCOPY_LOCATION);
void __etcopy_leave_device(int32_t previous, int32_t device, ETCOPY_LOCATION);

/* Memory. */
void *__etcopy_malloc(uint64_t bytes, cudaStream_t stream, ETCOPY_LOCATION);
void *__etcopy_malloc_managed(uint64_t bytes, ETCOPY_LOCATION);
void __etcopy_free(void *pointer, cudaStream_t stream, ETCOPY_LOCATION);
void __etcopy_free_managed(void *pointer, cudaStream_t stream,
                           ETCOPY_LOCATION);
/* Host buffers of transfers, 256-byte aligned, from a cache of pinned
 * blocks (cudaMallocHost; $ETCOPY_PINNED_HOST_CACHE_BYTES bounds the idle
 * ones) or of pageable blocks (aligned_alloc;
 * $ETCOPY_PAGEABLE_HOST_CACHE_BYTES). A free returns the block to its cache
 * without waiting for the device; idle blocks are released at exit. */
void *__etcopy_malloc_host(uint64_t bytes, ETCOPY_LOCATION);
void __etcopy_free_host(void *pointer, ETCOPY_LOCATION);
void *__etcopy_malloc_pageable(uint64_t bytes, ETCOPY_LOCATION);
void __etcopy_free_pageable(void *pointer, ETCOPY_LOCATION);

/* Copies: `kind` is a cudaMemcpyKind. */
void __etcopy_memcpy(void *dst, const void *src, uint64_t bytes, int32_t kind,
                     cudaStream_t stream, ETCOPY_LOCATION);
/* Two, three or four copies of one stream as __etcopy_memcpy makes them, in
 * this order, each reported with its own line and column: the lowering
 * makes consecutive copies of a stream with one call. */
#define ETCOPY_SEQUENCE_COPY(i)                                                \
  void *dst##i, const void *src##i, uint64_t bytes##i, int32_t kind##i,        \
      int32_t line##i, int32_t column##i
void __etcopy_memcpy_x2(cudaStream_t stream, const char *file,
                        ETCOPY_SEQUENCE_COPY(0), ETCOPY_SEQUENCE_COPY(1));
void __etcopy_memcpy_x3(cudaStream_t stream, const char *file,
                        ETCOPY_SEQUENCE_COPY(0), ETCOPY_SEQUENCE_COPY(1),
                        ETCOPY_SEQUENCE_COPY(2));
void __etcopy_memcpy_x4(cudaStream_t stream, const char *file,
                        ETCOPY_SEQUENCE_COPY(0), ETCOPY_SEQUENCE_COPY(1),
                        ETCOPY_SEQUENCE_COPY(2), ETCOPY_SEQUENCE_COPY(3));
void __etcopy_memcpy_strided(const etcopy_memref *dst,
                             const etcopy_memref *src, int64_t rank,
                             int64_t elementBytes, int32_t kind,
                             cudaStream_t stream, ETCOPY_LOCATION);
/* `count` (at least 1) independent copies, sizes[i] bytes from srcs[i] to
 * dsts[i], in one cudaMemcpyBatchAsync whose sources are read in stream
 * order; one cudaMemcpyAsync each on a null stream, which batches reject. */
void __etcopy_memcpy_batch(void *const *dsts, const void *const *srcs,
                           const uint64_t *sizes, uint64_t count,
                           cudaStream_t stream, ETCOPY_LOCATION);
/* A cudaMemcpyPeerAsync from memory of srcDevice to memory of dstDevice,
 * which is the current device. Peer access from dstDevice to srcDevice is
 * enabled first, once per process and pair, where the devices allow it;
 * otherwise the driver stages the copy. */
void __etcopy_memcpy_peer(void *dst, int32_t dstDevice, const void *src,
                          int32_t srcDevice, uint64_t bytes,
                          cudaStream_t stream, ETCOPY_LOCATION);

/* Sets `count` elements of `elementBytes` (1, 2 or 4) bytes to the low
 * bytes of `value`. */
void __etcopy_memset(void *dst, uint32_t value, uint64_t count,
                     int32_t elementBytes, cudaStream_t stream,
                     ETCOPY_LOCATION);

/* Kernels. `image` is the object of one gpu.binary (PTX text or a cubin);
 * `*library` is its library handle, loaded from the image once per process
 * on first use (thread-safe: racing threads keep the first library
 * published) and unloaded at exit while CUDA is alive; `*kernel` caches the
 * handle of the kernel `name` in it. `hostKernels`, if not null, is the
 * binary's etcopy_host_kernel_table (CudaSimKernels.h), attached to the
 * library when it runs on the CUDA simulator and unused otherwise. Returns
 * the kernel, or null if the load or the look-up failed and the policy
 * returned. */
cudaKernel_t __etcopy_get_kernel(cudaLibrary_t *library, const void *image,
                                 const void *hostKernels, cudaKernel_t *kernel,
                                 const char *name, ETCOPY_LOCATION);
/* Launches `kernel` on `stream` with a grid and blocks of the given sizes
 * (each at most UINT32_MAX), `sharedBytes` of dynamic shared memory and
 * `args`, one pointer per kernel parameter. `name` names the kernel in the
 * error report. */
void __etcopy_launch_kernel(cudaKernel_t kernel, const char *name,
                            uint64_t gridX, uint64_t gridY, uint64_t gridZ,
                            uint64_t blockX, uint64_t blockY, uint64_t blockZ,
                            uint32_t sharedBytes, cudaStream_t stream,
                            void **args, ETCOPY_LOCATION);

/* Graphs. A function whose stream work is captured (cuda-graphs=true) has
 * one cell, a global of its module: `busy` is set while a thread captures
 * or launches its graph, `stream` is the private stream it captures on (of
 * `device`), `exec` the instance of its last capture and `key` the inputs
 * (addresses, layouts, scalars, the function's stream) that capture saw;
 * the lowering sizes `key` per function. */
typedef struct {
  uint64_t busy;
  cudaStream_t stream;
  cudaGraphExec_t exec;
  int64_t device;
  uint64_t registered;
  int64_t key[];
} etcopy_graph_cell;

/* What __etcopy_graph_replay did. */
#define ETCOPY_GRAPH_DIRECT 0    /* the cell is busy: run the calls */
#define ETCOPY_GRAPH_REPLAYED 1  /* the graph of these inputs was launched */
#define ETCOPY_GRAPH_CAPTURING 2 /* capture, holding the cell */

/* At the start of the function's stream work, with `key` its `count` input
 * words: launches the cell's instance on `stream` when it was captured
 * with the same key. Otherwise takes the cell, unless another thread holds
 * it (the work then runs directly). */
int32_t __etcopy_graph_replay(etcopy_graph_cell *cell, const int64_t *key,
                              uint64_t count, cudaStream_t stream,
                              ETCOPY_LOCATION);
/* With `state` CAPTURING, begins a capture on the cell's stream (created on
 * first use, on the current device) in cudaStreamCaptureModeThreadLocal
 * and returns it: the function's work is recorded there. Otherwise returns
 * `stream`. */
cudaStream_t __etcopy_graph_begin(etcopy_graph_cell *cell, int32_t state,
                                  cudaStream_t stream, ETCOPY_LOCATION);
/* With `state` CAPTURING, ends the capture, instantiates the graph in place
 * of the previous instance, records `key`, launches the graph on `stream`
 * and releases the cell. */
void __etcopy_graph_end(etcopy_graph_cell *cell, int32_t state,
                        const int64_t *key, uint64_t count,
                        cudaStream_t stream, ETCOPY_LOCATION);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ETCOPY_CONVERSION_GPUTOCUDARUNTIME_CUDASUPPORT_H */
