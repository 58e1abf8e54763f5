//===- Pipelines.cpp - etcopy named pass pipelines ------------*- C++ -*-===//
//
// --etcopy-to-cuda and --etcopy-to-host: from a model method (tensor-level
// delegates and glue code) or memref-level IR with etcopy ops to LLVM-dialect
// code, ready for mlir-translate --mlir-to-llvmir or mlir-runner. Every stage
// is a registered pass, so the pipeline printed by --dump-pass-pipeline (and
// a crash reproducer) runs again unchanged.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Pipelines.h"

#include "etcopy/Conversion/Passes.h"
#include "mlir/Conversion/ControlFlowToSCF/ControlFlowToSCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::etcopy;

/// The first stage of both pipelines: input they would lower only in part is
/// an error before any stage runs.
template <typename OptionsT>
static void addInputCheck(OpPassManager &pm) {
  EtCopyCheckPipelineInputOptions check;
  check.pipeline = OptionsT::getPipelineName().str();
  pm.addPass(createEtCopyCheckPipelineInput(check));
}

/// Placement and transfer optimisation on tensors, then the host compute
/// glue in a form bufferization understands, then bufferization under the
/// delegate contract.
template <typename OptionsT>
static void addTensorStages(OpPassManager &pm, const OptionsT &options) {
  if (options.placeCopies) {
    EtCopyPropagateDeviceOptions placement;
    placement.skipH2DForMethodInputs = options.skipH2DForMethodInputs;
    placement.skipD2HForMethodOutputs = options.skipD2HForMethodOutputs;
    pm.addPass(createEtCopyPropagateDevice(placement));
  }
  // The canonicalizer folds copy round trips: part of the transfer
  // optimisation, so that optimize-transfers=false keeps every copy. It
  // preserves the analyses when it changes nothing (memref-level input), so
  // that no verification of the whole module follows.
  if (options.optimizeTransfers) {
    EtCopyOptimizeTransfersOptions transfers;
    transfers.uploadGroupBytes = options.uploadGroupBytes;
    pm.addPass(createEtCopyOptimizeTransfers(transfers));
    pm.addPass(createEtCopyCanonicalize());
  }
  // One-Shot Bufferize supports structured loops only: loops made of blocks
  // become scf.while.
  pm.addPass(createLiftControlFlowToSCFPass());
  // Elementwise arith/math on host tensors (glue between delegates) becomes
  // linalg, which bufferizes; computation on device tensors is an error.
  pm.addPass(createEtCopyElementwiseToLinalg());
  pm.addPass(createEtCopyBufferize());
}

/// The kernels of the module's gpu.modules: a host version of each (for the
/// simulator), then upstream's NVPTX path and an object per gpu.module (a
/// gpu.binary). Each stage leaves a module without gpu.module unchanged and
/// preserves its analyses (no verification).
static void addKernelStages(OpPassManager &pm, StringRef chip,
                            KernelObjectFormat format, bool barePointers) {
  pm.addPass(createEtCopyOutlineHostKernels());
  EtCopyCompileKernelsOptions kernels;
  kernels.chip = chip.str();
  kernels.useBarePointersForKernels = barePointers;
  kernels.format.clear();
  llvm::raw_string_ostream(kernels.format) << format;
  pm.addPass(createEtCopyCompileKernels(kernels));
}

void etcopy::buildEtCopyToCUDAPipeline(OpPassManager &pm,
                                       const EtCopyPipelineOptions &options) {
  addInputCheck<EtCopyPipelineOptions>(pm);
  // Kernels first: the etcopy stages see launches of compiled kernels.
  // One option for both sides of the calling convention: the kernels'
  // compilation and their launches (and the simulator's host versions).
  addKernelStages(pm, options.kernelChip.getValue(), options.kernelFormat,
                  options.useBarePointersForKernels);
  addTensorStages(pm, options);
  if (options.planMemory) {
    EtCopyPlanDeviceMemoryOptions planning;
    planning.arenaOwnership = options.arenaOwnership;
    // Pinning costs per allocation, whatever its size: with pinned host
    // memory, a function's host buffers share one arena, pinned once.
    planning.planHost = options.pinnedHostMemory;
    pm.addPass(createEtCopyPlanDeviceMemory(planning));
  }
  pm.addPass(createEtCopyExportSignatures());
  ConvertEtCopyToGPUOptions toGPU;
  toGPU.async = options.async;
  pm.addPass(createConvertEtCopyToGPU(toGPU));
  // linalg (host glue), memref views, affine, scf and math to what the
  // LLVM conversion takes; only the stages the module needs run.
  pm.addPass(createEtCopyLowerHostCode());
  ConvertGPUToCUDARuntimeOptions toCUDA;
  toCUDA.batchCopies = options.batchCopies;
  toCUDA.pinnedHostMemory = options.pinnedHostMemory;
  toCUDA.cudaGraphs = options.cudaGraphs;
  toCUDA.useBarePointersForKernels = options.useBarePointersForKernels;
  // It folds its own unrealized casts: no reconcile-unrealized-casts (and
  // no verification of the whole lowered module after it).
  pm.addPass(createConvertGPUToCUDARuntime(toCUDA));
  pm.addPass(createEtCopyFinalizeLLVM());
}

