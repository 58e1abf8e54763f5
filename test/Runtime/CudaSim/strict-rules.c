// The simulator rejects what CUDA 13 rejects and, where CUDA's behaviour is
// undocumented, is the stricter one. One case per rule of the table
// "Rules and their sources" in docs/CudaSimulator.md, named as there; each
// case prints the call's result, after the simulator's error line if it
// fails. (Batch attribute rules are in batch.c, driver memsets in
// driver-memset.c, teardown at exit in exit-teardown.c.)

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 %t 2>&1 | FileCheck %s --implicit-check-not=etcopy-cuda-sim

#include "CudaRuntimeSubset.h"
#include "CudaSimKernels.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void rule(const char *Name, cudaError_t Status) {
  printf("%s -> %s\n", Name, cudaGetErrorName(Status));
}

static struct cudaMemcpyAttributes StreamOrder;

/// fill(float *p, float v): p[block x * block size + thread x] = v.
static void fillEntry(void **Args, const uint64_t *Ids) {
  float *P = *(float **)Args[0];
  P[Ids[0] * Ids[6] + Ids[3]] = *(float *)Args[1];
}

/// A kernel library as convert-gpu-to-cuda-runtime lays it out: PTX text
/// (exactly the object CUDA loads, NUL-terminated) and, beside it, the host
/// versions of its kernels (an etcopy_host_kernel_table of two kernels),
/// which the lowered code attaches to the loaded library on the simulator.
static const char LibraryPtx[] = ".version 8.0 // fill";
static const struct {
  char Magic[8];
  uint64_t Count;
  etcopy_host_kernel Kernels[2];
} HostKernels = {{'E', 'T', 'C', 'H', 'O', 'S', 'T', 'K'},
                 2,
                 {{"fill", "p4", fillEntry, NULL},
                  {"sync", NULL, NULL, "it uses gpu.barrier"}}};
#define HOST_KERNEL_TABLE ((const etcopy_host_kernel_table *)&HostKernels)
static size_t First = 0;

/// A batch of one copy with one attribute.
static cudaError_t batchOf(void *Dst, const void *Src, size_t Size,
                           cudaStream_t S) {
  size_t Sizes[1] = {Size};
  return cudaMemcpyBatchAsync(&Dst, &Src, Sizes, 1, &StreamOrder, &First, 1, S);
}

