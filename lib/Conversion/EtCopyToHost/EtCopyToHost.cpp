//===- EtCopyToHost.cpp - etcopy to host-only code ------------*- C++ -*-===//
//
// The CPU reference lowering of etcopy: every copy is a clone on the host.
// Out-form copies become memref.copy, functional copies their source (or a
// tensor.cast of it), and every #etcopy.device placement is erased from the
// module's types together with the etcopy attributes of ops and function
// arguments.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Conversion/EtCopyToHost/EtCopyToHost.h"

#include "etcopy/Conversion/Passes.h"
#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "etcopy/Dialect/EtCopy/EtCopyOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::etcopy {
#define GEN_PASS_DEF_CONVERTETCOPYTOHOST
#include "etcopy/Conversion/Passes.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;

namespace {

/// A copy on the host: memref.copy between the buffers of the out form (it
/// handles any layout), the source itself for the functional form, cast to
/// the result type where the types differ (static sizes, placement).
template <typename CopyOpTy>
struct LowerCopyToHost : public OpRewritePattern<CopyOpTy> {
  using OpRewritePattern<CopyOpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(CopyOpTy op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics()) {
      rewriter.replaceOpWithNewOp<memref::CopyOp>(op, op.getSource(),
                                                  op.getDest());
      return success();
    }
    Value source = op.getSource();
    Type resultType = op.getResult().getType();
    if (source.getType() == resultType)
      rewriter.replaceOp(op, source);
    else
      rewriter.replaceOpWithNewOp<tensor::CastOp>(op, resultType, source);
    return success();
  }
};

} // namespace

void mlir::etcopy::populateEtCopyToHostConversionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerCopyToHost<H2DOp>, LowerCopyToHost<D2HOp>,
               LowerCopyToHost<D2DOp>>(
      patterns.getContext());
}

void mlir::etcopy::erasePlacements(Operation *root) {
  AttrTypeReplacer replacer;
  replacer.addReplacement([](MemRefType type) -> std::optional<Type> {
    if (!isa_and_nonnull<DeviceAttr>(type.getMemorySpace()))
      return std::nullopt;
    return MemRefType::Builder(type).setMemorySpace(Attribute());
  });
  replacer.addReplacement([](UnrankedMemRefType type) -> std::optional<Type> {
    if (!isa_and_nonnull<DeviceAttr>(type.getMemorySpace()))
      return std::nullopt;
    return UnrankedMemRefType::get(type.getElementType(), Attribute());
  });
  replacer.addReplacement([](RankedTensorType type) -> std::optional<Type> {
    if (!isa_and_nonnull<DeviceAttr>(type.getEncoding()))
      return std::nullopt;
    return RankedTensorType::get(type.getShape(), type.getElementType());
  });
  // Types of values and block arguments, and attributes holding types
  // (function signatures).
  replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);

  // What etcopy says about ops and function arguments (a delegate's
  // `etcopy.device`, `etcopy.writes`) goes with the placements: the
  // verifier accepts `etcopy.writes` on delegates only, and once the
  // bufferized calls read and write host buffers, what the delegate writes
  // is already in the code.
  root->walk([](Operation *op) { removeEtCopyAttributes(op); });
}

namespace {

struct ConvertEtCopyToHostPass
    : public etcopy::impl::ConvertEtCopyToHostBase<ConvertEtCopyToHostPass> {
  using ConvertEtCopyToHostBase::ConvertEtCopyToHostBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Erasing the placements first makes most functional copies copies of a
    // type to itself, which the patterns then replace by their source
    // without a cast.
    erasePlacements(module);

    RewritePatternSet patterns(&getContext());
    populateEtCopyToHostConversionPatterns(patterns);
    // Rewrite the copies only: leave the rest of the module as it was.
    GreedyRewriteConfig config;
    config.enableFolding(false)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(module, std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
