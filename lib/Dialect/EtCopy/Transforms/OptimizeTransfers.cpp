// Being written.
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h"
namespace mlir::etcopy {
#define GEN_PASS_DEF_ETCOPYOPTIMIZETRANSFERS
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"
} // namespace mlir::etcopy
namespace {
struct EtCopyOptimizeTransfersPass : mlir::etcopy::impl::EtCopyOptimizeTransfersBase<EtCopyOptimizeTransfersPass> {
  using EtCopyOptimizeTransfersBase::EtCopyOptimizeTransfersBase;
  void runOnOperation() override { signalPassFailure(); }
};
} // namespace
