/*===- check-cuda.h - Checked CUDA calls for the simulator tests -------===*
 *
 * CHECK_CUDA(call): on failure, prints the call and the error name and
 * returns 1 from main.
 *
 *===----------------------------------------------------------------------===*/
#ifndef ETCOPY_TEST_RUNTIME_CUDASIM_CHECK_CUDA_H
#define ETCOPY_TEST_RUNTIME_CUDASIM_CHECK_CUDA_H

#include <stdio.h>

#define CHECK_CUDA(Call)                                                       \
  do {                                                                         \
    cudaError_t Status = (Call);                                               \
    if (Status != cudaSuccess) {                                               \
      printf("%s failed: %s\n", #Call, cudaGetErrorName(Status));              \
      return 1;                                                                \
    }                                                                          \
  } while (0)

#endif
