// Delegates of the ExecuTorch PropagateDevicePass topologies
// (executorch-topologies.mlir, executorch-skip-flags.test), called through
// MLIR's C interface (llvm.emit_c_interface) on 2-D f32 tensors. Built
// twice, like delegates.c: with -DETCOPY_DEVICE_DELEGATES the tensors live
// in (simulated) device memory, which host code cannot touch, so each
// delegate stages its inputs through cudaMemcpy as a kernel launch would
// read them, and allocates its results with cudaMalloc on the device of its
// first input; without it, the same arithmetic runs on host memory. The
// staging copies are synchronous cudaMemcpy calls, so that the tests can
// tell them apart from the generated code's cudaMemcpyAsync.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memref-descriptors.h"
#ifdef ETCOPY_DEVICE_DELEGATES
#include "CudaRuntimeSubset.h"
#endif

enum { MaxElements = 64 };

static int64_t elements(const MemRef2D *m) { return m->sizes[0] * m->sizes[1]; }

#ifdef ETCOPY_DEVICE_DELEGATES
static void check(cudaError_t error, const char *call) {
  if (error != cudaSuccess) {
    fprintf(stderr, "delegate: %s failed: %s\n", call,
            cudaGetErrorString(error));
    exit(1);
  }
}
#endif

// Reads a row-major contiguous tensor into `out`.
static void load(const MemRef2D *m, float *out) {
  if (elements(m) > MaxElements || m->strides[1] != 1 ||
      m->strides[0] != m->sizes[1]) {
    fprintf(stderr, "delegate: unsupported tensor\n");
    exit(1);
  }
#ifdef ETCOPY_DEVICE_DELEGATES
  check(cudaMemcpy(out, m->aligned + m->offset, elements(m) * sizeof(float),
                   cudaMemcpyDeviceToHost),
        "cudaMemcpy");
#else
  memcpy(out, m->aligned + m->offset, elements(m) * sizeof(float));
#endif
}

// A fresh result shaped like `like`, on the device `like` lives on.
static void store(MemRef2D *result, const MemRef2D *like, const float *in) {
  size_t bytes = elements(like) * sizeof(float);
  float *data;
#ifdef ETCOPY_DEVICE_DELEGATES
  struct cudaPointerAttributes attributes;
  int previous;
  check(cudaPointerGetAttributes(&attributes, like->aligned),
        "cudaPointerGetAttributes");
  if (attributes.type != cudaMemoryTypeDevice) {
    fprintf(stderr, "delegate: input is not device memory\n");
    exit(1);
  }
  check(cudaGetDevice(&previous), "cudaGetDevice");
  check(cudaSetDevice(attributes.device), "cudaSetDevice");
  check(cudaMalloc((void **)&data, bytes), "cudaMalloc");
  check(cudaMemcpy(data, in, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  // cudaMemcpy from pageable memory may return before the device memory is
  // written: a delegate's work is complete when it returns
  // (docs/Delegates.md).
  check(cudaStreamSynchronize(0), "cudaStreamSynchronize");
  check(cudaSetDevice(previous), "cudaSetDevice");
#else
  data = malloc(bytes);
  memcpy(data, in, bytes);
#endif
  result->allocated = result->aligned = data;
  result->offset = 0;
  result->sizes[0] = like->sizes[0];
  result->sizes[1] = like->sizes[1];
  result->strides[0] = like->sizes[1];
  result->strides[1] = 1;
}

// add(a, b) = a + b, as aten.add.Tensor.
void _mlir_ciface_add(MemRef2D *result, MemRef2D *a, MemRef2D *b) {
  float lhs[MaxElements], rhs[MaxElements], out[MaxElements];
  load(a, lhs);
  load(b, rhs);
  for (int64_t i = 0; i < elements(a); ++i)
    out[i] = lhs[i] + rhs[i];
  store(result, a, out);
}

// The same delegate on another device (a separate symbol, so that the
// placement pass sees one device per delegate).
void _mlir_ciface_add_on_cuda1(MemRef2D *result, MemRef2D *a, MemRef2D *b) {
  _mlir_ciface_add(result, a, b);
}

// mm(a, b) = a x b, as aten.mm.default.
void _mlir_ciface_mm(MemRef2D *result, MemRef2D *a, MemRef2D *b) {
  float lhs[MaxElements], rhs[MaxElements], out[MaxElements];
  int64_t n = a->sizes[0], k = a->sizes[1], m = b->sizes[1];
  load(a, lhs);
  load(b, rhs);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      float sum = 0.0f;
      for (int64_t l = 0; l < k; ++l)
        sum += lhs[i * k + l] * rhs[l * m + j];
      out[i * m + j] = sum;
    }
  MemRef2D shape = *a;
  shape.sizes[1] = m;
  store(result, &shape, out);
}

// scale(x) = 2 * x.
void _mlir_ciface_scale(MemRef2D *result, MemRef2D *x) {
  float in[MaxElements], out[MaxElements];
  load(x, in);
  for (int64_t i = 0; i < elements(x); ++i)
    out[i] = 2.0f * in[i];
  store(result, x, out);
}

// sum_diff(a, b) = (a + b, a - b): a delegate with two outputs (ExecuTorch's
// getitem nodes).
void _mlir_ciface_sum_diff(TwoMemRef2D *result, MemRef2D *a, MemRef2D *b) {
  float lhs[MaxElements], rhs[MaxElements], sum[MaxElements],
      diff[MaxElements];
  load(a, lhs);
  load(b, rhs);
  for (int64_t i = 0; i < elements(a); ++i) {
    sum[i] = lhs[i] + rhs[i];
    diff[i] = lhs[i] - rhs[i];
  }
  store(&result->first, a, sum);
  store(&result->second, a, diff);
}
