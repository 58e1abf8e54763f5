// The timing model: the host and every stream have a clock; calls cost the
// host their latency, queued work starts once the host has issued it and
// the stream is free, and synchronisation moves the host to the stream's
// clock. The rules are checked with round costs set through the environment
// (the figures below follow from them), so that each number can be worked
// out by hand; model-calibration.c checks the default costs against the
// H200. It is a model for comparing schedules, not a prediction.

// DEFINE: %{round-costs} = ETCOPY_CUDA_SIM_COST_LAUNCH_NS=3000 ETCOPY_CUDA_SIM_COST_COPY_NS=1500 \
// DEFINE:     ETCOPY_CUDA_SIM_COST_BATCH_COPY_NS=1200 ETCOPY_CUDA_SIM_BW_H2D_PINNED_GBPS=54 \
// DEFINE:     ETCOPY_CUDA_SIM_BW_D2H_PINNED_GBPS=54 ETCOPY_CUDA_SIM_BW_H2D_PAGEABLE_GBPS=13 \
// DEFINE:     ETCOPY_CUDA_SIM_BW_PEER_STAGED_GBPS=27
// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env %{round-costs} ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_STATS=1 %t 2>&1 | FileCheck %s
// RUN: env %{round-costs} ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_COST_LAUNCH_NS=1000 ETCOPY_CUDA_SIM_BW_H2D_PINNED_GBPS=27 \
// RUN:     ETCOPY_CUDA_SIM_COST_SYNC_NS=abc ETCOPY_CUDA_SIM_BW_D2D_GBPS=0 %t 2>&1 | FileCheck %s --check-prefix=OVERRIDE

// The library exports the model's functions and the attachment of host
// kernels (CudaSimKernels.h) besides the CUDA entry points, and nothing else
// (not the simulated driver functions).
// RUN: llvm-nm -D --defined-only %etcopy_cuda_sim | FileCheck %s --check-prefix=SYMBOLS --implicit-check-not=cuMemset --implicit-check-not=_Z
// SYMBOLS: T cudaMemcpyBatchAsync
// SYMBOLS: T etcopy_cuda_sim_attach_host_kernels
// SYMBOLS-NEXT: T etcopy_cuda_sim_modelled_time_ns
// SYMBOLS-NEXT: T etcopy_cuda_sim_reset_modelled_time

#include "CudaRuntimeSubset.h"
#include "CudaSimModel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Inputs/check-cuda.h"

static void mark(const char *What) {
  printf("%s: %llu\n", What, etcopy_cuda_sim_modelled_time_ns());
}

