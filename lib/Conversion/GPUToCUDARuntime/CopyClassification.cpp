//===- CopyClassification.cpp - Operands of the CUDA lowering ---*- C++ -*-===//
//
// Classifies the memrefs that the ops convert-gpu-to-cuda-runtime lowers
// take: their place (host, which device), layout and size, and the host
// buffers that may be pinned. Reads types and producers only; creates no
// IR.
//
//===----------------------------------------------------------------------===//

#include "CopyClassification.h"

#include "etcopy/Dialect/EtCopy/BufferEscape.h"
#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::etcopy::cuda_lowering {

//===----------------------------------------------------------------------===//
// Placement of gpu-op operands.
//===----------------------------------------------------------------------===//

MemoryPlace classify(BaseMemRefType type) {
  Attribute space = type.getMemorySpace();
  if (!space)
    return {MemoryPlace::Kind::Unknown};
  if (auto device = dyn_cast<DeviceAttr>(space)) {
    if (device.isHost())
      return {MemoryPlace::Kind::Host};
    return {MemoryPlace::Kind::Device, device.getOrdinal()};
  }
  return {MemoryPlace::Kind::Device};
}

std::pair<MemoryPlace, MemoryPlace> classifyCopy(gpu::MemcpyOp copy) {
  auto resolve = [](Value value, MemoryPlace place, MemRefType other) {
    if (place.kind != MemoryPlace::Kind::Unknown)
      return place;
    if (value.getDefiningOp<gpu::AllocOp>())
      return MemoryPlace{MemoryPlace::Kind::Device};
    if (isa_and_present<DeviceAttr>(other.getMemorySpace()))
      return MemoryPlace{MemoryPlace::Kind::Host};
    return place;
  };
  TypedValue<MemRefType> src = copy.getSrc(), dst = copy.getDst();
  return {resolve(src, classify(src.getType()), dst.getType()),
          resolve(dst, classify(dst.getType()), src.getType())};
}

CopyKind getCopyKind(MemoryPlace src, MemoryPlace dst) {
  using K = MemoryPlace::Kind;
  if (src.kind == K::Unknown || dst.kind == K::Unknown)
    return CopyKind::Default;
  if (src.kind == K::Host)
    return dst.kind == K::Host ? CopyKind::HostToHost : CopyKind::HostToDevice;
  return dst.kind == K::Host ? CopyKind::DeviceToHost
                             : CopyKind::DeviceToDevice;
}

bool isPeerCopy(MemoryPlace src, MemoryPlace dst) {
  using K = MemoryPlace::Kind;
  return src.kind == K::Device && dst.kind == K::Device && src.ordinal >= 0 &&
         dst.ordinal >= 0 && src.ordinal != dst.ordinal;
}

int64_t getDeviceKey(Operation *op) {
  return TypeSwitch<Operation *, int64_t>(op)
      .Case([](gpu::MemcpyOp copy) {
        auto [src, dst] = classifyCopy(copy);
        return dst.kind == MemoryPlace::Kind::Device ? dst.ordinal
                                                     : src.ordinal;
      })
      .Case(
          [](gpu::AllocOp alloc) { return classify(alloc.getType()).ordinal; })
      .Case([](gpu::DeallocOp dealloc) {
        return classify(dealloc.getMemref().getType()).ordinal;
      })
      .Case([](gpu::MemsetOp memset) {
        return classify(memset.getDst().getType()).ordinal;
      })
      .Case([](gpu::LaunchFuncOp launch) {
        // The device of its first memref on an explicit device (a memref
        // cast to no memory space for the kernel's signature counts too);
        // scalar operands have none.
        for (Value operand : launch.getKernelOperands()) {
          if (auto cast = operand.getDefiningOp<memref::MemorySpaceCastOp>())
            operand = cast.getSource();
          auto type = dyn_cast<BaseMemRefType>(operand.getType());
          if (!type)
            continue;
          MemoryPlace place = classify(type);
          if (place.kind == MemoryPlace::Kind::Device && place.ordinal >= 0)
            return place.ordinal;
        }
        return int64_t(-1);
      })
      .Default([](Operation *) { return int64_t(-1); });
}

//===----------------------------------------------------------------------===//
// Memref layouts
//===----------------------------------------------------------------------===//

