// CudaRuntimeSubset.h is self-contained, warning-free C and C++.

// RUN: %cc -fsyntax-only -std=c99 -Wall -Wextra -Wpedantic -Werror -I%cuda_sim_include %s
// RUN: %cc -fsyntax-only -x c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -I%cuda_sim_include %s

#include "CudaRuntimeSubset.h"
#include "CudaRuntimeSubset.h"

#ifdef __cplusplus
// The stream arguments default to the default stream, as in the real header.
static cudaError_t usesDefaults(void *Dst, const void *Src) {
  return cudaMemcpyAsync(Dst, Src, 4, cudaMemcpyDefault);
}
#endif

int main(void) {
#ifdef __cplusplus
  (void)usesDefaults;
#endif
  return CUDART_VERSION == 13000 && cudaErrorIllegalAddress == 700 ? 0 : 1;
}
