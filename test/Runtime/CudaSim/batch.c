// cudaMemcpyBatchAsync (CUDA 13 signature): every copy is checked like a
// cudaMemcpyAsync with cudaMemcpyDefault, the attribute arrays like
// libcudart checks them, and the batch is queued on its stream as one unit
// or not at all. Sources with cudaMemcpySrcAccessOrderDuringApiCall are read
// during the call; the others when the copies execute.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_STATS=1 %t 2>&1 | FileCheck %s
// RUN: env ETCOPY_CUDA_SIM_FAIL=batch:1 %t 2>&1 | FileCheck %s --check-prefix=FAIL

#include "CudaRuntimeSubset.h"

#include <stdio.h>
#include <string.h>

static size_t Zero = 0;

static void report(const char *What, cudaError_t Status) {
  printf("%s -> %s\n", What, cudaGetErrorName(Status));
}

static struct cudaMemcpyAttributes attributes(int Order) {
  struct cudaMemcpyAttributes Attr;
  memset(&Attr, 0, sizeof(Attr));
  Attr.srcAccessOrder = (enum cudaMemcpySrcAccessOrder)Order;
  return Attr;
}

int main(void) {
  int A[4] = {1, 2, 3, 4}, B[4] = {5, 6, 7, 8};
  int OutA[4] = {0, 0, 0, 0}, OutB[4] = {0, 0, 0, 0};
  int *DevA = NULL, *DevB = NULL, *DevC = NULL;
  cudaStream_t S, Other;
  if (cudaMalloc((void **)&DevA, sizeof(A)) != cudaSuccess ||
      cudaMalloc((void **)&DevB, sizeof(B)) != cudaSuccess ||
      cudaMalloc((void **)&DevC, sizeof(B)) != cudaSuccess ||
      cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking) != cudaSuccess ||
      cudaStreamCreateWithFlags(&Other, cudaStreamNonBlocking) != cudaSuccess)
    return 1;
  struct cudaMemcpyAttributes Stream = attributes(cudaMemcpySrcAccessOrderStream);
  size_t Sizes[3] = {sizeof(A), sizeof(B), sizeof(B)};

  // Two uploads, queued on S: nothing happens until S is synchronised.
  void *Up[2] = {DevA, DevB};
  const void *UpSrc[2] = {A, B};
  report("upload", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, &Stream, &Zero, 1, S));
  cudaMemcpy(OutA, DevA, sizeof(OutA), cudaMemcpyDeviceToHost);
  printf("before sync: %x\n", (unsigned)OutA[0]);
  report("sync", cudaStreamSynchronize(S));
  // CHECK: upload -> cudaSuccess
  // CHECK-NEXT: before sync: a5a5a5a5
  // CHECK-NEXT: sync -> cudaSuccess

  // Directions are inferred per copy: D2H, D2H and D2D in one batch, with
  // two attributes (the second applies from copy 2 on).
  struct cudaMemcpyAttributes Two[2] = {attributes(cudaMemcpySrcAccessOrderStream),
                                        attributes(cudaMemcpySrcAccessOrderAny)};
  size_t TwoIdxs[2] = {0, 2};
  void *Mixed[3] = {OutA, OutB, DevC};
  const void *MixedSrc[3] = {DevA, DevB, DevB};
  report("mixed", cudaMemcpyBatchAsync(Mixed, MixedSrc, Sizes, 3, Two, TwoIdxs, 2,
                                       cudaStreamPerThread));
  // The synchronous copy runs on the legacy default stream, which waits for
  // the per-thread stream: it runs the batch first.
  int OutC[4] = {0, 0, 0, 0};
  cudaMemcpy(OutC, DevC, sizeof(OutC), cudaMemcpyDeviceToHost);
  printf("mixed: %d %d %d\n", OutA[3], OutB[3], OutC[0]);
  // CHECK-NEXT: mixed -> cudaSuccess
  // CHECK-NEXT: mixed: 4 8 5

  // DuringApiCall sources are read by the call: changing A afterwards does
  // not matter. Stream-ordered sources are read when the copy runs.
  struct cudaMemcpyAttributes During =
      attributes(cudaMemcpySrcAccessOrderDuringApiCall);
  A[0] = 10;
  B[0] = 20;
  report("during", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 1, &During, &Zero, 1, S));
  report("stream", cudaMemcpyBatchAsync(Up + 1, UpSrc + 1, Sizes, 1, &Stream, &Zero, 1, S));
  A[0] = 11;
  B[0] = 21;
  cudaStreamSynchronize(S);
  cudaMemcpy(OutA, DevA, sizeof(OutA), cudaMemcpyDeviceToHost);
  cudaMemcpy(OutB, DevB, sizeof(OutB), cudaMemcpyDeviceToHost);
  printf("snapshot: %d, stream order: %d\n", OutA[0], OutB[0]);
  // CHECK-NEXT: during -> cudaSuccess
  // CHECK-NEXT: stream -> cudaSuccess
  // CHECK-NEXT: snapshot: 10, stream order: 21

  // A copy of 0 bytes fails the whole batch, as on an H200 (CUDA 13.0),
  // where a 0-byte copy between the null pointers of cudaMallocAsync(0)
  // made cudaMemcpyBatchAsync return cudaErrorInvalidValue.
  void *Nulls[2] = {NULL, DevA};
  const void *NullSrc[2] = {NULL, A};
  size_t EmptyFirst[2] = {0, sizeof(A)};
  report("empty", cudaMemcpyBatchAsync(Nulls, NullSrc, EmptyFirst, 2, &Stream, &Zero, 1, S));
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: copy 0: empty copy: sizes[0] is 0 (dst 0x0, src 0x0); CUDA rejects a batch that holds a copy of 0 bytes
  // CHECK-NEXT: empty -> cudaErrorInvalidValue

  // The stream: not the legacy default stream, and a live handle.
  report("null stream", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, &Stream, &Zero, 1, 0));
  report("legacy stream", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, &Stream, &Zero, 1, cudaStreamLegacy));
  report("bad stream", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, &Stream, &Zero, 1, (cudaStream_t)0x1234));
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid stream: the legacy default stream cannot be used; pass a created stream or cudaStreamPerThread
  // CHECK-NEXT: null stream -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid stream: the legacy default stream cannot be used
  // CHECK-NEXT: legacy stream -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid stream handle 0x1234 (not created by cudaStreamCreate or cudaStreamCreateWithFlags)
  // CHECK-NEXT: bad stream -> cudaErrorInvalidResourceHandle

  // The arrays.
  report("count 0", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 0, &Stream, &Zero, 1, S));
  report("no sizes", cudaMemcpyBatchAsync(Up, UpSrc, NULL, 2, &Stream, &Zero, 1, S));
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid argument: count is 0
  // CHECK-NEXT: count 0 -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid argument: sizes is null
  // CHECK-NEXT: no sizes -> cudaErrorInvalidValue

  // The attributes.
  size_t Idxs[3] = {0, 1, 1};
  struct cudaMemcpyAttributes Attrs[3] = {Stream, Stream, Stream};
  report("no attributes", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, Attrs, Idxs, 0, S));
  report("too many", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, Attrs, Idxs, 3, S));
  report("null attrs", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, NULL, Idxs, 1, S));
  report("not increasing", cudaMemcpyBatchAsync(Mixed, MixedSrc, Sizes, 3, Attrs, Idxs, 3, S));
  Idxs[0] = 1;
  report("first not 0", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, Attrs, Idxs, 1, S));
  Idxs[0] = 0;
  Idxs[1] = 2;
  report("past count", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, Attrs, Idxs, 2, S));
  struct cudaMemcpyAttributes Bad = attributes(cudaMemcpySrcAccessOrderInvalid);
  report("order 0", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, &Bad, &Zero, 1, S));
  Bad = attributes(4);
  report("order 4", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, &Bad, &Zero, 1, S));
  Bad = Stream;
  Bad.flags = 2;
  report("flags", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, &Bad, &Zero, 1, S));
  Bad = Stream;
  Bad.dstLocHint.type = (enum cudaMemLocationType)7;
  report("hint type", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, &Bad, &Zero, 1, S));
  Bad = Stream;
  Bad.srcLocHint.type = cudaMemLocationTypeDevice;
  Bad.srcLocHint.id = 3;
  report("hint device", cudaMemcpyBatchAsync(Up, UpSrc, Sizes, 2, &Bad, &Zero, 1, S));
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid argument: numAttrs is 0; it must be between 1 and count (2)
  // CHECK-NEXT: no attributes -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid argument: numAttrs is 3; it must be between 1 and count (2)
  // CHECK-NEXT: too many -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid argument: attrs is null
  // CHECK-NEXT: null attrs -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid argument: attrsIdxs[2] is 1, not greater than attrsIdxs[1] (1)
  // CHECK-NEXT: not increasing -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid argument: attrsIdxs[0] is 1; the first attribute must apply from copy 0
  // CHECK-NEXT: first not 0 -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid argument: attrsIdxs[1] is 2, not below count (2)
  // CHECK-NEXT: past count -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid attribute: attrs[0].srcAccessOrder is 0; expected cudaMemcpySrcAccessOrderStream, DuringApiCall or Any
  // CHECK-NEXT: order 0 -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid attribute: attrs[0].srcAccessOrder is 4;
  // CHECK-NEXT: order 4 -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid attribute: attrs[0].flags is 0x2
  // CHECK-NEXT: flags -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid attribute: attrs[0].dstLocHint.type is 7, not a cudaMemLocationType
  // CHECK-NEXT: hint type -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: invalid attribute: attrs[0].srcLocHint names device 3 (1 device(s) simulated)
  // CHECK-NEXT: hint device -> cudaErrorInvalidValue

  // Each copy is checked like a cudaMemcpyAsync; one bad copy queues none.
  OutA[0] = OutB[0] = 0;
  void *Down[2] = {OutA, OutB};
  const void *DownSrc[2] = {DevA, DevB};
  size_t TooBig[2] = {sizeof(A), sizeof(B) + 4};
  report("out of bounds", cudaMemcpyBatchAsync(Down, DownSrc, TooBig, 2, &Stream, &Zero, 1, S));
  const void *NullSource[2] = {DevA, NULL};
  report("null source", cudaMemcpyBatchAsync(Down, NullSource, Sizes, 2, &Stream, &Zero, 1, S));
  cudaStreamSynchronize(S);
  printf("nothing copied: %d %d\n", OutA[0], OutB[0]);
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: copy 1: out-of-bounds: src 0x[[DEVB:[0-9a-f]+]] + 20 bytes (offset 0) exceeds the 16-byte device allocation 0x[[DEVB]] on cuda:0
  // CHECK-NEXT: out of bounds -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: copy 1: invalid pointer: src is null in a copy of 16 bytes
  // CHECK-NEXT: null source -> cudaErrorInvalidValue
  // CHECK-NEXT: nothing copied: 0 0

  // Copies of a batch are not ordered: one may not write what another
  // reads or writes.
  void *Chain[2] = {DevB, DevC};
  const void *ChainSrc[2] = {DevA, DevB};
  report("dependent", cudaMemcpyBatchAsync(Chain, ChainSrc, Sizes, 2, &Stream, &Zero, 1, S));
  void *Same[2] = {OutA, OutA};
  report("same destination", cudaMemcpyBatchAsync(Same, DownSrc, Sizes, 2, &Stream, &Zero, 1, S));
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: dependent copies: copy 0 writes 0x[[DEVB]] + 16 bytes, which copy 1 reads at 0x[[DEVB]] + 16 bytes; copies of one batch are not ordered
  // CHECK-NEXT: dependent -> cudaErrorInvalidValue
  // CHECK-NEXT: error: cudaMemcpyBatchAsync: dependent copies: copy {{[01]}} writes 0x{{[0-9a-f]+}} + 16 bytes, which copy {{[01]}} also writes at 0x{{[0-9a-f]+}} + 16 bytes; copies of one batch are not ordered
  // CHECK-NEXT: same destination -> cudaErrorInvalidValue

  // A stream-ordered source freed by another stream before the batch runs
  // is a use after free on the device, found when it executes.
  int *Doomed = NULL;
  if (cudaMalloc((void **)&Doomed, sizeof(A)) != cudaSuccess)
    return 1;
  const void *DoomedSrc[1] = {Doomed};
  report("late", cudaMemcpyBatchAsync(Down, DoomedSrc, Sizes, 1, &Stream, &Zero, 1, S));
  cudaFreeAsync(Doomed, Other);
  cudaStreamSynchronize(Other);
  report("sync", cudaStreamSynchronize(S));
  // CHECK-NEXT: late -> cudaSuccess
  // CHECK-NEXT: error: cudaStreamSynchronize: use after free: cudaMemcpyBatchAsync[0](dst=0x{{[0-9a-f]+}}, src=0x[[DOOMED:[0-9a-f]+]], 16 bytes, stream=S1) reads src 0x[[DOOMED]] in a 16-byte device allocation 0x[[DOOMED]] on cuda:0 that was freed (by cudaFreeAsync on S2) before the operation executed
  // CHECK-NEXT: sync -> cudaErrorIllegalAddress

  cudaFree(DevA);
  cudaFree(DevB);
  cudaFree(DevC);
  cudaStreamDestroy(S);
  cudaStreamDestroy(Other);
  return 0;
}
// Five of the 26 batches were accepted, with eight copies between them;
// `copies` counts them with the four cudaMemcpy calls.
// CHECK: etcopy-cuda-sim: stats: streams_created=2 streams_destroyed=2 syncs=5 copies=12 allocs=4 frees=4
// CHECK-NEXT: etcopy-cuda-sim: stats: copies: {{.*}} batches=5 batch_copies=8
// CHECK-NEXT: etcopy-cuda-sim: stats: calls: any=47 alloc=4 free=4 copy=4 batch=26 memset=0

// An injected failure queues nothing: the first upload never happens.
// FAIL: etcopy-cuda-sim: error: cudaMemcpyBatchAsync: injected failure: batch call #1 fails with cudaErrorInvalidValue because ETCOPY_CUDA_SIM_FAIL=batch:1
// FAIL-NEXT: upload -> cudaErrorInvalidValue
// FAIL-NEXT: before sync: a5a5a5a5
// FAIL-NEXT: sync -> cudaSuccess
// FAIL-NEXT: mixed -> cudaSuccess
// FAIL-NEXT: mixed: -1515870811 -1515870811 -1515870811
