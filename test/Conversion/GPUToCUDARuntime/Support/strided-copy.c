// __etcopy_memcpy_strided against memref.copy's semantics (row-major, the
// last write wins where the destination overlaps itself; the source is read
// before the destination is written where the two overlap), on every kind
// of layout the memref type system allows: unit dimensions of any stride,
// zero, negative and overlapping strides, empty and rank-0 memrefs, and
// views of one buffer on both sides. Each case runs on the strict
// simulator, which rejects any invalid or overlapping CUDA copy (the error
// policy then exits); then random layouts.

// RUN: %cc %s %etcopy_cuda_support \
// RUN:   -I%etcopy_src_root/lib/Conversion/GPUToCUDARuntime -I%cuda_sim_include \
// RUN:   -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_STATS=1 %t 2>&1 | FileCheck %s

#include "CudaSupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { Elements = 512, MaxRank = 4 };

/// Where the two sides of a case live.
enum Sides { HostToDevice, DeviceToHost, DeviceToDevice, SameDevice, SameHost };

static const char *sideNames[] = {"h2d", "d2h", "d2d", "d2d one buffer",
                                  "h2h one buffer"};

/// A memref descriptor of rank MaxRank at most, laid out as CudaSupport.h
/// reads it.
typedef struct {
  void *allocated;
  char *aligned;
  int64_t offset;
  int64_t shape[2 * MaxRank];
} Descriptor;

typedef struct {
  int64_t rank;
  int64_t sizes[MaxRank];
  int64_t srcOffset, srcStrides[MaxRank];
  int64_t dstOffset, dstStrides[MaxRank];
} Layout;

static float *deviceA, *deviceB;
static cudaStream_t stream;

static void fail(const char *what) {
  printf("error: %s\n", what);
  exit(2);
}

static Descriptor describe(void *base, const Layout *l, int dst) {
  Descriptor d = {base, base, dst ? l->dstOffset : l->srcOffset, {0}};
  for (int64_t i = 0; i < l->rank; ++i) {
    d.shape[i] = l->sizes[i];
    d.shape[l->rank + i] = dst ? l->dstStrides[i] : l->srcStrides[i];
  }
  return d;
}

/// memref.copy on host arrays, with the source read first.
static void reference(float *dst, const float *src, const Layout *l) {
  int64_t count = 1, index[MaxRank] = {0};
  for (int64_t i = 0; i < l->rank; ++i)
    count *= l->sizes[i];
  float *values = malloc(sizeof(float) * (count ? count : 1));
  for (int pass = 0; pass < 2; ++pass) {
    memset(index, 0, sizeof index);
    for (int64_t n = 0; n < count; ++n) {
      int64_t s = l->srcOffset, d = l->dstOffset;
      for (int64_t i = 0; i < l->rank; ++i) {
        s += index[i] * l->srcStrides[i];
        d += index[i] * l->dstStrides[i];
      }
      if (pass == 0)
        values[n] = src[s];
      else
        dst[d] = values[n];
      for (int64_t i = l->rank - 1; i >= 0 && ++index[i] == l->sizes[i]; --i)
        index[i] = 0;
    }
  }
  free(values);
}

