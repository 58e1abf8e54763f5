//===- GPUToCUDARuntime.cpp - gpu runtime ops to CUDA calls ---*- C++ -*-===//
//
// Lowers gpu.alloc / gpu.dealloc / gpu.memcpy / gpu.memset / gpu.wait /
// gpu.launch_func, sync and async, and gpu.binary, to calls of the checked
// CUDA wrappers of CudaSupport*.c, and the rest of the module to the LLVM
// dialect. This file holds the passes; the
// pass works in four steps, each in a file of its own next to this one:
//
//  1. one walk validates the module (everything the pass cannot lower is
//     reported up front) and collects the runtime ops and delegate calls
//     (Planning.cpp, with what it asks of the operands' types in
//     CopyClassification.cpp);
//  2. planning, still on func.func, of the runtime ops folded in place (a
//     memref.cast operand folds into the op): the stream of each device a
//     function uses is got at entry from the stream provider (streams
//     persist across calls; the host waits for them before returning), runs
//     of independent copies are grouped into batches, stream-ordered
//     delegate calls get their device's stream as an extra argument, and the
//     values the lowering needs (streams, locations, shared constants) are
//     materialised as LLVM-dialect ops (Planning.cpp);
//  3. a dialect conversion with the LLVM patterns of every loaded dialect
//     lowers everything but the planned ops, which it leaves in place (this
//     file); the gpu.binary ops become globals (KernelLowering.cpp); one
//     visit of each planned op then replaces it with its calls, without the
//     conversion driver (RuntimeOpLowerer, in RuntimeOpLowering.cpp; the
//     launches through KernelLowering);
//  4. the functions of the runtime support that the calls use are copied
//     into the module (RuntimeSupport.cpp, which also reads them from the
//     embedded bytecode of CudaSupport*.c), and one pass over each function
//     and back folds what the conversion left behind (descriptor fields read
//     back from descriptors just built), erases dead ops (CleanUp.cpp) and,
//     on the ops that stay, checks that no etcopy- or token-typed value was
//     left unlowered (this file).
//
// Every step is linear in the size of the module: symbols are created per
// distinct file and helper, never per op.
//
// etcopy-host-to-llvm is steps 3 and 4 alone, for modules without device
// work.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Conversion/Passes.h"

#include "CleanUp.h"
#include "CopyClassification.h"
#include "GraphLowering.h"
#include "KernelLowering.h"
#include "Planning.h"
#include "RuntimeOpLowering.h"
#include "RuntimeSupport.h"
#include "etcopy/Dialect/EtCopy/RemarkUtils.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

#include <deque>

