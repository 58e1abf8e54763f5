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
#include "mlir/Interfaces/FunctionInterfaces.h"
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

/// Bufferizes the module and frees what bufferization allocated with
/// upstream's ownership-based deallocation pipeline. That pipeline rejects
/// code that already frees buffers itself, so memref-level input that
/// manages its own memory (and has no tensors to bufferize) skips it, and a
/// module mixing tensor code with memref.dealloc is an error rather than a
/// silent leak.
struct BufferizeAndDeallocatePass
    : public PassWrapper<BufferizeAndDeallocatePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(BufferizeAndDeallocatePass)

  BufferizeAndDeallocatePass() {
    // Tensor encodings become memory spaces (tensor<..., #etcopy.device<
    // cuda:0>> bufferizes to memref<..., #etcopy.device<cuda:0>>), across
    // function boundaries.
    bufferization::OneShotBufferizePassOptions options;
    options.bufferizeFunctionBoundaries = true;
    options.useEncodingForMemorySpace = true;
    options.functionBoundaryTypeConversion =
        bufferization::LayoutMapOption::IdentityLayoutMap;
    // Loops may carry values that come back from a device each iteration.
    options.allowReturnAllocsFromLoops = true;
    bufferize.addPass(bufferization::createOneShotBufferizePass(options));
    bufferization::buildBufferDeallocationPipeline(deallocate);
    // Deallocation may clone buffers (bufferization.clone).
    deallocate.addPass(createConvertBufferizationToMemRefPass());
  }
  BufferizeAndDeallocatePass(const BufferizeAndDeallocatePass &)
      : BufferizeAndDeallocatePass() {}

  StringRef getArgument() const override {
    return "etcopy-bufferize-and-deallocate";
  }
  StringRef getDescription() const override {
    return "Bufferize with encodings as memory spaces, then free the "
           "buffers bufferization allocated";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    bufferize.getDependentDialects(registry);
    deallocate.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool hasTensors =
        module
            ->walk([](Operation *op) {
              auto isTensor = [](Type type) { return isa<TensorType>(type); };
              auto function = dyn_cast<FunctionOpInterface>(op);
              bool tensors =
                  llvm::any_of(op->getOperandTypes(), isTensor) ||
                  llvm::any_of(op->getResultTypes(), isTensor) ||
                  (function &&
                   (llvm::any_of(function.getArgumentTypes(), isTensor) ||
                    llvm::any_of(function.getResultTypes(), isTensor)));
              return tensors ? WalkResult::interrupt() : WalkResult::advance();
            })
            .wasInterrupted();
    memref::DeallocOp manualFree;
    module->walk([&](memref::DeallocOp dealloc) {
      manualFree = dealloc;
      return WalkResult::interrupt();
    });
    if (hasTensors && manualFree) {
      manualFree.emitError(
          "cannot free the buffers bufferization creates for this module's "
          "tensors: the module also frees buffers itself, which the buffer "
          "deallocation pipeline does not support; free every buffer "
          "explicitly or none");
      return signalPassFailure();
    }
    if (failed(runPipeline(bufferize, module)) ||
        (hasTensors && failed(runPipeline(deallocate, module))))
      signalPassFailure();
  }

  OpPassManager bufferize{ModuleOp::getOperationName()};
  OpPassManager deallocate{ModuleOp::getOperationName()};
};
} // namespace

/// Bufferizes and frees what bufferization allocated.
static void addBufferization(OpPassManager &pm) {
  pm.addPass(std::make_unique<BufferizeAndDeallocatePass>());
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
