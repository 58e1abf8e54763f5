//===- EtCopyOps.cpp - etcopy operations ----------------------*- C++ -*-===//
//
// etcopy.h2d, etcopy.d2h and etcopy.d2d: the target-type assembly
// directive, the verifier (constraints C1-C5 of the op descriptions), folding
// of round trips, the canonicalisation of a move between devices through the
// host into one d2d and the erasure of statically empty copies, memory
// effects and speculatability of both forms.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Dialect/EtCopy/EtCopyOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::etcopy;

//===----------------------------------------------------------------------===//
// Assembly: `-> type` names the destination (out form) or the result
// (functional form).
//===----------------------------------------------------------------------===//

static ParseResult parseCopyTargetType(OpAsmParser &parser, Type &destType,
                                       Type &resultType) {
  Type type;
  if (parser.parseType(type))
    return failure();
  (isa<BaseMemRefType>(type) ? destType : resultType) = type;
  return success();
}

static void printCopyTargetType(OpAsmPrinter &printer, Operation *,
                                Type destType, Type resultType) {
  printer << (destType ? destType : resultType);
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

/// "on the host", "on cuda:0" or "in memory space 1": where `type` lives.
static std::string describePlacement(Type type) {
  Placement placement = getPlacement(type);
  switch (placement.kind) {
  case Placement::Kind::Host:
    return "on the host";
  case Placement::Kind::Device:
    return "on " + placement.device.str();
  case Placement::Kind::Unknown:
    break;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << (isa<BaseMemRefType>(type) ? "in memory space " : "with encoding ")
     << getPlacementAttr(type);
  return text;
}

namespace {
/// The two sides of a copy, named as the user sees them.
struct CopySide {
  StringRef role; // "source", "destination" or "result"
  ShapedType type;
};

Diagnostic &operator<<(Diagnostic &diag, const CopySide &side) {
  return diag << side.role << " " << side.type;
}
} // namespace

namespace {
/// Which sides of a copy are on the host and which on a device.
enum class Direction { HostToDevice, DeviceToHost, DeviceToDevice };
} // namespace

template <typename OpTy>
static LogicalResult verifyCopy(OpTy op, Direction direction) {
  Value dest = op.getDest();
  Value result = op.getResult();
  bool tensorForm = isa<RankedTensorType>(op.getSource().getType());

  // (C1) Functional form: tensor -> tensor, no destination. Out form:
  // memref -> memref destination, no result.
  if (tensorForm) {
    if (dest)
      return op.emitOpError("with a tensor source (functional form) takes no "
                            "destination operand, got ")
             << dest.getType();
    if (!result)
      return op.emitOpError(
          "with a tensor source (functional form) requires a tensor result");
  } else {
    if (result)
      return op.emitOpError("with a memref source (out form) has no result, "
                            "got ")
             << result.getType();
    if (!dest)
      return op.emitOpError(
          "with a memref source (out form) requires a memref destination");
  }

  CopySide source{"source", op.getSourceType()};
  CopySide target{tensorForm ? "result" : "destination", op.getTargetType()};

  // (C2) Direction: the host side is host data, each device side is on a
  // non-host #etcopy.device. The device is taken from the destination for
  // h2d and from the source for d2h, as in ExecuTorch's kernels; d2d moves
  // between two different devices.
  auto requireDevice = [&](const CopySide &side) -> LogicalResult {
    if (getPlacement(side.type).isDevice())
      return success();
    return op.emitOpError() << side.role
                            << " must be on an #etcopy.device other than cpu, "
                               "got "
                            << side.type << " " << describePlacement(side.type);
  };
  if (direction == Direction::DeviceToDevice) {
    if (failed(requireDevice(source)) || failed(requireDevice(target)))
      return failure();
    if (getPlacement(source.type).device == getPlacement(target.type).device)
      return op.emitOpError("copies within ")
             << getPlacement(source.type).device.str() << " (" << source
             << ", " << target
             << "): a d2d copy moves data between two different devices";
  } else {
    bool hostToDevice = direction == Direction::HostToDevice;
    const CopySide &hostSide = hostToDevice ? source : target;
    const CopySide &deviceSide = hostToDevice ? target : source;
    if (!getPlacement(hostSide.type).isHost())
      return op.emitOpError() << hostSide.role << " must be on the host, got "
                              << hostSide.type << " "
                              << describePlacement(hostSide.type);
    if (failed(requireDevice(deviceSide)))
      return failure();
  }

  // (C3) Same element type.
  if (source.type.getElementType() != target.type.getElementType())
    return op.emitOpError("element type mismatch: ")
           << source << " has " << source.type.getElementType() << ", "
           << target << " has " << target.type.getElementType();

  // (C4) Same rank.
  if (source.type.getRank() != target.type.getRank())
    return op.emitOpError("rank mismatch: ")
           << source << " has rank " << source.type.getRank() << ", "
           << target << " has rank " << target.type.getRank();

  // (C5) Static sizes agree where both are static.
  for (auto [dim, sizes] : llvm::enumerate(
           llvm::zip(source.type.getShape(), target.type.getShape()))) {
    auto [sourceSize, targetSize] = sizes;
    if (ShapedType::isDynamic(sourceSize) ||
        ShapedType::isDynamic(targetSize) || sourceSize == targetSize)
      continue;
    return op.emitOpError("size mismatch in dimension ")
           << dim << ": " << source << " has " << sourceSize << ", "
           << target << " has " << targetSize;
  }
  return success();
}

LogicalResult H2DOp::verify() {
  return verifyCopy(*this, Direction::HostToDevice);
}

LogicalResult D2HOp::verify() {
  return verifyCopy(*this, Direction::DeviceToHost);
}

LogicalResult D2DOp::verify() {
  return verifyCopy(*this, Direction::DeviceToDevice);
}

//===----------------------------------------------------------------------===//
// Folding
//===----------------------------------------------------------------------===//

/// Folds `outer(inner(x))` to `x` when both copies are functional and `x`
/// already has the type `outer` produces. Equal types imply equal devices
/// (kind and ordinal), so copies between different devices never fold.
template <typename InnerOpTy, typename OuterOpTy>
static LogicalResult foldRoundTrip(OuterOpTy outer,
                                   SmallVectorImpl<OpFoldResult> &results) {
  if (!outer.hasPureTensorSemantics())
    return failure();
  auto inner = outer.getSource().template getDefiningOp<InnerOpTy>();
  if (!inner || !inner.hasPureTensorSemantics())
    return failure();
  if (inner.getSource().getType() != outer.getResult().getType())
    return failure();
  results.push_back(inner.getSource());
  return success();
}

// h2d(d2h(y)) -> y: y already lives on the destination device.
LogicalResult H2DOp::fold(FoldAdaptor,
                          SmallVectorImpl<OpFoldResult> &results) {
  return foldRoundTrip<D2HOp>(*this, results);
}

// d2h(h2d(x)) -> x: x is the host value that was sent.
LogicalResult D2HOp::fold(FoldAdaptor,
                          SmallVectorImpl<OpFoldResult> &results) {
  return foldRoundTrip<H2DOp>(*this, results);
}

// d2d(d2d(x)) -> x: x already lives on the destination device.
LogicalResult D2DOp::fold(FoldAdaptor,
                          SmallVectorImpl<OpFoldResult> &results) {
  return foldRoundTrip<D2DOp>(*this, results);
}

namespace {
/// A d2h whose every user is a functional h2d to another device than its
/// source's: each h2d becomes one d2d from the source, and the host copy
/// disappears (one copy per device reached instead of one more through the
/// host).
struct MoveBetweenDevicesDirectly : public OpRewritePattern<D2HOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(D2HOp d2h,
                                PatternRewriter &rewriter) const override {
    if (!d2h.hasPureTensorSemantics() || d2h->use_empty())
      return rewriter.notifyMatchFailure(d2h, "not a used functional d2h");
    DeviceAttr device = getPlacement(d2h.getSourceType()).device;
    SmallVector<H2DOp> h2ds;
    for (Operation *user : d2h->getUsers()) {
      auto h2d = dyn_cast<H2DOp>(user);
      // A host user needs the host copy; a same-device h2d is a round trip
      // (the folder's, or a type change kept as is).
      if (!h2d || !h2d.hasPureTensorSemantics() ||
          getPlacement(h2d.getTargetType()).device == device)
        return rewriter.notifyMatchFailure(
            d2h, "the host copy has a user other than a move to another "
                 "device");
      h2ds.push_back(h2d);
    }
    for (H2DOp h2d : h2ds)
      rewriter.replaceOpWithNewOp<D2DOp>(h2d, h2d.getResult().getType(),
                                         d2h.getSource());
    rewriter.eraseOp(d2h);
    return success();
  }
};
} // namespace

namespace {
/// Erases an out-form copy whose two sides are statically empty: it moves
/// no byte, and CUDA rejects a batch holding a copy of 0 bytes. Both types
/// must be static, so that a size mismatch that only shows at run time (a
/// dynamic dimension) is still reported by the lowered copy.
template <typename OpTy>
struct EraseEmptyCopy : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy copy,
                                PatternRewriter &rewriter) const override {
    if (copy.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(copy, "functional form");
    if (!isStaticallyEmpty(copy.getSourceType()) ||
        !isStaticallyEmpty(copy.getTargetType()))
      return rewriter.notifyMatchFailure(
          copy, "a side is not statically empty");
    rewriter.eraseOp(copy);
    return success();
  }
};
} // namespace

