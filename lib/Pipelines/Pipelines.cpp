//===- Pipelines.cpp - etcopy named pass pipelines ------------*- C++ -*-===//
//
// --etcopy-to-cuda and --etcopy-to-host: from tensor- or memref-level IR with
// etcopy ops to LLVM-dialect code, ready for mlir-translate --mlir-to-llvmir
// or mlir-runner. Both end with a check that nothing was left unconverted.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Pipelines.h"

#include "etcopy/Conversion/Passes.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
/// Fails the pipeline if any op outside the LLVM dialect survived lowering:
/// a pipeline that "succeeds" with leftovers would hand mlir-translate IR it
/// cannot translate, far from the cause.
struct VerifyLoweredToLLVMPass
    : public PassWrapper<VerifyLoweredToLLVMPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyLoweredToLLVMPass)

  StringRef getArgument() const override {
    return "etcopy-verify-lowered-to-llvm";
  }
  StringRef getDescription() const override {
    return "Check that only LLVM-dialect ops are left";
  }

  void runOnOperation() override {
    WalkResult result = getOperation()->walk([](Operation *op) {
      if (isa<ModuleOp>(op) || isa<LLVM::LLVMDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitError("'") << op->getName()
                         << "' was left unconverted by the pipeline";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

/// Frees what bufferization allocated with upstream's ownership-based
/// deallocation pipeline, unless the module already deallocates buffers
/// itself (memref-level code managing its own memory), which that pipeline
/// rejects. Mixing both in one module is not supported, as upstream.
struct DeallocateBufferizedBuffersPass
    : public PassWrapper<DeallocateBufferizedBuffersPass,
                         OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DeallocateBufferizedBuffersPass)

  DeallocateBufferizedBuffersPass() {
    bufferization::buildBufferDeallocationPipeline(deallocation);
  }
  DeallocateBufferizedBuffersPass(const DeallocateBufferizedBuffersPass &)
      : DeallocateBufferizedBuffersPass() {}

  StringRef getArgument() const override {
    return "etcopy-deallocate-bufferized-buffers";
  }
  StringRef getDescription() const override {
    return "Run the buffer deallocation pipeline unless the module frees its "
           "buffers itself";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    deallocation.getDependentDialects(registry);
  }

  void runOnOperation() override {
    bool managesMemory = getOperation()
                             ->walk([](memref::DeallocOp) {
                               return WalkResult::interrupt();
                             })
                             .wasInterrupted();
    if (!managesMemory && failed(runPipeline(deallocation, getOperation())))
      signalPassFailure();
  }

  OpPassManager deallocation{ModuleOp::getOperationName()};
};
} // namespace

/// Bufferizes with tensor encodings as memory spaces (so that
/// tensor<..., #etcopy.device<cuda:0>> becomes memref<..., #etcopy.device<
/// cuda:0>>), across function boundaries, then frees what it allocated.
static void addBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions options;
  options.bufferizeFunctionBoundaries = true;
  options.useEncodingForMemorySpace = true;
  // Loops may carry values that come back from a device in each iteration.
  options.allowReturnAllocsFromLoops = true;
  options.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(options));
  pm.addPass(std::make_unique<DeallocateBufferizedBuffersPass>());
  // Deallocation may clone buffers (bufferization.clone): plain memref ops.
  pm.addPass(createConvertBufferizationToMemRefPass());
}

/// The host-side lowering shared by both pipelines, up to (not including)
/// the final conversion to the LLVM dialect.
static void addHostLowering(OpPassManager &pm) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
}

void etcopy::buildEtCopyToCUDAPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  addBufferization(pm);
  pm.addPass(etcopy::createConvertEtCopyToGPU());
  addHostLowering(pm);
  pm.addPass(etcopy::createConvertGPUToCUDARuntime());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(std::make_unique<VerifyLoweredToLLVMPass>());
}

void etcopy::buildEtCopyToHostPipeline(OpPassManager &pm) {
  pm.addPass(etcopy::createConvertEtCopyToHost());
  pm.addPass(createCanonicalizerPass());
  addBufferization(pm);
  addHostLowering(pm);
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(std::make_unique<VerifyLoweredToLLVMPass>());
}

void etcopy::registerPipelines() {
  PassPipelineRegistration<>(
      "etcopy-to-cuda",
      "Lower etcopy (tensor or memref level) to LLVM-dialect code calling "
      "the CUDA Runtime API",
      buildEtCopyToCUDAPipeline);
  PassPipelineRegistration<>(
      "etcopy-to-host",
      "Lower etcopy (tensor or memref level) to host-only LLVM-dialect code: "
      "copies are host copies, device placements are erased",
      buildEtCopyToHostPipeline);
}