void etcopy::buildEtCopyToCUDAPipeline(OpPassManager &pm) {
  buildEtCopyToCUDAPipeline(pm, EtCopyPipelineOptions());
}

void etcopy::buildEtCopyToHostPipeline(
    OpPassManager &pm, const EtCopyHostPipelineOptions &options) {
  addInputCheck<EtCopyHostPipelineOptions>(pm);
  // Placement first, so that the host build of a method has the same
  // signature as its CUDA build before the placements are erased.
  if (options.placeCopies) {
    EtCopyPropagateDeviceOptions placement;
    placement.skipH2DForMethodInputs = options.skipH2DForMethodInputs;
    placement.skipD2HForMethodOutputs = options.skipD2HForMethodOutputs;
    pm.addPass(createEtCopyPropagateDevice(placement));
  }
  // The tensor stages as for CUDA: the delegates are still known as such,
  // so bufferization applies their contract (without it, One-Shot's
  // analysis grows cubically along a chain of delegate calls), and the host
  // build bufferizes exactly as the CUDA build does. Then the placements
  // are erased and the copies become host copies.
  EtCopyHostPipelineOptions rest;
  rest.placeCopies = false;
  rest.optimizeTransfers = options.optimizeTransfers;
  rest.uploadGroupBytes = options.uploadGroupBytes;
  addTensorStages(pm, rest);
  // Launches become loops calling the kernels' host versions: after
  // bufferization, which leaves launches alone (the buffer deallocation
  // cannot see through calls to functions taking memrefs).
  EtCopyOutlineHostKernelsOptions kernels;
  kernels.launchOnHost = true;
  pm.addPass(createEtCopyOutlineHostKernels(kernels));
  pm.addPass(createConvertEtCopyToHost());
  pm.addPass(createEtCopyExportSignatures());
  // linalg (host glue), memref views, affine, scf and math to what the
  // LLVM conversion takes; only the stages the module needs run.
  pm.addPass(createEtCopyLowerHostCode());
  // Everything to LLVM in one conversion (calls resolved through a symbol
  // table), cleaned up, casts folded.
  pm.addPass(createEtCopyHostToLLVM());
  pm.addPass(createEtCopyFinalizeLLVM());
}

void etcopy::buildEtCopyToHostPipeline(OpPassManager &pm) {
  buildEtCopyToHostPipeline(pm, EtCopyHostPipelineOptions());
}

/// Registers a pipeline whose options are parsed by OptionsT::parseFromString
/// (etcopy's checks, errors reported to MLIR's pipeline parser) and which
/// refuses to be nested under anything but a module: its stages run on
/// builtin.module, and a module pass added to a `func.func(...)` pass
/// manager is a fatal error in MLIR.
template <typename OptionsT>
static void registerPipeline(StringRef description,
                             void (*build)(OpPassManager &, const OptionsT &)) {
  StringRef name = OptionsT::getPipelineName();
  registerPassPipeline(
      name, description,
      [name, build](OpPassManager &pm, StringRef text,
                    function_ref<LogicalResult(const Twine &)> errorHandler) {
        std::string message;
        llvm::raw_string_ostream errors(message);
        OptionsT options;
        if (failed(options.parseFromString(text, errors)))
          return errorHandler(StringRef(message).rtrim());
        std::optional<StringRef> anchor = pm.getOpName();
        if (anchor && *anchor != ModuleOp::getOperationName())
          return errorHandler("'" + name + "' runs on '" +
                              ModuleOp::getOperationName() +
                              "', it cannot be nested under '" + *anchor + "'");
        build(pm, options);
        return success();
      },
      [](function_ref<void(const ::mlir::detail::PassOptions &)> handler) {
        handler(OptionsT());
      });
}

void etcopy::registerPipelines() {
  registerPipeline<EtCopyPipelineOptions>(
      "Lower a model method (or memref-level etcopy IR) to LLVM-dialect code "
      "calling the CUDA Runtime API: placement, transfer optimisation, "
      "bufferization under the delegate contract, memory planning, "
      "lowering",
      buildEtCopyToCUDAPipeline);
  registerPipeline<EtCopyHostPipelineOptions>(
      "Lower a model method (or memref-level etcopy IR) to host-only "
      "LLVM-dialect code: copies are host copies, device placements are "
      "erased",
      buildEtCopyToHostPipeline);
}
