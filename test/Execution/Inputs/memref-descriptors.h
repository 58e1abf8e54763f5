// MLIR's C interface descriptors of the 1-D and 2-D f32 memrefs that the C
// delegates and harnesses of the execution tests exchange with the code
// --etcopy-to-cuda and --etcopy-to-host generate (llvm.emit_c_interface).
#ifndef ETCOPY_TEST_EXECUTION_INPUTS_MEMREF_DESCRIPTORS_H
#define ETCOPY_TEST_EXECUTION_INPUTS_MEMREF_DESCRIPTORS_H

#include <stdint.h>

typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} MemRef1D;

typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
} MemRef2D;

// The result of a function with two memref results.
typedef struct {
  MemRef2D first;
  MemRef2D second;
} TwoMemRef2D;

#endif // ETCOPY_TEST_EXECUTION_INPUTS_MEMREF_DESCRIPTORS_H
