// A host program embedding a lowered method (stream-provider.mlir) that
// supplies the streams itself: its etcopy_get_stream replaces the weak
// default of the lowered module. It creates one stream with cudaStreamCreate
// (the default provider uses cudaStreamCreateWithFlags, so the simulator's
// statistics tell them apart), checks that the lowered code asks with the
// device current, counts the requests and releases the stream itself. With
// STREAM_PROVIDER_FAIL=N the N-th request fails with cudaErrorInvalidValue.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "CudaRuntimeSubset.h"
#include "memref-descriptors.h"

void _mlir_ciface_method(MemRef1D *in, MemRef1D *out);

static cudaStream_t stream;
static int requests;

int etcopy_get_stream(int32_t device, cudaStream_t *result) {
  ++requests;
  const char *fail = getenv("STREAM_PROVIDER_FAIL");
  if (fail && atoi(fail) == requests) {
    *result = NULL;
    return cudaErrorInvalidValue;
  }
  int current = -1;
  cudaGetDevice(&current);
  if (device != 0 || current != device) {
    printf("unexpected request: device %d with device %d current\n", device,
           current);
    exit(2);
  }
  *result = stream;
  return cudaSuccess;
}

int main(void) {
  // Unbuffered, so that the output interleaves with the policy's report.
  setvbuf(stdout, NULL, _IONBF, 0);
  if (cudaStreamCreate(&stream) != cudaSuccess)
    return 2;
  for (int call = 0; call < 3; ++call) {
    float in[4] = {1.0f, 2.0f, 3.0f, (float)call}, out[4] = {0};
    MemRef1D inRef = {in, in, 0, {4}, {1}};
    MemRef1D outRef = {out, out, 0, {4}, {1}};
    _mlir_ciface_method(&inRef, &outRef);
    printf("call %d: %g %g %g %g\n", call, out[0], out[1], out[2], out[3]);
  }
  printf("requests: %d\n", requests);
  cudaStreamDestroy(stream);
  return 0;
}
