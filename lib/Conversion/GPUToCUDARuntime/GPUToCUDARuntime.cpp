//===- GPUToCUDARuntime.cpp - gpu runtime ops to CUDA calls ---*- C++ -*-===//
//
// Lowers gpu.alloc / gpu.dealloc / gpu.memcpy / gpu.memset / gpu.wait, sync
// and async, to checked CUDA Runtime API calls, and the rest of the module to
// the LLVM dialect. The pass works in three steps:
//
//  1. validation: everything it cannot lower is reported up front;
//  2. planning, still on func.func: one stream per (function, device) is
//     created at entry and synchronised and destroyed at each return, and the
//     per-op data the patterns need (stream, location string, scratch slots)
//     is materialised as LLVM-dialect ops;
//  3. a dialect conversion with the LLVM patterns of every loaded dialect and
//     the patterns below, which only emit calls.
//
// Runtime support (the error policy, the checker, strided copies, stream
// joins) is emitted into the module as LLVM-dialect functions, so the output
// links against libcudart and libc alone.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Conversion/Passes.h"

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::etcopy {
#define GEN_PASS_DEF_CONVERTGPUTOCUDARUNTIME
#include "etcopy/Conversion/Passes.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;

//===----------------------------------------------------------------------===//
// The CUDA Runtime API subset, declared once.
//===----------------------------------------------------------------------===//

namespace {
/// `cudaMemcpyKind`.
enum class CopyKind : int32_t {
  HostToHost = 0,
  HostToDevice = 1,
  DeviceToHost = 2,
  DeviceToDevice = 3,
  Default = 4,
};

/// cudaStreamNonBlocking: our streams do not synchronise with the legacy
/// default stream.
constexpr int32_t kStreamNonBlocking = 1;
/// cudaMemAttachGlobal, for cudaMallocManaged.
constexpr int32_t kMemAttachGlobal = 1;

/// Runtime support emitted into the module on demand. Each piece is a chunk
/// of LLVM-dialect IR; cudaError_t is i32, size_t i64, handles are pointers.
constexpr StringLiteral kRuntimeDeclarations = R"mlir(
  // cudaError_t cudaGetDevice(int *device)
  llvm.func @cudaGetDevice(!llvm.ptr) -> i32
  // cudaError_t cudaSetDevice(int device)
  llvm.func @cudaSetDevice(i32) -> i32
  // cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags)
  llvm.func @cudaStreamCreateWithFlags(!llvm.ptr, i32) -> i32
  // cudaError_t cudaStreamSynchronize(cudaStream_t stream)
  llvm.func @cudaStreamSynchronize(!llvm.ptr) -> i32
  // cudaError_t cudaStreamDestroy(cudaStream_t stream)
  llvm.func @cudaStreamDestroy(!llvm.ptr) -> i32
  // cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream)
  llvm.func @cudaMallocAsync(!llvm.ptr, i64, !llvm.ptr) -> i32
  // cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned flags)
  llvm.func @cudaMallocManaged(!llvm.ptr, i64, i32) -> i32
  // cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream)
  llvm.func @cudaFreeAsync(!llvm.ptr, !llvm.ptr) -> i32
  // cudaError_t cudaFree(void *devPtr)
  llvm.func @cudaFree(!llvm.ptr) -> i32
  // cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
  //                             cudaMemcpyKind kind, cudaStream_t stream)
  llvm.func @cudaMemcpyAsync(!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> i32
  // cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
  //                             cudaStream_t stream)
  llvm.func @cudaMemsetAsync(!llvm.ptr, i32, i64, !llvm.ptr) -> i32
  // const char *cudaGetErrorName(cudaError_t error)
  llvm.func @cudaGetErrorName(i32) -> !llvm.ptr
  // const char *cudaGetErrorString(cudaError_t error)
  llvm.func @cudaGetErrorString(i32) -> !llvm.ptr
  // int dprintf(int fd, const char *format, ...)
  llvm.func @dprintf(i32, !llvm.ptr, ...) -> i32
  // void exit(int status)
  llvm.func @exit(i32)

  // Positional arguments: location, call, what, error name, error string,
  // byte count (only in the first format, so the second ignores it).
  llvm.mlir.global linkonce_odr constant @__etcopy_cuda_error_format(
      "%1$s: error: %2$s failed (%3$s, %6$llu bytes): %4$s: %5$s\0A\00")
      {addr_space = 0 : i32}
  llvm.mlir.global linkonce_odr constant @__etcopy_cuda_error_format_nobytes(
      "%1$s: error: %2$s failed (%3$s): %4$s: %5$s\0A\00")
      {addr_space = 0 : i32}

  // The default error policy: report and exit(1). Weak, so that a program
  // embedding the generated code replaces it by defining the symbol.
  llvm.func weak @etcopy_cuda_error(%err: i32, %loc: !llvm.ptr,
      %call: !llvm.ptr, %what: !llvm.ptr, %bytes: i64) {
    %name = llvm.call @cudaGetErrorName(%err) : (i32) -> !llvm.ptr
    %text = llvm.call @cudaGetErrorString(%err) : (i32) -> !llvm.ptr
    %withBytes = llvm.mlir.addressof @__etcopy_cuda_error_format : !llvm.ptr
    %withoutBytes = llvm.mlir.addressof @__etcopy_cuda_error_format_nobytes
        : !llvm.ptr
    %zero = llvm.mlir.constant(0 : i64) : i64
    %hasBytes = llvm.icmp "ne" %bytes, %zero : i64
    %format = llvm.select %hasBytes, %withBytes, %withoutBytes
        : i1, !llvm.ptr
    %stderr = llvm.mlir.constant(2 : i32) : i32
    %0 = llvm.call @dprintf(%stderr, %format, %loc, %call, %what, %name,
        %text, %bytes) vararg(!llvm.func<i32 (i32, ptr, ...)>)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr,
           !llvm.ptr, i64) -> i32
    %one = llvm.mlir.constant(1 : i32) : i32
    llvm.call @exit(%one) : (i32) -> ()
    llvm.unreachable
  }

  llvm.mlir.global linkonce_odr constant @__etcopy_size_mismatch_format(
      "%s: error: %s: size mismatch in dimension %lld: source has %lld elements, destination %lld\0A\00")
      {addr_space = 0 : i32}

  // Reports a copy whose source and destination differ in size along `dim`
  // (known only at run time, when either side is dynamic) and exits: the
  // copy would otherwise overrun one of them.
  llvm.func linkonce_odr @__etcopy_check_copy_size(%src: i64, %dst: i64,
      %dim: i64, %loc: !llvm.ptr, %what: !llvm.ptr) {
    %same = llvm.icmp "eq" %src, %dst : i64
    llvm.cond_br %same weights([1000, 1]), ^done, ^fail
  ^fail:
    %format = llvm.mlir.addressof @__etcopy_size_mismatch_format : !llvm.ptr
    %stderr = llvm.mlir.constant(2 : i32) : i32
    %0 = llvm.call @dprintf(%stderr, %format, %loc, %what, %dim, %src, %dst)
        vararg(!llvm.func<i32 (i32, ptr, ...)>)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> i32
    %one = llvm.mlir.constant(1 : i32) : i32
    llvm.call @exit(%one) : (i32) -> ()
    llvm.unreachable
  ^done:
    llvm.return
  }

  // Calls the error policy when `err` is not cudaSuccess.
  llvm.func linkonce_odr @__etcopy_cuda_check(%err: i32, %loc: !llvm.ptr,
      %call: !llvm.ptr, %what: !llvm.ptr, %bytes: i64) {
    %success = llvm.mlir.constant(0 : i32) : i32
    %failed = llvm.icmp "ne" %err, %success : i32
    llvm.cond_br %failed weights([1, 1000]), ^fail, ^done
  ^fail:
    llvm.call @etcopy_cuda_error(%err, %loc, %call, %what, %bytes)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.br ^done
  ^done:
    llvm.return
  }
)mlir";

/// Copies a strided memref region: one cudaMemcpyAsync when both sides are
/// contiguous, else 2-D copies (cudaMemcpy2DAsync) of the two innermost
/// dimensions when both have unit inner stride, else of the innermost
/// dimension one element per row; the outer dimensions are iterated.
/// `sizes`, `dstStrides`, `srcStrides` are arrays of `rank` i64, strides in
/// elements; `dst`/`src` point at the first element.
constexpr StringLiteral kStridedCopy = R"mlir(
  // cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
  //     size_t spitch, size_t width, size_t height, cudaMemcpyKind kind,
  //     cudaStream_t stream)
  llvm.func @cudaMemcpy2DAsync(!llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i32,
                               !llvm.ptr) -> i32
  llvm.mlir.global linkonce_odr constant @__etcopy_name_cudaMemcpyAsync(
      "cudaMemcpyAsync\00") {addr_space = 0 : i32}
  llvm.mlir.global linkonce_odr constant @__etcopy_name_cudaMemcpy2DAsync(
      "cudaMemcpy2DAsync\00") {addr_space = 0 : i32}

  llvm.func linkonce_odr @__etcopy_memcpy_strided(%dst: !llvm.ptr,
      %src: !llvm.ptr, %rank: i64, %sizes: !llvm.ptr, %dstStrides: !llvm.ptr,
      %srcStrides: !llvm.ptr, %elt: i64, %kind: i32, %stream: !llvm.ptr,
      %loc: !llvm.ptr, %what: !llvm.ptr) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %true = llvm.mlir.constant(true) : i1
    llvm.br ^scan(%rank, %c1, %true : i64, i64, i1)

  // Innermost dimension first: the element count, and whether both sides
  // are row-major contiguous (dimensions of size 1 have no stride to honour).
  ^scan(%i: i64, %count: i64, %contiguous: i1):
    %scanMore = llvm.icmp "sgt" %i, %c0 : i64
    llvm.cond_br %scanMore, ^scanDim, ^scanned
  ^scanDim:
    %d = llvm.sub %i, %c1 : i64
    %sizeAddr = llvm.getelementptr %sizes[%d] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %size = llvm.load %sizeAddr : !llvm.ptr -> i64
    %dstStrideAddr = llvm.getelementptr %dstStrides[%d] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %dstStride = llvm.load %dstStrideAddr : !llvm.ptr -> i64
    %srcStrideAddr = llvm.getelementptr %srcStrides[%d] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %srcStride = llvm.load %srcStrideAddr : !llvm.ptr -> i64
    %unitSize = llvm.icmp "eq" %size, %c1 : i64
    %dstDense = llvm.icmp "eq" %dstStride, %count : i64
    %srcDense = llvm.icmp "eq" %srcStride, %count : i64
    %dense = llvm.and %dstDense, %srcDense : i1
    %dimOk = llvm.or %unitSize, %dense : i1
    %nextContiguous = llvm.and %contiguous, %dimOk : i1
    %nextCount = llvm.mul %count, %size : i64
    llvm.br ^scan(%d, %nextCount, %nextContiguous : i64, i64, i1)

  ^scanned:
    %empty = llvm.icmp "eq" %count, %c0 : i64
    llvm.cond_br %empty, ^done, ^nonEmpty
  ^nonEmpty:
    llvm.cond_br %contiguous, ^contiguousCopy, ^strided
  ^contiguousCopy:
    %bytes = llvm.mul %count, %elt : i64
    %err = llvm.call @cudaMemcpyAsync(%dst, %src, %bytes, %kind, %stream)
        : (!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> i32
    %name = llvm.mlir.addressof @__etcopy_name_cudaMemcpyAsync : !llvm.ptr
    llvm.call @__etcopy_cuda_check(%err, %loc, %name, %what, %bytes)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.br ^done

  // Not contiguous, so rank >= 1.
  ^strided:
    %inner = llvm.sub %rank, %c1 : i64
    %innerSizeAddr = llvm.getelementptr %sizes[%inner] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %innerSize = llvm.load %innerSizeAddr : !llvm.ptr -> i64
    %innerDstAddr = llvm.getelementptr %dstStrides[%inner] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %innerDst = llvm.load %innerDstAddr : !llvm.ptr -> i64
    %innerSrcAddr = llvm.getelementptr %srcStrides[%inner] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %innerSrc = llvm.load %innerSrcAddr : !llvm.ptr -> i64
    %dstUnit = llvm.icmp "eq" %innerDst, %c1 : i64
    %srcUnit = llvm.icmp "eq" %innerSrc, %c1 : i64
    %rank2 = llvm.icmp "sge" %rank, %c2 : i64
    %units = llvm.and %dstUnit, %srcUnit : i1
    %rowCopies = llvm.and %units, %rank2 : i1
    llvm.cond_br %rowCopies, ^rows, ^elements
  // Pitched rows: each 2-D copy covers the two innermost dimensions.
  ^rows:
    %outerDim = llvm.sub %rank, %c2 : i64
    %rowBytes = llvm.mul %innerSize, %elt : i64
    %heightAddr = llvm.getelementptr %sizes[%outerDim] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %height = llvm.load %heightAddr : !llvm.ptr -> i64
    %dstRowAddr = llvm.getelementptr %dstStrides[%outerDim] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %dstRow = llvm.load %dstRowAddr : !llvm.ptr -> i64
    %srcRowAddr = llvm.getelementptr %srcStrides[%outerDim] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %srcRow = llvm.load %srcRowAddr : !llvm.ptr -> i64
    %dstRowPitch = llvm.mul %dstRow, %elt : i64
    %srcRowPitch = llvm.mul %srcRow, %elt : i64
    llvm.br ^plan(%outerDim, %rowBytes, %height, %dstRowPitch, %srcRowPitch
                  : i64, i64, i64, i64, i64)
  // Anything else: each 2-D copy covers the innermost dimension, one element
  // per row.
  ^elements:
    %dstElementPitch = llvm.mul %innerDst, %elt : i64
    %srcElementPitch = llvm.mul %innerSrc, %elt : i64
    llvm.br ^plan(%inner, %elt, %innerSize, %dstElementPitch, %srcElementPitch
                  : i64, i64, i64, i64, i64)

  // Dimensions [0, outerRank) are iterated.
  ^plan(%outerRank: i64, %width: i64, %rowsPerCopy: i64, %dpitch: i64,
        %spitch: i64):
    llvm.br ^product(%c0, %c1 : i64, i64)
  ^product(%j: i64, %outerCount: i64):
    %productMore = llvm.icmp "slt" %j, %outerRank : i64
    llvm.cond_br %productMore, ^productDim, ^loop(%c0, %outerCount : i64, i64)
  ^productDim:
    %outerSizeAddr = llvm.getelementptr %sizes[%j] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %outerSize = llvm.load %outerSizeAddr : !llvm.ptr -> i64
    %nextOuterCount = llvm.mul %outerCount, %outerSize : i64
    %nextJ = llvm.add %j, %c1 : i64
    llvm.br ^product(%nextJ, %nextOuterCount : i64, i64)

  ^loop(%index: i64, %total: i64):
    %loopMore = llvm.icmp "slt" %index, %total : i64
    llvm.cond_br %loopMore, ^offsets(%outerRank, %index, %c0, %c0
                                     : i64, i64, i64, i64), ^done
  // Delinearise `index` over the outer dimensions into element offsets.
  ^offsets(%k: i64, %rest: i64, %dstOffset: i64, %srcOffset: i64):
    %offsetsMore = llvm.icmp "sgt" %k, %c0 : i64
    llvm.cond_br %offsetsMore, ^offsetDim, ^copy
  ^offsetDim:
    %dim = llvm.sub %k, %c1 : i64
    %dimSizeAddr = llvm.getelementptr %sizes[%dim] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %dimSize = llvm.load %dimSizeAddr : !llvm.ptr -> i64
    %coordinate = llvm.urem %rest, %dimSize : i64
    %nextRest = llvm.udiv %rest, %dimSize : i64
    %dimDstAddr = llvm.getelementptr %dstStrides[%dim] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %dimDst = llvm.load %dimDstAddr : !llvm.ptr -> i64
    %dimSrcAddr = llvm.getelementptr %srcStrides[%dim] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %dimSrc = llvm.load %dimSrcAddr : !llvm.ptr -> i64
    %dstStep = llvm.mul %coordinate, %dimDst : i64
    %srcStep = llvm.mul %coordinate, %dimSrc : i64
    %nextDstOffset = llvm.add %dstOffset, %dstStep : i64
    %nextSrcOffset = llvm.add %srcOffset, %srcStep : i64
    llvm.br ^offsets(%dim, %nextRest, %nextDstOffset, %nextSrcOffset
                     : i64, i64, i64, i64)
  ^copy:
    %dstBytes = llvm.mul %dstOffset, %elt : i64
    %srcBytes = llvm.mul %srcOffset, %elt : i64
    %dstPtr = llvm.getelementptr %dst[%dstBytes] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %srcPtr = llvm.getelementptr %src[%srcBytes] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %err2d = llvm.call @cudaMemcpy2DAsync(%dstPtr, %dpitch, %srcPtr, %spitch,
        %width, %rowsPerCopy, %kind, %stream)
        : (!llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i32, !llvm.ptr) -> i32
    %copyBytes = llvm.mul %width, %rowsPerCopy : i64
    %name2d = llvm.mlir.addressof @__etcopy_name_cudaMemcpy2DAsync : !llvm.ptr
    llvm.call @__etcopy_cuda_check(%err2d, %loc, %name2d, %what, %copyBytes)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    %nextIndex = llvm.add %index, %c1 : i64
    llvm.br ^loop(%nextIndex, %total : i64, i64)

  ^done:
    llvm.return
  }
)mlir";

