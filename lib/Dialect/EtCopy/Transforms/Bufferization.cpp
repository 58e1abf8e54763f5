//===- BufferizableOpInterfaceImpl.cpp - Bufferizing etcopy ---*- C++ -*-===//
//
// External models of BufferizableOpInterface for etcopy.h2d and etcopy.d2h.
// A functional copy reads its source and produces a new tensor in another
// placement; it bufferizes to a fresh allocation in the memory space named by
// the result's encoding and an out-form copy into it.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Dialect/EtCopy/BufferizableOpInterfaceImpl.h"

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "etcopy/Dialect/EtCopy/EtCopyOps.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::etcopy;

/// The buffer of a functional copy's result: an identity-layout memref with
/// the result's shape and element type whose memory space is the result's
/// encoding (none for a host tensor without one), as
/// `use-encoding-for-memory-space` bufferizes every other tensor of that type.
static MemRefType getResultBufferType(RankedTensorType resultType) {
  return MemRefType::get(resultType.getShape(), resultType.getElementType(),
                         MemRefLayoutAttrInterface(), resultType.getEncoding());
}

/// Where `type` lives, for diagnostics: "the host", "cuda:0" or, for a memory
/// space etcopy does not interpret, the attribute.
static std::string describePlacement(Type type) {
  Placement placement = getPlacement(type);
  if (placement.isHost())
    return "the host";
  if (placement.isDevice())
    return placement.device.str();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << getPlacementAttr(type);
  return text;
}

/// True when `a` and `b` are on the same device as etcopy sees it (the host
/// with or without `#etcopy.device<cpu>` counts as one place).
static bool haveSamePlacement(Type a, Type b) {
  Placement placementA = getPlacement(a);
  Placement placementB = getPlacement(b);
  return placementA.kind == placementB.kind &&
         placementA.device == placementB.device;
}

namespace {

/// Bufferization of a functional `etcopy.h2d` / `etcopy.d2h`: the source is
/// read, never written, and the result is a new buffer that aliases nothing.
template <typename CopyOpTy>
struct CopyOpInterface
    : public BufferizableOpInterface::ExternalModel<CopyOpInterface<CopyOpTy>,
                                                    CopyOpTy> {
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }

  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }

  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }

  FailureOr<BufferLikeType> getBufferType(Operation *, Value value,
                                          const BufferizationOptions &,
                                          const BufferizationState &,
                                          SmallVector<Value> &) const {
    return cast<BufferLikeType>(
        getResultBufferType(cast<RankedTensorType>(value.getType())));
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto copyOp = cast<CopyOpTy>(op);
    Location loc = copyOp.getLoc();

    FailureOr<Value> source =
        getBuffer(rewriter, copyOp.getSource(), options, state);
    if (failed(source))
      return failure();
    // The out form needs its device side in a device memory space, which
    // only the tensor encoding can provide.
    if (!haveSamePlacement(source->getType(), copyOp.getSourceType()))
      return copyOp.emitOpError("source ")
             << copyOp.getSourceType() << " on "
             << describePlacement(copyOp.getSourceType())
             << " was bufferized to " << source->getType() << " on "
             << describePlacement(source->getType())
             << "; run one-shot-bufferize with use-encoding-for-memory-space";

    // Allocate the destination with the result's shape: dynamic sizes are
    // those of the source, static sizes are part of the type.
    auto resultType = cast<RankedTensorType>(copyOp.getResult().getType());
    SmallVector<Value> dynamicSizes;
    for (auto [dim, size] : llvm::enumerate(resultType.getShape()))
      if (ShapedType::isDynamic(size))
        dynamicSizes.push_back(
            memref::DimOp::create(rewriter, loc, *source, dim));
    FailureOr<Value> dest = options.createAlloc(
        rewriter, loc, getResultBufferType(resultType), dynamicSizes);
    if (failed(dest))
      return failure();

    CopyOpTy::create(rewriter, loc, *source, *dest);
    replaceOpWithBufferizedValues(rewriter, op, *dest);
    return success();
  }
};

} // namespace

void mlir::etcopy::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, EtCopyDialect *) {
    H2DOp::attachInterface<CopyOpInterface<H2DOp>>(*context);
    D2HOp::attachInterface<CopyOpInterface<D2HOp>>(*context);
  });
}
