//===- Canonicalize.cpp - Canonicalization that reports no change -*- C++ -*-===//
//
// etcopy-canonicalize: upstream's canonicalizer (the canonicalization
// patterns of every loaded dialect and registered op under the greedy
// driver), which preserves every analysis when the driver changed nothing,
// so that the pass manager does not verify an unchanged module again.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Dialect/EtCopy/EtCopyPasses.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

namespace mlir::etcopy {
#define GEN_PASS_DEF_ETCOPYCANONICALIZE
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;

namespace {
struct EtCopyCanonicalizePass
    : public etcopy::impl::EtCopyCanonicalizeBase<EtCopyCanonicalizePass> {
  using Base::Base;

  /// The configuration from the options, and the patterns, built as
  /// upstream's canonicalizer builds them each time the pass manager
  /// initializes the pass (once per run, not per operation).
  LogicalResult initialize(MLIRContext *context) override {
    config.setUseTopDownTraversal(topDownProcessingEnabled)
        .setRegionSimplificationLevel(regionSimplifyLevel)
        .setMaxIterations(maxIterations)
        .setMaxNumRewrites(maxNumRewrites);
    RewritePatternSet owningPatterns(context);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(owningPatterns);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(owningPatterns, context);
    patterns =
        std::make_shared<FrozenRewritePatternSet>(std::move(owningPatterns));
    return success();
  }

  void runOnOperation() override {
    bool changed = false;
    LogicalResult converged =
        applyPatternsGreedily(getOperation(), *patterns, config, &changed);
    // Canonicalization is best-effort: non-convergence fails the pass only
    // when asked to (tests of cyclic patterns), as upstream's does.
    if (testConvergence && failed(converged)) {
      signalPassFailure();
      return;
    }
    if (!changed) {
      ++numUnchanged;
      markAllAnalysesPreserved();
    }
  }

  GreedyRewriteConfig config;
  std::shared_ptr<const FrozenRewritePatternSet> patterns;
};
} // namespace