/// Orders `stream` (of device `device`) after the work enqueued so far on
/// `dep` (of device `depDevice`) with an event, when they differ: how tokens
/// of one device's stream reach another's. The event is created and recorded
/// on the dependency's device, as CUDA requires; `device` is current again on
/// return.
constexpr StringLiteral kStreamJoin = R"mlir(
  // cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags)
  llvm.func @cudaEventCreateWithFlags(!llvm.ptr, i32) -> i32
  // cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
  llvm.func @cudaEventRecord(!llvm.ptr, !llvm.ptr) -> i32
  // cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
  //                                 unsigned flags)
  llvm.func @cudaStreamWaitEvent(!llvm.ptr, !llvm.ptr, i32) -> i32
  // cudaError_t cudaEventDestroy(cudaEvent_t event)
  llvm.func @cudaEventDestroy(!llvm.ptr) -> i32
  llvm.mlir.global linkonce_odr constant @__etcopy_name_cudaEventCreateWithFlags(
      "cudaEventCreateWithFlags\00") {addr_space = 0 : i32}
  llvm.mlir.global linkonce_odr constant @__etcopy_name_cudaEventRecord(
      "cudaEventRecord\00") {addr_space = 0 : i32}
  llvm.mlir.global linkonce_odr constant @__etcopy_name_cudaStreamWaitEvent(
      "cudaStreamWaitEvent\00") {addr_space = 0 : i32}
  llvm.mlir.global linkonce_odr constant @__etcopy_name_cudaEventDestroy(
      "cudaEventDestroy\00") {addr_space = 0 : i32}
  llvm.mlir.global linkonce_odr constant @__etcopy_name_cudaSetDevice(
      "cudaSetDevice\00") {addr_space = 0 : i32}
  llvm.mlir.global linkonce_odr constant @__etcopy_what_join(
      "stream join\00") {addr_space = 0 : i32}

  llvm.func linkonce_odr @__etcopy_stream_join(%dep: !llvm.ptr,
      %depDevice: i32, %stream: !llvm.ptr, %device: i32, %loc: !llvm.ptr) {
    %same = llvm.icmp "eq" %dep, %stream : !llvm.ptr
    llvm.cond_br %same, ^done, ^join
  ^join:
    %setName = llvm.mlir.addressof @__etcopy_name_cudaSetDevice : !llvm.ptr
    %zero = llvm.mlir.constant(0 : i64) : i64
    %none = llvm.mlir.constant(0 : i32) : i32
    %one = llvm.mlir.constant(1 : i64) : i64
    %disableTiming = llvm.mlir.constant(2 : i32) : i32
    %what = llvm.mlir.addressof @__etcopy_what_join : !llvm.ptr
    %slot = llvm.alloca %one x !llvm.ptr : (i64) -> !llvm.ptr
    %s0 = llvm.call @cudaSetDevice(%depDevice) : (i32) -> i32
    llvm.call @__etcopy_cuda_check(%s0, %loc, %setName, %what, %zero)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    %e0 = llvm.call @cudaEventCreateWithFlags(%slot, %disableTiming)
        : (!llvm.ptr, i32) -> i32
    %n0 = llvm.mlir.addressof @__etcopy_name_cudaEventCreateWithFlags : !llvm.ptr
    llvm.call @__etcopy_cuda_check(%e0, %loc, %n0, %what, %zero)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    %event = llvm.load %slot : !llvm.ptr -> !llvm.ptr
    %e1 = llvm.call @cudaEventRecord(%event, %dep) : (!llvm.ptr, !llvm.ptr) -> i32
    %n1 = llvm.mlir.addressof @__etcopy_name_cudaEventRecord : !llvm.ptr
    llvm.call @__etcopy_cuda_check(%e1, %loc, %n1, %what, %zero)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    %s1 = llvm.call @cudaSetDevice(%device) : (i32) -> i32
    llvm.call @__etcopy_cuda_check(%s1, %loc, %setName, %what, %zero)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    %e2 = llvm.call @cudaStreamWaitEvent(%stream, %event, %none)
        : (!llvm.ptr, !llvm.ptr, i32) -> i32
    %n2 = llvm.mlir.addressof @__etcopy_name_cudaStreamWaitEvent : !llvm.ptr
    llvm.call @__etcopy_cuda_check(%e2, %loc, %n2, %what, %zero)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    %e3 = llvm.call @cudaEventDestroy(%event) : (!llvm.ptr) -> i32
    %n3 = llvm.mlir.addressof @__etcopy_name_cudaEventDestroy : !llvm.ptr
    llvm.call @__etcopy_cuda_check(%e3, %loc, %n3, %what, %zero)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.br ^done
  ^done:
    llvm.return
  }
)mlir";