namespace mlir::etcopy {
#define GEN_PASS_DEF_CONVERTGPUTOCUDARUNTIME
#define GEN_PASS_DEF_ETCOPYHOSTTOLLVM
#include "etcopy/Conversion/Passes.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;
using namespace mlir::etcopy::cuda_lowering;

namespace {

/// Folds the ops the pass lowers itself (runtime ops, pinned buffers' alloc
/// and dealloc) in place, as the conversion driver would before lowering
/// them: their folders take the static type behind a `memref.cast` operand,
/// which makes a copy of a casted buffer one cudaMemcpyAsync rather than a
/// strided copy. Before planning, so that batches and address-only views
/// see the folded ops; casts left unused are erased.
/// True for a gpu.memcpy or gpu.memset whose memrefs are static and hold no
/// element: it moves no byte.
bool movesNothing(Operation *op) {
  auto isEmpty = [](Value memref) {
    auto type = cast<MemRefType>(memref.getType());
    return type.hasStaticShape() && type.getNumElements() == 0;
  };
  if (auto copy = dyn_cast<gpu::MemcpyOp>(op))
    return isEmpty(copy.getSrc()) && isEmpty(copy.getDst());
  if (auto memset = dyn_cast<gpu::MemsetOp>(op))
    return isEmpty(memset.getDst());
  return false;
}

/// Removes `op`, which moves nothing: its token becomes its one dependency,
/// or a `gpu.wait async` of its dependencies, which is returned (it is
/// lowered with the other runtime ops). A sync-form op has nothing to wait
/// for.
Operation *removeEmptyTransfer(Operation *op) {
  auto asyncOp = cast<gpu::AsyncOpInterface>(op);
  Value token = asyncOp.getAsyncToken();
  Operation *replacement = nullptr;
  if (token && !token.use_empty()) {
    ValueRange dependencies = asyncOp.getAsyncDependencies();
    if (dependencies.size() == 1) {
      token.replaceAllUsesWith(dependencies.front());
    } else {
      OpBuilder builder(op);
      replacement = gpu::WaitOp::create(builder, op->getLoc(),
                                        token.getType(), dependencies);
      token.replaceAllUsesWith(replacement->getResult(0));
    }
  }
  op->erase();
  return replacement;
}

/// Folds the runtime ops in place (a memref.cast operand folds into the op)
/// and removes those that then move no byte: CUDA rejects a batch holding a
/// copy of 0 bytes, and an empty memref's buffer may be null.
void foldRuntimeOps(ModuleWork &work) {
  llvm::SetVector<Operation *> casts;
  SmallVector<OpFoldResult> results;
  for (auto &[func, ops] : work.runtimeOps) {
    size_t kept = 0;
    for (Operation *op : ops) {
      // Delegate calls are lowered by the conversion.
      if (!isa<func::CallOp>(op)) {
        for (Value operand : op->getOperands())
          if (auto cast = operand.getDefiningOp<memref::CastOp>())
            casts.insert(cast);
        // Their folds are in place; one to values would leave the op as it
        // is, and it is lowered as it is.
        results.clear();
        (void)op->fold(results);
        if (movesNothing(op)) {
          op = removeEmptyTransfer(op);
          if (!op)
            continue;
        }
      }
      ops[kept++] = op;
    }
    ops.truncate(kept);
  }
  for (Operation *cast : casts)
    if (cast->use_empty())
      cast->erase();
}

/// The patterns that lower everything but the gpu dialect to LLVM: func's
/// with a symbol table (through the dialect interface, each call's lowering
/// would look its callee up by a scan of the module, O(calls x functions)
/// on a method calling thousands of delegates), and every other loaded
/// dialect's ConvertToLLVMPatternInterface patterns (the gpu dialect's
/// target the mgpu* wrappers, not the CUDA Runtime).
void populateModuleToLLVMPatterns(ConversionTarget &target,
                                  LLVMTypeConverter &converter,
                                  SymbolTableCollection &symbolTables,
                                  RewritePatternSet &patterns) {
  populateFuncToLLVMConversionPatterns(converter, patterns, &symbolTables);
  for (Dialect *dialect : converter.getContext().getLoadedDialects()) {
    if (isa<func::FuncDialect, gpu::GPUDialect>(dialect))
      continue;
    if (auto *iface = dyn_cast<ConvertToLLVMPatternInterface>(dialect))
      iface->populateConvertToLLVMConversionPatterns(target, converter,
                                                     patterns);
  }
}

/// The options of both passes' conversions: host buffers from
/// aligned_alloc, which aligns them itself.
LowerToLLVMOptions getLoweringOptions(ModuleOp module) {
  LowerToLLVMOptions options(module.getContext(), DataLayout(module));
  options.allocLowering = LowerToLLVMOptions::AllocLowering::AlignedAlloc;
  return options;
}

/// Reports each op that uses memory on a device (a memref on
/// `#etcopy.device` other than the host): a module with device work is
/// convert-gpu-to-cuda-runtime's. One walk, each type checked once.
static LogicalResult checkNoDeviceMemory(ModuleOp module) {
  DenseMap<Type, bool> onDevice;
  auto isOnDevice = [&](Type type) {
    auto [it, inserted] = onDevice.try_emplace(type);
    if (inserted)
      it->second = type.walk([](DeviceAttr device) {
                         return device.isHost() ? WalkResult::advance()
                                                : WalkResult::interrupt();
                       })
                       .wasInterrupted();
    return it->second;
  };
  bool found = false;
  module.walk([&](Operation *op) {
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    if (auto function = dyn_cast<FunctionOpInterface>(op))
      types.push_back(function.getFunctionType());
    for (Type type : types) {
      if (!isOnDevice(type))
        continue;
      op->emitError("'") << op->getName() << "' uses device memory " << type
                         << ": etcopy-host-to-llvm lowers modules without "
                            "device work; lower this one with "
                            "convert-gpu-to-cuda-runtime (or --etcopy-to-cuda)";
      found = true;
      break;
    }
  });
  return failure(found);
}

struct EtCopyHostToLLVMPass
    : public etcopy::impl::EtCopyHostToLLVMBase<EtCopyHostToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (failed(checkNoDeviceMemory(module)))
      return signalPassFailure();
    LLVMTypeConverter converter(ctx, getLoweringOptions(module));
    LLVMConversionTarget target(*ctx);
    RewritePatternSet patterns(ctx);
    SymbolTableCollection symbolTables;
    populateModuleToLLVMPatterns(target, converter, symbolTables, patterns);
    // An error the conversion reports without failing (the type converter's,
    // for a memory space it cannot convert) fails the pass too.
    bool reportedError = false;
    ScopedDiagnosticHandler errors(ctx, [&](Diagnostic &diag) {
      reportedError |= diag.getSeverity() == DiagnosticSeverity::Error;
      return failure(); // Reported as usual.
    });
    // With pattern rollback, as convert-gpu-to-cuda-runtime (which says why).
    if (failed(applyPartialConversion(module, target, std::move(patterns))) ||
        reportedError)
      return signalPassFailure();
    reconcileCasts(module);
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      cleanUpFunction(func, converter.getIndexTypeBitwidth());
  }
};

