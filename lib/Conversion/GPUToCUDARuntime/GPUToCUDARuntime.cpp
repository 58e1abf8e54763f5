// Being written.
#include "etcopy/Conversion/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
namespace mlir::etcopy {
#define GEN_PASS_DEF_CONVERTGPUTOCUDARUNTIME
#include "etcopy/Conversion/Passes.h.inc"
} // namespace mlir::etcopy
namespace {
struct ConvertGPUToCUDARuntimePass : mlir::etcopy::impl::ConvertGPUToCUDARuntimeBase<ConvertGPUToCUDARuntimePass> {
  using ConvertGPUToCUDARuntimeBase::ConvertGPUToCUDARuntimeBase;
  void runOnOperation() override { signalPassFailure(); }
};
} // namespace