/// Makes a delegate's device current around a call to it, and restores the
/// device that was current before: what the delegate calling contract
/// promises the delegate, whatever device the caller's last op selected.
constexpr StringLiteral kDelegateDevice = R"mlir(
  llvm.mlir.global linkonce_odr constant @__etcopy_name_cudaGetDevice(
      "cudaGetDevice\00") {addr_space = 0 : i32}
  llvm.mlir.global linkonce_odr constant @__etcopy_name_cudaSetDevice(
      "cudaSetDevice\00") {addr_space = 0 : i32}
  llvm.mlir.global linkonce_odr constant @__etcopy_what_enter_delegate(
      "make the delegate's device current\00") {addr_space = 0 : i32}
  llvm.mlir.global linkonce_odr constant @__etcopy_what_leave_delegate(
      "restore the device after the delegate\00") {addr_space = 0 : i32}

  // Makes `device` current; returns the device current before (`device`
  // itself if the error policy returns after a failure).
  llvm.func linkonce_odr @__etcopy_enter_device(%device: i32,
      %loc: !llvm.ptr) -> i32 {
    %one = llvm.mlir.constant(1 : i64) : i64
    %zero = llvm.mlir.constant(0 : i64) : i64
    %what = llvm.mlir.addressof @__etcopy_what_enter_delegate : !llvm.ptr
    %slot = llvm.alloca %one x i32 : (i64) -> !llvm.ptr
    llvm.store %device, %slot : i32, !llvm.ptr
    %e0 = llvm.call @cudaGetDevice(%slot) : (!llvm.ptr) -> i32
    %n0 = llvm.mlir.addressof @__etcopy_name_cudaGetDevice : !llvm.ptr
    llvm.call @__etcopy_cuda_check(%e0, %loc, %n0, %what, %zero)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    %previous = llvm.load %slot : !llvm.ptr -> i32
    %same = llvm.icmp "eq" %previous, %device : i32
    llvm.cond_br %same, ^done, ^switch
  ^switch:
    %e1 = llvm.call @cudaSetDevice(%device) : (i32) -> i32
    %n1 = llvm.mlir.addressof @__etcopy_name_cudaSetDevice : !llvm.ptr
    llvm.call @__etcopy_cuda_check(%e1, %loc, %n1, %what, %zero)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.br ^done
  ^done:
    llvm.return %previous : i32
  }

  // Makes `previous` current again after a call on `device`.
  llvm.func linkonce_odr @__etcopy_leave_device(%previous: i32, %device: i32,
      %loc: !llvm.ptr) {
    %same = llvm.icmp "eq" %previous, %device : i32
    llvm.cond_br %same, ^done, ^switch
  ^switch:
    %zero = llvm.mlir.constant(0 : i64) : i64
    %what = llvm.mlir.addressof @__etcopy_what_leave_delegate : !llvm.ptr
    %e = llvm.call @cudaSetDevice(%previous) : (i32) -> i32
    %n = llvm.mlir.addressof @__etcopy_name_cudaSetDevice : !llvm.ptr
    llvm.call @__etcopy_cuda_check(%e, %loc, %n, %what, %zero)
        : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.br ^done
  ^done:
    llvm.return
  }
)mlir";

