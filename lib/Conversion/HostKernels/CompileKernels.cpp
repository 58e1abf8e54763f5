//===- CompileKernels.cpp - Upstream's NVPTX path, if there are kernels ---===//
//
// etcopy-compile-kernels: nvvm-attach-target, the NVVM lowering of each
// gpu.module and gpu-module-to-binary, run as one dynamic pipeline of the
// upstream passes when the module holds a gpu.module, and nothing (every
// analysis preserved, so no verification of the module) when it holds none.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir {
namespace etcopy {
#define GEN_PASS_DEF_ETCOPYCOMPILEKERNELS
#include "etcopy/Conversion/Passes.h.inc"
} // namespace etcopy
} // namespace mlir

using namespace mlir;

namespace {

/// Whether gpu-module-to-binary takes `format` (the spellings the pass
/// documents; upstream also takes their long forms).
bool isKernelFormat(StringRef format) {
  return llvm::StringSwitch<bool>(format)
      .Cases({"isa", "bin", "fatbin"}, true)
      .Default(false);
}

/// Upstream's NVPTX path for the gpu.modules of a module.
void buildKernelPipeline(OpPassManager &pm, StringRef chip, StringRef format,
                         bool barePointers) {
  GpuNVVMAttachTargetOptions target;
  target.chip = chip.str();
  pm.addPass(createGpuNVVMAttachTarget(target));
  // The kernels' structured control flow, views and affine maps first, as
  // upstream's gpu-lower-to-nvvm-pipeline lowers them: convert-gpu-to-nvvm
  // lowers the rest.
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = barePointers;
  kernels.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = format.str();
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

struct EtCopyCompileKernelsPass
    : public etcopy::impl::EtCopyCompileKernelsBase<EtCopyCompileKernelsPass> {
  using EtCopyCompileKernelsBase::EtCopyCompileKernelsBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager pipeline(ModuleOp::getOperationName());
    buildKernelPipeline(pipeline, chip, format, useBarePointersForKernels);
    pipeline.getDependentDialects(registry);
  }

  LogicalResult initialize(MLIRContext *context) override {
    if (!isKernelFormat(format))
      return emitError(UnknownLoc::get(context))
             << "option 'format' of 'etcopy-compile-kernels': '" << format
             << "' is not a kernel format; expected isa, bin or fatbin";
    pipeline.emplace(ModuleOp::getOperationName());
    buildKernelPipeline(*pipeline, chip, format, useBarePointersForKernels);
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module.getOps<gpu::GPUModuleOp>().empty()) {
      markAllAnalysesPreserved();
      return;
    }
    if (failed(runPipeline(*pipeline, module)))
      signalPassFailure();
  }

private:
  std::optional<OpPassManager> pipeline;
};

} // namespace
