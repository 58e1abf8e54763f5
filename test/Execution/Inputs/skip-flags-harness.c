// A host program calling the methods of executorch-skip-flags.mlir the way
// an ExecuTorch runtime would: it reads each method's exported signature
// (@<method>_etcopy_signature, etcopy-export-signatures) and passes each
// argument in device memory (cudaMalloc + cudaMemcpy) when the signature
// places it on a device, in host memory otherwise; it reads each result
// back from where the signature places it and frees it there (the caller
// owns method results). Its own copies are synchronous cudaMemcpy calls, so
// that the trace tells them apart from the generated code's
// cudaMemcpyAsync. Prints each call's placements and the data.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "CudaRuntimeSubset.h"
#include "memref-descriptors.h"

// The layout etcopy-export-signatures documents.
typedef struct {
  int32_t kind; // 0 scalar, 1 memref, 2 unranked memref
  int32_t device_kind; // 0 cpu, 1 cuda
  int32_t ordinal;
  int32_t rank;
  int64_t element_bytes;
} etcopy_value_desc;

typedef struct {
  int64_t num_arguments;
  const etcopy_value_desc *arguments;
  int64_t num_results;
  const etcopy_value_desc *results;
} etcopy_method_signature;

extern const etcopy_method_signature forward_etcopy_signature;
extern const etcopy_method_signature mixed_etcopy_signature;
void _mlir_ciface_forward(MemRef2D *result, MemRef2D *a, MemRef2D *b);
void _mlir_ciface_mixed(TwoMemRef2D *result, MemRef2D *a, MemRef2D *b);

enum { N = 4 };

static void check(cudaError_t error, const char *call) {
  if (error != cudaSuccess) {
    fprintf(stderr, "harness: %s failed: %s\n", call,
            cudaGetErrorString(error));
    exit(1);
  }
}

static int onDevice(const etcopy_value_desc *desc) {
  return desc->device_kind == 1;
}

static void printPlace(const etcopy_value_desc *desc) {
  if (onDevice(desc))
    printf("cuda:%d", desc->ordinal);
  else
    printf("cpu");
}

// Prints `method(arg places) -> result places`.
static void printSignature(const char *method,
                           const etcopy_method_signature *signature) {
  printf("signature: %s(", method);
  for (int64_t i = 0; i < signature->num_arguments; ++i) {
    if (i)
      printf(", ");
    printPlace(&signature->arguments[i]);
  }
  printf(") ->");
  for (int64_t i = 0; i < signature->num_results; ++i) {
    printf(i ? ", " : " ");
    printPlace(&signature->results[i]);
  }
  printf("\n");
  fflush(stdout);
}

static MemRef2D makeArgument(const etcopy_value_desc *desc,
                             const float *values) {
  MemRef2D m = {0, 0, 0, {2, 2}, {2, 1}};
  if (desc->kind != 1 || desc->rank != 2 || desc->element_bytes != 4) {
    fprintf(stderr, "harness: unexpected argument\n");
    exit(1);
  }
  if (onDevice(desc)) {
    check(cudaSetDevice(desc->ordinal), "cudaSetDevice");
    check(cudaMalloc((void **)&m.allocated, sizeof(float) * N), "cudaMalloc");
    check(cudaMemcpy(m.allocated, values, sizeof(float) * N,
                     cudaMemcpyHostToDevice),
          "cudaMemcpy");
    // cudaMemcpy from pageable memory may return before the device memory
    // is written, and the method's streams do not wait for the legacy
    // stream.
    check(cudaStreamSynchronize(0), "cudaStreamSynchronize");
  } else {
    m.allocated = malloc(sizeof(float) * N);
    memcpy(m.allocated, values, sizeof(float) * N);
  }
  m.aligned = m.allocated;
  return m;
}

static void freeArgument(const etcopy_value_desc *desc, MemRef2D *m) {
  if (onDevice(desc))
    check(cudaFree(m->allocated), "cudaFree");
  else
    free(m->allocated);
}

// Prints a result and frees it where it lives.
static void takeResult(const char *name, const etcopy_value_desc *desc,
                       MemRef2D *m) {
  float values[N];
  const float *data = m->aligned + m->offset;
  if (onDevice(desc)) {
    check(cudaMemcpy(values, data, sizeof(values), cudaMemcpyDeviceToHost),
          "cudaMemcpy");
    check(cudaFree(m->allocated), "cudaFree");
  } else {
    memcpy(values, data, sizeof(values));
    free(m->allocated);
  }
  printf("%s = [%g, %g, %g, %g]\n", name, values[0], values[1], values[2],
         values[3]);
  fflush(stdout);
}

int main(void) {
  static const float a[N] = {1.0f, 2.0f, 3.0f, 4.0f};
  static const float b[N] = {0.5f, -1.0f, 2.0f, 0.25f};

  const etcopy_method_signature *s = &forward_etcopy_signature;
  printSignature("forward", s);
  MemRef2D x = makeArgument(&s->arguments[0], a);
  MemRef2D y = makeArgument(&s->arguments[1], b);
  MemRef2D r;
  printf("call forward\n");
  fflush(stdout);
  _mlir_ciface_forward(&r, &x, &y);
  takeResult("forward", &s->results[0], &r);
  freeArgument(&s->arguments[0], &x);
  freeArgument(&s->arguments[1], &y);

  s = &mixed_etcopy_signature;
  printSignature("mixed", s);
  x = makeArgument(&s->arguments[0], a);
  y = makeArgument(&s->arguments[1], b);
  TwoMemRef2D rs;
  printf("call mixed\n");
  fflush(stdout);
  _mlir_ciface_mixed(&rs, &x, &y);
  takeResult("mixed#0", &s->results[0], &rs.first);
  takeResult("mixed#1", &s->results[1], &rs.second);
  freeArgument(&s->arguments[0], &x);
  freeArgument(&s->arguments[1], &y);
  return 0;
}