/// Runs one case; returns whether the data matches the reference.
static int run(const Layout *l, enum Sides sides, int print) {
  float pattern[Elements], expected[Elements], actual[Elements];
  for (int i = 0; i < Elements; ++i)
    pattern[i] = (float)i;
  // The destination starts as -1 everywhere, except when it is the source.
  int oneBuffer = sides == SameDevice || sides == SameHost;
  for (int i = 0; i < Elements; ++i)
    expected[i] = oneBuffer ? pattern[i] : -1.0f;
  reference(expected, pattern, l);

  float minusOne[Elements];
  for (int i = 0; i < Elements; ++i)
    minusOne[i] = -1.0f;
  float hostSrc[Elements], hostDst[Elements];
  memcpy(hostSrc, pattern, sizeof pattern);
  memcpy(hostDst, oneBuffer ? pattern : minusOne, sizeof pattern);
  // cudaMemcpy from pageable memory may return before the device memory is
  // written, and the copy under test runs on a non-blocking stream: wait.
  if (cudaMemcpy(deviceA, pattern, sizeof pattern, cudaMemcpyHostToDevice) ||
      cudaMemcpy(deviceB, minusOne, sizeof pattern, cudaMemcpyHostToDevice) ||
      cudaStreamSynchronize(0))
    fail("setting up the device buffers");

  void *src, *dst;
  int32_t kind;
  switch (sides) {
  case HostToDevice:
    src = hostSrc, dst = deviceB, kind = cudaMemcpyHostToDevice;
    break;
  case DeviceToHost:
    src = deviceA, dst = hostDst, kind = cudaMemcpyDeviceToHost;
    break;
  case DeviceToDevice:
    src = deviceA, dst = deviceB, kind = cudaMemcpyDeviceToDevice;
    break;
  case SameDevice:
    src = dst = deviceA, kind = cudaMemcpyDeviceToDevice;
    break;
  default:
    src = dst = hostSrc, kind = cudaMemcpyHostToHost;
    memcpy(hostDst, pattern, sizeof pattern);
    break;
  }
  Descriptor srcDescriptor = describe(src, l, 0);
  Descriptor dstDescriptor = describe(dst, l, 1);
  __etcopy_memcpy_strided((const etcopy_memref *)&dstDescriptor,
                          (const etcopy_memref *)&srcDescriptor, l->rank,
                          sizeof(float), kind, stream, "strided-copy.c", 1, 1);
  if (cudaStreamSynchronize(stream))
    fail("synchronising");
  if (dst == deviceA || dst == deviceB) {
    if (cudaMemcpy(actual, dst, sizeof actual, cudaMemcpyDeviceToHost))
      fail("reading back");
  } else {
    memcpy(actual, dst, sizeof actual);
  }
  int ok = memcmp(actual, expected, sizeof actual) == 0;
  if (print || !ok) {
    printf("%s rank %lld:%s\n", sideNames[sides], (long long)l->rank,
           ok ? " ok" : " MISMATCH");
  }
  return ok;
}

/// A named case: sizes, then offset and strides of each side.
static void named(const char *name, enum Sides sides, int64_t rank,
                  const int64_t *sizes, int64_t srcOffset,
                  const int64_t *srcStrides, int64_t dstOffset,
                  const int64_t *dstStrides) {
  Layout l = {rank, {0}, srcOffset, {0}, dstOffset, {0}};
  memcpy(l.sizes, sizes, sizeof(int64_t) * rank);
  memcpy(l.srcStrides, srcStrides, sizeof(int64_t) * rank);
  memcpy(l.dstStrides, dstStrides, sizeof(int64_t) * rank);
  printf("%s: ", name);
  run(&l, sides, 1);
}

#define ARRAY(...) ((const int64_t[]){__VA_ARGS__})

static unsigned long long seed = 42;
static int64_t randomIn(int64_t low, int64_t high) {
  seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  return low + (int64_t)((seed >> 33) % (unsigned long long)(high - low + 1));
}

/// A random side: strides in [-5, 5]; the offset keeps every element in
/// the buffer.
static void randomSide(const Layout *l, int64_t *offset, int64_t *strides) {
  int64_t low = 0, high = 0;
  for (int64_t i = 0; i < l->rank; ++i) {
    strides[i] = randomIn(-5, 5);
    int64_t reach = (l->sizes[i] - 1) * strides[i];
    if (l->sizes[i] == 0)
      reach = 0;
    if (reach < 0)
      low += reach;
    else
      high += reach;
  }
  *offset = -low + randomIn(0, Elements - 1 - (high - low));
}