//===----------------------------------------------------------------------===//
// Placement of gpu-op operands.
//===----------------------------------------------------------------------===//

/// Where a memref lives, for the kind of a copy and the choice of stream.
struct MemoryPlace {
  enum class Kind { Host, Device, Unknown } kind;
  /// The device ordinal, for #etcopy.device memory; -1 means "the device
  /// current when the function was entered" (other device memory spaces).
  int64_t ordinal = -1;
};

/// Classifies a memref type by its memory space alone: no memory space is
/// `Unknown`; #gpu.address_space<...> and integer spaces are device memory of
/// the current device.
MemoryPlace classify(Type type) {
  Attribute space = cast<BaseMemRefType>(type).getMemorySpace();
  if (!space)
    return {MemoryPlace::Kind::Unknown};
  if (auto device = dyn_cast<DeviceAttr>(space)) {
    if (device.isHost())
      return {MemoryPlace::Kind::Host};
    return {MemoryPlace::Kind::Device, device.getOrdinal()};
  }
  return {MemoryPlace::Kind::Device};
}

/// The two sides of a copy. A memref without memory space is ambiguous in
/// upstream gpu IR (gpu.alloc returns such memrefs), so it is resolved here:
/// the result of a gpu.alloc is device memory; facing an #etcopy.device side
/// it is host memory, by the etcopy dialect's rule; otherwise it stays
/// `Unknown` and the copy uses cudaMemcpyDefault (unified addressing).
std::pair<MemoryPlace, MemoryPlace> classifyCopy(gpu::MemcpyOp copy) {
  auto resolve = [](Value value, MemoryPlace place, Type other) {
    if (place.kind != MemoryPlace::Kind::Unknown)
      return place;
    if (value.getDefiningOp<gpu::AllocOp>())
      return MemoryPlace{MemoryPlace::Kind::Device};
    if (isa_and_present<DeviceAttr>(cast<MemRefType>(other).getMemorySpace()))
      return MemoryPlace{MemoryPlace::Kind::Host};
    return place;
  };
  Value src = copy.getSrc(), dst = copy.getDst();
  return {resolve(src, classify(src.getType()), dst.getType()),
          resolve(dst, classify(dst.getType()), src.getType())};
}

/// The cudaMemcpyKind for a copy from `src` to `dst`, and its description.
std::pair<CopyKind, StringRef> getCopyKind(MemoryPlace src, MemoryPlace dst) {
  using K = MemoryPlace::Kind;
  if (src.kind == K::Unknown || dst.kind == K::Unknown)
    return {CopyKind::Default, "copy (direction inferred by the runtime)"};
  if (src.kind == K::Host)
    return dst.kind == K::Host
               ? std::pair{CopyKind::HostToHost, StringRef("host-to-host")}
               : std::pair{CopyKind::HostToDevice, StringRef("host-to-device")};
  return dst.kind == K::Host
             ? std::pair{CopyKind::DeviceToHost, StringRef("device-to-host")}
             : std::pair{CopyKind::DeviceToDevice,
                         StringRef("device-to-device")};
}

/// The device whose stream runs `op`: the device side of a copy (the source
/// for device-to-host), the allocation's or buffer's device otherwise.
int64_t getDeviceKey(Operation *op) {
  return TypeSwitch<Operation *, int64_t>(op)
      .Case([](gpu::MemcpyOp copy) {
        auto [src, dst] = classifyCopy(copy);
        return dst.kind == MemoryPlace::Kind::Device ? dst.ordinal
                                                     : src.ordinal;
      })
      .Case([](gpu::AllocOp alloc) { return classify(alloc.getType()).ordinal; })
      .Case([](gpu::DeallocOp dealloc) {
        return classify(dealloc.getMemref().getType()).ordinal;
      })
      .Case([](gpu::MemsetOp memset) {
        return classify(memset.getDst().getType()).ordinal;
      })
      .Default([](Operation *) { return int64_t(-1); });
}

/// True when `type` is laid out row-major contiguously whatever its dynamic
/// sizes (identity layout, or strides that are the suffix products of a
/// static shape); the offset may be anything.
bool isContiguous(MemRefType type) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  int64_t expected = 1;
  for (int64_t dim = type.getRank() - 1; dim >= 0; --dim) {
    int64_t size = type.getDimSize(dim);
    if (size == 1)
      continue;
    if (ShapedType::isDynamic(strides[dim]) || strides[dim] != expected)
      return false;
    if (ShapedType::isDynamic(size))
      return dim == 0;
    expected *= size;
  }
  return true;
}

