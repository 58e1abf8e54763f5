// ETCOPY_CUDA_SIM_TRACE prints one line per call and the statistics at exit;
// ETCOPY_CUDA_SIM_STATS prints only the statistics. The modelled times follow
// from the default costs: each of the 1000 pageable copies costs the host a
// 2450 ns launch and blocks it for 2450 ns + 48 B / 6.8 GB/s.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_TRACE=1 %t 2>&1 | FileCheck %s
// RUN: env ETCOPY_CUDA_SIM_STATS=1 %t 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: %t 2>&1 | FileCheck %s --check-prefix=QUIET

#include "CudaRuntimeSubset.h"

#include <stdio.h>

int main(void) {
  char Host[48] = {0};
  void *Dev = NULL;
  cudaStream_t S;
  cudaEvent_t E;
  cudaStreamCreate(&S);
  cudaEventCreate(&E);
  cudaMalloc(&Dev, sizeof(Host));
  for (int I = 0; I < 1000; ++I)
    cudaMemcpyAsync(Dev, Host, sizeof(Host), cudaMemcpyHostToDevice, S);
  cudaEventRecord(E, S);
  cudaStreamSynchronize(S);
  cudaMemcpy2D(Host, 8, Dev, 16, 8, 2, cudaMemcpyDeviceToHost);
  cudaMemsetAsync(Dev, 0, 16, S);
  cudaStreamSynchronize(S);
  cudaMemcpy(Host, Dev, sizeof(Host), cudaMemcpyHostToDevice);
  cudaGetLastError();
  cudaEventDestroy(E);
  cudaFree(Dev);
  cudaStreamDestroy(S);
  printf("done\n");
  return 0;
}
// CHECK: etcopy-cuda-sim: trace: cudaStreamCreate(cuda:0) -> S1
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaEventCreate(cuda:0) -> E1
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaMalloc(48 bytes, cuda:0) -> 0x[[DEV:[0-9a-f]+]]
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaMemcpyAsync(dst=0x[[DEV]], src=0x[[HOST:[0-9a-f]+]], 48 bytes, HostToDevice, stream=S1) [h2d_pageable]
// CHECK-COUNT-999: etcopy-cuda-sim: trace: cudaMemcpyAsync(dst=0x[[DEV]], src=0x[[HOST]], 48 bytes, HostToDevice, stream=S1) [h2d_pageable]
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaEventRecord(E1, stream=S1)
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaStreamSynchronize(S1)
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaMemcpy2D(dst=0x[[HOST]], dpitch=8, src=0x[[DEV]], spitch=16, width=8, height=2, DeviceToHost) [d2h_pageable]
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaMemsetAsync(dst=0x[[DEV]], value=0, 16 bytes, stream=S1)
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaStreamSynchronize(S1)
// CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy: wrong copy kind: HostToDevice copy of 48 bytes from src 0x[[DEV]] (device memory on cuda:0) to dst 0x[[HOST]] (pageable host memory)
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaMemcpy(dst=0x[[HOST]], src=0x[[DEV]], 48 bytes, HostToDevice) -> cudaErrorInvalidValue
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaGetLastError() -> cudaErrorInvalidValue
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaEventDestroy(E1)
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaFree(0x[[DEV]])
// CHECK-NEXT: etcopy-cuda-sim: trace: cudaStreamDestroy(S1)
// CHECK-NEXT: done
// CHECK-NEXT: etcopy-cuda-sim: stats: streams_created=1 streams_destroyed=1 syncs=2 copies=1001 allocs=1 frees=1 memsets=1 events_created=1 events_destroyed=1 bytes_copied=48016
// CHECK-NEXT: etcopy-cuda-sim: stats: copies: pinned=0 pinned_bytes=0 pageable=1001 pageable_bytes=48016 h2h=0 h2h_bytes=0 h2d_pinned=0 h2d_pinned_bytes=0 h2d_pageable=1000 h2d_pageable_bytes=48000 d2h_pinned=0 d2h_pinned_bytes=0 d2h_pageable=1 d2h_pageable_bytes=16 d2d=0 d2d_bytes=0 peer_direct=0 peer_direct_bytes=0 peer_staged=0 peer_staged_bytes=0 batches=0 batch_copies=0
// CHECK-NEXT: etcopy-cuda-sim: stats: calls: any=1012 alloc=1 free=1 copy=1002 batch=0 memset=1 stream=2 event=3 sync=2 set-device=0 host-alloc=0 peer=0 other=0
// CHECK-NEXT: etcopy-cuda-sim: stats: entry-points: cudaMalloc=1 cudaFree=1 cudaMemcpy=1 cudaMemcpyAsync=1000 cudaMemcpy2D=1 cudaMemsetAsync=1 cudaStreamCreate=1 cudaStreamDestroy=1 cudaStreamSynchronize=2 cudaEventCreate=1 cudaEventRecord=1 cudaEventDestroy=1
// CHECK-NEXT: etcopy-cuda-sim: stats: model: host_ns=4951460 pool_growths=0 fresh_pages=0 S0=4929460 S1=4936360
// CHECK-NEXT: etcopy-cuda-sim: stats: memory: peak_device_bytes.cuda:0=48 peak_host_bytes=0

// STATS-NOT: trace:
// STATS: done
// STATS-NEXT: etcopy-cuda-sim: stats: streams_created=1 streams_destroyed=1 syncs=2 copies=1001 allocs=1 frees=1 memsets=1 events_created=1 events_destroyed=1 bytes_copied=48016
// STATS-NEXT: etcopy-cuda-sim: stats: copies: pinned=0 pinned_bytes=0 pageable=1001 pageable_bytes=48016 h2h=0 h2h_bytes=0 h2d_pinned=0 h2d_pinned_bytes=0 h2d_pageable=1000 h2d_pageable_bytes=48000 d2h_pinned=0 d2h_pinned_bytes=0 d2h_pageable=1 d2h_pageable_bytes=16 d2d=0 d2d_bytes=0 peer_direct=0 peer_direct_bytes=0 peer_staged=0 peer_staged_bytes=0 batches=0 batch_copies=0
// STATS-NEXT: etcopy-cuda-sim: stats: calls: any=1012 alloc=1 free=1 copy=1002 batch=0 memset=1 stream=2 event=3 sync=2 set-device=0 host-alloc=0 peer=0 other=0
// STATS-NEXT: etcopy-cuda-sim: stats: entry-points: cudaMalloc=1 cudaFree=1 cudaMemcpy=1 cudaMemcpyAsync=1000 cudaMemcpy2D=1 cudaMemsetAsync=1 cudaStreamCreate=1 cudaStreamDestroy=1 cudaStreamSynchronize=2 cudaEventCreate=1 cudaEventRecord=1 cudaEventDestroy=1
// STATS-NEXT: etcopy-cuda-sim: stats: model: host_ns=4951460 pool_growths=0 fresh_pages=0 S0=4929460 S1=4936360
// STATS-NEXT: etcopy-cuda-sim: stats: memory: peak_device_bytes.cuda:0=48 peak_host_bytes=0
// STATS-EMPTY:

// QUIET-NOT: trace:
// QUIET-NOT: stats:
