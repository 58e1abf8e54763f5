//===- EtCopyOps.cpp - etcopy operations ----------------------*- C++ -*-===//
//
// etcopy.h2d and etcopy.d2h: the target-type assembly directive, the
// verifier (constraints C1-C5 of the op descriptions), folding of same-device
// round trips, memory effects and speculatability of both forms.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Dialect/EtCopy/EtCopyOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

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
  (isa<MemRefType>(type) ? destType : resultType) = type;
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

template <typename OpTy>
static LogicalResult verifyCopy(OpTy op, bool hostToDevice) {
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

  // (C2) Direction: the host side is host data, the device side is on a
  // non-host #etcopy.device. The device is taken from the destination for
  // h2d and from the source for d2h, as in ExecuTorch's kernels.
  const CopySide &hostSide = hostToDevice ? source : target;
  const CopySide &deviceSide = hostToDevice ? target : source;
  if (!getPlacement(hostSide.type).isHost())
    return op.emitOpError() << hostSide.role << " must be on the host, got "
                            << hostSide.type << " "
                            << describePlacement(hostSide.type);
  if (!getPlacement(deviceSide.type).isDevice())
    return op.emitOpError() << deviceSide.role
                            << " must be on an #etcopy.device other than cpu, "
                               "got "
                            << deviceSide.type << " "
                            << describePlacement(deviceSide.type);

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
  return verifyCopy(*this, /*hostToDevice=*/true);
}

LogicalResult D2HOp::verify() {
  return verifyCopy(*this, /*hostToDevice=*/false);
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

#define GET_OP_CLASSES
#include "etcopy/Dialect/EtCopy/EtCopyOps.cpp.inc"