/// "file.mlir:12:3" for the first file location in `loc`.
std::string formatLocation(Location loc) {
  std::string text = "<unknown location>";
  loc->walk([&](Location nested) {
    if (auto file = dyn_cast<FileLineColLoc>(nested)) {
      text = (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
              ":" + Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

//===----------------------------------------------------------------------===//
// Runtime support in the module.
//===----------------------------------------------------------------------===//

/// Emits declarations, helpers and string constants into the module, before
/// the conversion starts, so that patterns only create calls.
class RuntimeSupport {
public:
  explicit RuntimeSupport(ModuleOp module) : module(module), symbols(module) {}

  /// Adds a chunk of runtime IR; symbols that already exist are kept (and
  /// must have the same type).
  LogicalResult addChunk(StringRef source) {
    // Chunks refer to each other's symbols: the module is verified once
    // complete, after the pass.
    ParserConfig config(module.getContext(), /*verifyAfterParse=*/false);
    OwningOpRef<ModuleOp> chunk = parseSourceString<ModuleOp>(source, config);
    if (!chunk)
      return failure();
    for (Operation &op : llvm::make_early_inc_range(*chunk->getBody())) {
      auto symbol = cast<SymbolOpInterface>(op);
      if (Operation *existing = symbols.lookup(symbol.getName())) {
        if (existing->getName() != op.getName())
          return existing->emitError("'")
                 << symbol.getName() << "' is defined by '"
                 << existing->getName()
                 << "', but the CUDA lowering needs it to be '"
                 << op.getName() << "'";
        auto existingFunc = dyn_cast<LLVM::LLVMFuncOp>(existing);
        auto newFunc = dyn_cast<LLVM::LLVMFuncOp>(op);
        if (existingFunc &&
            existingFunc.getFunctionType() != newFunc.getFunctionType())
          return existing->emitError("'")
                 << symbol.getName()
                 << "' is declared with a type that differs from the CUDA "
                    "Runtime API's: expected "
                 << newFunc.getFunctionType() << ", got "
                 << existingFunc.getFunctionType();
        continue;
      }
      op.remove();
      symbols.insert(&op);
    }
    return success();
  }

  LLVM::LLVMFuncOp getFunction(StringRef name) {
    return symbols.lookup<LLVM::LLVMFuncOp>(name);
  }

  /// An internal constant global holding `text` NUL-terminated, shared by
  /// all users; created at the end of the module with `builder`.
  LLVM::GlobalOp getString(OpBuilder &builder, StringRef text) {
    LLVM::GlobalOp &global = strings[text];
    if (global)
      return global;
    MLIRContext *ctx = module.getContext();
    std::string bytes = (text + Twine('\0')).str();
    auto type = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8),
                                         bytes.size());
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(module.getBody());
    global = LLVM::GlobalOp::create(
        builder, module.getLoc(), type, /*isConstant=*/true,
        LLVM::Linkage::Internal, "__etcopy_str", builder.getStringAttr(bytes));
    symbols.insert(global); // Renames to a unique symbol.
    return global;
  }

private:
  ModuleOp module;
  SymbolTable symbols;
  llvm::StringMap<LLVM::GlobalOp> strings;
};

/// Emits a checked CUDA call: `err = callee(args)`, then the checker with the
/// call site's location, the call's name, what it does and a byte count.
class CheckedCaller {
public:
  CheckedCaller(RuntimeSupport &support, OpBuilder &builder, Location loc,
                LLVM::GlobalOp where)
      : support(support), builder(builder), loc(loc), where(where) {}

  void operator()(StringRef callee, ValueRange args, StringRef what,
                  Value bytes = nullptr) {
    LLVM::LLVMFuncOp function = support.getFunction(callee);
    assert(function && "CUDA Runtime function not declared");
    Value err = LLVM::CallOp::create(builder, loc, function, args).getResult();
    if (!bytes)
      bytes = LLVM::ConstantOp::create(builder, loc, builder.getI64Type(), 0);
    Value whereAddr = LLVM::AddressOfOp::create(builder, loc, where);
    Value calleeAddr = LLVM::AddressOfOp::create(
        builder, loc, support.getString(builder, callee));
    Value whatAddr =
        LLVM::AddressOfOp::create(builder, loc, support.getString(builder, what));
    LLVM::CallOp::create(builder, loc,
                         support.getFunction("__etcopy_cuda_check"),
                         ValueRange{err, whereAddr, calleeAddr, whatAddr,
                                    bytes});
  }

  Value i32(int64_t value) {
    return LLVM::ConstantOp::create(builder, loc, builder.getI32Type(), value);
  }
  Value i64(int64_t value) {
    return LLVM::ConstantOp::create(builder, loc, builder.getI64Type(), value);
  }

private:
  RuntimeSupport &support;
  OpBuilder &builder;
  Location loc;
  LLVM::GlobalOp where;
};

//===----------------------------------------------------------------------===//
// Planning: streams per function, data per op.
//===----------------------------------------------------------------------===//

/// What the pattern lowering one gpu op needs, all defined at function entry
/// (so it dominates the op) before the conversion starts.
struct OpPlan {
  /// The stream of the op's device.
  Value stream;
  /// Every stream of the function (a sync gpu.wait without operands waits
  /// for all of them).
  SmallVector<Value> allStreams;
  /// Device to switch to before the op's calls, when the function uses more
  /// than one explicit device; -1 for none.
  int64_t switchToDevice = -1;
  /// Whether the function has more than one stream (tokens may then come
  /// from another stream and must be joined).
  bool multiStream = false;
  /// In multi-stream functions: the device (an i32 value) of each stream.
  DenseMap<Value, Value> streamDevices;
  /// "file:line:col" of the op, as a global string.
  LLVM::GlobalOp where;
  /// Scratch slots: a pointer (allocation results) and three i64 arrays of
  /// the copy's rank (strided copies).
  Value pointerSlot;
  Value sizesArray, dstStridesArray, srcStridesArray;
};

using PlanMap = DenseMap<Operation *, OpPlan>;

bool isRuntimeOp(Operation *op) {
  return isa<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp, gpu::MemsetOp,
             gpu::WaitOp>(op);
}

/// A byte value whose repetition makes up `attr` (a scalar constant), if any.
std::optional<uint8_t> getRepeatedByte(Attribute attr) {
  APInt bits;
  if (auto intAttr = dyn_cast<IntegerAttr>(attr))
    bits = intAttr.getValue();
  else if (auto floatAttr = dyn_cast<FloatAttr>(attr))
    bits = floatAttr.getValue().bitcastToAPInt();
  else
    return std::nullopt;
  unsigned width = llvm::alignTo(bits.getBitWidth(), 8);
  bits = bits.zext(width);
  uint8_t byte = bits.extractBitsAsZExtValue(8, 0);
  for (unsigned offset = 8; offset < width; offset += 8)
    if (bits.extractBitsAsZExtValue(8, offset) != byte)
      return std::nullopt;
  return byte;
}

/// Reports every construct the pass cannot lower, with the op, the types and
/// the reason. Returns failure if there is any.
LogicalResult validate(ModuleOp module) {
  bool failed = false;
  auto checkMemRef = [&](Operation *op, Type type) {
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref)
      return;
    Attribute space = memref.getMemorySpace();
    if (space && !isa<DeviceAttr, gpu::AddressSpaceAttr, IntegerAttr>(space)) {
      op->emitError("cannot lower memory space ")
          << space << " of " << memref
          << "; supported: #etcopy.device<...>, #gpu.address_space<...> and "
             "integer memory spaces";
      failed = true;
    }
    SmallVector<int64_t> strides;
    int64_t offset;
    if (::mlir::failed(memref.getStridesAndOffset(strides, offset))) {
      op->emitError("cannot copy ")
          << memref << ": its layout is not strided";
      failed = true;
    }
  };

  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::GPUModuleOp>(op))
      return WalkResult::skip();
    // Upstream's LLVM lowering of unranked memrefs reads the memory space
    // as an integer (and crashes on any other): reject them up front.
    for (Type type : llvm::concat<Type>(op->getOperandTypes(),
                                        op->getResultTypes())) {
      auto unranked = dyn_cast<UnrankedMemRefType>(type);
      if (unranked && unranked.getMemorySpace() &&
          !isa<IntegerAttr>(unranked.getMemorySpace())) {
        op->emitError("cannot lower the unranked memref ")
            << type << " of '" << op->getName()
            << "': its memory space is not an integer; cast it to a ranked "
               "memref first";
        failed = true;
        return WalkResult::advance();
      }
    }
    if (auto global = dyn_cast<memref::GlobalOp>(op)) {
      if (classify(global.getType()).kind == MemoryPlace::Kind::Device) {
        global.emitError("cannot lower 'memref.global' @")
            << global.getSymName() << " of " << global.getType()
            << ": device memory cannot be a global; allocate it and copy the "
               "data with etcopy.h2d";
        failed = true;
      }
      return WalkResult::advance();
    }
    if (!isa_and_present<gpu::GPUDialect>(op->getDialect())) {
      // Tokens may only flow between the ops lowered here.
      for (Value operand : op->getOperands())
        if (isa<gpu::AsyncTokenType>(operand.getType())) {
          op->emitError("cannot lower a !gpu.async.token passed to '")
              << op->getName()
              << "'; tokens may only be used by gpu.alloc, gpu.dealloc, "
                 "gpu.memcpy, gpu.memset and gpu.wait in the same function";
          failed = true;
          break;
        }
      return WalkResult::advance();
    }
    if (!isRuntimeOp(op)) {
      op->emitError("'")
          << op->getName()
          << "' is not supported by convert-gpu-to-cuda-runtime, which lowers "
             "gpu.alloc, gpu.dealloc, gpu.memcpy, gpu.memset and gpu.wait";
      failed = true;
      return WalkResult::advance();
    }
    if (!op->getParentOfType<func::FuncOp>()) {
      op->emitError("'") << op->getName()
                         << "' must be inside a func.func to be lowered";
      failed = true;
      return WalkResult::advance();
    }
    for (Type type : llvm::concat<Type>(op->getOperandTypes(),
                                        op->getResultTypes()))
      checkMemRef(op, type);
    // A token is lowered to the stream of the op that produced it, so it
    // must come from a runtime op of the same function.
    for (Value operand : op->getOperands()) {
      if (!isa<gpu::AsyncTokenType>(operand.getType()))
        continue;
      Operation *producer = operand.getDefiningOp();
      if (!producer || !isRuntimeOp(producer) ||
          producer->getParentOfType<func::FuncOp>() !=
              op->getParentOfType<func::FuncOp>()) {
        op->emitError("cannot lower a !gpu.async.token that does not come "
                      "from gpu.alloc, gpu.dealloc, gpu.memcpy, gpu.memset "
                      "or gpu.wait in the same function");
        failed = true;
      }
    }

    if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
      MemRefType type = alloc.getType();
      if (!type.getLayout().isIdentity()) {
        alloc.emitError("cannot allocate ")
            << type << ": only identity layouts can be allocated";
        failed = true;
      }
      if (!alloc.getSymbolOperands().empty()) {
        alloc.emitError("cannot lower symbol operands of 'gpu.alloc'");
        failed = true;
      }
      if (classify(type).kind == MemoryPlace::Kind::Host) {
        alloc.emitError("'gpu.alloc' allocates device memory but its type ")
            << type << " is placed on the host";
        failed = true;
      }
    }
    if (auto memset = dyn_cast<gpu::MemsetOp>(op)) {
      Attribute value;
      MemRefType type = memset.getDst().getType();
      if (!matchPattern(memset.getValue(), m_Constant(&value)) ||
          !getRepeatedByte(value)) {
        memset.emitError("cannot lower 'gpu.memset' of ")
            << type << " to cudaMemsetAsync: the value must be a constant "
            << "made of one repeated byte (e.g. 0)";
        failed = true;
      }
      if (!isContiguous(type)) {
        memset.emitError("cannot lower 'gpu.memset' of non-contiguous ")
            << type;
        failed = true;
      }
    }
    return WalkResult::advance();
  });
  return ::mlir::failure(failed);
}