struct ConvertGPUToCUDARuntimePass
    : public etcopy::impl::ConvertGPUToCUDARuntimeBase<
          ConvertGPUToCUDARuntimePass> {
  using ConvertGPUToCUDARuntimeBase::ConvertGPUToCUDARuntimeBase;

  void runOnOperation() override;
};

} // namespace

void mlir::etcopy::populateCUDARuntimeTypeConversions(
    LLVMTypeConverter &converter) {
  MLIRContext *ctx = &converter.getContext();
  auto genericSpace = IntegerAttr::get(IntegerType::get(ctx, 64), 0);
  converter.addTypeAttributeConversion(
      [=](BaseMemRefType, DeviceAttr) { return genericSpace; });
  converter.addTypeAttributeConversion(
      [=](BaseMemRefType, gpu::AddressSpaceAttr) { return genericSpace; });
  converter.addTypeAttributeConversion(
      [=](BaseMemRefType, IntegerAttr) { return genericSpace; });
  converter.addConversion([ctx](gpu::AsyncTokenType) -> Type {
    return LLVM::LLVMPointerType::get(ctx);
  });
}

/// True if `type` still mentions a device placement or an async token.
static bool mentionsUnloweredType(Type type) {
  return type.walk([](Attribute attr) {
               return isa<DeviceAttr>(attr) ? WalkResult::interrupt()
                                            : WalkResult::advance();
             })
             .wasInterrupted() ||
         type.walk([](Type nested) {
               return isa<gpu::AsyncTokenType>(nested) ? WalkResult::interrupt()
                                                       : WalkResult::advance();
             })
             .wasInterrupted();
}

