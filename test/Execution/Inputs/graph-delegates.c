// Delegates for cuda-graphs.mlir: @rotate is stream-ordered. It allocates
// its result on the stream it is given (cudaMallocAsync) and writes it with
// one device-to-device cudaMemcpyAsync per element, y[i] = x[(i + 1) % 4],
// and returns at once. Under capture the calls are recorded into the
// caller's graph (the allocation becomes an allocation node), so the
// delegate runs only at the captures; it counts its runs.
#include <stdio.h>

#include "CudaRuntimeSubset.h"
#include "memref-descriptors.h"

enum { N = 4 };

static int runs;

void _mlir_ciface_rotate(MemRef1D *result, MemRef1D *x, cudaStream_t stream) {
  ++runs;
  enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(stream, &status);
  printf("rotate run %d%s\n", runs,
         status == cudaStreamCaptureStatusActive ? ", captured" : "");
  float *data = NULL;
  cudaMallocAsync((void **)&data, N * sizeof(float), stream);
  for (int i = 0; i < N; ++i)
    cudaMemcpyAsync(data + i, x->aligned + x->offset + (i + 1) % N,
                    sizeof(float), cudaMemcpyDeviceToDevice, stream);
  result->allocated = result->aligned = data;
  result->offset = 0;
  result->sizes[0] = N;
  result->strides[0] = 1;
}
