// Delegates for delegate-stream-ordered.mlir. The stream-ordered ones
// (reverse_on0, reverse_on1) get the stream of their device as their last
// argument, report the device current and whether work is still pending on
// the stream (the copy of their input: the host did not wait before the
// call), then enqueue all their work on the stream and return without
// synchronising: the result is allocated with cudaMallocAsync and written by
// one device-to-device cudaMemcpyAsync per element, in reverse order. The
// simulator runs that work only when the program waits for the stream, so
// a host that read the result without waiting would see stale data. The
// test links delegate-device.c's plain delegates too, which read their
// input synchronously: right only because the host waits before calling
// them.
#include <stdio.h>

#include "CudaRuntimeSubset.h"
#include "memref-descriptors.h"

enum { N = 4 };

static void reverse(const char *name, MemRef1D *result, MemRef1D *x,
                    cudaStream_t stream) {
  int device = -1;
  cudaGetDevice(&device);
  printf("%s runs on device %d, input copy %s\n", name, device,
         cudaStreamQuery(stream) == cudaErrorNotReady ? "pending"
                                                      : "complete");
  float *data = NULL;
  cudaMallocAsync((void **)&data, N * sizeof(float), stream);
  for (int i = 0; i < N; ++i)
    cudaMemcpyAsync(data + i, x->aligned + x->offset + (N - 1 - i),
                    sizeof(float), cudaMemcpyDeviceToDevice, stream);
  result->allocated = result->aligned = data;
  result->offset = 0;
  result->sizes[0] = N;
  result->strides[0] = 1;
}

void _mlir_ciface_reverse_on0(MemRef1D *result, MemRef1D *x,
                              cudaStream_t stream) {
  reverse("reverse_on0", result, x, stream);
}

void _mlir_ciface_reverse_on1(MemRef1D *result, MemRef1D *x,
                              cudaStream_t stream) {
  reverse("reverse_on1", result, x, stream);
}