/// The bytes `copy` moves, when its memrefs are static (every copy of a
/// batch is).
static std::optional<int64_t> getStaticBytes(gpu::MemcpyOp copy) {
  auto type = cast<MemRefType>(copy.getSrc().getType());
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// Reports the lowering's decisions that planning fixed, function by
/// function in the module's order: each batch of copies (at its last copy,
/// where it is issued), each copy left out of every batch and why, and how
/// each transfer buffer is allocated.
static void remarkPlanning(const ModuleWork &work, bool batchCopies,
                           const BatchPlanning &batching, StringRef pass) {
  if (LLVM_LIKELY(!work.runtimeOps.empty() &&
                  !work.runtimeOps.front().first->getContext()
                       ->getRemarkEngine()))
    return;
  auto remarkBatch = [&](const CopyBatch &batch) {
    int64_t bytes = 0;
    for (gpu::MemcpyOp copy : batch.copies)
      bytes += getStaticBytes(copy).value_or(0);
    if (InFlightRemark remark =
            remarkPassed(batch.copies.back(), "CopiesBatched", pass))
      remark << RemarkArg("copies of one stream issued as one "
                          "cudaMemcpyBatchAsync")
             << RemarkArg("Copies", static_cast<int64_t>(batch.copies.size()))
             << RemarkArg("Bytes", bytes);
  };
  auto remarkUnbatched = [&](const UnbatchedCopy &unbatched) {
    InFlightRemark remark =
        remarkMissed(unbatched.copy, "CopyNotBatched", pass);
    if (!remark)
      return;
    remark << RemarkArg("copy issued alone, not in a cudaMemcpyBatchAsync")
           << RemarkArg("Reason", unbatched.reason);
    if (unbatched.blocker)
      remark << RemarkArg("Op", unbatched.blocker->getName().getStringRef());
  };
  auto remarkTransferBuffer = [&](Operation *alloc) {
    if (work.pinTransferBuffers) {
      if (InFlightRemark remark =
              remarkPassed(alloc, "TransferBufferPinned", pass))
        remark << RemarkArg("host buffer of transfers taken from the cache "
                            "of pinned blocks (cudaMallocHost)")
               << RemarkArg("Reason", "pinned-host-memory=true");
    } else if (InFlightRemark remark =
                   remarkMissed(alloc, "TransferBufferPageable", pass)) {
      remark << RemarkArg("host buffer of transfers taken from the cache of "
                          "pageable blocks")
             << RemarkArg("Reason", "pinned-host-memory=false: CUDA stages "
                                    "copies of pageable memory through "
                                    "pinned buffers of its own");
    }
  };
  // Planning made the batches and the copies left alone function by
  // function in this order.
  auto batch = batching.batches.begin();
  auto unbatched = batching.unbatched.begin();
  auto inFunction = [](gpu::MemcpyOp copy, func::FuncOp func) {
    return copy->getParentOfType<func::FuncOp>() == func;
  };
  for (const auto &[constFunc, ops] : work.runtimeOps) {
    func::FuncOp func = constFunc;
    for (; batch != batching.batches.end() &&
           inFunction(batch->copies.back(), func);
         ++batch)
      remarkBatch(*batch);
    if (batchCopies) {
      for (; unbatched != batching.unbatched.end() &&
             inFunction(unbatched->copy, func);
           ++unbatched)
        remarkUnbatched(*unbatched);
    } else {
      for (Operation *op : ops)
        if (auto copy = dyn_cast<gpu::MemcpyOp>(op))
          remarkUnbatched({copy, "batch-copies=false"});
    }
    if (!work.transferBufferAllocs.empty())
      func.walk([&](Operation *op) {
        if (work.transferBufferAllocs.contains(op))
          remarkTransferBuffer(op);
      });
  }
}

void ConvertGPUToCUDARuntimePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  LLVMTypeConverter converter(ctx, getLoweringOptions(module));
  populateCUDARuntimeTypeConversions(converter);

  SymbolTable symbols(module);
  ModuleWork work;
  unsigned indexBitwidth = converter.getIndexTypeBitwidth();
  if (failed(validateAndCollect(module, symbols, indexBitwidth,
                                pinnedHostMemory, useBarePointersForKernels,
                                work)))
    return signalPassFailure();
  foldRuntimeOps(work);

  RuntimeSupport support(module, symbols);
  ModuleGlobals globals;
  DenseMap<Operation *, std::unique_ptr<FunctionValues>> functionValues;
  auto getValues = [&](func::FuncOp func) -> FunctionValues & {
    std::unique_ptr<FunctionValues> &values = functionValues[func];
    if (!values)
      values =
          std::make_unique<FunctionValues>(func, support, symbols, globals);
    return *values;
  };
  PlanMap plans;
  size_t numRuntimeOps = 0;
  for (auto &[func, ops] : work.runtimeOps)
    numRuntimeOps += ops.size();
  plans.reserve(numRuntimeOps);
  // Deque: op plans point at their function's plan.
  std::deque<FunctionPlan> functionPlans;
  DenseSet<Operation *> delegateCalls;
  for (auto [call, device] : work.delegateCalls)
    delegateCalls.insert(call);
  BatchPlanning batching{indexBitwidth, delegateCalls, {}, {}};
  DenseMap<Operation *, int64_t> homeDevices;
  // Captured functions are not batched: CUDA 13 cannot capture
  // cudaMemcpyBatchAsync.
  llvm::MapVector<func::FuncOp, GraphCapture> captures;
  if (cudaGraphs)
    captures = findGraphCaptures(work, getArgument());
  DenseMap<Operation *, FunctionPlan *> planOfFunction;
  for (auto &[func, ops] : work.runtimeOps) {
    FunctionPlan &plan = functionPlans.emplace_back(getValues(func));
    planOfFunction[func] = &plan;
    homeDevices[func] = planFunction(
        func, ops, work.streamOrderedCalls, plan, plans,
        batchCopies && !captures.contains(func) ? &batching : nullptr);
  }
  numStreams = work.runtimeOps.size();
  numBatches = batching.batches.size();
  for (const CopyBatch &batch : batching.batches)
    numBatchedCopies += batch.copies.size();
  if (work.pinTransferBuffers)
    numPinnedBuffers = work.transferBufferAllocs.size();
  remarkPlanning(work, batchCopies, batching, getArgument());
  switchDevicesForDelegates(work.delegateCalls, homeDevices, getValues,
                            support);
  passStreamsToDelegates(work, plans, support);
  lowerGraphCaptures(captures, planOfFunction, plans, symbols, getArgument());
  if (failed(support.checkModuleSymbols()))
    return signalPassFailure();

  // Each view is classified once, however many runtime ops use it.
  DenseSet<Operation *> addressOnlyViews, classifiedViews;
  for (auto &[func, ops] : work.runtimeOps)
    for (Operation *op : ops)
      for (Value operand : op->getOperands())
        if (auto view = operand.getDefiningOp<memref::ViewOp>();
            view && classifiedViews.insert(view).second &&
            isAddressOnlyView(view, indexBitwidth))
          addressOnlyViews.insert(view);
  // The delegate calls are planned and lowered by the conversion from here.
  for (Operation *call : llvm::make_first_range(work.streamOrderedCalls))
    plans.erase(call);
  for (auto &[func, ops] : work.runtimeOps)
    llvm::erase_if(ops, [](Operation *op) { return isa<func::CallOp>(op); });

  // Lower everything but the planned ops with the dialects' own patterns,
  // then the planned ops in place.
  LLVMConversionTarget target(*ctx);
  target.addIllegalDialect<gpu::GPUDialect>();
  target.addDynamicallyLegalOp<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp,
                               gpu::MemsetOp, gpu::WaitOp, gpu::LaunchFuncOp>(
      [&](Operation *op) { return plans.contains(op); });
  // Transfer buffers are planned; other host buffers are the conversion's (no
  // callback without transfer buffers: it would look up every alloc and
  // free).
  if (!work.transferBufferAllocs.empty())
    target.addDynamicallyLegalOp<memref::AllocOp, memref::DeallocOp>(
        [&](Operation *op) -> std::optional<bool> {
          if (plans.contains(op))
            return true;
          return std::nullopt;
        });
  target.addDynamicallyLegalOp<memref::ViewOp>(
      [&](memref::ViewOp view) { return addressOnlyViews.contains(view); });
  target.addLegalOp<gpu::GPUModuleOp, gpu::BinaryOp>();
  target.markOpRecursivelyLegal<gpu::GPUModuleOp>();

  RewritePatternSet patterns(ctx);
  SymbolTableCollection symbolTables;
  populateModuleToLLVMPatterns(target, converter, symbolTables, patterns);
  // The host kernels' memref inputs, which bare-pointer launches pass as
  // one pointer each, before the conversion expands them.
  HostKernelInputs hostKernelInputs;
  if (useBarePointersForKernels)
    hostKernelInputs = collectHostKernelInputs(module);
  // The driver keeps its pattern rollback (the default). Without it
  // (`allowPatternRollback = false`) the conversion is about a fifth faster
  // on tensor-level input, but the driver aborts the process wherever it
  // would have undone a change, e.g. a fold of host tensor math into a
  // constant that no pattern lowers (test/Conversion/HostToLLVM/
  // unlowerable-fold.mlir): input the pass must leave or report instead.
  if (failed(applyPartialConversion(module, target, std::move(patterns))))
    return signalPassFailure();
  // The binaries become globals (their host kernels are llvm.func now),
  // which the launches refer to.
  KernelLowering kernels(module, symbols,
                         useBarePointersForKernels ? &hostKernelInputs
                                                   : nullptr);
  lowerRuntimeOps(work, converter, support, plans, addressOnlyViews, &kernels);
  support.emit();

  // Fold the casts and what the patterns left, check that nothing etcopy-
  // or token-typed survived, drop the etcopy attributes of ops and function
  // arguments (they have no meaning in LLVM IR) and count the call sites of the runtime
  // support.
  reconcileCasts(module);
  bool leftovers = false;
  DenseMap<Type, bool> unlowered;
  auto isUnlowered = [&](Type type) {
    auto [it, inserted] = unlowered.try_emplace(type);
    if (inserted)
      it->second = mentionsUnloweredType(type);
    return it->second;
  };
  auto check = [&](Operation *nested) {
    if (isa<gpu::GPUModuleOp>(nested))
      return WalkResult::skip();
    // With those of function arguments: the `_mlir_ciface_` wrapper of a
    // delegate keeps its `etcopy.writes` otherwise, which the verifier
    // rejects on a function that is no delegate.
    removeEtCopyAttributes(nested);
    if (auto call = dyn_cast<LLVM::CallOp>(nested)) {
      std::optional<StringRef> callee = call.getCallee();
      if (callee && support.isSupportFunction(*callee))
        ++numRuntimeCalls;
      return WalkResult::advance();
    }
    // The LLVM dialect's ops only take LLVM types (their verifiers check
    // it).
    if (isa<UnrealizedConversionCastOp>(nested) ||
        isa_and_present<LLVM::LLVMDialect>(nested->getDialect()))
      return WalkResult::advance();
    for (Type type : llvm::concat<Type>(nested->getOperandTypes(),
                                        nested->getResultTypes()))
      if (isUnlowered(type)) {
        nested->emitError("'")
            << nested->getName() << "' was left with type " << type
            << " that convert-gpu-to-cuda-runtime could not lower";
        leftovers = true;
        break;
      }
    return WalkResult::advance();
  };
  // The body of a function is checked as it is cleaned up (a walk of the
  // lowered module costs about a tenth of the pass on large input).
  auto checkNested = [&](Operation *op) {
    if (op->getNumRegions() == 0)
      (void)check(op);
    else
      op->walk<WalkOrder::PreOrder>(check);
  };
  for (Operation &op : *module.getBody()) {
    auto func = dyn_cast<LLVM::LLVMFuncOp>(op);
    if (!func) {
      checkNested(&op);
      continue;
    }
    if (support.isSupportFunction(func.getName()))
      continue;
    (void)check(func);
    cleanUpFunction(func, indexBitwidth, checkNested);
  }
  if (leftovers)
    signalPassFailure();
}
