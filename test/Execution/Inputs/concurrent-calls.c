// A serving program's use of lowered methods (concurrent-method.py): THREADS
// host threads each call a method CALLS times, each call with its own input
// (a function of the thread, the call and the element) and its own fill
// value, and check every element of every result against
//   out[i][j] = (in[ROWS-1-i][j] + 1) * 2 + fill.
// The program links the same method lowered with each option set of the
// tests, as one module each (they share the runtime support's state: the
// default streams, the pinned host cache): METHOD names the one every thread
// calls, or `all` to have thread t call method t modulo their number.
//
// Nothing calls CUDA before the threads start, which they do in one of two
// ways (START):
//   together     behind a barrier, so that the first uses (the simulator's
//                creation, the default streams, the pinned host cache, the
//                driver memset lookup, peer access) race;
//   after-first  thread 0 makes its first call alone, and the others start
//                when they see it done through a relaxed atomic flag, which
//                orders nothing for ThreadSanitizer: as threads woken
//                independently (by timers, by a network) after the
//                program's state was created by another.
//
// Built with -DPER_THREAD_STREAMS, the program supplies the streams (its
// etcopy_get_stream replaces the lowered code's default, which shares one
// stream per device between all threads): each thread gets its own stream
// per device, created with cudaStreamCreate at its first request and
// destroyed when the thread is done.
//
// Usage: concurrent-calls ROWS THREADS CALLS START METHOD. Prints one
// summary line and exits with 1 if any element was wrong.
#include "memref-descriptors.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PER_THREAD_STREAMS
#include "CudaRuntimeSubset.h"

// The method uses cuda:0 and cuda:1.
enum { NumDevices = 2 };
static _Thread_local cudaStream_t threadStreams[NumDevices];

int etcopy_get_stream(int32_t device, cudaStream_t *stream) {
  *stream = NULL;
  if (device < 0 || device >= NumDevices)
    return cudaErrorInvalidDevice;
  if (!threadStreams[device]) {
    int err = cudaStreamCreate(&threadStreams[device]);
    if (err != cudaSuccess)
      return err;
  }
  *stream = threadStreams[device];
  return cudaSuccess;
}

// The lowered functions synchronise before they return: nothing is queued.
static void destroyThreadStreams(void) {
  for (int device = 0; device < NumDevices; ++device)
    if (threadStreams[device])
      cudaStreamDestroy(threadStreams[device]);
}
#endif

typedef void Method(MemRef2D *in, MemRef2D *out, float fill);

// The option sets of concurrent-calls.test and concurrent-calls-stress.test.
// Weak: a program may link only the ones it calls.
__attribute__((weak)) Method _mlir_ciface_defaults, _mlir_ciface_pinned,
    _mlir_ciface_pinned_unplanned, _mlir_ciface_unplanned,
    _mlir_ciface_unbatched;

static const struct {
  const char *name;
  Method *method;
} methods[] = {
    {"defaults", _mlir_ciface_defaults},
    {"pinned", _mlir_ciface_pinned},
    {"pinned_unplanned", _mlir_ciface_pinned_unplanned},
    {"unplanned", _mlir_ciface_unplanned},
    {"unbatched", _mlir_ciface_unbatched},
};
enum { NumMethods = sizeof(methods) / sizeof(methods[0]) };

static int64_t rows, calls;
static int afterFirst;
static int chosen; // an index into methods, or -1 for all
static pthread_barrier_t start;
static int firstCallDone;

typedef struct {
  int thread;
  int64_t checked;
  int64_t wrong;
} Worker;

// Small integers, exact in f32 (below 2^24) through every operation.
static float input(int thread, int64_t call, int64_t i, int64_t j) {
  return (float)((thread * 7 + call * 3 + i * 4 + j) % 4096);
}

static void *work(void *argument) {
  Worker *worker = argument;
  int which = chosen >= 0 ? chosen : worker->thread % NumMethods;
  float *in = malloc(sizeof(float) * (size_t)(rows * 4));
  float *out = malloc(sizeof(float) * (size_t)(rows * 4));
  if (!afterFirst)
    pthread_barrier_wait(&start);
  else if (worker->thread != 0)
    while (!__atomic_load_n(&firstCallDone, __ATOMIC_RELAXED))
      sched_yield();
  for (int64_t call = 0; call < calls; ++call) {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        in[i * 4 + j] = input(worker->thread, call, i, j);
        out[i * 4 + j] = -1.0f;
      }
    float fill = (float)(worker->thread * 1000 + call % 1000);
    MemRef2D inRef = {in, in, 0, {rows, 4}, {4, 1}};
    MemRef2D outRef = {out, out, 0, {rows, 4}, {4, 1}};
    methods[which].method(&inRef, &outRef, fill);
    if (call == 0 && worker->thread == 0)
      __atomic_store_n(&firstCallDone, 1, __ATOMIC_RELAXED);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        float expected =
            (input(worker->thread, call, rows - 1 - i, j) + 1.0f) * 2.0f +
            fill;
        ++worker->checked;
        if (out[i * 4 + j] != expected && worker->wrong++ < 5)
          fprintf(stderr,
                  "thread %d (%s), call %lld: out[%lld][%lld] = %g, "
                  "expected %g\n",
                  worker->thread, methods[which].name, (long long)call,
                  (long long)i, (long long)j, out[i * 4 + j], expected);
      }
  }
#ifdef PER_THREAD_STREAMS
  destroyThreadStreams();
#endif
  free(in);
  free(out);
  return NULL;
}

int main(int argc, char **argv) {
  chosen = -2;
  if (argc == 6) {
    if (strcmp(argv[5], "all") == 0)
      chosen = -1;
    for (int m = 0; m < NumMethods; ++m)
      if (strcmp(argv[5], methods[m].name) == 0)
        chosen = m;
  }
  if (chosen == -2 || (strcmp(argv[4], "together") != 0 &&
                       strcmp(argv[4], "after-first") != 0)) {
    fprintf(stderr,
            "usage: %s ROWS THREADS CALLS together|after-first METHOD|all\n",
            argv[0]);
    return 2;
  }
  for (int m = 0; m < NumMethods; ++m)
    if ((chosen == -1 || chosen == m) && !methods[m].method) {
      fprintf(stderr, "method %s is not linked\n", methods[m].name);
      return 2;
    }
  rows = atoll(argv[1]);
  int threads = atoi(argv[2]);
  calls = atoll(argv[3]);
  afterFirst = strcmp(argv[4], "after-first") == 0;
  if (rows <= 0 || threads <= 0 || calls <= 0)
    return 2;
  Worker *workers = calloc((size_t)threads, sizeof(Worker));
  pthread_t *ids = calloc((size_t)threads, sizeof(pthread_t));
  pthread_barrier_init(&start, NULL, (unsigned)threads);
  for (int t = 0; t < threads; ++t) {
    workers[t].thread = t;
    if (pthread_create(&ids[t], NULL, work, &workers[t]) != 0) {
      fprintf(stderr, "cannot start thread %d\n", t);
      return 2;
    }
  }
  int64_t checked = 0, wrong = 0;
  for (int t = 0; t < threads; ++t) {
    pthread_join(ids[t], NULL);
    checked += workers[t].checked;
    wrong += workers[t].wrong;
  }
  pthread_barrier_destroy(&start);
  printf("%s: threads=%d calls=%lld elements checked=%lld wrong=%lld\n",
         argv[5], threads, (long long)(threads * calls), (long long)checked,
         (long long)wrong);
  free(workers);
  free(ids);
  return wrong == 0 ? 0 : 1;
}