/// Creates the streams of `func` at its entry, their teardown before each
/// return, and the plan of each runtime op in it. Returns the device the
/// function makes current at entry and keeps current between its ops (when
/// it uses exactly one explicit device), else -1.
int64_t planFunction(func::FuncOp func, ArrayRef<Operation *> runtimeOps,
                     RuntimeSupport &support, PlanMap &plans) {
  Location loc = func.getLoc();
  OpBuilder builder(func.getContext());
  Block &entry = func.getBody().front();
  builder.setInsertionPointToStart(&entry);
  LLVM::GlobalOp funcWhere =
      support.getString(builder, formatLocation(loc));
  CheckedCaller call(support, builder, loc, funcWhere);

  // Devices used, "current device" (-1) first so that its stream is created
  // before any cudaSetDevice.
  // gpu.wait names no memory: it runs on the function's first stream.
  auto memoryOps = llvm::make_filter_range(
      runtimeOps, [](Operation *op) { return !isa<gpu::WaitOp>(op); });
  llvm::SetVector<int64_t> keys;
  for (Operation *op : memoryOps)
    if (getDeviceKey(op) == -1)
      keys.insert(-1);
  for (Operation *op : memoryOps)
    keys.insert(getDeviceKey(op));
  if (keys.empty())
    keys.insert(-1);
  unsigned numExplicit = llvm::count_if(keys, [](int64_t k) { return k >= 0; });

  auto ptrType = LLVM::LLVMPointerType::get(func.getContext());
  Value one = call.i64(1);
  Value pointerSlot =
      LLVM::AllocaOp::create(builder, loc, ptrType, ptrType, one);

  Value previousDevice;
  if (numExplicit) {
    Value deviceSlot = LLVM::AllocaOp::create(builder, loc, ptrType,
                                              builder.getI32Type(), one);
    call("cudaGetDevice", {deviceSlot}, "save the current device");
    previousDevice =
        LLVM::LoadOp::create(builder, loc, builder.getI32Type(), deviceSlot);
  }
  llvm::MapVector<int64_t, Value> streams;
  DenseMap<Value, Value> streamDevices;
  for (int64_t key : keys) {
    Value device = previousDevice;
    if (key >= 0) {
      device = call.i32(key);
      call("cudaSetDevice", {device}, "select the device");
    }
    call("cudaStreamCreateWithFlags",
         {pointerSlot, call.i32(kStreamNonBlocking)}, "create a stream");
    Value stream = LLVM::LoadOp::create(builder, loc, ptrType, pointerSlot);
    streams[key] = stream;
    streamDevices[stream] = device;
  }

  // Teardown: the host waits for the function's work before data leaves it.
  func.walk([&](func::ReturnOp ret) {
    if (ret->getParentOp() != func)
      return;
    builder.setInsertionPoint(ret);
    CheckedCaller callAtReturn(support, builder, ret.getLoc(),
                               support.getString(builder, formatLocation(ret.getLoc())));
    for (Value stream : llvm::make_second_range(streams)) {
      callAtReturn("cudaStreamSynchronize", {stream},
                   "wait for the function's device work");
      callAtReturn("cudaStreamDestroy", {stream}, "destroy the stream");
    }
    if (previousDevice)
      callAtReturn("cudaSetDevice", {previousDevice},
                   "restore the caller's device");
  });

  SmallVector<Value> allStreams(llvm::make_second_range(streams));
  builder.setInsertionPointAfterValue(streams.back().second);
  for (Operation *op : runtimeOps) {
    OpPlan &plan = plans[op];
    int64_t key = isa<gpu::WaitOp>(op) ? keys.front() : getDeviceKey(op);
    plan.stream = streams.lookup(key);
    plan.allStreams = allStreams;
    plan.multiStream = streams.size() > 1;
    if (plan.multiStream)
      plan.streamDevices = streamDevices;
    plan.switchToDevice = numExplicit > 1 ? key : -1;
    plan.where = support.getString(builder, formatLocation(op->getLoc()));
    plan.pointerSlot = pointerSlot;
    auto copy = dyn_cast<gpu::MemcpyOp>(op);
    if (!copy || (isContiguous(copy.getSrc().getType()) &&
                  isContiguous(copy.getDst().getType())))
      continue;
    int64_t rank = copy.getSrc().getType().getRank();
    Value count = call.i64(std::max<int64_t>(rank, 1));
    auto makeArray = [&] {
      return LLVM::AllocaOp::create(builder, loc, ptrType,
                                    builder.getI64Type(), count);
    };
    plan.sizesArray = makeArray();
    plan.dstStridesArray = makeArray();
    plan.srcStridesArray = makeArray();
  }
  if (numExplicit != 1)
    return -1;
  return *llvm::find_if(keys, [](int64_t key) { return key >= 0; });
}