int main(void) {
  StreamOrder.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  char Host[64] = {0};
  char *Dev = NULL, *Dev1 = NULL, *Pinned = NULL, *Async = NULL;
  cudaStream_t S, S1, Destroyed;
  cudaEvent_t E, E1;
  if (cudaMalloc((void **)&Dev, 64) != cudaSuccess ||
      cudaMallocHost((void **)&Pinned, 64) != cudaSuccess ||
      cudaStreamCreate(&S) != cudaSuccess ||
      cudaStreamCreate(&Destroyed) != cudaSuccess ||
      cudaStreamDestroy(Destroyed) != cudaSuccess ||
      cudaEventCreate(&E) != cudaSuccess || cudaSetDevice(1) != cudaSuccess ||
      cudaMalloc((void **)&Dev1, 64) != cudaSuccess ||
      cudaStreamCreate(&S1) != cudaSuccess ||
      cudaEventCreate(&E1) != cudaSuccess || cudaSetDevice(0) != cudaSuccess)
    return 2;

  // --- cudaMemcpyBatchAsync --------------------------------------------
  // batch-empty-copy: the H200's case, 0 bytes between null pointers, and
  // the same with real pointers.
  void *Dsts[2] = {Dev, NULL};
  const void *Srcs[2] = {Host, NULL};
  size_t Sizes[2] = {16, 0};
  rule("batch-empty-copy null",
       cudaMemcpyBatchAsync(Dsts, Srcs, Sizes, 2, &StreamOrder, &First, 1, S));
  rule("batch-empty-copy", batchOf(Dev, Host, 0, S));
  // CHECK: etcopy-cuda-sim: error: cudaMemcpyBatchAsync: copy 1: empty copy: sizes[1] is 0 (dst 0x0, src 0x0); CUDA rejects a batch that holds a copy of 0 bytes
  // CHECK-NEXT: batch-empty-copy null -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyBatchAsync: copy 0: empty copy: sizes[0] is 0 (dst 0x{{[0-9a-f]+}}, src 0x{{[0-9a-f]+}}); CUDA rejects a batch that holds a copy of 0 bytes
  // CHECK-NEXT: batch-empty-copy -> cudaErrorInvalidValue

  // batch-null-pointer
  rule("batch-null-pointer", batchOf(NULL, Host, 16, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyBatchAsync: copy 0: invalid pointer: dst is null in a copy of 16 bytes
  // CHECK-NEXT: batch-null-pointer -> cudaErrorInvalidValue

  // batch-legacy-stream; cudaStreamPerThread is not the legacy stream.
  rule("batch-legacy-stream", batchOf(Dev, Host, 16, 0));
  rule("batch-legacy-stream per-thread",
       batchOf(Dev, Host, 16, cudaStreamPerThread));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyBatchAsync: invalid stream: the legacy default stream cannot be used; pass a created stream or cudaStreamPerThread
  // CHECK-NEXT: batch-legacy-stream -> cudaErrorInvalidValue
  // CHECK-NEXT: batch-legacy-stream per-thread -> cudaSuccess

  // batch-count
  rule("batch-count", cudaMemcpyBatchAsync(Dsts, Srcs, Sizes, 0, &StreamOrder,
                                           &First, 1, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyBatchAsync: invalid argument: count is 0
  // CHECK-NEXT: batch-count -> cudaErrorInvalidValue

  // batch-dependent-copies: copy 1 reads what copy 0 writes.
  void *Chain[2] = {Dev, Dev + 32};
  const void *ChainSrc[2] = {Host, Dev};
  size_t Sixteen[2] = {16, 16};
  rule("batch-dependent-copies",
       cudaMemcpyBatchAsync(Chain, ChainSrc, Sixteen, 2, &StreamOrder, &First,
                            1, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyBatchAsync: dependent copies: copy 0 writes 0x{{[0-9a-f]+}} + 16 bytes, which copy 1 reads at 0x{{[0-9a-f]+}} + 16 bytes; copies of one batch are not ordered
  // CHECK-NEXT: batch-dependent-copies -> cudaErrorInvalidValue

  // --- Copies ------------------------------------------------------------
  // empty-copy, for every copy function.
  rule("empty-copy cudaMemcpy", cudaMemcpy(Dev, Host, 0, cudaMemcpyDefault));
  rule("empty-copy cudaMemcpyAsync",
       cudaMemcpyAsync(NULL, NULL, 0, cudaMemcpyHostToDevice, S));
  rule("empty-copy cudaMemcpy2DAsync width",
       cudaMemcpy2DAsync(Dev, 16, Host, 16, 0, 2, cudaMemcpyHostToDevice, S));
  rule("empty-copy cudaMemcpy2D height",
       cudaMemcpy2D(Dev, 16, Host, 16, 16, 0, cudaMemcpyHostToDevice));
  rule("empty-copy cudaMemcpyPeerAsync",
       cudaMemcpyPeerAsync(Dev1, 1, Dev, 0, 0, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy: empty copy: count is 0; the simulator rejects copies of 0 bytes (undocumented for cudaMemcpy; cudaMemcpyBatchAsync rejects them)
  // CHECK-NEXT: empty-copy cudaMemcpy -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyAsync: empty copy: count is 0
  // CHECK-NEXT: empty-copy cudaMemcpyAsync -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy2DAsync: empty copy: width is 0
  // CHECK-NEXT: empty-copy cudaMemcpy2DAsync width -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy2D: empty copy: height is 0
  // CHECK-NEXT: empty-copy cudaMemcpy2D height -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyPeerAsync: empty copy: count is 0
  // CHECK-NEXT: empty-copy cudaMemcpyPeerAsync -> cudaErrorInvalidValue

  // copy-kind and wrong-kind: a kind outside cudaMemcpyKind, and a kind
  // that does not match the pointers (HostToDevice from device memory).
  rule("copy-kind", cudaMemcpy(Dev, Host, 16, (enum cudaMemcpyKind)7));
  rule("wrong-kind", cudaMemcpyAsync(Dev + 32, Dev, 16,
                                     cudaMemcpyHostToDevice, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpy: invalid copy kind 7
  // CHECK-NEXT: copy-kind -> cudaErrorInvalidMemcpyDirection
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyAsync: wrong copy kind: HostToDevice copy of 16 bytes from src 0x{{[0-9a-f]+}} (device memory on cuda:0) to dst 0x{{[0-9a-f]+}} (device memory on cuda:0)
  // CHECK-NEXT: wrong-kind -> cudaErrorInvalidValue

  // overlapping-copy
  rule("overlapping-copy",
       cudaMemcpyAsync(Dev + 8, Dev, 16, cudaMemcpyDeviceToDevice, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyAsync: overlapping copy: dst 0x{{[0-9a-f]+}} + 16 bytes overlaps src 0x{{[0-9a-f]+}} + 16 bytes
  // CHECK-NEXT: overlapping-copy -> cudaErrorInvalidValue

  // partly-registered: a host range of which only a part is registered.
  char *Split = malloc(64);
  if (!Split || cudaHostRegister(Split + 32, 32, 0) != cudaSuccess)
    return 2;
  rule("partly-registered",
       cudaMemcpyAsync(Dev, Split + 16, 32, cudaMemcpyHostToDevice, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyAsync: invalid pointer: src 0x{{[0-9a-f]+}} + 32 bytes (pageable host memory) runs into the registered range 0x{{[0-9a-f]+}} + 32 bytes; CUDA rejects copies of memory that is partly registered
  // CHECK-NEXT: partly-registered -> cudaErrorInvalidValue

  // copy-other-device-stream: a copy may be queued on a stream of another
  // device (here S1, of cuda:1, while cuda:0 is current).
  rule("copy-other-device-stream",
       cudaMemcpyAsync(Dev, Host, 16, cudaMemcpyHostToDevice, S1));
  // CHECK-NEXT: copy-other-device-stream -> cudaSuccess

  // --- Memsets -----------------------------------------------------------
  rule("empty-memset cudaMemset", cudaMemset(Dev, 0, 0));
  rule("empty-memset cudaMemsetAsync", cudaMemsetAsync(NULL, 0, 0, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemset: empty memset: count is 0; the simulator rejects memsets of 0 bytes (undocumented for cudaMemset)
  // CHECK-NEXT: empty-memset cudaMemset -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemsetAsync: empty memset: count is 0
  // CHECK-NEXT: empty-memset cudaMemsetAsync -> cudaErrorInvalidValue

  // memset-other-device: the stream, or the memory, of another device.
  rule("memset-other-device stream", cudaMemsetAsync(Dev, 0, 16, S1));
  rule("memset-other-device memory", cudaMemsetAsync(Dev1, 0, 16, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemsetAsync: stream S3 belongs to cuda:1 but cuda:0 is current; the simulator runs memsets only on the current device's streams
  // CHECK-NEXT: memset-other-device stream -> cudaErrorInvalidResourceHandle
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemsetAsync: invalid pointer: dst 0x{{[0-9a-f]+}} is device memory on cuda:1 but the memset runs on cuda:0; the simulator sets only the memory of the device the memset runs on
  // CHECK-NEXT: memset-other-device memory -> cudaErrorInvalidValue

  // --- Allocations and frees ---------------------------------------------
  // empty-allocation: succeeds and writes nothing; cudaMallocManaged is
  // documented to reject it.
  void *Untouched = (void *)0x10;
  rule("empty-allocation cudaMallocAsync", cudaMallocAsync(&Untouched, 0, S));
  rule("empty-allocation cudaMalloc", cudaMalloc(&Untouched, 0));
  rule("empty-allocation cudaMallocHost", cudaMallocHost(&Untouched, 0));
  printf("result left: %p\n", Untouched);
  rule("empty-allocation cudaMallocManaged",
       cudaMallocManaged(&Untouched, 0, cudaMemAttachGlobal));
  // CHECK-NEXT: empty-allocation cudaMallocAsync -> cudaSuccess
  // CHECK-NEXT: empty-allocation cudaMalloc -> cudaSuccess
  // CHECK-NEXT: empty-allocation cudaMallocHost -> cudaSuccess
  // CHECK-NEXT: result left: 0x10
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMallocManaged: invalid argument: size is 0; cudaMallocManaged rejects requests of 0 bytes
  // CHECK-NEXT: empty-allocation cudaMallocManaged -> cudaErrorInvalidValue

  // free-null: a no-op for cudaFree only.
  rule("free-null cudaFree", cudaFree(NULL));
  rule("free-null cudaFreeAsync", cudaFreeAsync(NULL, S));
  rule("free-null cudaFreeHost", cudaFreeHost(NULL));
  // CHECK-NEXT: free-null cudaFree -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFreeAsync: invalid pointer: devPtr is null; the simulator rejects it (cudaFree documents a null pointer as a no-op, cudaFreeAsync does not)
  // CHECK-NEXT: free-null cudaFreeAsync -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFreeHost: invalid pointer: ptr is null; the simulator rejects it (cudaFree documents a null pointer as a no-op, cudaFreeHost does not)
  // CHECK-NEXT: free-null cudaFreeHost -> cudaErrorInvalidValue

  // free-async-memory: cudaFree does not wait for work queued on memory
  // from cudaMallocAsync, which then finds it freed.
  if (cudaMallocAsync((void **)&Async, 16, S) != cudaSuccess)
    return 2;
  rule("free-async-memory queue",
       cudaMemcpyAsync(Async, Pinned, 16, cudaMemcpyHostToDevice, S));
  rule("free-async-memory free", cudaFree(Async));
  rule("free-async-memory sync", cudaStreamSynchronize(S));
  // CHECK-NEXT: free-async-memory queue -> cudaSuccess
  // CHECK-NEXT: free-async-memory free -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamSynchronize: use after free: cudaMemcpyAsync(dst=0x{{[0-9a-f]+}}, src=0x{{[0-9a-f]+}}, 16 bytes, HostToDevice, stream=S1) writes dst 0x{{[0-9a-f]+}} in a 16-byte device allocation 0x{{[0-9a-f]+}} on cuda:0 that was freed (by cudaFree) before the operation executed
  // CHECK-NEXT: free-async-memory sync -> cudaErrorIllegalAddress

  // free-async-memory, from a pool: the same for cudaMallocFromPoolAsync.
  char *FromPool = NULL;
  cudaMemPool_t Pool = NULL;
  if (cudaDeviceGetDefaultMemPool(&Pool, 0) != cudaSuccess ||
      cudaMallocFromPoolAsync((void **)&FromPool, 16, Pool, S) != cudaSuccess)
    return 2;
  rule("free-async-memory pool queue",
       cudaMemcpyAsync(FromPool, Pinned, 16, cudaMemcpyHostToDevice, S));
  rule("free-async-memory pool free", cudaFree(FromPool));
  rule("free-async-memory pool sync", cudaStreamSynchronize(S));
  // CHECK-NEXT: free-async-memory pool queue -> cudaSuccess
  // CHECK-NEXT: free-async-memory pool free -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamSynchronize: use after free: cudaMemcpyAsync(dst=0x{{[0-9a-f]+}}, src=0x{{[0-9a-f]+}}, 16 bytes, HostToDevice, stream=S1) writes dst 0x{{[0-9a-f]+}} in a 16-byte device allocation 0x{{[0-9a-f]+}} on cuda:0 that was freed (by cudaFree) before the operation executed
  // CHECK-NEXT: free-async-memory pool sync -> cudaErrorIllegalAddress

  // double-free
  rule("double-free", cudaFree(Async));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFree: double free: 0x{{[0-9a-f]+}} was already freed (a 16-byte device allocation on cuda:0, freed by cudaFree)
  // CHECK-NEXT: double-free -> cudaErrorInvalidValue

  // sync-call-order: cudaMemcpy from pageable memory to the device (staged
  // during the call), cudaMemcpy between device memories and cudaMemset
  // may return before the device has done them. They run on the legacy
  // default stream, which a non-blocking stream is not ordered after: its
  // reads see the memory as it was until the default stream is waited for.
  cudaStream_t NonBlocking;
  char *Order = NULL, *Fours = NULL;
  char Pageable[4] = {3, 3, 3, 3}, Seen[4] = {0};
  if (cudaStreamCreateWithFlags(&NonBlocking, cudaStreamNonBlocking) ||
      cudaMalloc((void **)&Order, 4) || cudaMalloc((void **)&Fours, 4) ||
      cudaMemset(Order, 1, 4) || cudaMemset(Fours, 4, 4) ||
      cudaDeviceSynchronize())
    return 2;
#define SEEN(What)                                                             \
  cudaMemcpyAsync(Seen, Order, 4, cudaMemcpyDeviceToHost, NonBlocking);       \
  cudaStreamSynchronize(NonBlocking);                                          \
  printf("sync-call-order %s: %d\n", What, Seen[0])
  rule("sync-call-order memset", cudaMemset(Order, 2, 4));
  SEEN("unordered");
  cudaStreamSynchronize(0);
  SEEN("after the default stream");
  rule("sync-call-order pageable",
       cudaMemcpy(Order, Pageable, 4, cudaMemcpyHostToDevice));
  Pageable[0] = 9;
  SEEN("unordered");
  cudaStreamSynchronize(0);
  SEEN("after the default stream");
  rule("sync-call-order device",
       cudaMemcpy(Order, Fours, 4, cudaMemcpyDeviceToDevice));
  SEEN("unordered");
  cudaDeviceSynchronize();
  SEEN("after the device");
#undef SEEN
  cudaFree(Order);
  cudaFree(Fours);
  cudaStreamDestroy(NonBlocking);
  // CHECK-NEXT: sync-call-order memset -> cudaSuccess
  // CHECK-NEXT: sync-call-order unordered: 1
  // CHECK-NEXT: sync-call-order after the default stream: 2
  // CHECK-NEXT: sync-call-order pageable -> cudaSuccess
  // CHECK-NEXT: sync-call-order unordered: 2
  // CHECK-NEXT: sync-call-order after the default stream: 3
  // CHECK-NEXT: sync-call-order device -> cudaSuccess
  // CHECK-NEXT: sync-call-order unordered: 3
  // CHECK-NEXT: sync-call-order after the device: 4

  // --- Streams and events ------------------------------------------------
  rule("stream-handle unknown", cudaStreamSynchronize((cudaStream_t)0x1234));
  rule("stream-handle destroyed",
       cudaMemcpyAsync(Dev, Host, 16, cudaMemcpyHostToDevice, Destroyed));
  rule("stream-handle default", cudaStreamDestroy(0));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamSynchronize: invalid stream handle 0x1234 (not created by cudaStreamCreate or cudaStreamCreateWithFlags)
  // CHECK-NEXT: stream-handle unknown -> cudaErrorInvalidResourceHandle
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyAsync: invalid stream handle 0x{{[0-9a-f]+}} (S2 was destroyed by cudaStreamDestroy)
  // CHECK-NEXT: stream-handle destroyed -> cudaErrorInvalidResourceHandle
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamDestroy: the default stream cannot be destroyed
  // CHECK-NEXT: stream-handle default -> cudaErrorInvalidResourceHandle

  // stream-other-device: synchronising with, querying and freeing on a
  // stream of another device are accepted (undocumented).
  char *Async1 = NULL;
  rule("stream-other-device allocate",
       cudaMallocAsync((void **)&Async1, 16, S1));
  rule("stream-other-device free", cudaFreeAsync(Async1, S1));
  rule("stream-other-device synchronize", cudaStreamSynchronize(S1));
  rule("stream-other-device query", cudaStreamQuery(S1));
  // CHECK-NEXT: stream-other-device allocate -> cudaSuccess
  // CHECK-NEXT: stream-other-device free -> cudaSuccess
  // CHECK-NEXT: stream-other-device synchronize -> cudaSuccess
  // CHECK-NEXT: stream-other-device query -> cudaSuccess

  // event-other-device: recording needs the event's device; waiting on,
  // synchronising with and querying an event of another device work.
  rule("event-other-device record", cudaEventRecord(E1, S));
  rule("event-other-device wait", cudaStreamWaitEvent(S, E1, 0));
  rule("event-other-device synchronize", cudaEventSynchronize(E1));
  rule("event-other-device query", cudaEventQuery(E1));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaEventRecord: event E2 was created on cuda:1 but stream S1 belongs to cuda:0
  // CHECK-NEXT: event-other-device record -> cudaErrorInvalidResourceHandle
  // CHECK-NEXT: event-other-device wait -> cudaSuccess
  // CHECK-NEXT: event-other-device synchronize -> cudaSuccess
  // CHECK-NEXT: event-other-device query -> cudaSuccess

  // --- Libraries and kernels ----------------------------------------------
  // kernel-image: an image that is neither PTX, a cubin nor a fatbin. The
  // simulator reads an image only as far as its format bounds it (CUDA
  // takes no size): "x" is read up to its NUL, and the 13 bytes of the
  // plain PTX image below are all it reads of that literal.
  cudaLibrary_t Lib = NULL, Plain = NULL;
  rule("kernel-image",
       cudaLibraryLoadData(&Lib, "garbage", NULL, NULL, 0, NULL, NULL, 0));
  rule("kernel-image short",
       cudaLibraryLoadData(&Lib, "x", NULL, NULL, 0, NULL, NULL, 0));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLibraryLoadData: the image at 0x{{[0-9a-f]+}} is not PTX (text with a .version directive), a cubin (64-bit ELF) or a fatbin
  // CHECK-NEXT: kernel-image -> cudaErrorInvalidKernelImage
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLibraryLoadData: the image at 0x{{[0-9a-f]+}} is not PTX (text with a .version directive), a cubin (64-bit ELF) or a fatbin
  // CHECK-NEXT: kernel-image short -> cudaErrorInvalidKernelImage
  if (cudaLibraryLoadData(&Lib, LibraryPtx, NULL, NULL, 0, NULL, NULL, 0) ||
      etcopy_cuda_sim_attach_host_kernels(Lib, HOST_KERNEL_TABLE) ||
      cudaLibraryLoadData(&Plain, ".version 8.0", NULL, NULL, 0, NULL, NULL,
                          0))
    return 2;

  // host-kernel-table: the tables of host kernels that lowered code
  // attaches (not a CUDA call: etcopy_cuda_sim_attach_host_kernels,
  // CudaSimKernels.h) must be tables, one per library, of a loaded library.
  static const char NotATable[24] = "not a table";
  rule("host-kernel-table null",
       etcopy_cuda_sim_attach_host_kernels(Plain, NULL));
  rule("host-kernel-table magic",
       etcopy_cuda_sim_attach_host_kernels(
           Plain, (const etcopy_host_kernel_table *)NotATable));
  rule("host-kernel-table twice",
       etcopy_cuda_sim_attach_host_kernels(Lib, HOST_KERNEL_TABLE));
  rule("host-kernel-table library",
       etcopy_cuda_sim_attach_host_kernels((cudaLibrary_t)&Plain,
                                           HOST_KERNEL_TABLE));
  // CHECK-NEXT: etcopy-cuda-sim: error: etcopy_cuda_sim_attach_host_kernels: invalid argument: table is null
  // CHECK-NEXT: host-kernel-table null -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: etcopy_cuda_sim_attach_host_kernels: 0x{{[0-9a-f]+}} is not a table of host kernels (it does not start with "ETCHOSTK")
  // CHECK-NEXT: host-kernel-table magic -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: etcopy_cuda_sim_attach_host_kernels: library {{[0-9]+}} has host kernels already
  // CHECK-NEXT: host-kernel-table twice -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: etcopy_cuda_sim_attach_host_kernels: invalid library handle 0x{{[0-9a-f]+}} (not loaded by cudaLibraryLoadData)
  // CHECK-NEXT: host-kernel-table library -> cudaErrorInvalidResourceHandle
  // It is not a CUDA call: it leaves the last error alone.
  (void)cudaGetLastError();
  rule("host-kernel-table last error",
       (etcopy_cuda_sim_attach_host_kernels(Plain, NULL), cudaPeekAtLastError()));
  // CHECK-NEXT: etcopy-cuda-sim: error: etcopy_cuda_sim_attach_host_kernels: invalid argument: table is null
  // CHECK-NEXT: host-kernel-table last error -> cudaSuccess

  // kernel-name: a name the library lacks; a library without host kernels
  // has none the simulator can run.
  cudaKernel_t Fill = NULL, Sync = NULL, Missing = NULL;
  rule("kernel-name", cudaLibraryGetKernel(&Missing, Lib, "fil"));
  rule("kernel-name no host kernels",
       cudaLibraryGetKernel(&Missing, Plain, "fill"));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLibraryGetKernel: library {{[0-9]+}} has no kernel named 'fil'
  // CHECK-NEXT: kernel-name -> cudaErrorSymbolNotFound
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLibraryGetKernel: library {{[0-9]+}} has no host versions of its kernels, so the simulator cannot find or run 'fill' (lower the kernels' gpu.module with etcopy-outline-host-kernels, as --etcopy-to-cuda does)
  // CHECK-NEXT: kernel-name no host kernels -> cudaErrorSymbolNotFound
  if (cudaLibraryGetKernel(&Fill, Lib, "fill") ||
      cudaLibraryGetKernel(&Sync, Lib, "sync"))
    return 2;

  // kernel-configuration: zero and oversized grids and blocks, too much
  // dynamic shared memory.
  float Value = 2.5f;
  float *Out = (float *)Dev;
  void *Args[2] = {&Out, &Value};
  dim3 One = {1, 1, 1}, Four = {4, 1, 1};
  dim3 Zero = {0, 1, 1}, Wide = {1025, 1, 1}, Deep = {1, 1, 65},
       Many = {32, 32, 2}, Tall = {1, 65536, 1};
  rule("kernel-configuration zero",
       cudaLaunchKernel(Fill, Zero, Four, Args, 0, S));
  rule("kernel-configuration block x",
       cudaLaunchKernel(Fill, One, Wide, Args, 0, S));
  rule("kernel-configuration block z",
       cudaLaunchKernel(Fill, One, Deep, Args, 0, S));
  rule("kernel-configuration threads",
       cudaLaunchKernel(Fill, One, Many, Args, 0, S));
  rule("kernel-configuration grid y",
       cudaLaunchKernel(Fill, Tall, Four, Args, 0, S));
  rule("kernel-configuration shared memory",
       cudaLaunchKernel(Fill, One, Four, Args, 48 * 1024 + 1, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLaunchKernel: kernel fill: a grid or block dimension is 0
  // CHECK-NEXT: kernel-configuration zero -> cudaErrorInvalidConfiguration
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLaunchKernel: kernel fill: block (1025, 1, 1) exceeds the limits (1024 x 1024 x 64, 1024 threads per block)
  // CHECK-NEXT: kernel-configuration block x -> cudaErrorInvalidConfiguration
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLaunchKernel: kernel fill: block (1, 1, 65) exceeds the limits (1024 x 1024 x 64, 1024 threads per block)
  // CHECK-NEXT: kernel-configuration block z -> cudaErrorInvalidConfiguration
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLaunchKernel: kernel fill: block (32, 32, 2) exceeds the limits (1024 x 1024 x 64, 1024 threads per block)
  // CHECK-NEXT: kernel-configuration threads -> cudaErrorInvalidConfiguration
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLaunchKernel: kernel fill: grid (1, 65536, 1) exceeds the limits ((2^31 - 1) x 65535 x 65535)
  // CHECK-NEXT: kernel-configuration grid y -> cudaErrorInvalidConfiguration
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLaunchKernel: kernel fill: 49153 bytes of dynamic shared memory exceed the 49152 a block may use without cudaFuncAttributeMaxDynamicSharedMemorySize
  // CHECK-NEXT: kernel-configuration shared memory -> cudaErrorInvalidConfiguration

  // kernel-pointer: a pointer parameter must be memory of the launch's
  // device: not host memory, not another device's.
  float *HostOut = (float *)Host, *OtherOut = (float *)Dev1;
  void *HostArgs[2] = {&HostOut, &Value}, *OtherArgs[2] = {&OtherOut, &Value};
  rule("kernel-pointer host", cudaLaunchKernel(Fill, One, Four, HostArgs, 0, S));
  rule("kernel-pointer other device",
       cudaLaunchKernel(Fill, One, Four, OtherArgs, 0, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLaunchKernel: kernel fill: parameter 0 (0x{{[0-9a-f]+}}) is not memory of cuda:0: pageable host memory
  // CHECK-NEXT: kernel-pointer host -> cudaErrorIllegalAddress
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLaunchKernel: kernel fill: parameter 0 (0x{{[0-9a-f]+}}) is not memory of cuda:0: device memory on cuda:1
  // CHECK-NEXT: kernel-pointer other device -> cudaErrorIllegalAddress

  // kernel-handle: only handles from cudaLibraryGetKernel launch.
  rule("kernel-handle", cudaLaunchKernel((const void *)&HostKernels, One, Four,
                                         Args, 0, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLaunchKernel: 0x{{[0-9a-f]+}} is not a kernel handle from cudaLibraryGetKernel (the simulator launches no other functions)
  // CHECK-NEXT: kernel-handle -> cudaErrorInvalidDeviceFunction

  // kernel-unsupported: a kernel without host version.
  rule("kernel-unsupported", cudaLaunchKernel(Sync, One, Four, NULL, 0, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLaunchKernel: kernel sync cannot run on the simulator: it uses gpu.barrier
  // CHECK-NEXT: kernel-unsupported -> cudaErrorNotSupported

  // A launch runs in stream order, every thread of every block.
  dim3 Two = {2, 1, 1};
  float Filled[8] = {0};
  rule("kernel launch", cudaLaunchKernel(Fill, Two, Four, Args, 0, S));
  rule("kernel launch copy", cudaMemcpyAsync(Filled, Dev, sizeof Filled,
                                             cudaMemcpyDeviceToHost, S));
  rule("kernel launch synchronize", cudaStreamSynchronize(S));
  printf("filled: %g %g\n", Filled[0], Filled[7]);
  // CHECK-NEXT: kernel launch -> cudaSuccess
  // CHECK-NEXT: kernel launch copy -> cudaSuccess
  // CHECK-NEXT: kernel launch synchronize -> cudaSuccess
  // CHECK-NEXT: filled: 2.5 2.5

  // library-handle: an unloaded library's handles are invalid.
  rule("library-handle unload", cudaLibraryUnload(Lib));
  rule("library-handle twice", cudaLibraryUnload(Lib));
  rule("library-handle kernel", cudaLaunchKernel(Fill, One, Four, Args, 0, S));
  cudaLibraryUnload(Plain);
  // CHECK-NEXT: library-handle unload -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLibraryUnload: invalid library handle 0x{{[0-9a-f]+}} (library {{[0-9]+}} was unloaded by cudaLibraryUnload)
  // CHECK-NEXT: library-handle twice -> cudaErrorInvalidResourceHandle
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaLaunchKernel: kernel fill: its library {{[0-9]+}} was unloaded
  // CHECK-NEXT: library-handle kernel -> cudaErrorInvalidResourceHandle

  // --- Stream capture and graphs ----------------------------------------
  cudaGraph_t G = NULL;
  cudaGraphExec_t GE = NULL;
  enum cudaStreamCaptureStatus Status = cudaStreamCaptureStatusNone;
  // capture-stream: not on the legacy stream, not twice on one stream, and
  // ended only where it began.
  rule("capture-stream legacy",
       cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal));
  rule("capture-stream not capturing", cudaStreamEndCapture(S, &G));
  rule("capture-stream begin", cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal));
  rule("capture-stream twice", cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal));
  rule("capture-stream end", cudaStreamEndCapture(S, &G));
  cudaGraphDestroy(G);
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamBeginCapture: capture may not be initiated on the default stream (cudaStreamLegacy; the simulator also rejects cudaStreamPerThread)
  // CHECK-NEXT: capture-stream legacy -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamEndCapture: S{{[0-9]+}} is not capturing a graph
  // CHECK-NEXT: capture-stream not capturing -> cudaErrorInvalidValue
  // CHECK-NEXT: capture-stream begin -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamBeginCapture: S{{[0-9]+}} is already capturing a graph
  // CHECK-NEXT: capture-stream twice -> cudaErrorInvalidValue
  // CHECK-NEXT: capture-stream end -> cudaSuccess

  // capture-sync: synchronising or querying a capturing stream fails and
  // invalidates the capture, as synchronising its device does; ending it
  // then returns no graph.
  cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal);
  rule("capture-sync stream", cudaStreamSynchronize(S));
  cudaStreamIsCapturing(S, &Status);
  printf("capture-sync status %d\n", (int)Status);
  rule("capture-sync query", cudaStreamQuery(S));
  rule("capture-sync device", cudaDeviceSynchronize());
  G = (cudaGraph_t)&G;
  rule("capture-sync end", cudaStreamEndCapture(S, &G));
  printf("capture-sync graph %s\n", G ? "returned" : "null");
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamSynchronize: synchronises S{{[0-9]+}}, which is capturing a graph; the capture is invalidated
  // CHECK-NEXT: capture-sync stream -> cudaErrorStreamCaptureUnsupported
  // CHECK-NEXT: capture-sync status 2
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamQuery: queries S{{[0-9]+}}, which is capturing a graph; the capture is invalidated
  // CHECK-NEXT: capture-sync query -> cudaErrorStreamCaptureUnsupported
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaDeviceSynchronize: synchronises the device of S{{[0-9]+}}, which is capturing a graph; the capture is invalidated
  // CHECK-NEXT: capture-sync device -> cudaErrorStreamCaptureUnsupported
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamEndCapture: the capture of S{{[0-9]+}} was invalidated by an earlier call; no graph is returned
  // CHECK-NEXT: capture-sync end -> cudaErrorStreamCaptureInvalidated
  // CHECK-NEXT: capture-sync graph null

  // capture-unsafe: a potentially unsafe call (cudaMalloc, a synchronous
  // copy) fails during a global capture, and is allowed in a relaxed one.
  char *Unsafe = NULL;
  cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal);
  rule("capture-unsafe malloc", cudaMalloc((void **)&Unsafe, 64));
  rule("capture-unsafe end", cudaStreamEndCapture(S, &G));
  cudaStreamBeginCapture(S, cudaStreamCaptureModeRelaxed);
  rule("capture-unsafe relaxed malloc", cudaMalloc((void **)&Unsafe, 64));
  rule("capture-unsafe relaxed end", cudaStreamEndCapture(S, &G));
  cudaGraphDestroy(G);
  cudaFree(Unsafe);
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMalloc: a potentially unsafe call (it may synchronise implicitly) while S{{[0-9]+}} captures a graph in cudaStreamCaptureModeGlobal mode; the capture is invalidated
  // CHECK-NEXT: capture-unsafe malloc -> cudaErrorStreamCaptureUnsupported
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamEndCapture: the capture of S{{[0-9]+}} was invalidated by an earlier call; no graph is returned
  // CHECK-NEXT: capture-unsafe end -> cudaErrorStreamCaptureInvalidated
  // CHECK-NEXT: capture-unsafe relaxed malloc -> cudaSuccess
  // CHECK-NEXT: capture-unsafe relaxed end -> cudaSuccess

  // capture-batch: CUDA 13 cannot capture a batch; the capture goes on.
  cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal);
  rule("capture-batch", batchOf(Dev, Pinned, 16, S));
  rule("capture-batch end", cudaStreamEndCapture(S, &G));
  cudaGraphDestroy(G);
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyBatchAsync: S{{[0-9]+}} is capturing a graph: CUDA 13 cannot capture cudaMemcpyBatchAsync (the capture goes on without the copies)
  // CHECK-NEXT: capture-batch -> cudaErrorStreamCaptureUnsupported
  // CHECK-NEXT: capture-batch end -> cudaSuccess

  // capture-pageable: a captured copy of pageable memory is rejected; of
  // pinned memory, accepted.
  cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal);
  rule("capture-pageable pinned", cudaMemcpyAsync(Dev, Pinned, 16,
                                                  cudaMemcpyHostToDevice, S));
  rule("capture-pageable", cudaMemcpyAsync(Dev, Host, 16,
                                           cudaMemcpyHostToDevice, S));
  rule("capture-pageable end", cudaStreamEndCapture(S, &G));
  // CHECK-NEXT: capture-pageable pinned -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMemcpyAsync: copies pageable host memory on S{{[0-9]+}}, which is capturing a graph; the capture is invalidated
  // CHECK-NEXT: capture-pageable -> cudaErrorStreamCaptureUnsupported
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamEndCapture: the capture of S{{[0-9]+}} was invalidated by an earlier call; no graph is returned
  // CHECK-NEXT: capture-pageable end -> cudaErrorStreamCaptureInvalidated

  // graph-unfreed-allocation: a graph that allocates memory it does not
  // free cannot be launched again.
  void *GraphMemory = NULL;
  cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal);
  cudaMallocAsync(&GraphMemory, 64, S);
  cudaStreamEndCapture(S, &G);
  cudaGraphInstantiate(&GE, G, 0);
  rule("graph-unfreed-allocation first", cudaGraphLaunch(GE, S));
  rule("graph-unfreed-allocation again", cudaGraphLaunch(GE, S));
  cudaStreamSynchronize(S);
  // CHECK-NEXT: graph-unfreed-allocation first -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaGraphLaunch: 1 allocations of the previous launch of GE{{[0-9]+}} remain unfreed (the graph allocates memory it does not free, and was not instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch)
  // CHECK-NEXT: graph-unfreed-allocation again -> cudaErrorInvalidValue

  // graph-free-node: a captured cudaFreeAsync is a free node, of a graph
  // allocation only (cudaMallocAsync or cudaMallocFromPoolAsync in a
  // capture); other memory fails and invalidates the capture.
  cudaGraph_t FreeGraph = NULL;
  cudaGraphExec_t FreeExec = NULL;
  char *Outside = NULL;
  if (cudaMallocAsync((void **)&Outside, 64, S) != cudaSuccess)
    return 2;
  cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal);
  rule("graph-free-node outside", cudaFreeAsync(Outside, S));
  rule("graph-free-node outside end", cudaStreamEndCapture(S, &FreeGraph));
  rule("graph-free-node outside free", cudaFreeAsync(Outside, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFreeAsync: invalid pointer: 0x{{[0-9a-f]+}} is not a graph allocation (it is from cudaMallocAsync, not from cudaMallocAsync or cudaMallocFromPoolAsync in a capture), and S{{[0-9]+}} is capturing a graph, where cudaFreeAsync makes a free node; the capture is invalidated
  // CHECK-NEXT: graph-free-node outside -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamEndCapture: the capture of S{{[0-9]+}} was invalidated by an earlier call; no graph is returned
  // CHECK-NEXT: graph-free-node outside end -> cudaErrorStreamCaptureInvalidated
  // CHECK-NEXT: graph-free-node outside free -> cudaSuccess
  // A pool's allocation in a capture is an allocation node, which the
  // graph frees: every launch allocates and frees it.
  char *PoolNode = NULL;
  cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal);
  rule("graph-free-node pool alloc",
       cudaMallocFromPoolAsync((void **)&PoolNode, 64, Pool, S));
  rule("graph-free-node pool free", cudaFreeAsync(PoolNode, S));
  rule("graph-free-node pool end", cudaStreamEndCapture(S, &FreeGraph));
  cudaGraphInstantiate(&FreeExec, FreeGraph, 0);
  rule("graph-free-node pool launch", cudaGraphLaunch(FreeExec, S));
  rule("graph-free-node pool launch again", cudaGraphLaunch(FreeExec, S));
  rule("graph-free-node pool sync", cudaStreamSynchronize(S));
  // CHECK-NEXT: graph-free-node pool alloc -> cudaSuccess
  // CHECK-NEXT: graph-free-node pool free -> cudaSuccess
  // CHECK-NEXT: graph-free-node pool end -> cudaSuccess
  // CHECK-NEXT: graph-free-node pool launch -> cudaSuccess
  // CHECK-NEXT: graph-free-node pool launch again -> cudaSuccess
  // CHECK-NEXT: graph-free-node pool sync -> cudaSuccess

  // graph-one-instance: a graph with allocation or free nodes has one
  // instance at a time.
  cudaGraphExec_t Second = NULL;
  rule("graph-one-instance second", cudaGraphInstantiate(&Second, FreeGraph, 0));
  cudaGraphExecDestroy(FreeExec);
  rule("graph-one-instance after destroy",
       cudaGraphInstantiate(&Second, FreeGraph, 0));
  cudaGraphExecDestroy(Second);
  cudaGraphDestroy(FreeGraph);
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaGraphInstantiate: G{{[0-9]+}} has allocation or free nodes and GE{{[0-9]+}}, an instance of it, is not destroyed: such a graph has at most one instance at a time
  // CHECK-NEXT: graph-one-instance second -> cudaErrorInvalidValue
  // CHECK-NEXT: graph-one-instance after destroy -> cudaSuccess

  // graph-handle: destroyed graphs and instances are invalid handles.
  rule("graph-handle exec", cudaGraphExecDestroy(GE));
  rule("graph-handle exec twice", cudaGraphExecDestroy(GE));
  rule("graph-handle launch", cudaGraphLaunch(GE, S));
  rule("graph-handle graph", cudaGraphDestroy(G));
  rule("graph-handle instantiate", cudaGraphInstantiate(&GE, G, 0));
  // CHECK-NEXT: graph-handle exec -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaGraphExecDestroy: invalid executable graph handle 0x{{[0-9a-f]+}} (GE{{[0-9]+}} was destroyed by cudaGraphExecDestroy)
  // CHECK-NEXT: graph-handle exec twice -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaGraphLaunch: invalid executable graph handle 0x{{[0-9a-f]+}} (GE{{[0-9]+}} was destroyed by cudaGraphExecDestroy)
  // CHECK-NEXT: graph-handle launch -> cudaErrorInvalidValue
  // CHECK-NEXT: graph-handle graph -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaGraphInstantiate: invalid graph handle 0x{{[0-9a-f]+}} (G{{[0-9]+}} was destroyed by cudaGraphDestroy)
  // CHECK-NEXT: graph-handle instantiate -> cudaErrorInvalidValue

  // graph-allocation-outlives-graph: the allocation of graph-unfreed-
  // allocation, which a launch made and no free node frees, is live after
  // the graph and its instance are destroyed, until the program frees it
  // (graph-allocation-leak.c: else it leaks).
  rule("graph-allocation-outlives-graph use",
       cudaMemsetAsync(GraphMemory, 0, 64, S));
  rule("graph-allocation-outlives-graph free", cudaFreeAsync(GraphMemory, S));
  rule("graph-allocation-outlives-graph sync", cudaStreamSynchronize(S));
  // CHECK-NEXT: graph-allocation-outlives-graph use -> cudaSuccess
  // CHECK-NEXT: graph-allocation-outlives-graph free -> cudaSuccess
  // CHECK-NEXT: graph-allocation-outlives-graph sync -> cudaSuccess

  cudaHostUnregister(Split + 32);
  free(Split);
  cudaEventDestroy(E);
  cudaEventDestroy(E1);
  cudaStreamDestroy(S);
  cudaStreamDestroy(S1);
  cudaFreeHost(Pinned);
  cudaFree(Dev);
  cudaFree(Dev1);
  printf("done\n");
  // CHECK-NEXT: done
  return 0;
}