int main(void) {
  enum { Big = 540000, Small = 54000 };
  char *Dev = NULL, *Dev2 = NULL, *Peer = NULL, *Pinned = NULL;
  char *Pageable = malloc(Big);
  cudaStream_t S1, S2, Blocking;
  cudaEvent_t E;
  if (!Pageable)
    return 1;
  // Touched, so that copies from it pay no page faults.
  memset(Pageable, 0, Big);
  CHECK_CUDA(cudaMalloc((void **)&Dev, Big));
  CHECK_CUDA(cudaMalloc((void **)&Dev2, 4000000));
  CHECK_CUDA(cudaMallocHost((void **)&Pinned, 4000000));
  CHECK_CUDA(cudaStreamCreateWithFlags(&S1, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&S2, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreate(&Blocking));
  CHECK_CUDA(cudaEventCreateWithFlags(&E, cudaEventDisableTiming));
  CHECK_CUDA(cudaSetDevice(1));
  CHECK_CUDA(cudaMalloc((void **)&Peer, 4000000));
  CHECK_CUDA(cudaSetDevice(0));

  // A pinned upload of 54 KB: launch 3000 ns, then 1500 ns + 54000 B /
  // 54 GB/s on S1 from 3000 to 5500; the synchronisation waits for it and
  // costs 2000 ns.
  etcopy_cuda_sim_reset_modelled_time();
  CHECK_CUDA(cudaMemcpyAsync(Dev, Pinned, Small, cudaMemcpyHostToDevice, S1));
  mark("pinned copy issued");
  CHECK_CUDA(cudaStreamSynchronize(S1));
  mark("pinned copy synchronised");
  // CHECK: pinned copy issued: 3000
  // CHECK-NEXT: pinned copy synchronised: 7500
  // OVERRIDE: warning: ignoring ETCOPY_CUDA_SIM_COST_SYNC_NS='abc': expected a number of nanoseconds of at least 0; using 2000
  // OVERRIDE-NEXT: warning: ignoring ETCOPY_CUDA_SIM_BW_D2D_GBPS='0': expected a number of GB/s above 0; using 2000
  // OVERRIDE-NEXT: pinned copy issued: 1000
  // OVERRIDE-NEXT: pinned copy synchronised: 6500

  // From pageable memory the copy is staged, at 13 GB/s, and the call
  // returns only when it is done.
  etcopy_cuda_sim_reset_modelled_time();
  CHECK_CUDA(cudaMemcpyAsync(Dev, Pageable, 13000, cudaMemcpyHostToDevice, S1));
  mark("pageable copy issued");
  // CHECK-NEXT: pageable copy issued: 5500

  // Streams overlap, but each direction of the PCIe link carries one
  // transfer at a time: two uploads of 540 KB (1500 + 10000 ns each) on two
  // streams only overlap their latencies, an upload and a download overlap
  // entirely.
  CHECK_CUDA(cudaStreamSynchronize(S1));
  etcopy_cuda_sim_reset_modelled_time();
  CHECK_CUDA(cudaMemcpyAsync(Dev, Pinned, Big, cudaMemcpyHostToDevice, S1));
  CHECK_CUDA(cudaMemcpyAsync(Dev2, Pinned, Big, cudaMemcpyHostToDevice, S1));
  CHECK_CUDA(cudaDeviceSynchronize());
  mark("two uploads on one stream");
  etcopy_cuda_sim_reset_modelled_time();
  CHECK_CUDA(cudaMemcpyAsync(Dev, Pinned, Big, cudaMemcpyHostToDevice, S1));
  CHECK_CUDA(cudaMemcpyAsync(Dev2, Pinned, Big, cudaMemcpyHostToDevice, S2));
  CHECK_CUDA(cudaDeviceSynchronize());
  mark("two uploads on two streams");
  etcopy_cuda_sim_reset_modelled_time();
  CHECK_CUDA(cudaMemcpyAsync(Dev, Pinned, Big, cudaMemcpyHostToDevice, S1));
  CHECK_CUDA(cudaMemcpyAsync(Pinned + Big, Dev2, Big, cudaMemcpyDeviceToHost,
                             S2));
  CHECK_CUDA(cudaDeviceSynchronize());
  mark("upload and download on two streams");
  // CHECK-NEXT: two uploads on one stream: 28000
  // CHECK-NEXT: two uploads on two streams: 26500
  // CHECK-NEXT: upload and download on two streams: 19500

  // An event orders S2 after S1: the record (1000 ns) completes when S1's
  // copy ends at 14500, and S2's copy starts then.
  etcopy_cuda_sim_reset_modelled_time();
  CHECK_CUDA(cudaMemcpyAsync(Dev, Pinned, Big, cudaMemcpyHostToDevice, S1));
  CHECK_CUDA(cudaEventRecord(E, S1));
  CHECK_CUDA(cudaStreamWaitEvent(S2, E, 0));
  CHECK_CUDA(cudaMemcpyAsync(Dev2, Pinned, Big, cudaMemcpyHostToDevice, S2));
  mark("ordered by an event, issued");
  CHECK_CUDA(cudaStreamSynchronize(S2));
  mark("ordered by an event");
  CHECK_CUDA(cudaEventSynchronize(E));
  mark("event synchronised");
  // CHECK-NEXT: ordered by an event, issued: 8000
  // CHECK-NEXT: ordered by an event: 28000
  // CHECK-NEXT: event synchronised: 30000

  // The legacy default stream: work on a blocking stream waits for it.
  etcopy_cuda_sim_reset_modelled_time();
  CHECK_CUDA(cudaMemcpyAsync(Dev, Pinned, Big, cudaMemcpyHostToDevice, 0));
  CHECK_CUDA(cudaMemcpyAsync(Dev2, Pinned, Small, cudaMemcpyHostToDevice,
                             Blocking));
  CHECK_CUDA(cudaStreamSynchronize(Blocking));
  mark("blocking stream after the default stream");
  // CHECK-NEXT: blocking stream after the default stream: 19000

  // Synchronous copies: between device buffers the host does not wait
  // (1500 + 2000000 B / 2000 GB/s on the default stream); with host memory
  // it waits, then pays the synchronisation latency.
  etcopy_cuda_sim_reset_modelled_time();
  CHECK_CUDA(cudaMemcpy(Dev2, Dev, 2000000 < Big ? 2000000 : Big,
                        cudaMemcpyDeviceToDevice));
  mark("device to device returned");
  CHECK_CUDA(cudaMemcpy(Pinned, Dev, Small, cudaMemcpyDeviceToHost));
  mark("device to host returned");
  // CHECK-NEXT: device to device returned: 3000
  // CHECK-NEXT: device to host returned: 10500

  // 16 small copies: a loop of cudaMemcpyAsync is bound by the 3000 ns
  // launch; one batch pays one launch, 100 ns per copy on the host and
  // 1200 ns per copy on the device.
  void *Dsts[16];
  const void *Srcs[16];
  size_t Sizes[16], First = 0;
  for (int I = 0; I < 16; ++I) {
    Dsts[I] = Dev + I * 4096;
    Srcs[I] = Pinned + I * 4096;
    Sizes[I] = 4096;
  }
  etcopy_cuda_sim_reset_modelled_time();
  for (int I = 0; I < 16; ++I)
    CHECK_CUDA(cudaMemcpyAsync(Dsts[I], Srcs[I], 4096, cudaMemcpyHostToDevice,
                               S1));
  CHECK_CUDA(cudaStreamSynchronize(S1));
  mark("16 copies in a loop");
  struct cudaMemcpyAttributes Attr = {cudaMemcpySrcAccessOrderStream,
                                      {cudaMemLocationTypeInvalid, 0},
                                      {cudaMemLocationTypeInvalid, 0},
                                      0};
  etcopy_cuda_sim_reset_modelled_time();
  CHECK_CUDA(cudaMemcpyBatchAsync(Dsts, Srcs, Sizes, 16, &Attr, &First, 1, S1));
  mark("16 copies in a batch, issued");
  CHECK_CUDA(cudaStreamSynchronize(S1));
  mark("16 copies in a batch");
  // CHECK-NEXT: 16 copies in a loop: 51576
  // CHECK-NEXT: 16 copies in a batch, issued: 4600
  // CHECK-NEXT: 16 copies in a batch: 28514

  // Peer copies: staged through the host at 27 GB/s without peer access,
  // over NVLink at 380 GB/s with it.
  etcopy_cuda_sim_reset_modelled_time();
  CHECK_CUDA(cudaMemcpyPeerAsync(Peer, 1, Dev2, 0, 3800000, S1));
  CHECK_CUDA(cudaStreamSynchronize(S1));
  mark("staged peer copy");
  CHECK_CUDA(cudaDeviceEnablePeerAccess(1, 0));
  etcopy_cuda_sim_reset_modelled_time();
  CHECK_CUDA(cudaMemcpyPeerAsync(Peer, 1, Dev2, 0, 3800000, S1));
  CHECK_CUDA(cudaStreamSynchronize(S1));
  mark("direct peer copy");
  // CHECK-NEXT: staged peer copy: 147241
  // CHECK-NEXT: direct peer copy: 16500

  // Resetting the clock while work is in flight keeps its remaining time.
  CHECK_CUDA(cudaMemcpyAsync(Dev, Pinned, Big, cudaMemcpyHostToDevice, S1));
  etcopy_cuda_sim_reset_modelled_time();
  CHECK_CUDA(cudaStreamSynchronize(S1));
  mark("in flight at the reset");
  // CHECK-NEXT: in flight at the reset: 13500

  CHECK_CUDA(cudaEventDestroy(E));
  CHECK_CUDA(cudaStreamDestroy(S1));
  CHECK_CUDA(cudaStreamDestroy(S2));
  CHECK_CUDA(cudaStreamDestroy(Blocking));
  CHECK_CUDA(cudaFree(Dev));
  CHECK_CUDA(cudaFree(Dev2));
  CHECK_CUDA(cudaFree(Peer));
  CHECK_CUDA(cudaFreeHost(Pinned));
  free(Pageable);
  mark("end");
  return 0;
}
// The statistics end with the clocks: the host's, then (after the model's
// counters) each stream's.
// CHECK-NEXT: end: [[END:[0-9]+]]
// CHECK: etcopy-cuda-sim: stats: model: host_ns=[[END]] pool_growths=0 fresh_pages=0 S0={{[0-9]+}} S0@cuda:1=0 S1={{[0-9]+}} S2={{[0-9]+}} S3={{[0-9]+}}{{$}}
