// No copy of 0 bytes reaches CUDA from the runtime support: CUDA 13 rejects
// a whole cudaMemcpyBatchAsync holding one (cudaErrorInvalidValue, seen on
// an H200), and the buffers of an empty memref may be null (cudaMallocAsync
// of 0 bytes returns null). Single copies, peer copies and memsets of 0
// bytes make no call; a batch leaves its empty copies out, and a batch of
// only empty copies makes no call; a free of null (an empty buffer) makes no
// call. The data of the copies that remain arrives intact, also when more
// than a chunk of copies (128) remains after empty ones are left out.

// RUN: %cc %s %etcopy_cuda_support \
// RUN:   -I%etcopy_src_root/lib/Conversion/GPUToCUDARuntime -I%cuda_sim_include \
// RUN:   -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 %t 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not='trace: cudaMemcpy' \
// RUN:       --implicit-check-not='trace: cudaMemset' \
// RUN:       --implicit-check-not='trace: cudaFreeAsync(0x0'

#include "CudaSupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AT __FILE__, __LINE__, 0

enum { Copies = 300 };

int main(void) {
  cudaStream_t stream = __etcopy_get_stream(0, AT);

  // CHECK: empty single copies
  fprintf(stderr, "empty single copies\n");
  __etcopy_memcpy(NULL, NULL, 0, cudaMemcpyHostToDevice, stream, AT);
  __etcopy_memcpy_peer(NULL, 0, NULL, 1, 0, stream, AT);
  __etcopy_memset(NULL, 7, 0, 4, stream, AT);
  __etcopy_free(NULL, stream, AT);

  // CHECK: a batch of empty copies
  fprintf(stderr, "a batch of empty copies\n");
  void *noDsts[3] = {NULL, NULL, NULL};
  const void *noSrcs[3] = {NULL, NULL, NULL};
  uint64_t noSizes[3] = {0, 0, 0};
  __etcopy_memcpy_batch(noDsts, noSrcs, noSizes, 3, stream, AT);

  // Copies of 4 bytes each, every third one empty: 200 remain, submitted
  // as a batch of 128 and one of 72.
  // CHECK: a batch with empty copies
  // CHECK: trace: cudaMemcpyBatchAsync(128 copies, 512 bytes, {{.*}}) [h2d_pageable 128]
  // CHECK-NEXT: trace: cudaMemcpyBatchAsync(72 copies, 288 bytes, {{.*}}) [h2d_pageable 72]
  fprintf(stderr, "a batch with empty copies\n");
  int host[Copies], back[Copies];
  char *device = __etcopy_malloc(sizeof host, stream, AT);
  void *dsts[Copies];
  const void *srcs[Copies];
  uint64_t sizes[Copies];
  for (int i = 0; i < Copies; ++i) {
    host[i] = 1000 + i;
    back[i] = -1;
    int empty = i % 3 == 2;
    dsts[i] = empty ? NULL : device + i * sizeof(int);
    srcs[i] = empty ? NULL : (const void *)&host[i];
    sizes[i] = empty ? 0 : sizeof(int);
  }
  __etcopy_memcpy_batch(dsts, srcs, sizes, Copies, stream, AT);

  // A batch without empty copies is submitted as it is.
  // CHECK: a batch without empty copies
  // CHECK-NEXT: trace: cudaMemcpyBatchAsync(2 copies, 8 bytes, {{.*}}) [d2h_pageable 2]
  fprintf(stderr, "a batch without empty copies\n");
  void *backDsts[2] = {&back[0], &back[1]};
  const void *backSrcs[2] = {device, device + sizeof(int)};
  uint64_t backSizes[2] = {sizeof(int), sizeof(int)};
  __etcopy_memcpy_batch(backDsts, backSrcs, backSizes, 2, stream, AT);

  // CHECK: the rest
  // CHECK-NEXT: trace: cudaMemcpyAsync({{.*}}, 1200 bytes, DeviceToHost, {{.*}}) [d2h_pageable]
  fprintf(stderr, "the rest\n");
  __etcopy_memcpy(back, device, sizeof back, cudaMemcpyDeviceToHost, stream,
                  AT);
  __etcopy_stream_synchronize(stream, AT);
  __etcopy_free(device, stream, AT);
  __etcopy_stream_synchronize(stream, AT);
  int wrong = 0;
  for (int i = 0; i < Copies; ++i)
    wrong += back[i] != (i % 3 == 2 ? (int)0xA5A5A5A5 : 1000 + i);
  // CHECK: 0 wrong elements
  fprintf(stderr, "%d wrong elements\n", wrong);
  return wrong != 0;
}
