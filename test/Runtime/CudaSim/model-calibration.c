// The timing model's default costs reproduce the raw limits an H200 showed
// (docs/CudaSimulator.md, "Calibration against the H200"): one micro-program
// per row of the table below runs the calls the H200 run timed, reads the
// modelled time (etcopy_cuda_sim_modelled_time_ns) and checks it against
// the measured figure, within 20 % (of the middle of a measured range).
// Modelled time is deterministic, so this is not a timed test; the
// fresh-page rows depend on what mincore reports, which fresh mmap pages
// make certain.
//
// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_POISON=0 %t | FileCheck %s --implicit-check-not=FAIL
//
// CHECK: h2d-pinned: {{.*}} ok
// CHECK: d2h-pinned: {{.*}} ok
// CHECK: h2d-pageable: {{.*}} ok
// CHECK: d2h-pageable: {{.*}} ok
// CHECK: async-copy-loop: {{.*}} ok
// CHECK: batched-copies: {{.*}} ok
// CHECK: copy-and-sync: {{.*}} ok
// CHECK: stream-create-destroy: {{.*}} ok
// CHECK: malloc-host-1MiB: {{.*}} ok
// CHECK: malloc-host-64MiB: {{.*}} ok
// CHECK: malloc-async-release: {{.*}} ok
// CHECK: malloc-async-keep: {{.*}} ok
// CHECK: round-trip-touched: {{.*}} ok
// CHECK: round-trip-fresh: {{.*}} ok
// CHECK: all 14 figures within 20 % of the H200

#include "CudaRuntimeSubset.h"
#include "CudaSimModel.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "Inputs/check-cuda.h"

/// One raw limit of the H200: the measured range and the row of the H200's
/// table it comes from.
struct Target {
  const char *Name;
  double Low, High;
  const char *Unit;
  const char *Source;
};

static const struct Target Targets[] = {
    {"h2d-pinned", 55.1, 55.1, "GB/s",
     "`cudaMemcpyAsync` 256 MiB, pinned host, H2D / D2H: 55.1 / 55.1 GB/s"},
    {"d2h-pinned", 55.1, 55.1, "GB/s",
     "`cudaMemcpyAsync` 256 MiB, pinned host, H2D / D2H: 55.1 / 55.1 GB/s"},
    {"h2d-pageable", 6.7, 6.8, "GB/s",
     "the same, pageable (`malloc`, already touched) H2D / D2H: 6.7-6.8 / "
     "10.4-13.4 GB/s"},
    {"d2h-pageable", 10.4, 13.4, "GB/s",
     "the same, pageable (`malloc`, already touched) H2D / D2H: 6.7-6.8 / "
     "10.4-13.4 GB/s"},
    {"async-copy-loop", 2.34, 2.48, "ms",
     "1000 x 64 B H2D, one `cudaMemcpyAsync` each, then one sync: "
     "2.34-2.48 ms"},
    {"batched-copies", 1.01, 1.08, "ms",
     "the same 1000 copies in one `cudaMemcpyBatchAsync`: 1.01-1.08 ms"},
    {"copy-and-sync", 6.9, 6.9, "us",
     "one 64 B `cudaMemcpyAsync` + `cudaStreamSynchronize`: 6.9 us"},
    {"stream-create-destroy", 4.9, 6.3, "us",
     "`cudaStreamCreate` + `cudaStreamDestroy`: 4.9-6.3 us"},
    {"malloc-host-1MiB", 1.1, 1.3, "ms",
     "`cudaMallocHost` + `cudaFreeHost`, 1 MiB / 64 MiB: 1.1-1.3 ms / "
     "39.9 ms"},
    {"malloc-host-64MiB", 39.9, 39.9, "ms",
     "`cudaMallocHost` + `cudaFreeHost`, 1 MiB / 64 MiB: 1.1-1.3 ms / "
     "39.9 ms"},
    {"malloc-async-release", 87, 129, "us",
     "`cudaMallocAsync` + `cudaFreeAsync` + sync, 1 MiB, default pool "
     "(release threshold 0): 87-129 us"},
    {"malloc-async-keep", 2.6, 2.6, "us",
     "the same after `cudaMemPoolSetAttribute(pool, "
     "cudaMemPoolAttrReleaseThreshold, UINT64_MAX)`: 2.6 us"},
    {"round-trip-touched", 50.8, 50.8, "ms",
     "256 MiB up and down ... a raw pageable copy (50.8 ms)"},
    {"round-trip-fresh", 237.9, 237.9, "ms",
     "256 MiB up and down through buffers the function allocates: the "
     "default (pageable) 237.9 ms"},
};