int main(void) {
  if (cudaMalloc((void **)&deviceA, sizeof(float) * Elements) ||
      cudaMalloc((void **)&deviceB, sizeof(float) * Elements) ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking))
    fail("setting up");

  // CHECK: contiguous: h2d rank 2: ok
  named("contiguous", HostToDevice, 2, ARRAY(3, 4), 0, ARRAY(4, 1), 0,
        ARRAY(4, 1));
  // CHECK: rows of a wider buffer: h2d rank 2: ok
  named("rows of a wider buffer", HostToDevice, 2, ARRAY(3, 4), 5,
        ARRAY(10, 1), 0, ARRAY(4, 1));
  // A unit dimension whose stride is smaller than a row (numpy, or
  // expand_shape and transpose): not a pitch.
  // CHECK: unit dimension: h2d rank 3: ok
  named("unit dimension", HostToDevice, 3, ARRAY(2, 1, 4), 0, ARRAY(8, 1, 1),
        0, ARRAY(4, 4, 1));
  // CHECK: transposed: d2h rank 2: ok
  named("transposed", DeviceToHost, 2, ARRAY(3, 5), 0, ARRAY(1, 3), 0,
        ARRAY(5, 1));
  // CHECK: broadcast source: h2d rank 2: ok
  named("broadcast source", HostToDevice, 2, ARRAY(3, 4), 8, ARRAY(0, 1), 0,
        ARRAY(4, 1));
  // CHECK: broadcast destination: d2h rank 2: ok
  named("broadcast destination", DeviceToHost, 2, ARRAY(3, 4), 0, ARRAY(4, 1),
        0, ARRAY(0, 1));
  // CHECK: negative strides: d2d rank 2: ok
  named("negative strides", DeviceToDevice, 2, ARRAY(3, 4), 11, ARRAY(-4, -1),
        0, ARRAY(4, 1));
  // CHECK: reversed on one side: h2d rank 1: ok
  named("reversed on one side", HostToDevice, 1, ARRAY(6), 5, ARRAY(-1), 0,
        ARRAY(1));
  // CHECK: sliding window: h2d rank 2: ok
  named("sliding window", HostToDevice, 2, ARRAY(3, 4), 0, ARRAY(1, 1), 0,
        ARRAY(4, 1));
  // CHECK: overlapping destination: d2h rank 2: ok
  named("overlapping destination", DeviceToHost, 2, ARRAY(3, 4), 0,
        ARRAY(4, 1), 0, ARRAY(1, 1));
  // Even columns to odd columns of one device buffer: the spans of a
  // pitched copy would overlap (CUDA leaves it undefined).
  // CHECK: interleaved views: d2d one buffer rank 2: ok
  named("interleaved views", SameDevice, 2, ARRAY(3, 4), 0, ARRAY(8, 2), 1,
        ARRAY(8, 2));
  // CHECK: shifted view: d2d one buffer rank 1: ok
  named("shifted view", SameDevice, 1, ARRAY(8), 0, ARRAY(1), 1, ARRAY(1));
  // CHECK: shifted host view: h2h one buffer rank 1: ok
  named("shifted host view", SameHost, 1, ARRAY(8), 2, ARRAY(1), 0, ARRAY(1));
  // CHECK: empty: d2d rank 2: ok
  named("empty", DeviceToDevice, 2, ARRAY(0, 4), 0, ARRAY(4, 1), 0,
        ARRAY(4, 1));
  // CHECK: rank 0: h2d rank 0: ok
  named("rank 0", HostToDevice, 0, ARRAY(0), 7, ARRAY(0), 3, ARRAY(0));

  int passed = 0, total = 3000;
  for (int n = 0; n < total; ++n) {
    Layout l = {randomIn(0, MaxRank), {0}, 0, {0}, 0, {0}};
    for (int64_t i = 0; i < l.rank; ++i)
      l.sizes[i] = randomIn(0, 9) == 0 ? 0 : randomIn(1, 4);
    randomSide(&l, &l.srcOffset, l.srcStrides);
    randomSide(&l, &l.dstOffset, l.dstStrides);
    passed += run(&l, (enum Sides)randomIn(0, 4), 0);
  }
  // CHECK: random layouts: 3000 of 3000 ok
  printf("random layouts: %d of %d ok\n", passed, total);

  cudaFree(deviceA);
  cudaFree(deviceB);
  cudaStreamDestroy(stream);
  return 0;
}

// No CUDA call failed; some copies were pitched, and some overlapping ones
// staged through a temporary buffer.
// CHECK-NOT: error
// CHECK: etcopy-cuda-sim: stats: entry-points:
// CHECK-SAME: cudaMallocAsync=
// CHECK-SAME: cudaMemcpy2DAsync=