bool mlir::etcopy::isStaticallyEmpty(ShapedType type) {
  return type.hasStaticShape() && type.getNumElements() == 0;
}

void H2DOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<EraseEmptyCopy<H2DOp>>(context);
}

void D2HOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<MoveBetweenDevicesDirectly, EraseEmptyCopy<D2HOp>>(context);
}

void D2DOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<EraseEmptyCopy<D2DOp>>(context);
}

//===----------------------------------------------------------------------===//
// Memory effects and speculation
//===----------------------------------------------------------------------===//

/// The functional form is pure. The out form reads its source and writes its
/// destination.
template <typename OpTy>
static void getCopyEffects(
    OpTy op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (op.hasPureTensorSemantics() || !op.getDest())
    return;
  effects.emplace_back(MemoryEffects::Read::get(), &op.getSourceMutable(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &op.getDestMutable()[0],
                       SideEffects::DefaultResource::get());
}

void H2DOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getCopyEffects(*this, effects);
}

void D2HOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getCopyEffects(*this, effects);
}

void D2DOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getCopyEffects(*this, effects);
}

/// A functional copy can be hoisted or executed speculatively unless it
/// narrows a dynamic size to a static one, which can fail at run time (like
/// tensor.cast); the out form writes memory and never can.
template <typename OpTy>
static Speculation::Speculatability getCopySpeculatability(OpTy op) {
  if (!op.hasPureTensorSemantics())
    return Speculation::NotSpeculatable;
  for (auto [sourceSize, targetSize] : llvm::zip(
           op.getSourceType().getShape(), op.getTargetType().getShape()))
    if (ShapedType::isDynamic(sourceSize) && !ShapedType::isDynamic(targetSize))
      return Speculation::NotSpeculatable;
  return Speculation::Speculatable;
}

Speculation::Speculatability H2DOp::getSpeculatability() {
  return getCopySpeculatability(*this);
}

Speculation::Speculatability D2HOp::getSpeculatability() {
  return getCopySpeculatability(*this);
}

Speculation::Speculatability D2DOp::getSpeculatability() {
  return getCopySpeculatability(*this);
}

#define GET_OP_CLASSES
#include "etcopy/Dialect/EtCopy/EtCopyOps.cpp.inc"
