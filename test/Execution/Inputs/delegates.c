// Delegates for delegates.mlir, called through MLIR's C interface
// (llvm.emit_c_interface). Built twice: with -DETCOPY_DEVICE_DELEGATES the
// tensors live in (simulated) device memory, which host code cannot touch,
// so each delegate stages its inputs through cudaMemcpy like a kernel launch
// would read them; without it, the same arithmetic runs on host memory.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef ETCOPY_DEVICE_DELEGATES
#include "CudaRuntimeSubset.h"
#endif
#include "memref-descriptors.h"

enum { N = 4 };

static void load(const MemRef1D *m, float *out) {
#ifdef ETCOPY_DEVICE_DELEGATES
  cudaMemcpy(out, m->aligned + m->offset, N * sizeof(float),
             cudaMemcpyDeviceToHost);
#else
  memcpy(out, m->aligned + m->offset, N * sizeof(float));
#endif
}

static void store(MemRef1D *result, const float *in) {
  float *data;
#ifdef ETCOPY_DEVICE_DELEGATES
  cudaMalloc((void **)&data, N * sizeof(float));
  cudaMemcpy(data, in, N * sizeof(float), cudaMemcpyHostToDevice);
  // cudaMemcpy from pageable memory may return before the device memory is
  // written: a delegate's work is complete when it returns
  // (docs/Delegates.md).
  cudaStreamSynchronize(0);
#else
  data = malloc(N * sizeof(float));
  memcpy(data, in, N * sizeof(float));
#endif
  result->allocated = result->aligned = data;
  result->offset = 0;
  result->sizes[0] = N;
  result->strides[0] = 1;
}

// scale(x) = 2 * x
void _mlir_ciface_scale(MemRef1D *result, MemRef1D *x) {
  float in[N], out[N];
  load(x, in);
  for (int i = 0; i < N; ++i)
    out[i] = 2.0f * in[i];
  store(result, out);
}

// add(a, b) = a + b
void _mlir_ciface_add(MemRef1D *result, MemRef1D *a, MemRef1D *b) {
  float lhs[N], rhs[N], out[N];
  load(a, lhs);
  load(b, rhs);
  for (int i = 0; i < N; ++i)
    out[i] = lhs[i] + rhs[i];
  store(result, out);
}

// add_on_cuda1(a, b) = a + b, declared on cuda:1 by tensor-level-planning.mlir
// (the same code: a delegate runs with its own device current).
void _mlir_ciface_add_on_cuda1(MemRef1D *result, MemRef1D *a, MemRef1D *b) {
  _mlir_ciface_add(result, a, b);
}