/// Makes each delegate's device current around the calls to it, and
/// restores the previous device after; nothing where the calling function
/// keeps that device current anyway (`homeDevices`).
void switchDevicesForDelegates(
    ArrayRef<std::pair<func::CallOp, DeviceAttr>> delegateCalls,
    const DenseMap<Operation *, int64_t> &homeDevices,
    RuntimeSupport &support) {
  for (auto [call, device] : delegateCalls) {
    auto caller = call->getParentOfType<func::FuncOp>();
    int64_t ordinal = device.getOrdinal();
    auto home = homeDevices.find(caller);
    if (home != homeDevices.end() && home->second == ordinal)
      continue;
    OpBuilder builder(call);
    Location loc = call.getLoc();
    Value where = LLVM::AddressOfOp::create(
        builder, loc,
        support.getString(builder, formatLocation(loc)));
    Value deviceValue =
        LLVM::ConstantOp::create(builder, loc, builder.getI32Type(), ordinal);
    Value previous =
        LLVM::CallOp::create(builder, loc,
                             support.getFunction("__etcopy_enter_device"),
                             ValueRange{deviceValue, where})
            .getResult();
    builder.setInsertionPointAfter(call);
    LLVM::CallOp::create(builder, loc,
                         support.getFunction("__etcopy_leave_device"),
                         ValueRange{previous, deviceValue, where});
  }
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

template <typename OpTy>
class RuntimeOpLowering : public ConvertOpToLLVMPattern<OpTy> {
public:
  RuntimeOpLowering(const LLVMTypeConverter &converter,
                    RuntimeSupport &support, const PlanMap &plans)
      : ConvertOpToLLVMPattern<OpTy>(converter), support(support),
        plans(plans) {}

protected:
  /// The plan of `op`, and a checked-call emitter at its location.
  const OpPlan &getPlan(OpTy op) const { return plans.find(op)->second; }

  /// Emits what must precede the op's own calls: the device switch of
  /// multi-device functions and, for tokens that may come from another
  /// stream, an event join.
  void prepare(OpTy op, const OpPlan &plan, ValueRange dependencies,
               OpBuilder &builder) const {
    CheckedCaller call(support, builder, op.getLoc(), plan.where);
    if (plan.switchToDevice >= 0)
      call("cudaSetDevice", {call.i32(plan.switchToDevice)},
           "select the device");
    if (!plan.multiStream)
      return; // Single stream: tokens carry no extra ordering.
    for (Value dependency : llvm::SetVector<Value>(dependencies.begin(),
                                                   dependencies.end())) {
      if (dependency == plan.stream)
        continue;
      // Tokens are streams of this function (validated), so their devices
      // are known.
      Value where = LLVM::AddressOfOp::create(builder, op.getLoc(), plan.where);
      LLVM::CallOp::create(builder, op.getLoc(),
                           support.getFunction("__etcopy_stream_join"),
                           ValueRange{dependency,
                                      plan.streamDevices.lookup(dependency),
                                      plan.stream,
                                      plan.streamDevices.lookup(plan.stream),
                                      where});
    }
  }

  /// The size in bytes of the elements of `descriptor` (of `type`), from
  /// its run-time sizes.
  Value getByteSize(MemRefDescriptor &descriptor, MemRefType type,
                    ConversionPatternRewriter &rewriter, Location loc) const {
    Value bytes = this->getSizeInBytes(loc, type.getElementType(), rewriter);
    for (int64_t dim = 0, rank = type.getRank(); dim < rank; ++dim)
      bytes = LLVM::MulOp::create(rewriter, loc, bytes,
                                  descriptor.size(rewriter, loc, dim));
    return bytes;
  }

  /// Replaces `op`: its async token becomes the stream (the work is ordered
  /// on it); a sync-form op waits for the stream first, unless its calls
  /// were synchronous already (`enqueued` false).
  void finish(OpTy op, const OpPlan &plan, ValueRange results,
              ConversionPatternRewriter &rewriter,
              bool enqueued = true) const {
    SmallVector<Value> replacements(results);
    if (op.getAsyncToken()) {
      replacements.push_back(plan.stream);
    } else if (enqueued) {
      CheckedCaller call(support, rewriter, op.getLoc(), plan.where);
      call("cudaStreamSynchronize", {plan.stream},
           "wait for a sync-form gpu op");
    }
    rewriter.replaceOp(op, replacements);
  }

  RuntimeSupport &support;
  const PlanMap &plans;
};

/// gpu.alloc -> cudaMallocAsync (cudaMallocManaged for host_shared).
struct AllocLowering : public RuntimeOpLowering<gpu::AllocOp> {
  using RuntimeOpLowering::RuntimeOpLowering;

  LogicalResult
  matchAndRewrite(gpu::AllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const OpPlan &plan = getPlan(op);
    Location loc = op.getLoc();
    MemRefType type = op.getType();
    prepare(op, plan, adaptor.getAsyncDependencies(), rewriter);

    SmallVector<Value> shape, strides;
    Value bytes;
    getMemRefDescriptorSizes(loc, type, adaptor.getDynamicSizes(), rewriter,
                             shape, strides, bytes);
    CheckedCaller call(support, rewriter, loc, plan.where);
    if (op.getHostShared())
      call("cudaMallocManaged",
           {plan.pointerSlot, bytes, call.i32(kMemAttachGlobal)},
           "allocate host-shared memory", bytes);
    else
      call("cudaMallocAsync", {plan.pointerSlot, bytes, plan.stream},
           "allocate device memory", bytes);
    Value pointer =
        LLVM::LoadOp::create(rewriter, loc, getPtrType(), plan.pointerSlot);
    Value descriptor = createMemRefDescriptor(loc, type, pointer, pointer,
                                              shape, strides, rewriter);
    // cudaMallocManaged is synchronous.
    finish(op, plan, descriptor, rewriter,
           /*enqueued=*/!op.getHostShared());
    return success();
  }
};

/// gpu.dealloc -> cudaFreeAsync, stream-ordered (cudaFree for memory of a
/// host_shared gpu.alloc in the same function).
struct DeallocLowering : public RuntimeOpLowering<gpu::DeallocOp> {
  using RuntimeOpLowering::RuntimeOpLowering;

  LogicalResult
  matchAndRewrite(gpu::DeallocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const OpPlan &plan = getPlan(op);
    Location loc = op.getLoc();
    prepare(op, plan, adaptor.getAsyncDependencies(), rewriter);
    Value pointer =
        MemRefDescriptor(adaptor.getMemref()).allocatedPtr(rewriter, loc);
    CheckedCaller call(support, rewriter, loc, plan.where);
    auto alloc = op.getMemref().getDefiningOp<gpu::AllocOp>();
    if (alloc && alloc.getHostShared()) {
      // Managed memory is not stream-ordered: finish the work using it.
      call("cudaStreamSynchronize", {plan.stream},
           "wait before freeing host-shared memory");
      call("cudaFree", {pointer}, "free host-shared memory");
    } else {
      call("cudaFreeAsync", {pointer, plan.stream}, "free device memory");
    }
    finish(op, plan, {}, rewriter);
    return success();
  }
};

/// gpu.memcpy -> cudaMemcpyAsync for contiguous data, the strided helper
/// (cudaMemcpy2DAsync) otherwise.
struct MemcpyLowering : public RuntimeOpLowering<gpu::MemcpyOp> {
  using RuntimeOpLowering::RuntimeOpLowering;

  LogicalResult
  matchAndRewrite(gpu::MemcpyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const OpPlan &plan = getPlan(op);
    Location loc = op.getLoc();
    MemRefType srcType = op.getSrc().getType();
    MemRefType dstType = op.getDst().getType();
    prepare(op, plan, adaptor.getAsyncDependencies(), rewriter);

    auto [srcPlace, dstPlace] = classifyCopy(op);
    auto [kind, what] = getCopyKind(srcPlace, dstPlace);
    CheckedCaller call(support, rewriter, loc, plan.where);
    MemRefDescriptor src(adaptor.getSrc()), dst(adaptor.getDst());
    // Static sizes agree (gpu.memcpy's verifier); dynamic ones are checked
    // at run time, since the copy uses the source's sizes for both sides.
    for (int64_t dim = 0, rank = srcType.getRank(); dim < rank; ++dim) {
      if (!srcType.isDynamicDim(dim) && !dstType.isDynamicDim(dim))
        continue;
      Value where = LLVM::AddressOfOp::create(rewriter, loc, plan.where);
      Value whatAddr = LLVM::AddressOfOp::create(
          rewriter, loc, support.getString(rewriter, what));
      LLVM::CallOp::create(
          rewriter, loc, support.getFunction("__etcopy_check_copy_size"),
          ValueRange{src.size(rewriter, loc, dim), dst.size(rewriter, loc, dim),
                     call.i64(dim), where, whatAddr});
    }
    Value srcPtr = src.bufferPtr(rewriter, loc, *getTypeConverter(), srcType);
    Value dstPtr = dst.bufferPtr(rewriter, loc, *getTypeConverter(), dstType);
    Value kindValue = call.i32(static_cast<int32_t>(kind));

    if (!plan.sizesArray) {
      // Contiguous: one copy of all elements.
      Value bytes = getByteSize(src, srcType, rewriter, loc);
      call("cudaMemcpyAsync", {dstPtr, srcPtr, bytes, kindValue, plan.stream},
           what, bytes);
    } else {
      int64_t rank = srcType.getRank();
      Type i64 = rewriter.getI64Type();
      Value elementBytes =
          getSizeInBytes(loc, srcType.getElementType(), rewriter);
      auto store = [&](Value array, int64_t index, Value value) {
        Value address = LLVM::GEPOp::create(
            rewriter, loc, getPtrType(), i64, array,
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(index)});
        LLVM::StoreOp::create(rewriter, loc, value, address);
      };
      for (int64_t dim = 0; dim < rank; ++dim) {
        store(plan.sizesArray, dim, src.size(rewriter, loc, dim));
        store(plan.dstStridesArray, dim, dst.stride(rewriter, loc, dim));
        store(plan.srcStridesArray, dim, src.stride(rewriter, loc, dim));
      }
      Value where = LLVM::AddressOfOp::create(rewriter, loc, plan.where);
      Value whatAddr =
          LLVM::AddressOfOp::create(rewriter, loc, support.getString(rewriter, what));
      LLVM::CallOp::create(
          rewriter, loc, support.getFunction("__etcopy_memcpy_strided"),
          ValueRange{dstPtr, srcPtr, call.i64(rank), plan.sizesArray,
                     plan.dstStridesArray, plan.srcStridesArray, elementBytes,
                     kindValue, plan.stream, where, whatAddr});
    }
    finish(op, plan, {}, rewriter);
    return success();
  }
};

