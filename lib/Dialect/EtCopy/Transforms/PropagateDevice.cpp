// Being written.
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h"
namespace mlir::etcopy {
#define GEN_PASS_DEF_ETCOPYPROPAGATEDEVICE
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"
} // namespace mlir::etcopy
namespace {
struct EtCopyPropagateDevicePass : mlir::etcopy::impl::EtCopyPropagateDeviceBase<EtCopyPropagateDevicePass> {
  using EtCopyPropagateDeviceBase::EtCopyPropagateDeviceBase;
  void runOnOperation() override { signalPassFailure(); }
};
} // namespace
