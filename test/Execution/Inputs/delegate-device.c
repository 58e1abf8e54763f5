// Delegates for delegate-device.mlir: each reports the device current while
// it runs, then doubles its input on that device's memory (staged through
// cudaMemcpy, as a kernel launch would read it). report_device() tells the
// device current in host code.
#include <stdint.h>
#include <stdio.h>

#include "CudaRuntimeSubset.h"
#include "memref-descriptors.h"

enum { N = 4 };

static void twice(const char *name, MemRef1D *result, MemRef1D *x) {
  int device = -1;
  cudaGetDevice(&device);
  printf("%s runs on device %d\n", name, device);
  float values[N];
  cudaMemcpy(values, x->aligned + x->offset, sizeof values,
             cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; ++i)
    values[i] *= 2.0f;
  float *data;
  cudaMalloc((void **)&data, sizeof values);
  cudaMemcpy(data, values, sizeof values, cudaMemcpyHostToDevice);
  // cudaMemcpy from pageable memory may return before the device memory is
  // written: a delegate's work is complete when it returns
  // (docs/Delegates.md).
  cudaStreamSynchronize(0);
  result->allocated = result->aligned = data;
  result->offset = 0;
  result->sizes[0] = N;
  result->strides[0] = 1;
}

void _mlir_ciface_twice_on0(MemRef1D *result, MemRef1D *x) {
  twice("twice_on0", result, x);
}

void _mlir_ciface_twice_on1(MemRef1D *result, MemRef1D *x) {
  twice("twice_on1", result, x);
}

void report_device(void) {
  int device = -1;
  cudaGetDevice(&device);
  printf("host code runs with device %d current\n", device);
}
