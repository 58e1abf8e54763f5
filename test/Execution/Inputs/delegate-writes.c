// Delegates for delegate-writes.mlir, called through MLIR's C interface
// (llvm.emit_c_interface). @bump writes its first argument, which its
// declaration marks `etcopy.writes`. Built twice, as delegates.c: with
// -DETCOPY_DEVICE_DELEGATES the buffers live in (simulated) device memory
// and each delegate moves them with cudaMemcpy as a kernel would read and
// write them; without it, the same arithmetic runs on host memory.
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

static void write(MemRef1D *m, const float *in) {
#ifdef ETCOPY_DEVICE_DELEGATES
  cudaMemcpy(m->aligned + m->offset, in, N * sizeof(float),
             cudaMemcpyHostToDevice);
  // cudaMemcpy from pageable memory may return before the device memory is
  // written: a delegate's work is complete when it returns
  // (docs/Delegates.md).
  cudaStreamSynchronize(0);
#else
  memcpy(m->aligned + m->offset, in, N * sizeof(float));
#endif
}

static void store(MemRef1D *result, const float *in) {
  float *data;
#ifdef ETCOPY_DEVICE_DELEGATES
  cudaMalloc((void **)&data, N * sizeof(float));
#else
  data = malloc(N * sizeof(float));
#endif
  result->allocated = result->aligned = data;
  result->offset = 0;
  result->sizes[0] = N;
  result->strides[0] = 1;
  write(result, in);
}

// bump(a, b): a += b in place, returns 10 * a.
void _mlir_ciface_bump(MemRef1D *result, MemRef1D *a, MemRef1D *b) {
  float lhs[N], rhs[N], out[N];
  load(a, lhs);
  load(b, rhs);
  for (int i = 0; i < N; ++i) {
    lhs[i] += rhs[i];
    out[i] = 10.0f * lhs[i];
  }
  write(a, lhs);
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
