// The caches of host blocks behind the transfer buffers of lowered code
// (__etcopy_malloc_pageable / __etcopy_malloc_host and their frees): a
// freed block is reused by the next request of its size, without a call to
// aligned_alloc or cudaMallocHost; a block that would take the idle bytes
// past the bound ($ETCOPY_PAGEABLE_HOST_CACHE_BYTES,
// $ETCOPY_PINNED_HOST_CACHE_BYTES; the header counts) is given back at its
// free; buffers are 256-byte aligned; threads allocating and freeing at the
// same time never get one block twice, and allocate at most one block per
// size and thread; every block allocated is freed by the end, the idle ones
// at exit. The allocators are counted by linking with --wrap.

// RUN: %cc %s %etcopy_cuda_support \
// RUN:   -I%etcopy_src_root/lib/Conversion/GPUToCUDARuntime -I%cuda_sim_include \
// RUN:   -pthread -Wl,--wrap=aligned_alloc,--wrap=free,--wrap=cudaMallocHost,--wrap=cudaFreeHost \
// RUN:   -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_PAGEABLE_HOST_CACHE_BYTES=1024 ETCOPY_PINNED_HOST_CACHE_BYTES=1024 \
// RUN:   %t bounds 2>&1 | FileCheck %s --check-prefixes=CHECK,BOUNDS
// RUN: %t threads 2>&1 | FileCheck %s --check-prefixes=CHECK,THREADS

#include "CudaSupport.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AT __FILE__, __LINE__, 0

// Calls of the allocators and frees the runtime support made.
static int blocks[2], freed[2];
enum { Pageable, Pinned };

void *__real_aligned_alloc(size_t alignment, size_t size);
void __real_free(void *pointer);
cudaError_t __real_cudaMallocHost(void **pointer, size_t size);
cudaError_t __real_cudaFreeHost(void *pointer);

void *__wrap_aligned_alloc(size_t alignment, size_t size) {
  __atomic_fetch_add(&blocks[Pageable], 1, __ATOMIC_RELAXED);
  return __real_aligned_alloc(alignment, size);
}

void __wrap_free(void *pointer) {
  if (pointer)
    __atomic_fetch_add(&freed[Pageable], 1, __ATOMIC_RELAXED);
  __real_free(pointer);
}

cudaError_t __wrap_cudaMallocHost(void **pointer, size_t size) {
  __atomic_fetch_add(&blocks[Pinned], 1, __ATOMIC_RELAXED);
  return __real_cudaMallocHost(pointer, size);
}

cudaError_t __wrap_cudaFreeHost(void *pointer) {
  __atomic_fetch_add(&freed[Pinned], 1, __ATOMIC_RELAXED);
  return __real_cudaFreeHost(pointer);
}

typedef void *(*malloc_fn)(uint64_t, const char *, int32_t, int32_t);
typedef void (*free_fn)(void *, const char *, int32_t, int32_t);
static const malloc_fn allocate[2] = {__etcopy_malloc_pageable,
                                      __etcopy_malloc_host};
static const free_fn release[2] = {__etcopy_free_pageable, __etcopy_free_host};
static const char *names[2] = {"pageable", "pinned"};

// Registered before the first block, so it runs after the caches' release.
static void report_at_exit(void) {
  for (int kind = 0; kind < 2; ++kind)
    printf("at exit, %s: %d blocks, %d freed\n", names[kind], blocks[kind],
           freed[kind]);
}

enum { Threads = 8, Rounds = 2000, Sizes = 4 };

static void *churn(void *argument) {
  int kind = (int)(intptr_t)argument >> 8, thread = (int)(intptr_t)argument & 255;
  for (int round = 0; round < Rounds; ++round) {
    uint64_t bytes = 64 + 64 * (uint64_t)(round % Sizes);
    unsigned char *buffer = allocate[kind](bytes, AT);
    memset(buffer, thread, bytes);
    for (uint64_t i = 0; i < bytes; ++i)
      if (buffer[i] != thread) {
        printf("a block was handed to two threads\n");
        exit(1);
      }
    release[kind](buffer, AT);
  }
  return NULL;
}

/* A buffer of 100 bytes, freed, then requested again; buffers of 500 and
 * 300 bytes: with 1024 idle bytes allowed, the 100-byte block (356 bytes
 * with its header) stays idle, the 500-byte one (756) does not fit beside
 * it and is freed, the 300-byte one (556) fits. */
static void check_bounds(int kind) {
  void *first = allocate[kind](100, AT);
  release[kind](first, AT);
  void *second = allocate[kind](100, AT);
  printf("%s: reuse: %d blocks, same buffer: %d, aligned: %d\n", names[kind],
         blocks[kind], first == second, (uintptr_t)second % 256 == 0);
  void *other = allocate[kind](500, AT);
  void *third = allocate[kind](300, AT);
  release[kind](second, AT);
  release[kind](other, AT);
  release[kind](third, AT);
  printf("%s: bound: %d blocks, %d freed\n", names[kind], blocks[kind],
         freed[kind]);
  void *again = allocate[kind](300, AT);
  printf("%s: after the bound: %d blocks, reused: %d\n", names[kind],
         blocks[kind], again == third);
  release[kind](again, AT);
}

/* Threads use four sizes (64 to 256 bytes) in turn: with the default bound
 * (1 GiB) at most one block per size and thread is ever allocated, however
 * the frees interleave. */
static void check_threads(int kind) {
  pthread_t threads[Threads];
  for (intptr_t t = 0; t < Threads; ++t)
    pthread_create(&threads[t], NULL, churn, (void *)((kind << 8) | t));
  for (int t = 0; t < Threads; ++t)
    pthread_join(threads[t], NULL);
  printf("%s: %d threads, %d rounds: at most %d blocks: %d\n", names[kind],
         Threads, Rounds, Threads * Sizes, blocks[kind] <= Threads * Sizes);
}

int main(int argc, char **argv) {
  atexit(report_at_exit);
  setvbuf(stdout, NULL, _IONBF, 0);
  int threads = argc > 1 && strcmp(argv[1], "threads") == 0;
  // BOUNDS: pageable: reuse: 1 blocks, same buffer: 1, aligned: 1
  // BOUNDS-NEXT: pageable: bound: 3 blocks, 1 freed
  // BOUNDS-NEXT: pageable: after the bound: 3 blocks, reused: 1
  // BOUNDS-NEXT: pinned: reuse: 1 blocks, same buffer: 1, aligned: 1
  // BOUNDS-NEXT: pinned: bound: 3 blocks, 1 freed
  // BOUNDS-NEXT: pinned: after the bound: 3 blocks, reused: 1
  // THREADS: pageable: 8 threads, 2000 rounds: at most 32 blocks: 1
  // THREADS-NEXT: pinned: 8 threads, 2000 rounds: at most 32 blocks: 1
  for (int kind = 0; kind < 2; ++kind) {
    if (threads)
      check_threads(kind);
    else
      check_bounds(kind);
  }
  // Every block allocated is freed: the idle ones when the program exits.
  // CHECK: at exit, pageable: [[PAGEABLE:[0-9]+]] blocks, [[PAGEABLE]] freed
  // CHECK-NEXT: at exit, pinned: [[PINNED:[0-9]+]] blocks, [[PINNED]] freed
  return 0;
}
