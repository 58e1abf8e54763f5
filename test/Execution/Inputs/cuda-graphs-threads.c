// Harness of cuda-graphs-threads.test: THREADS threads call @chain (lowered
// with cuda-graphs, Inputs/cuda-graphs-chain.mlir) CALLS times each, each
// thread with buffers of its own, so that the key of the chain's graph
// changes whenever another thread called last: calls capture again, replay,
// or, while another thread holds the function's cell, run directly. Before
// each call a thread writes a number of its own into its input's first
// element, after it reads its output's first element (on a stream of its
// own), and checks it. @layer is the benchmark's stand-in for a kernel
// (cudaMallocAsync, one device-to-device copy), stream-ordered.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "CudaRuntimeSubset.h"
#include "memref-descriptors.h"

enum { ELEMENTS = 16 };

static int calls;
static pthread_barrier_t start;

static void check(cudaError_t error, const char *call) {
  if (error != cudaSuccess) {
    fprintf(stderr, "harness: %s failed: %s\n", call,
            cudaGetErrorString(error));
    exit(1);
  }
}

void _mlir_ciface_layer(MemRef1D *result, MemRef1D *activation,
                        cudaStream_t stream) {
  float *data = NULL;
  check(cudaMallocAsync((void **)&data, ELEMENTS * sizeof(float), stream),
        "cudaMallocAsync");
  check(cudaMemcpyAsync(data, activation->aligned + activation->offset,
                        ELEMENTS * sizeof(float), cudaMemcpyDeviceToDevice,
                        stream),
        "cudaMemcpyAsync");
  result->allocated = result->aligned = data;
  result->offset = 0;
  result->sizes[0] = ELEMENTS;
  result->strides[0] = 1;
}

void _mlir_ciface_chain(MemRef1D *x, MemRef1D *out);

static void *run(void *argument) {
  int thread = (int)(intptr_t)argument;
  float *x = NULL, *out = NULL;
  cudaStream_t own;
  check(cudaMalloc((void **)&x, ELEMENTS * sizeof(float)), "cudaMalloc");
  check(cudaMalloc((void **)&out, ELEMENTS * sizeof(float)), "cudaMalloc");
  check(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking),
        "cudaStreamCreateWithFlags");
  MemRef1D xRef = {x, x, 0, {ELEMENTS}, {1}};
  MemRef1D outRef = {out, out, 0, {ELEMENTS}, {1}};
  pthread_barrier_wait(&start);
  for (int call = 0; call < calls; ++call) {
    float marker = (float)(thread * 1000 + call), seen = -1.0f;
    check(cudaMemcpyAsync(x, &marker, sizeof marker, cudaMemcpyHostToDevice,
                          own),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(own), "cudaStreamSynchronize");
    _mlir_ciface_chain(&xRef, &outRef);
    check(cudaMemcpyAsync(&seen, out, sizeof seen, cudaMemcpyDeviceToHost,
                          own),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(own), "cudaStreamSynchronize");
    if (seen != marker) {
      fprintf(stderr, "harness: thread %d call %d read %g, expected %g\n",
              thread, call, seen, marker);
      exit(1);
    }
  }
  check(cudaStreamDestroy(own), "cudaStreamDestroy");
  check(cudaFree(x), "cudaFree");
  check(cudaFree(out), "cudaFree");
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  int threads = atoi(argv[1]);
  calls = atoi(argv[2]);
  check(cudaFree(0), "cudaFree");
  pthread_barrier_init(&start, NULL, (unsigned)threads);
  pthread_t *ids = malloc(sizeof(pthread_t) * (size_t)threads);
  for (int t = 0; t < threads; ++t)
    pthread_create(&ids[t], NULL, run, (void *)(intptr_t)t);
  for (int t = 0; t < threads; ++t)
    pthread_join(ids[t], NULL);
  pthread_barrier_destroy(&start);
  free(ids);
  printf("%d threads x %d calls: data ok\n", threads, calls);
  return 0;
}
