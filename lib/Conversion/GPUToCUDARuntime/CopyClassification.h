//===- CopyClassification.h - Operands of the CUDA lowering -----*- C++ -*-===//
//
// What convert-gpu-to-cuda-runtime reads from the types and producers of
// the memrefs its ops take: where a memref lives (and so the cudaMemcpyKind
// of a copy and the device whose stream runs an op), the strides, contiguity
// and element size of a memref type, which copies are one cudaMemcpyAsync,
// and which host buffers are transfer buffers it may pin. Declares no dialect
// (the ops are forward-declared), so that every step of the lowering may
// include it at no cost.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_GPUTOCUDARUNTIME_COPYCLASSIFICATION_H
#define LIB_CONVERSION_GPUTOCUDARUNTIME_COPYCLASSIFICATION_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace mlir {
class Operation;
namespace gpu {
class MemcpyOp;
} // namespace gpu
namespace memref {
class AllocOp;
class ViewOp;
} // namespace memref
} // namespace mlir

namespace mlir::etcopy::cuda_lowering {

/// `cudaMemcpyKind`.
enum class CopyKind : int32_t {
  HostToHost = 0,
  HostToDevice = 1,
  DeviceToHost = 2,
  DeviceToDevice = 3,
  Default = 4,
};

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
MemoryPlace classify(BaseMemRefType type);

/// The two sides of a copy. A memref without memory space is ambiguous in
/// upstream gpu IR (gpu.alloc returns such memrefs), so it is resolved here:
/// the result of a gpu.alloc is device memory; facing an #etcopy.device side
/// it is host memory, by the etcopy dialect's rule; otherwise it stays
/// `Unknown` and the copy uses cudaMemcpyDefault (unified addressing).
std::pair<MemoryPlace, MemoryPlace> classifyCopy(gpu::MemcpyOp copy);

/// The cudaMemcpyKind for a copy from `src` to `dst`.
CopyKind getCopyKind(MemoryPlace src, MemoryPlace dst);

/// True for a copy between the memory of two distinct explicit devices: a
/// cudaMemcpyPeerAsync.
bool isPeerCopy(MemoryPlace src, MemoryPlace dst);

/// The device whose stream runs `op`: the device side of a copy (the source
/// for device-to-host), the allocation's or buffer's device otherwise.
int64_t getDeviceKey(Operation *op);

//===----------------------------------------------------------------------===//
// Memref layouts
//===----------------------------------------------------------------------===//

/// True when `type` has the identity layout. The common case, an
/// `AffineMapAttr`, is checked without a call through
/// MemRefLayoutAttrInterface, which costs more than the check itself.
bool hasIdentityLayout(MemRefType type);

/// The strides and offset of `type`, read from its layout attribute when it
/// is the identity or strided (the layouts of nearly every memref), without
/// the affine-map analysis of MemRefType::getStridesAndOffset.
LogicalResult getStridesAndOffset(MemRefType type,
                                  SmallVectorImpl<int64_t> &strides,
                                  int64_t &offset);

/// True when `type` is laid out row-major contiguously whatever its dynamic
/// sizes (identity layout, or strides that are the suffix products of a
/// static shape); the offset may be anything.
bool isContiguous(MemRefType type);

/// The bytes of one element of a memref of `elementType` in memory, when
/// known without a data layout query (the types memrefs usually hold).
std::optional<int64_t> getStaticElementBytes(Type elementType,
                                             unsigned indexBitwidth);

/// True when a buffer of `type` has a size in bytes that fits in int64_t,
/// as its lowering computes it (its elements, times their size when that
/// is known statically). Dynamic sizes are the program's to keep in range.
bool hasRepresentableSize(MemRefType type, unsigned indexBitwidth);

//===----------------------------------------------------------------------===//
// Ops and copies the lowering handles itself
//===----------------------------------------------------------------------===//

/// True for the gpu ops the pass plans and lowers itself, with calls of the
/// runtime support.
bool isRuntimeOp(Operation *op);

/// True for the memref.alloc and memref.dealloc of a transfer buffer, which
/// the pass lowers to the runtime support's caches of host blocks (pinned or
/// pageable): they use no stream and select no device.
bool isTransferBufferOp(Operation *op);

/// True when `copy` is one cudaMemcpyAsync of a static number of bytes from
/// the first element of one side to the first element of the other: both
/// sides are contiguous and of static shape. Other copies go through the
/// strided copy, which reads their descriptors.
bool isSimpleCopy(gpu::MemcpyOp copy, unsigned indexBitwidth);

/// True for a memref.view of static shape that only simple copies and
/// memsets use (the views of a planned arena): they address the arena
/// directly, so the view needs no descriptor and is left to die after the
/// conversion. Decided before the conversion, which adds users.
bool isAddressOnlyView(memref::ViewOp view, unsigned indexBitwidth);

//===----------------------------------------------------------------------===//
// Transfer buffers
//===----------------------------------------------------------------------===//

/// The memref.alloc whose buffer `memref` views, if any.
memref::AllocOp getAllocation(Value memref);

/// True when `alloc` allocates a host buffer that is the source or the
/// destination of a copy to or from a device, that the function frees, and
/// that never leaves the function: every use, through views, reads or
/// writes it, copies it or frees it (a return, a call, a branch or a store
/// of the memref would hand it to code that might free it with free()).
bool isTransferBuffer(memref::AllocOp alloc);

} // namespace mlir::etcopy::cuda_lowering

#endif // LIB_CONVERSION_GPUTOCUDARUNTIME_COPYCLASSIFICATION_H
