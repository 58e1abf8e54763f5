// cudaMemcpy2D and cudaMemcpy2DAsync copy Height rows of Width bytes between
// pitched buffers; the whole pitched extent must fit the allocation.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s

#include "CudaRuntimeSubset.h"

#include <stdio.h>

#include "Inputs/check-cuda.h"

int main(void) {
  // A 4x6 host matrix; copy its 3x4 block starting at (1, 1) to a device
  // buffer with a 64-byte pitch, then back into a 3x5 host buffer.
  int Host[4][6], Out[3][5];
  for (int R = 0; R < 4; ++R)
    for (int C = 0; C < 6; ++C)
      Host[R][C] = 10 * R + C;
  for (int R = 0; R < 3; ++R)
    for (int C = 0; C < 5; ++C)
      Out[R][C] = -1;
  char *Dev = NULL;
  cudaStream_t S;
  CHECK_CUDA(cudaMalloc((void **)&Dev, 3 * 64));
  CHECK_CUDA(cudaStreamCreate(&S));
  CHECK_CUDA(cudaMemcpy2D(Dev, 64, &Host[1][1], sizeof(Host[0]),
                          4 * sizeof(int), 3, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy2DAsync(Out, sizeof(Out[0]), Dev, 64, 4 * sizeof(int),
                               3, cudaMemcpyDeviceToHost, S));
  printf("before sync: %d\n", Out[0][0]);
  // CHECK: before sync: -1
  CHECK_CUDA(cudaStreamSynchronize(S));
  for (int R = 0; R < 3; ++R)
    printf("row %d: %d %d %d %d %d\n", R, Out[R][0], Out[R][1], Out[R][2],
           Out[R][3], Out[R][4]);
  // CHECK-NEXT: row 0: 11 12 13 14 -1
  // CHECK-NEXT: row 1: 21 22 23 24 -1
  // CHECK-NEXT: row 2: 31 32 33 34 -1

  // A fourth row would end at 3 * 64 + 16 = 208 bytes in a 192-byte buffer.
  printf("4 rows -> %s\n",
         cudaGetErrorName(cudaMemcpy2D(Dev, 64, Host, sizeof(Host[0]), 16, 4,
                                       cudaMemcpyHostToDevice)));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy2D: out-of-bounds: dst 0x{{[0-9a-f]+}} + 208 bytes (offset 0; 4 rows of 16 bytes with pitch 64) exceeds the 192-byte device allocation 0x{{[0-9a-f]+}} on cuda:0
  // CHECK-NEXT: 4 rows -> cudaErrorInvalidValue

  printf("width > pitch -> %s\n",
         cudaGetErrorName(cudaMemcpy2DAsync(Dev, 16, Host, sizeof(Host[0]),
                                            20, 2, cudaMemcpyHostToDevice,
                                            S)));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy2DAsync: invalid pitch: width 20 exceeds dpitch 16
  // CHECK-NEXT: width > pitch -> cudaErrorInvalidPitchValue

  CHECK_CUDA(cudaFree(Dev));
  CHECK_CUDA(cudaStreamDestroy(S));
  return 0;
}
