/*===- CudaSupportTransfers.c - Transfers of the CUDA support -----*- C -*-===*\
|*                                                                            *|
|* The runtime support of convert-gpu-to-cuda-runtime that moves data (see    *|
|* CudaSupport.h and CudaSupport.c): the caches of host transfer buffers,     *|
|* copies, batches of copies, copies between peers, strided copies and        *|
|* memsets. It shares the error helpers of CudaSupport.c through              *|
|* CudaSupportInternal.h; the build links it with the other files of the      *|
|* support and keeps its statics internal.                                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "CudaSupportInternal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Frees the idle blocks of each cache (see "Release at exit" in
 * CudaSupport.c): one destructor per cache, so that a module that uses one
 * cache only does not carry the other. */
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

#define ETCOPY_SEQUENCE_ISSUE(i)                                               \
  __etcopy_memcpy(dst##i, src##i, bytes##i, kind##i, stream, file, line##i,    \
                  column##i)

void __etcopy_memcpy_x2(cudaStream_t stream, const char *file,
                        ETCOPY_SEQUENCE_COPY(0), ETCOPY_SEQUENCE_COPY(1)) {
  ETCOPY_SEQUENCE_ISSUE(0);
  ETCOPY_SEQUENCE_ISSUE(1);
}

void __etcopy_memcpy_x3(cudaStream_t stream, const char *file,
                        ETCOPY_SEQUENCE_COPY(0), ETCOPY_SEQUENCE_COPY(1),
                        ETCOPY_SEQUENCE_COPY(2)) {
  ETCOPY_SEQUENCE_ISSUE(0);
  ETCOPY_SEQUENCE_ISSUE(1);
  ETCOPY_SEQUENCE_ISSUE(2);
}

void __etcopy_memcpy_x4(cudaStream_t stream, const char *file,
                        ETCOPY_SEQUENCE_COPY(0), ETCOPY_SEQUENCE_COPY(1),
                        ETCOPY_SEQUENCE_COPY(2), ETCOPY_SEQUENCE_COPY(3)) {
  ETCOPY_SEQUENCE_ISSUE(0);
  ETCOPY_SEQUENCE_ISSUE(1);
  ETCOPY_SEQUENCE_ISSUE(2);
  ETCOPY_SEQUENCE_ISSUE(3);
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