bool hasIdentityLayout(MemRefType type) {
  MemRefLayoutAttrInterface layout = type.getLayout();
  if (auto map = dyn_cast<AffineMapAttr>(layout))
    return map.getValue().isIdentity();
  return layout.isIdentity();
}

LogicalResult getStridesAndOffset(MemRefType type,
                                  SmallVectorImpl<int64_t> &strides,
                                  int64_t &offset) {
  if (auto strided = dyn_cast<StridedLayoutAttr>(type.getLayout())) {
    llvm::append_range(strides, strided.getStrides());
    offset = strided.getOffset();
    return success();
  }
  if (hasIdentityLayout(type)) {
    strides.resize(type.getRank());
    int64_t stride = 1;
    for (int64_t dim = type.getRank() - 1; dim >= 0; --dim) {
      strides[dim] = stride;
      int64_t size = type.getDimSize(dim);
      stride = ShapedType::isDynamic(size) || ShapedType::isDynamic(stride)
                   ? ShapedType::kDynamic
                   : stride * size;
    }
    offset = 0;
    return success();
  }
  return type.getStridesAndOffset(strides, offset);
}

bool isContiguous(MemRefType type) {
  if (hasIdentityLayout(type))
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
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

std::optional<int64_t> getStaticElementBytes(Type elementType,
                                             unsigned indexBitwidth) {
  unsigned bits;
  if (isa<IndexType>(elementType))
    bits = indexBitwidth;
  else if (elementType.isIntOrFloat())
    bits = elementType.getIntOrFloatBitWidth();
  else
    return std::nullopt;
  if (bits == 1)
    return 1;
  if (bits < 8 || !llvm::isPowerOf2_32(bits))
    return std::nullopt;
  return bits / 8;
}

bool hasRepresentableSize(MemRefType type, unsigned indexBitwidth) {
  if (!type.hasStaticShape())
    return true;
  int64_t size = getStaticElementBytes(type.getElementType(), indexBitwidth)
                     .value_or(1);
  for (int64_t dim : type.getShape())
    if (llvm::MulOverflow(size, dim, size))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Ops and copies the lowering handles itself
//===----------------------------------------------------------------------===//

bool isRuntimeOp(Operation *op) {
  return isa<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp, gpu::MemsetOp,
             gpu::WaitOp, gpu::LaunchFuncOp>(op);
}

bool isTransferBufferOp(Operation *op) {
  return isa<memref::AllocOp, memref::DeallocOp>(op);
}

bool isSimpleCopy(gpu::MemcpyOp copy, unsigned indexBitwidth) {
  MemRefType srcType = copy.getSrc().getType();
  return getStaticElementBytes(srcType.getElementType(), indexBitwidth) &&
         srcType.hasStaticShape() && isContiguous(srcType) &&
         isContiguous(copy.getDst().getType());
}

bool isAddressOnlyView(memref::ViewOp view, unsigned indexBitwidth) {
  return view.getType().hasStaticShape() &&
         llvm::all_of(view->getUsers(), [&](Operation *user) {
           auto copy = dyn_cast<gpu::MemcpyOp>(user);
           return isa<gpu::MemsetOp>(user) ||
                  (copy && isSimpleCopy(copy, indexBitwidth));
         });
}

//===----------------------------------------------------------------------===//
// Transfer buffers
//===----------------------------------------------------------------------===//

memref::AllocOp getAllocation(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref.getDefiningOp<memref::AllocOp>();
}

bool isTransferBuffer(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  // cudaMallocHost aligns to at least 256 bytes.
  if (classify(type).kind == MemoryPlace::Kind::Device ||
      !hasIdentityLayout(type) || alloc.getAlignment().value_or(0) > 256)
    return false;
  bool transfers = false, freed = false;
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            worklist.push_back(result);
        continue;
      }
      if (isa<memref::DeallocOp>(user)) {
        freed = true;
        continue;
      }
      if (auto copy = dyn_cast<gpu::MemcpyOp>(user)) {
        auto [src, dst] = classifyCopy(copy);
        MemoryPlace other = value == copy.getSrc() ? dst : src;
        transfers |= other.kind == MemoryPlace::Kind::Device;
        continue;
      }
      // Anything else must access the buffer's memory (a load, a store, a
      // compute op), not take the memref itself (a return, a call, a store
      // of the memref).
      if (!isNonEscapingAccess(user, value))
        return false;
    }
  }
  return transfers && freed;
}

} // namespace mlir::etcopy::cuda_lowering