enum { NumTargets = sizeof(Targets) / sizeof(Targets[0]) };
// The H200 moved 256 MiB; the model is linear in the bytes moved (its fixed
// costs are a few microseconds), so the large copies here move a quarter of
// that, to spare the test machine's memory, and the round trips' times are
// scaled by 4.
enum { Large = 64 << 20, Scale = 4, SmallCopies = 1000, SmallBytes = 64 };

static double Modelled[NumTargets];
static unsigned long long Start;

static void begin(void) {
  etcopy_cuda_sim_reset_modelled_time();
  Start = etcopy_cuda_sim_modelled_time_ns();
}

static double elapsedNs(void) {
  return (double)(etcopy_cuda_sim_modelled_time_ns() - Start);
}

static void record(int Index, double Value) { Modelled[Index] = Value; }

/// Fresh pageable memory: pages the process has never touched.
static char *freshPages(size_t Bytes) {
  void *P = mmap(NULL, Bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return P == MAP_FAILED ? NULL : (char *)P;
}

static int compareDoubles(const void *A, const void *B) {
  double X = *(const double *)A, Y = *(const double *)B;
  return (X > Y) - (X < Y);
}

/// The median of N iterations of cudaMallocAsync + cudaFreeAsync + sync of
/// 1 MiB, in nanoseconds, as the H200 run timed them.
static int mallocAsyncMedian(cudaStream_t S, double *Median) {
  double Times[9];
  for (int I = 0; I < 9; ++I) {
    void *P = NULL;
    begin();
    CHECK_CUDA(cudaMallocAsync(&P, 1 << 20, S));
    CHECK_CUDA(cudaFreeAsync(P, S));
    CHECK_CUDA(cudaStreamSynchronize(S));
    Times[I] = elapsedNs();
  }
  qsort(Times, 9, sizeof(double), compareDoubles);
  *Median = Times[4];
  return 0;
}

int main(void) {
  cudaStream_t S;
  char *Pinned = NULL, *Dev = NULL;
  CHECK_CUDA(cudaFree(0));
  CHECK_CUDA(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));

  // Bandwidth of one large copy each way, pinned, then pageable (touched).
  CHECK_CUDA(cudaMalloc((void **)&Dev, Large));
  CHECK_CUDA(cudaMallocHost((void **)&Pinned, Large));
  begin();
  CHECK_CUDA(cudaMemcpyAsync(Dev, Pinned, Large, cudaMemcpyHostToDevice, S));
  CHECK_CUDA(cudaStreamSynchronize(S));
  record(0, Large / elapsedNs());
  begin();
  CHECK_CUDA(cudaMemcpyAsync(Pinned, Dev, Large, cudaMemcpyDeviceToHost, S));
  CHECK_CUDA(cudaStreamSynchronize(S));
  record(1, Large / elapsedNs());
  char *Pageable = freshPages(Large);
  if (!Pageable)
    return 1;
  memset(Pageable, 1, Large);
  begin();
  CHECK_CUDA(cudaMemcpyAsync(Dev, Pageable, Large, cudaMemcpyHostToDevice, S));
  CHECK_CUDA(cudaStreamSynchronize(S));
  record(2, Large / elapsedNs());
  begin();
  CHECK_CUDA(cudaMemcpyAsync(Pageable, Dev, Large, cudaMemcpyDeviceToHost, S));
  CHECK_CUDA(cudaStreamSynchronize(S));
  record(3, Large / elapsedNs());

  // 1000 small uploads from pinned memory: one call each, then in a batch;
  // then one small copy and its synchronisation.
  void *Dsts[SmallCopies];
  const void *Srcs[SmallCopies];
  size_t Sizes[SmallCopies], First = 0;
  for (int I = 0; I < SmallCopies; ++I) {
    Dsts[I] = Dev + I * SmallBytes;
    Srcs[I] = Pinned + I * SmallBytes;
    Sizes[I] = SmallBytes;
  }
  begin();
  for (int I = 0; I < SmallCopies; ++I)
    CHECK_CUDA(cudaMemcpyAsync(Dsts[I], Srcs[I], SmallBytes,
                               cudaMemcpyHostToDevice, S));
  CHECK_CUDA(cudaStreamSynchronize(S));
  record(4, elapsedNs() / 1e6);
  struct cudaMemcpyAttributes Attr = {cudaMemcpySrcAccessOrderStream,
                                      {cudaMemLocationTypeInvalid, 0},
                                      {cudaMemLocationTypeInvalid, 0},
                                      0};
  begin();
  CHECK_CUDA(cudaMemcpyBatchAsync(Dsts, Srcs, Sizes, SmallCopies, &Attr, &First,
                                  1, S));
  CHECK_CUDA(cudaStreamSynchronize(S));
  record(5, elapsedNs() / 1e6);
  begin();
  CHECK_CUDA(
      cudaMemcpyAsync(Dev, Pinned, SmallBytes, cudaMemcpyHostToDevice, S));
  CHECK_CUDA(cudaStreamSynchronize(S));
  record(6, elapsedNs() / 1e3);

  // A stream's life.
  cudaStream_t Short;
  begin();
  CHECK_CUDA(cudaStreamCreate(&Short));
  CHECK_CUDA(cudaStreamDestroy(Short));
  record(7, elapsedNs() / 1e3);

  // Pinning 1 MiB and 64 MiB.
  CHECK_CUDA(cudaFreeHost(Pinned));
  for (int I = 0; I < 2; ++I) {
    void *Block = NULL;
    size_t Bytes = I == 0 ? (size_t)1 << 20 : (size_t)64 << 20;
    begin();
    CHECK_CUDA(cudaMallocHost(&Block, Bytes));
    CHECK_CUDA(cudaFreeHost(Block));
    record(8 + I, elapsedNs() / 1e6);
  }

  // The default pool releases its memory at every synchronisation (release
  // threshold 0), then keeps it.
  double Median = 0;
  if (mallocAsyncMedian(S, &Median))
    return 1;
  record(10, Median / 1e3);
  cudaMemPool_t Pool;
  uint64_t Keep = UINT64_MAX;
  CHECK_CUDA(cudaDeviceGetDefaultMemPool(&Pool, 0));
  CHECK_CUDA(
      cudaMemPoolSetAttribute(Pool, cudaMemPoolAttrReleaseThreshold, &Keep));
  if (mallocAsyncMedian(S, &Median))
    return 1;
  record(11, Median / 1e3);
  uint64_t Zero = 0;
  CHECK_CUDA(
      cudaMemPoolSetAttribute(Pool, cudaMemPoolAttrReleaseThreshold, &Zero));
  CHECK_CUDA(cudaStreamSynchronize(S));

  // Up and down with synchronous copies through touched buffers, as
  // the raw baseline of gpu-bandwidth.sh, then as the generated code of
  // scenario (b) does it: buffers it has just allocated, of which the host
  // wrote only the first and last element, and device memory from the
  // default pool.
  char *Down = freshPages(Large);
  if (!Down)
    return 1;
  memset(Down, 0, Large);
  begin();
  CHECK_CUDA(cudaMemcpy(Dev, Pageable, Large, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(Down, Dev, Large, cudaMemcpyDeviceToHost));
  record(12, Scale * elapsedNs() / 1e6);
  munmap(Pageable, Large);
  munmap(Down, Large);
  char *In = freshPages(Large), *Out = freshPages(Large);
  void *Buffer = NULL;
  if (!In || !Out)
    return 1;
  In[0] = In[Large - 1] = 1;
  begin();
  CHECK_CUDA(cudaMallocAsync(&Buffer, Large, S));
  CHECK_CUDA(cudaMemcpyAsync(Buffer, In, Large, cudaMemcpyHostToDevice, S));
  CHECK_CUDA(cudaMemcpyAsync(Out, Buffer, Large, cudaMemcpyDeviceToHost, S));
  CHECK_CUDA(cudaStreamSynchronize(S));
  CHECK_CUDA(cudaFreeAsync(Buffer, S));
  CHECK_CUDA(cudaStreamSynchronize(S));
  record(13, Scale * elapsedNs() / 1e6);
  munmap(In, Large);
  munmap(Out, Large);
  CHECK_CUDA(cudaFree(Dev));
  CHECK_CUDA(cudaStreamDestroy(S));

  int Failures = 0;
  for (int I = 0; I < NumTargets; ++I) {
    const struct Target *T = &Targets[I];
    double Middle = (T->Low + T->High) / 2, Ratio = Modelled[I] / Middle;
    int Ok = Ratio >= 0.8 && Ratio <= 1.2;
    Failures += !Ok;
    printf("%s: modelled %.3g %s, H200 %.3g", T->Name, Modelled[I], T->Unit,
           T->Low);
    if (T->High != T->Low)
      printf("-%.3g", T->High);
    printf(" %s (%+.1f %%; %s): %s\n", T->Unit, (Ratio - 1) * 100, T->Source,
           Ok ? "ok" : "FAIL");
  }
  if (Failures == 0)
    printf("all %d figures within 20 %% of the H200\n", NumTargets);
  return Failures != 0;
}