/// gpu.memset of a repeated-byte constant -> cudaMemsetAsync.
struct MemsetLowering : public RuntimeOpLowering<gpu::MemsetOp> {
  using RuntimeOpLowering::RuntimeOpLowering;

  LogicalResult
  matchAndRewrite(gpu::MemsetOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const OpPlan &plan = getPlan(op);
    Location loc = op.getLoc();
    MemRefType type = op.getDst().getType();
    Attribute value;
    if (!matchPattern(op.getValue(), m_Constant(&value)))
      return rewriter.notifyMatchFailure(op, "value is not a constant");
    std::optional<uint8_t> byte = getRepeatedByte(value);
    if (!byte)
      return rewriter.notifyMatchFailure(op, "value is not a repeated byte");
    prepare(op, plan, adaptor.getAsyncDependencies(), rewriter);

    CheckedCaller call(support, rewriter, loc, plan.where);
    MemRefDescriptor dst(adaptor.getDst());
    Value pointer = dst.bufferPtr(rewriter, loc, *getTypeConverter(), type);
    Value bytes = getByteSize(dst, type, rewriter, loc);
    call("cudaMemsetAsync", {pointer, call.i32(*byte), bytes, plan.stream},
         "set device memory", bytes);
    finish(op, plan, {}, rewriter);
    return success();
  }
};

/// gpu.wait async -> the stream (after joining its dependencies); gpu.wait
/// (sync) -> cudaStreamSynchronize of each dependency, or of every stream of
/// the function when it has none.
struct WaitLowering : public RuntimeOpLowering<gpu::WaitOp> {
  using RuntimeOpLowering::RuntimeOpLowering;

  LogicalResult
  matchAndRewrite(gpu::WaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const OpPlan &plan = getPlan(op);
    if (op.getAsyncToken()) {
      prepare(op, plan, adaptor.getAsyncDependencies(), rewriter);
      rewriter.replaceOp(op, plan.stream);
      return success();
    }
    CheckedCaller call(support, rewriter, op.getLoc(), plan.where);
    ValueRange dependencies = adaptor.getAsyncDependencies();
    llvm::SetVector<Value> streams(dependencies.begin(), dependencies.end());
    if (streams.empty())
      streams.insert(plan.allStreams.begin(), plan.allStreams.end());
    for (Value stream : streams)
      call("cudaStreamSynchronize", {stream}, "host wait");
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct ConvertGPUToCUDARuntimePass
    : public etcopy::impl::ConvertGPUToCUDARuntimeBase<
          ConvertGPUToCUDARuntimePass> {
  using ConvertGPUToCUDARuntimeBase::ConvertGPUToCUDARuntimeBase;

  void runOnOperation() override;
};
} // namespace

void mlir::etcopy::populateCUDARuntimeTypeConversions(
    LLVMTypeConverter &converter) {
  MLIRContext *ctx = &converter.getContext();
  auto genericSpace = IntegerAttr::get(IntegerType::get(ctx, 64), 0);
  converter.addTypeAttributeConversion(
      [=](BaseMemRefType, DeviceAttr) { return genericSpace; });
  converter.addTypeAttributeConversion(
      [=](BaseMemRefType, gpu::AddressSpaceAttr) { return genericSpace; });
  converter.addTypeAttributeConversion(
      [=](BaseMemRefType, IntegerAttr) { return genericSpace; });
  converter.addConversion([ctx](gpu::AsyncTokenType) -> Type {
    return LLVM::LLVMPointerType::get(ctx);
  });
}

/// True if `type` still mentions a device placement or an async token.
static bool mentionsUnloweredType(Type type) {
  bool found = false;
  type.walk([&](Attribute attr) { found |= isa<DeviceAttr>(attr); });
  type.walk([&](Type nested) { found |= isa<gpu::AsyncTokenType>(nested); });
  return found;
}

void ConvertGPUToCUDARuntimePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  if (failed(validate(module)))
    return signalPassFailure();

  // Collect the runtime ops of each function.
  llvm::MapVector<func::FuncOp, SmallVector<Operation *>> work;
  bool needsStridedCopy = false, needsStreamJoin = false;
  module.walk([&](Operation *op) {
    if (!isRuntimeOp(op) || op->getParentOfType<gpu::GPUModuleOp>())
      return;
    work[op->getParentOfType<func::FuncOp>()].push_back(op);
    if (auto copy = dyn_cast<gpu::MemcpyOp>(op))
      needsStridedCopy |= !isContiguous(copy.getSrc().getType()) ||
                          !isContiguous(copy.getDst().getType());
  });

  // Calls to delegates, which must run on their device.
  SmallVector<std::pair<func::CallOp, DeviceAttr>> delegateCalls;
  {
    SymbolTable symbols(module);
    module.walk([&](func::CallOp call) {
      if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
        if (DeviceAttr device = getDelegateDevice(callee))
          delegateCalls.emplace_back(call, device);
    });
  }

  RuntimeSupport support(module);
  PlanMap plans;
  DenseMap<Operation *, int64_t> homeDevices;
  if (!work.empty() || !delegateCalls.empty()) {
    if (failed(support.addChunk(kRuntimeDeclarations)) ||
        (needsStridedCopy && failed(support.addChunk(kStridedCopy))) ||
        (!delegateCalls.empty() && failed(support.addChunk(kDelegateDevice))))
      return signalPassFailure();
    for (auto &[func, ops] : work) {
      homeDevices[func] = planFunction(func, ops, support, plans);
      needsStreamJoin |= plans[ops.front()].multiStream;
    }
    if (needsStreamJoin && failed(support.addChunk(kStreamJoin)))
      return signalPassFailure();
    numStreams = work.size();
    switchDevicesForDelegates(delegateCalls, homeDevices, support);
  }

  // Lower the runtime ops and, with the dialects' own patterns, the rest.
  LowerToLLVMOptions options(ctx, DataLayout(module));
  LLVMTypeConverter converter(ctx, options);
  populateCUDARuntimeTypeConversions(converter);
  LLVMConversionTarget target(*ctx);
  target.addIllegalDialect<gpu::GPUDialect>();
  target.addLegalOp<gpu::GPUModuleOp>();
  target.markOpRecursivelyLegal<gpu::GPUModuleOp>();

  RewritePatternSet patterns(ctx);
  for (Dialect *dialect : ctx->getLoadedDialects()) {
    // The gpu dialect's own LLVM patterns target the mgpu* wrappers.
    if (isa<gpu::GPUDialect>(dialect))
      continue;
    if (auto *iface = dyn_cast<ConvertToLLVMPatternInterface>(dialect))
      iface->populateConvertToLLVMConversionPatterns(target, converter,
                                                     patterns);
  }
  patterns.add<AllocLowering, DeallocLowering, MemcpyLowering, MemsetLowering,
               WaitLowering>(converter, support, plans);
  if (failed(applyPartialConversion(module, target, std::move(patterns))))
    return signalPassFailure();

  // Nothing etcopy- or token-typed may survive, and the etcopy discardable
  // attributes have no meaning in LLVM IR.
  bool leftovers = false;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::GPUModuleOp>(op))
      return WalkResult::skip();
    for (NamedAttribute attr : llvm::to_vector(op->getDiscardableAttrs()))
      if (attr.getName().getValue().starts_with("etcopy."))
        op->removeDiscardableAttr(attr.getName());
    if (isa<UnrealizedConversionCastOp>(op))
      return WalkResult::advance();
    for (Type type :
         llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
      if (mentionsUnloweredType(type)) {
        op->emitError("'")
            << op->getName() << "' was left with type " << type
            << " that convert-gpu-to-cuda-runtime could not lower";
        leftovers = true;
        break;
      }
    return WalkResult::advance();
  });
  if (leftovers)
    return signalPassFailure();
  // Call sites in the program, not in the runtime support emitted with it.
  module.walk([&](LLVM::CallOp call) {
    auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
    std::optional<StringRef> callee = call.getCallee();
    if (callee && callee->starts_with("cuda") && caller &&
        !caller.getName().starts_with("__etcopy") &&
        caller.getName() != "etcopy_cuda_error")
      ++numRuntimeCalls;
  });
}
