// A host program embedding a lowered method (error-handler.mlir) with its
// own error policy: etcopy_cuda_error records the failure on standard output
// and returns, so that the method goes on after every failed CUDA call.
#include <stdint.h>
#include <stdio.h>

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} MemRef2D;

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} MemRef1D;

void _mlir_ciface_method(MemRef2D *in, MemRef2D *out, MemRef1D *column);

void etcopy_cuda_error(int err, const char *location, const char *call,
                       const char *what, unsigned long long bytes) {
  printf("handler: %s: %s (%s, %llu bytes): error %d\n", location, call, what,
         bytes, err);
}

int main(void) {
  float in[16], out[16], column[4];
  for (int i = 0; i < 16; ++i) {
    in[i] = (float)i;
    out[i] = -1.0f;
  }
  for (int i = 0; i < 4; ++i)
    column[i] = -1.0f;
  MemRef2D inRef = {in, in, 0, {4, 4}, {4, 1}};
  MemRef2D outRef = {out, out, 0, {4, 4}, {4, 1}};
  MemRef1D columnRef = {column, column, 0, {4}, {1}};
  _mlir_ciface_method(&inRef, &outRef, &columnRef);
  printf("column: %g %g %g %g\n", column[0], column[1], column[2], column[3]);
  printf("out: %g ... %g\n", out[0], out[15]);
  printf("completed\n");
  return 0;
}
