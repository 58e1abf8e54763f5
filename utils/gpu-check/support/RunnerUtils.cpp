//===- RunnerUtils.cpp - MLIR's runner utilities without libLLVM ---------===//
//
// The functions of MLIR's runner utility libraries that lowered test
// programs call: the memref printers (printMemrefF32,
// _mlir_ciface_printMemrefI64, ...), vector.print's printF32, printNewline,
// ..., and memrefCopy (memref.copy between non-contiguous layouts), built
// from the header templates MLIR installs (mlir/ExecutionEngine/
// RunnerUtils.h, CRunnerUtils.h) into libetcopy_runner_utils.so, a library
// of the GPU check bundle (utils/gpu-check). Debian's libmlir_runner_utils.so
// and libmlir_c_runner_utils.so do the same but need libLLVM.so and
// libMLIR.so, which a lent GPU machine does not have. The element printers
// of f16 and bf16, which upstream compiles into libmlir_float16_utils, are
// defined here: each value is widened to float and printed as a float, as
// upstream does.
//
//===----------------------------------------------------------------------===//

#include "mlir/ExecutionEngine/RunnerUtils.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

//===----------------------------------------------------------------------===//
// f16 and bf16 (declared by mlir/ExecutionEngine/Float16bits.h)
//===----------------------------------------------------------------------===//

namespace {

float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint32_t floatToBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

/// IEEE binary16 to binary32; exact for every value, subnormals included.
float halfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f;
  uint32_t mantissa = half & 0x3ff;
  if (exponent == 0x1f) // Infinity or NaN.
    return bitsToFloat(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) { // Zero or subnormal: mantissa * 2^-24.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

/// binary32 to binary16, rounding to nearest even.
uint16_t floatToHalf(float value) {
  uint32_t bits = floatToBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  float magnitude = std::fabs(value);
  if (std::isnan(value))
    return sign | 0x7e00;
  if (magnitude >= 65520.0f) // Rounds to infinity.
    return sign | 0x7c00;
  if (magnitude < 6.103515625e-05f) { // Subnormal in binary16.
    float scaled = std::nearbyint(std::ldexp(magnitude, 24));
    return sign | static_cast<uint16_t>(scaled);
  }
  uint32_t abs = bits & 0x7fffffff;
  uint32_t rounded = abs + 0xfff + ((abs >> 13) & 1);
  return sign | static_cast<uint16_t>((rounded - (112u << 23)) >> 13);
}

/// binary32 to bfloat16, rounding to nearest even.
uint16_t floatToBFloat(float value) {
  uint32_t bits = floatToBits(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float bfloatToFloat(uint16_t bfloat) {
  return bitsToFloat(static_cast<uint32_t>(bfloat) << 16);
}

} // namespace

f16::f16(float f) : bits(floatToHalf(f)) {}
bf16::bf16(float f) : bits(floatToBFloat(f)) {}

std::ostream &operator<<(std::ostream &os, const f16 &f) {
  return os << halfToFloat(f.bits);
}
std::ostream &operator<<(std::ostream &os, const bf16 &d) {
  return os << bfloatToFloat(d.bits);
}
bool operator==(const f16 &f1, const f16 &f2) { return f1.bits == f2.bits; }
bool operator==(const bf16 &bf1, const bf16 &bf2) {
  return bf1.bits == bf2.bits;
}

extern "C" void printF16(uint16_t bits) {
  std::fprintf(stdout, "%g", static_cast<double>(halfToFloat(bits)));
}
extern "C" void printBF16(uint16_t bits) {
  std::fprintf(stdout, "%g", static_cast<double>(bfloatToFloat(bits)));
}

//===----------------------------------------------------------------------===//
// vector.print (as CRunnerUtils.cpp)
//===----------------------------------------------------------------------===//

extern "C" void printI64(int64_t i) { std::fprintf(stdout, "%" PRId64, i); }
extern "C" void printU64(uint64_t u) { std::fprintf(stdout, "%" PRIu64, u); }
extern "C" void printF32(float f) {
  if (std::isnan(f) && std::signbit(f))
    std::fputs("-nan", stdout);
  else
    std::fprintf(stdout, "%g", static_cast<double>(f));
}
extern "C" void printF64(double d) {
  if (std::isnan(d) && std::signbit(d))
    std::fputs("-nan", stdout);
  else
    std::fprintf(stdout, "%lg", d);
}
extern "C" void printString(char const *s) { std::fputs(s, stdout); }
extern "C" void printOpen() { std::fputs("( ", stdout); }
extern "C" void printClose() { std::fputs(" )", stdout); }
extern "C" void printComma() { std::fputs(", ", stdout); }
extern "C" void printNewline() { std::fputc('\n', stdout); }

//===----------------------------------------------------------------------===//
// memref.copy (as CRunnerUtils.cpp)
//===----------------------------------------------------------------------===//

/// Copies `src` to `dst` element by element, `elemSize` bytes each, in
/// row-major order of the indices: any strides, negative ones included.
extern "C" void memrefCopy(int64_t elemSize, UnrankedMemRefType<char> *srcArg,
                           UnrankedMemRefType<char> *dstArg) {
  DynamicMemRefType<char> src(*srcArg);
  DynamicMemRefType<char> dst(*dstArg);
  int64_t rank = src.rank;
  for (int64_t axis = 0; axis < rank; ++axis)
    if (src.sizes[axis] == 0)
      return;
  char *srcPtr = src.data + src.offset * elemSize;
  char *dstPtr = dst.data + dst.offset * elemSize;
  if (rank == 0) {
    std::memcpy(dstPtr, srcPtr, elemSize);
    return;
  }
  std::vector<int64_t> indices(rank, 0), srcStrides(rank), dstStrides(rank);
  for (int64_t axis = 0; axis < rank; ++axis) {
    srcStrides[axis] = src.strides[axis] * elemSize;
    dstStrides[axis] = dst.strides[axis] * elemSize;
  }
  int64_t readIndex = 0, writeIndex = 0;
  for (;;) {
    std::memcpy(dstPtr + writeIndex, srcPtr + readIndex, elemSize);
    // Advance the innermost index; carry into the outer ones.
    for (int64_t axis = rank - 1; axis >= 0; --axis) {
      int64_t next = ++indices[axis];
      readIndex += srcStrides[axis];
      writeIndex += dstStrides[axis];
      if (next != src.sizes[axis])
        break;
      if (axis == 0)
        return;
      indices[axis] = 0;
      readIndex -= src.sizes[axis] * srcStrides[axis];
      writeIndex -= dst.sizes[axis] * dstStrides[axis];
    }
  }
}

//===----------------------------------------------------------------------===//
// Memrefs (as RunnerUtils.cpp)
//===----------------------------------------------------------------------===//

/// _mlir_ciface_printMemref<Name> prints an unranked memref of T with its
/// metadata; printMemref<Name>(rank, descriptor) is the same for callers
/// without the C interface.
#define ETCOPY_MEMREF_PRINTER(Name, T)                                         \
  extern "C" void _mlir_ciface_printMemref##Name(UnrankedMemRefType<T> *m) {   \
    impl::printMemRef(*m);                                                     \
  }                                                                            \
  extern "C" void printMemref##Name(int64_t rank, void *ptr) {                 \
    UnrankedMemRefType<T> descriptor = {rank, ptr};                            \
    _mlir_ciface_printMemref##Name(&descriptor);                               \
  }                                                                            \
  extern "C" void _mlir_ciface_printMemrefShape##Name(                         \
      UnrankedMemRefType<T> *m) {                                              \
    std::cout << "Unranked Memref ";                                           \
    printMemRefMetaData(std::cout, DynamicMemRefType<T>(*m));                  \
    std::cout << "\n";                                                         \
  }

ETCOPY_MEMREF_PRINTER(I8, int8_t)
ETCOPY_MEMREF_PRINTER(I16, int16_t)
ETCOPY_MEMREF_PRINTER(I32, int32_t)
ETCOPY_MEMREF_PRINTER(I64, int64_t)
ETCOPY_MEMREF_PRINTER(Ind, impl::index_type)
ETCOPY_MEMREF_PRINTER(F16, f16)
ETCOPY_MEMREF_PRINTER(BF16, bf16)
ETCOPY_MEMREF_PRINTER(F32, float)
ETCOPY_MEMREF_PRINTER(F64, double)
ETCOPY_MEMREF_PRINTER(C32, impl::complex32)
ETCOPY_MEMREF_PRINTER(C64, impl::complex64)
