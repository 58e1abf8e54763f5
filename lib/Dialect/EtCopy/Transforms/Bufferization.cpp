//===- Bufferization.cpp - Bufferizing etcopy programs --------*- C++ -*-===//
//
// Everything that turns tensor-level etcopy programs into buffers:
//
//  * the BufferizableOpInterface models of etcopy.h2d and etcopy.d2h: a
//    functional copy reads its source and bufferizes to a fresh allocation
//    in the memory space named by the result's encoding and an out-form
//    copy into it;
//  * etcopy-elementwise-to-linalg: host glue computing on tensors becomes
//    linalg, which bufferizes; computation on device tensors is rejected;
//  * the etcopy-bufferize pass: the delegate calling contract stated to
//    One-Shot Bufferize, bufferization, and deallocation: each buffer freed
//    right after its last use where its owner is static, upstream's
//    ownership-based deallocation with the contract's aliasing facts in
//    the functions where it is not.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Dialect/EtCopy/BufferizableOpInterfaceImpl.h"

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "etcopy/Dialect/EtCopy/EtCopyOps.h"
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h"
#include "etcopy/Dialect/EtCopy/RemarkUtils.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::etcopy {
#define GEN_PASS_DEF_ETCOPYBUFFERIZE
#define GEN_PASS_DEF_ETCOPYELEMENTWISETOLINALG
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::etcopy;

/// The buffer of a functional copy's result: an identity-layout memref with
/// the result's shape and element type whose memory space is the result's
/// encoding (none for a host tensor without one), as
/// `use-encoding-for-memory-space` bufferizes every other tensor of that type.
static MemRefType getResultBufferType(RankedTensorType resultType) {
  return MemRefType::get(resultType.getShape(), resultType.getElementType(),
                         MemRefLayoutAttrInterface(), resultType.getEncoding());
}

/// Where `type` lives, for diagnostics: "the host", "cuda:0" or, for a memory
/// space etcopy does not interpret, the attribute.
static std::string describePlacement(Type type) {
  Placement placement = getPlacement(type);
  if (placement.isHost())
    return "the host";
  if (placement.isDevice())
    return placement.device.str();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << getPlacementAttr(type);
  return text;
}

/// True when `a` and `b` are on the same device as etcopy sees it (the host
/// with or without `#etcopy.device<cpu>` counts as one place).
static bool haveSamePlacement(Type a, Type b) {
  Placement placementA = getPlacement(a);
  Placement placementB = getPlacement(b);
  return placementA.kind == placementB.kind &&
         placementA.device == placementB.device;
}

namespace {

/// Bufferization of a functional `etcopy.h2d` / `etcopy.d2h`: the source is
/// read, never written, and the result is a new buffer that aliases nothing.
template <typename CopyOpTy>
struct CopyOpInterface
    : public BufferizableOpInterface::ExternalModel<CopyOpInterface<CopyOpTy>,
                                                    CopyOpTy> {
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }

  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }

  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }

  FailureOr<BufferLikeType> getBufferType(Operation *, Value value,
                                          const BufferizationOptions &,
                                          const BufferizationState &,
                                          SmallVector<Value> &) const {
    return cast<BufferLikeType>(
        getResultBufferType(cast<RankedTensorType>(value.getType())));
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto copyOp = cast<CopyOpTy>(op);
    Location loc = copyOp.getLoc();

    FailureOr<Value> source =
        getBuffer(rewriter, copyOp.getSource(), options, state);
    if (failed(source))
      return failure();
    // The out form needs its device side in a device memory space, which
    // only the tensor encoding can provide.
    if (!haveSamePlacement(source->getType(), copyOp.getSourceType()))
      return copyOp.emitOpError("source ")
             << copyOp.getSourceType() << " on "
             << describePlacement(copyOp.getSourceType())
             << " was bufferized to " << source->getType() << " on "
             << describePlacement(source->getType())
             << "; run one-shot-bufferize with use-encoding-for-memory-space";

    // Allocate the destination with the result's shape: dynamic sizes are
    // those of the source, static sizes are part of the type.
    auto resultType = cast<RankedTensorType>(copyOp.getResult().getType());
    SmallVector<Value> dynamicSizes;
    for (auto [dim, size] : llvm::enumerate(resultType.getShape()))
      if (ShapedType::isDynamic(size))
        dynamicSizes.push_back(
            memref::DimOp::create(rewriter, loc, *source, dim));
    FailureOr<Value> dest = options.createAlloc(
        rewriter, loc, getResultBufferType(resultType), dynamicSizes);
    if (failed(dest))
      return failure();

    CopyOpTy::create(rewriter, loc, *source, *dest);
    replaceOpWithBufferizedValues(rewriter, op, *dest);
    return success();
  }
};

} // namespace

void mlir::etcopy::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, EtCopyDialect *) {
    H2DOp::attachInterface<CopyOpInterface<H2DOp>>(*context);
    D2HOp::attachInterface<CopyOpInterface<D2HOp>>(*context);
    D2DOp::attachInterface<CopyOpInterface<D2DOp>>(*context);
  });
}

//===----------------------------------------------------------------------===//
// etcopy-elementwise-to-linalg
//===----------------------------------------------------------------------===//

/// The first device a tensor operand or result of `op` lives on, if any.
static DeviceAttr getDeviceTensorPlacement(Operation *op) {
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    if (!isa<TensorType>(type))
      continue;
    Placement placement = getPlacement(type);
    if (placement.isDevice())
      return placement.device;
  }
  return {};
}

/// Whether `op` only chooses between buffers of one placement: a select with
/// a scalar condition.
static bool onlyChoosesBuffer(Operation *op) {
  auto select = dyn_cast<arith::SelectOp>(op);
  return select && !isa<ShapedType>(select.getCondition().getType()) &&
         select.getTrueValue().getType() == select.getFalseValue().getType();
}

/// Whether `op` computes on tensors: an elementwise op (with a tensor
/// operand or result) or a linalg op on tensors.
static bool computesOnTensors(Operation *op) {
  auto isTensor = [](Type type) { return isa<TensorType>(type); };
  bool tensors = llvm::any_of(op->getOperandTypes(), isTensor) ||
                 llvm::any_of(op->getResultTypes(), isTensor);
  return tensors && (OpTrait::hasElementwiseMappableTraits(op) ||
                     isa<linalg::LinalgOp>(op));
}

namespace {
struct ElementwiseToLinalgPass
    : public etcopy::impl::EtCopyElementwiseToLinalgBase<
          ElementwiseToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool valid = true, hostCompute = false;
    module.walk([&](Operation *op) {
      if (!computesOnTensors(op))
        return;
      DeviceAttr device = getDeviceTensorPlacement(op);
      // What the conversion below rewrites (a select on host tensors too).
      if (!device) {
        hostCompute |= !isa<linalg::LinalgOp>(op);
        return;
      }
      if (onlyChoosesBuffer(op))
        return;
      Type type = llvm::find_if(llvm::concat<Type>(op->getOperandTypes(),
                                                   op->getResultTypes()),
                                [](Type t) {
                                  return getPlacement(t).isDevice();
                                })
                      .operator*();
      auto function = op->getParentOfType<FunctionOpInterface>();
      InFlightDiagnostic diag = op->emitError("'")
                                << op->getName() << "' computes on " << type
                                << " on " << device.str();
      if (function && getDelegateDevice(function))
        diag << " in the body of delegate @" << function.getName()
             << ", but etcopy generates no device kernels: declare the "
                "delegate and link its implementation";
      else
        diag << " in host code, but etcopy generates no device kernels: "
                "compute it in a delegate, or copy the operands to the host "
                "with etcopy.d2h";
      valid = false;
    });
    if (!valid)
      return signalPassFailure();
    // Nothing to convert: the IR is unchanged, so the verifier need not run
    // again (most memref-level input).
    if (!hostCompute)
      return markAllAnalysesPreserved();

    // Upstream's conversion, on the host ops only (the rest is left).
    ConversionTarget target(getContext());
    target.markUnknownOpDynamicallyLegal([](Operation *op) {
      return !computesOnTensors(op) || isa<linalg::LinalgOp>(op) ||
             getDeviceTensorPlacement(op);
    });
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseToLinalgConversionPatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// The delegate calling contract
//===----------------------------------------------------------------------===//

/// Gives the declaration `function` a body that returns fresh values and
/// touches no argument, so that One-Shot Bufferize's analysis sees what the
/// contract promises: without a body, it must assume that every result may
/// alias every tensor argument, which makes a buffer that a delegate reads
/// look written whenever another delegate writes that delegate's result.
/// The body is never executed: it is dropped after bufferization. Returns
/// false, leaving the declaration alone, for result types it cannot make.
static bool addContractBody(func::FuncOp function) {
  OpBuilder builder(function.getContext());
  Location loc = function.getLoc();
  Block *body = function.addEntryBlock();
  builder.setInsertionPointToStart(body);
  SmallVector<Value> results;
  for (Type type : function.getResultTypes()) {
    if (auto tensor = dyn_cast<RankedTensorType>(type)) {
      Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
      SmallVector<Value> sizes(tensor.getNumDynamicDims(), zero);
      results.push_back(tensor::EmptyOp::create(builder, loc, tensor.getShape(),
                                                tensor.getElementType(), sizes,
                                                tensor.getEncoding()));
      continue;
    }
    if (isa<IntegerType, IndexType, FloatType>(type)) {
      results.push_back(arith::ConstantOp::create(
          builder, loc, cast<TypedAttr>(builder.getZeroAttr(type))));
      continue;
    }
    function.getBody().getBlocks().clear();
    return false;
  }
  func::ReturnOp::create(builder, loc, results);
  return true;
}

/// Checks that every tensor and memref a delegate takes or returns lives on
/// the delegate's device: a delegate handed host memory would read it from
/// the device, which no copy or check could catch later.
static LogicalResult verifyDelegateSignatures(ModuleOp module) {
  bool valid = true;
  for (auto function : module.getOps<func::FuncOp>()) {
    DeviceAttr device = getDelegateDevice(function);
    if (!device)
      continue;
    auto check = [&](Type type, StringRef what, size_t index) {
      if (!isa<TensorType, BaseMemRefType>(type))
        return;
      Placement placement = getPlacement(type);
      if (placement.isDevice() && placement.device == device)
        return;
      std::string where = placement.isHost() ? "the host"
                          : placement.isDevice()
                              ? placement.device.str()
                              : "an unknown placement";
      function.emitError("delegate @")
          << function.getSymName() << " runs on " << device.str()
          << ", but its " << what << " #" << index << " has type " << type
          << " on " << where
          << "; place the copies first (etcopy-propagate-device, the "
             "pipelines' place-copies option) or give the delegate's "
             "signature its device";
      valid = false;
    };
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes()))
      check(type, "argument", index);
    for (auto [index, type] : llvm::enumerate(function.getResultTypes()))
      check(type, "result", index);
  }
  return success(valid);
}

/// The buffer type a delegate takes or returns for `type`: a ranked tensor
/// becomes a memref of the identity layout in the memory space its encoding
/// names, as One-Shot Bufferize converts function boundaries here.
static Type getDelegateBufferType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return type;
  return MemRefType::get(tensor.getShape(), tensor.getElementType(),
                         MemRefLayoutAttrInterface(), tensor.getEncoding());
}

/// Whether the calls of `function` are bufferized ahead of One-Shot
/// Bufferize: a delegate declaration that writes none of its arguments and
/// has ranked tensors only, so that the contract alone fixes every buffer
/// its calls take and return.
static bool isBufferizedAhead(func::FuncOp function) {
  if (!function.isExternal() || !getDelegateDevice(function))
    return false;
  for (unsigned index = 0, e = function.getNumArguments(); index < e; ++index) {
    if (function.getArgAttr(index, EtCopyDialect::getWritesAttrName()))
      return false;
    // Explicit bufferization attributes win over the contract.
    auto access = function.getArgAttrOfType<StringAttr>(
        index, BufferizationDialect::kBufferAccessAttrName);
    if (access && access.getValue() != "read")
      return false;
  }
  bool hasTensor = false;
  for (Type type : llvm::concat<const Type>(function.getArgumentTypes(),
                                            function.getResultTypes())) {
    if (!isa<TensorType>(type))
      continue;
    if (!isa<RankedTensorType>(type))
      return false;
    hasTensor = true;
  }
  return hasTensor;
}

/// Bufferizes the calls of read-only delegates (isBufferizedAhead) before
/// One-Shot Bufferize runs, by the delegate contract: the delegate only reads
/// its operands, given through read-only `bufferization.to_buffer`s, and
/// returns new buffers that alias nothing, taken back through `restrict
/// writable` `bufferization.to_tensor`s. The result is what One-Shot
/// Bufferize makes of such a call with the contract's annotations, but its
/// analysis never sees the call: its call model looks the callee up in a
/// symbol table it rebuilds for every query (O(functions) each, so a method
/// of N delegate calls cost O(N^2)). Here it is one walk and one lookup per
/// call: O(n).
static void bufferizeDelegateCallsAhead(ModuleOp module) {
  DenseMap<StringAttr, func::FuncOp> delegates;
  for (auto function : module.getOps<func::FuncOp>())
    if (isBufferizedAhead(function))
      delegates.try_emplace(function.getSymNameAttr(), function);
  if (delegates.empty())
    return;

  SmallVector<func::CallOp> calls;
  module.walk([&](func::CallOp call) {
    if (delegates.contains(call.getCalleeAttr().getAttr()))
      calls.push_back(call);
  });
  IRRewriter rewriter(module.getContext());
  for (func::CallOp call : calls) {
    Location loc = call.getLoc();
    rewriter.setInsertionPoint(call);
    SmallVector<Value> operands;
    for (Value operand : call.getOperands()) {
      Type type = getDelegateBufferType(operand.getType());
      operands.push_back(
          type == operand.getType()
              ? operand
              : (Value)bufferization::ToBufferOp::create(rewriter, loc, type, operand,
                                                  /*read_only=*/true));
    }
    auto bufferized = func::CallOp::create(
        rewriter, loc, call.getCalleeAttr(),
        llvm::map_to_vector(call.getResultTypes(), getDelegateBufferType),
        operands);
    bufferized->setDiscardableAttrs(call->getDiscardableAttrDictionary());
    bufferized.setNoInline(call.getNoInline());
    SmallVector<Value> results;
    for (auto [result, buffer] :
         llvm::zip_equal(call.getResults(), bufferized.getResults())) {
      results.push_back(
          result.getType() == buffer.getType()
              ? Value(buffer)
              : bufferization::ToTensorOp::create(
                    rewriter, loc, result.getType(), buffer,
                    /*restrict=*/rewriter.getUnitAttr(),
                    /*writable=*/rewriter.getUnitAttr()));
    }
    rewriter.replaceOp(call, results);
  }
  // The declarations take buffers now; their arguments say that they are
  // only read, for the passes that follow (and as applyDelegateContract does
  // for the others).
  StringAttr read = rewriter.getStringAttr("read");
  for (func::FuncOp function : llvm::make_second_range(delegates)) {
    function.setType(FunctionType::get(
        module.getContext(),
        llvm::map_to_vector(function.getArgumentTypes(), getDelegateBufferType),
        llvm::map_to_vector(function.getResultTypes(), getDelegateBufferType)));
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes()))
      if (isa<BaseMemRefType>(type) &&
          !function.getArgAttr(index,
                               BufferizationDialect::kBufferAccessAttrName))
        function.setArgAttr(index, BufferizationDialect::kBufferAccessAttrName,
                            read);
  }
}

/// Moves each tensor constant nested in a region of a function (a loop body,
/// a branch) to the start of the function's entry block, as the
/// canonicalizer would. One-Shot Bufferize's models of scf.for and
/// scf.while take a value created in the loop for a new buffer, which the
/// loop may hand out without a copy (allow-return-allocs-from-loops), and
/// the loop's results for writable buffers: a constant created in the loop
/// and yielded is then the loop's result without a copy, a read-only
/// global, and a write into that result in place writes the global (a crash
/// at run time; upstream `one-shot-bufferize` does the same). A constant
/// defined outside of the loop is a value the yield aliases, which the
/// models copy before yielding it, as they copy any buffer from outside the
/// loop. A constant has no operands: the entry block dominates its uses.
static void hoistTensorConstants(ModuleOp module) {
  SmallVector<Operation *> nested;
  for (auto function : module.getOps<FunctionOpInterface>()) {
    Region &body = function.getFunctionBody();
    if (body.empty())
      continue;
    nested.clear();
    body.walk([&](Operation *op) {
      if (op->getParentRegion() != &body && op->getNumResults() == 1 &&
          isa<TensorType>(op->getResult(0).getType()) &&
          op->hasTrait<OpTrait::ConstantLike>())
        nested.push_back(op);
    });
    Block &entry = body.front();
    for (Operation *constant : nested)
      constant->moveBefore(&entry, entry.begin());
  }
}

/// States the delegate contract to One-Shot Bufferize: a delegate
/// declaration reads its tensor arguments (and writes those marked
/// etcopy.writes) and returns fresh buffers; a delegate definition may not
/// write the others in place. A method (a public function with a body) may
/// not write its tensor arguments in place either: they are its caller's
/// values, which tensor semantics keep unchanged, while upstream assumes
/// writable arguments. Explicit bufferization attributes win. Returns the
/// declarations given a temporary body (see addContractBody).
static SmallVector<func::FuncOp> applyDelegateContract(ModuleOp module) {
  Builder builder(module.getContext());
  StringRef access = BufferizationDialect::kBufferAccessAttrName;
  StringRef writable = BufferizationDialect::kWritableAttrName;
  SmallVector<func::FuncOp> withBody;
  for (auto function : module.getOps<func::FuncOp>()) {
    if (!getDelegateDevice(function)) {
      if (!function.isPublic() || function.isExternal())
        continue;
      for (auto [index, type] : llvm::enumerate(function.getArgumentTypes()))
        if (isa<TensorType>(type) && !function.getArgAttr(index, writable))
          function.setArgAttr(index, writable, builder.getBoolAttr(false));
      continue;
    }
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
      if (!isa<TensorType>(type))
        continue;
      bool writes =
          function.getArgAttr(index, EtCopyDialect::getWritesAttrName()) !=
          nullptr;
      if (function.isExternal()) {
        if (!function.getArgAttr(index, access))
          function.setArgAttr(
              index, access,
              builder.getStringAttr(writes ? "read-write" : "read"));
      } else if (!writes && !function.getArgAttr(index, writable)) {
        function.setArgAttr(index, writable, builder.getBoolAttr(false));
      }
    }
    if (function.isExternal() &&
        llvm::any_of(function.getResultTypes(),
                     [](Type type) { return isa<TensorType>(type); }) &&
        addContractBody(function))
      withBody.push_back(function);
  }
  return withBody;
}

namespace {
/// What the contract says about where a buffer comes from.
enum class Origin {
  /// A new allocation: an op allocating it, or a call's result.
  Fresh,
  /// An argument of the enclosing function.
  Argument,
  /// Anything else (a block argument of a loop, a select, ...).
  Unknown,
};

/// Frees, each on its own, the buffers of a `bufferization.dealloc` that the
/// delegate contract and the function boundary ABI prove distinct from every
/// other buffer it names (freed or retained): their frees need no run-time
/// alias check, and they contribute nothing to the ownership of the retained
/// values. Upstream's buffer-deallocation-simplification splits only
/// allocations: it assumes that a call result may alias anything. Run before it,
/// this leaves that pass small deallocations: its pairwise alias queries are
/// quadratic in the buffers of one dealloc (a method of 1 500 delegate calls
/// ends with one dealloc of 1 500 buffers).
struct SplitDistinctDeallocations
    : public OpRewritePattern<bufferization::DeallocOp> {
  SplitDistinctDeallocations(MLIRContext *context,
                             const DenseSet<StringAttr> &delegates)
      : OpRewritePattern(context), delegates(delegates) {}

  LogicalResult matchAndRewrite(bufferization::DeallocOp dealloc,
                                PatternRewriter &rewriter) const override {
    ValueRange memrefs = dealloc.getMemrefs();
    if (memrefs.size() == 1 && dealloc.getRetained().empty())
      return rewriter.notifyMatchFailure(dealloc, "already a single free");

    // Two buffers are known distinct when they view different buffers and
    // one is a new allocation while the other is not of unknown origin. So
    // a new allocation is distinct from all the others unless one views the
    // same buffer or is of unknown origin; an argument only if all the
    // others are new allocations of other buffers; a buffer of unknown
    // origin never. Counting the views of each buffer and the values of each
    // origin once decides every value in O(memrefs + retained), where
    // comparing pairs would cost O((memrefs + retained)^2) on the single
    // dealloc that ends a long method.
    SmallVector<std::pair<Value, Origin>> origins;
    DenseMap<Value, unsigned> viewsOfBase;
    unsigned unknown = 0, notFresh = 0;
    for (Value value : llvm::concat<const Value>(memrefs,
                                                 dealloc.getRetained())) {
      std::pair<Value, Origin> origin = getOrigin(value);
      origins.push_back(origin);
      ++viewsOfBase[origin.first];
      unknown += origin.second == Origin::Unknown;
      notFresh += origin.second != Origin::Fresh;
    }

    SmallVector<Value> keptMemrefs, keptConditions;
    SmallVector<std::pair<Value, Value>> split;
    for (auto [index, memref] : llvm::enumerate(memrefs)) {
      auto [base, origin] = origins[index];
      bool distinct =
          viewsOfBase[base] == 1 &&
          ((origin == Origin::Fresh && unknown == 0) ||
           (origin == Origin::Argument && notFresh == 1));
      Value condition = dealloc.getConditions()[index];
      if (distinct) {
        split.emplace_back(memref, condition);
      } else {
        keptMemrefs.push_back(memref);
        keptConditions.push_back(condition);
      }
    }
    if (split.empty())
      return rewriter.notifyMatchFailure(
          dealloc, "no buffer is known distinct from all others");

    Location loc = dealloc.getLoc();
    for (auto [memref, condition] : split)
      bufferization::DeallocOp::create(rewriter, loc, memref, condition,
                                       /*retained=*/ValueRange());
    if (keptMemrefs.empty()) {
      // No buffer aliases a retained value: none of them becomes owned.
      Value no = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getBoolAttr(false));
      rewriter.replaceOp(dealloc, SmallVector<Value>(
                                      dealloc.getRetained().size(), no));
      return success();
    }
    rewriter.replaceOpWithNewOp<bufferization::DeallocOp>(
        dealloc, keptMemrefs, keptConditions, dealloc.getRetained());
    return success();
  }

  /// The buffer `value` is a view of, and what the contract knows of it.
  std::pair<Value, Origin> getOrigin(Value value) const {
    while (auto view = value.getDefiningOp<ViewLikeOpInterface>()) {
      if (view.getViewDest() != value)
        break;
      value = view.getViewSource();
    }
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      auto function =
          dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp());
      bool isEntry =
          function && argument.getOwner() == &function.getFunctionBody().front();
      return {value, isEntry ? Origin::Argument : Origin::Unknown};
    }
    Operation *producer = value.getDefiningOp();
    // A delegate's results are fresh and distinct from each other by the
    // delegate contract. Any other function's are fresh by upstream's
    // function boundary ABI, which the deallocation pass imposes on every
    // function it processes, StaticOwnership's frees follow in the others
    // (freeBuffersAfterLastUse), and both assume of declarations: a
    // function returns buffers it owns (upstream clones one it does not
    // own, such as an argument or a global), and no function owns its
    // arguments, so no result aliases a buffer its caller holds. The ABI does
    // not keep one call's results apart, though (a function may return one
    // buffer twice): they count as views of one buffer, so that they keep the
    // run-time check between them.
    if (auto call = dyn_cast<func::CallOp>(producer)) {
      if (delegates.contains(call.getCalleeAttr().getAttr()))
        return {value, Origin::Fresh};
      return {call->getResult(0), Origin::Fresh};
    }
    if (hasEffect<MemoryEffects::Allocate>(producer, value))
      return {value, Origin::Fresh};
    return {value, Origin::Unknown};
  }

  const DenseSet<StringAttr> &delegates;
};

struct BufferizePass
    : public etcopy::impl::EtCopyBufferizeBase<BufferizePass> {
  BufferizePass() { buildPipelines(); }
  BufferizePass(const BufferizePass &other) : EtCopyBufferizeBase(other) {
    buildPipelines();
  }

  void getDependentDialects(DialectRegistry &registry) const override {
    EtCopyBufferizeBase::getDependentDialects(registry);
    bufferize.getDependentDialects(registry);
    deallocate.getDependentDialects(registry);
    simplifyDeallocations.getDependentDialects(registry);
    lowerDeallocations.getDependentDialects(registry);
    cleanUpDeallocations.getDependentDialects(registry);
  }

  void runOnOperation() override;

private:
  void buildPipelines();

  OpPassManager bufferize{ModuleOp::getOperationName()};
  // Upstream's deallocation, in the order of its buffer-deallocation-
  // pipeline: the first two and the last run on one function each.
  OpPassManager deallocate{func::FuncOp::getOperationName()};
  OpPassManager simplifyDeallocations{func::FuncOp::getOperationName()};
  OpPassManager lowerDeallocations{ModuleOp::getOperationName()};
  OpPassManager cleanUpDeallocations{func::FuncOp::getOperationName()};
};
} // namespace

void BufferizePass::buildPipelines() {
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

  // Upstream's buffer-deallocation-pipeline, with the contract's aliasing
  // facts applied before the deallocations are simplified and lowered.
  deallocate.addPass(
      bufferization::createOwnershipBasedBufferDeallocationPass());
  deallocate.addPass(createCanonicalizerPass());
  simplifyDeallocations.addPass(
      bufferization::createBufferDeallocationSimplificationPass());
  lowerDeallocations.addPass(bufferization::createLowerDeallocationsPass());
  cleanUpDeallocations.addPass(createCSEPass());
  cleanUpDeallocations.addPass(createCanonicalizerPass());
  // Deallocation may clone buffers (bufferization.clone).
  cleanUpDeallocations.addPass(createConvertBufferizationToMemRefPass());
}

//===----------------------------------------------------------------------===//
// Loop state forwarded by scf.condition
//===----------------------------------------------------------------------===//

/// Whether the buffer `value` is only read, by the delegate contract and the
/// ops' declared effects (directly or through views), and never escapes.
static bool isOnlyRead(Value value, SymbolTable &symbols) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
      if (view.getViewSource() == value &&
          llvm::all_of(user->getResults(), [&](Value result) {
            return !isa<BaseMemRefType>(result.getType()) ||
                   isOnlyRead(result, symbols);
          }))
        continue;
      return false;
    }
    if (auto call = dyn_cast<func::CallOp>(user)) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || !getDelegateDevice(callee))
        return false;
      auto access = callee.getArgAttrOfType<StringAttr>(
          use.getOperandNumber(), BufferizationDialect::kBufferAccessAttrName);
      if (!access || access.getValue() != "read")
        return false;
      continue;
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    if (!effects || user->getNumResults() ||
        effects.getEffectOnValue<MemoryEffects::Write>(value) ||
        effects.getEffectOnValue<MemoryEffects::Free>(value))
      return false;
  }
  return true;
}

/// Whether every use of `value` other than by `op` is before `op` in its
/// block (nested ops included).
static bool isOnlyUsedBefore(Value value, Operation *op) {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    if (user == op)
      return true;
    Operation *ancestor = op->getBlock()->findAncestorOpInBlock(*user);
    return ancestor && ancestor->isBeforeInBlock(op);
  });
}

/// One-Shot Bufferize copies every buffer that an scf.while's condition
/// forwards to its body unless the body yields a buffer equivalent to its
/// argument, which a delegate's fresh result never is: a state that stays
/// on the device is then copied on the device in every iteration. The copy
/// is only needed if some buffer is written while another still needs its
/// old contents. It is removed when nothing can observe the difference: the
/// forwarded state is not used after the copy, the body only reads it, and
/// the loop's initial buffer is not used after the loop. Linear in the size
/// of the loops' regions.
static void forwardWhileStateWithoutCopies(ModuleOp module) {
  SymbolTable symbols(module);
  module.walk([&](scf::ConditionOp condition) {
    auto loop = cast<scf::WhileOp>(condition->getParentOp());
    Block *before = condition->getBlock();
    for (auto [index, forwarded] : llvm::enumerate(condition.getArgs())) {
      auto alloc = forwarded.getDefiningOp<memref::AllocOp>();
      if (!alloc || alloc->getBlock() != before ||
          !llvm::hasNItems(alloc->getUses(), 2))
        continue;
      memref::CopyOp copy;
      for (Operation *user : alloc->getUsers())
        if (auto candidate = dyn_cast<memref::CopyOp>(user))
          if (candidate.getTarget() == alloc.getResult())
            copy = candidate;
      if (!copy || copy->getBlock() != before)
        continue;
      auto state = dyn_cast<BlockArgument>(copy.getSource());
      if (!state || state.getOwner() != before ||
          state.getType() != alloc.getType())
        continue;
      bool usedAfterCopy = llvm::any_of(state.getUsers(), [&](Operation *u) {
        return u != copy.getOperation() &&
               !before->findAncestorOpInBlock(*u)->isBeforeInBlock(copy);
      });
      if (usedAfterCopy ||
          !isOnlyRead(loop.getAfterArguments()[index], symbols) ||
          !isOnlyUsedBefore(loop.getInits()[state.getArgNumber()], loop))
        continue;
      condition.getArgsMutable()[index].set(state);
      copy.erase();
      alloc.erase();
    }
  });
}

//===----------------------------------------------------------------------===//
// Frees right after the last use
//===----------------------------------------------------------------------===//

static bool isBuffer(Type type) { return isa<BaseMemRefType>(type); }
static bool hasBuffer(TypeRange types) { return llvm::any_of(types, isBuffer); }

/// Whether every op enclosing `op` inside `function` is an scf.for, an
/// scf.while or an scf.if: the blocks whose buffers StaticOwnership follows.
static bool isInStructuredBlock(Operation *op, Operation *function) {
  for (Operation *parent = op->getParentOp(); parent != function;
       parent = parent->getParentOp())
    if (!isa<scf::ForOp, scf::WhileOp, scf::IfOp>(parent))
      return false;
  return true;
}

/// Whether `buffer` (itself or through views) is used in `block` only before
/// `op`, or by `op` as the operand `operand` and nowhere else in it (nested
/// uses included), when `operand` is given; by `op` in any way (its nested
/// regions included) otherwise. Then `op` may take the buffer over. Linear
/// in the uses of the buffer and its views.
static bool isLastUsedBy(Block &block, Value buffer, Operation *op,
                         OpOperand *operand) {
  SmallVector<Value> aliases{buffer};
  while (!aliases.empty()) {
    Value alias = aliases.pop_back_val();
    for (OpOperand &use : alias.getUses()) {
      Operation *user = block.findAncestorOpInBlock(*use.getOwner());
      if (!user)
        return false;
      if (user == op ? operand && &use != operand
                     : !user->isBeforeInBlock(op))
        return false;
      if (auto view = dyn_cast<ViewLikeOpInterface>(use.getOwner());
          view && view.getViewSource() == alias)
        aliases.push_back(view.getViewDest());
    }
  }
  return true;
}

namespace {
/// A buffer that a block owns and does not give away: freed in that block,
/// right after the op of the block that uses it last.
struct BlockFree {
  Value buffer;
  Block *block;
};

/// Decides which block of a function owns each buffer the function holds,
/// without upstream's ownership analysis, when that is static. A block owns
///  * the new allocations (`memref.alloc`) and call results it makes, as
///    the function owned them in straight-line code: a delegate's results
///    are fresh by the delegate contract, any other function's by the
///    function boundary ABI (one buffer result per non-delegate call, since
///    the ABI lets a function return one buffer twice);
///  * the buffer results of the scf.for and scf.if ops in it, which their
///    blocks give it;
///  * in a loop body, its buffer iteration arguments: the loop takes over
///    its initial buffers from the enclosing block, and each iteration hands
///    the next the buffers it yields;
///  * in a branch of scf.if, the buffers of the enclosing block that a
///    branch yields: the scf.if takes them over, and the branch that does
///    not yield one frees it.
/// Views, arguments, stack buffers and globals belong to no block. A block
/// gives away the buffers it yields or returns, each of which it must own
/// and give once, and those a loop or branch in it takes over, which it
/// must not use after that op; it frees the others. A loop's initial buffer
/// the block cannot give (an argument, a buffer used after the loop) is
/// copied into a new buffer first, as upstream's function boundary ABI
/// copies a returned argument. Buffers are made only in the function's
/// body (one block) and in the blocks of scf.for and scf.if nested in it;
/// every op that takes a buffer states its memory effects and frees none.
/// Anything else fails, and upstream's deallocation pipeline decides for
/// that function.
class StaticOwnership {
public:
  explicit StaticOwnership(const DenseSet<StringAttr> &delegates)
      : delegates(delegates) {}

  /// Adds the frees of `function`, and the loop operands to copy first, or
  /// fails, adding nothing and saying why in `fallbackOp` and
  /// `fallbackReason`, when ownership in it is not static.
  LogicalResult analyze(func::FuncOp function);

  SmallVector<BlockFree> frees;
  /// Initial loop buffers to copy into a new buffer the loop owns.
  SmallVector<OpOperand *> copiedInits;
  /// Where and why the last function analyzed has no static ownership.
  Operation *fallbackOp = nullptr;
  StringRef fallbackReason;

private:
  LogicalResult analyzeBody(func::FuncOp function);
  LogicalResult visitBlock(Block &block, ArrayRef<Value> ownedOnEntry);
  LogicalResult fail(Operation *op, StringRef reason) {
    fallbackOp = op;
    fallbackReason = reason;
    return failure();
  }

  const DenseSet<StringAttr> &delegates;
};
} // namespace

LogicalResult StaticOwnership::analyze(func::FuncOp function) {
  size_t numFrees = frees.size(), numCopiedInits = copiedInits.size();
  if (succeeded(analyzeBody(function)))
    return success();
  frees.truncate(numFrees);
  copiedInits.truncate(numCopiedInits);
  return failure();
}

LogicalResult StaticOwnership::analyzeBody(func::FuncOp function) {
  if (!function.getBody().hasOneBlock())
    return fail(function, "its body has several blocks (unstructured control "
                          "flow)");
  Operation *functionOp = function;
  WalkResult walk = function.getBody().walk([&](Operation *op) {
    auto interrupt = [&](StringRef reason) {
      fallbackOp = op;
      fallbackReason = reason;
      return WalkResult::interrupt();
    };
    // Buffers of nested regions are followed only through scf.for and
    // scf.while (whose block arguments may be buffers) and scf.if.
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (!isa<scf::ForOp, scf::WhileOp>(op) &&
            hasBuffer(block.getArgumentTypes()))
          return interrupt("a block of an op other than scf.for and "
                           "scf.while takes a buffer");
    if (hasBuffer(op->getResultTypes()) &&
        !isInStructuredBlock(op, functionOp))
      return interrupt("a buffer is made in a region of an op other than "
                       "scf.for, scf.while and scf.if");
    // A buffer of buffers could hand one out of the function unseen.
    if (llvm::any_of(op->getResultTypes(), [](Type type) {
          auto buffer = dyn_cast<BaseMemRefType>(type);
          return buffer && isBuffer(buffer.getElementType());
        }))
      return interrupt("a buffer of buffers could hand a buffer out unseen");
    if (isa_and_nonnull<BufferizationDialect>(op->getDialect()))
      return interrupt("a bufferization op is left after bufferization");
    // Every op that takes a buffer says what it does with it and frees
    // none.
    if (!hasBuffer(op->getOperandTypes()) ||
        isa<func::CallOp, func::ReturnOp, ViewLikeOpInterface>(op))
      return WalkResult::advance();
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return interrupt("an op takes a buffer without stating its memory "
                       "effects");
    if (effects.hasEffect<MemoryEffects::Free>())
      return interrupt("an op frees a buffer");
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (BlockArgument argument : function.getArguments())
    if (auto type = dyn_cast<BaseMemRefType>(argument.getType());
        type && isBuffer(type.getElementType()))
      return fail(function, "an argument is a buffer of buffers");
  return visitBlock(function.getBody().front(), {});
}

LogicalResult StaticOwnership::visitBlock(Block &block,
                                          ArrayRef<Value> ownedOnEntry) {
  // The buffers the block owns, in the order it gets them; a given one is
  // set to null.
  SmallVector<Value> owned;
  DenseMap<Value, unsigned> ownedIndex;
  auto own = [&](Value value) {
    ownedIndex[value] = owned.size();
    owned.push_back(value);
  };
  auto isOwned = [&](Value value) {
    auto it = ownedIndex.find(value);
    return it != ownedIndex.end() && owned[it->second];
  };
  auto give = [&](Value value) {
    if (!isOwned(value))
      return false;
    owned[ownedIndex[value]] = Value();
    return true;
  };
  for (Value value : ownedOnEntry)
    own(value);

  // A loop takes its initial buffers over: the block gives each, or a copy
  // of it when it cannot. Returns the block arguments (of `arguments`) that
  // receive a buffer.
  auto takeInits = [&](Operation *loop, MutableArrayRef<OpOperand> inits,
                       ValueRange arguments) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> received;
    for (auto [init, argument] : llvm::zip_equal(inits, arguments)) {
      Value buffer = init.get();
      if (!isBuffer(buffer.getType()))
        continue;
      if (!isOwned(buffer) || !isLastUsedBy(block, buffer, loop, &init)) {
        auto type = dyn_cast<MemRefType>(buffer.getType());
        if (!type || !type.getLayout().isIdentity())
          return fail(loop, "a loop's initial buffer that its block cannot "
                            "give has no identity layout to copy it into");
        copiedInits.push_back(&init);
      } else {
        give(buffer);
      }
      received.push_back(argument);
    }
    return received;
  };
  auto buffersOf = [](ValueRange values) {
    SmallVector<Value> buffers;
    for (Value value : values)
      if (isBuffer(value.getType()))
        buffers.push_back(value);
    return buffers;
  };

  for (Operation &op : block.without_terminator()) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      FailureOr<SmallVector<Value>> iterationBuffers = takeInits(
          loop, loop.getInitsMutable(), loop.getRegionIterArgs());
      if (failed(iterationBuffers) ||
          failed(visitBlock(*loop.getBody(), *iterationBuffers)))
        return failure();
    } else if (auto loop = dyn_cast<scf::WhileOp>(op)) {
      // The condition region owns its arguments: the initial buffers in the
      // first iteration, those the body yields in the others. scf.condition
      // gives each buffer it forwards once, to the body's arguments when
      // the loop goes on and to the loop's results when it ends: exactly
      // one of them owns it next, either way.
      FailureOr<SmallVector<Value>> stateBuffers =
          takeInits(loop, loop.getInitsMutable(), loop.getBeforeArguments());
      if (failed(stateBuffers) ||
          failed(visitBlock(loop.getBefore().front(), *stateBuffers)) ||
          failed(visitBlock(loop.getAfter().front(),
                            buffersOf(loop.getAfterArguments()))))
        return failure();
    } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
      // The buffers of this block that a branch yields: the scf.if takes
      // them over, so that each branch either yields or frees them.
      SmallVector<Value> taken;
      for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()})
        if (!region->empty())
          for (Value value : region->front().getTerminator()->getOperands())
            if (isBuffer(value.getType()) &&
                value.getParentBlock() == &block &&
                !llvm::is_contained(taken, value)) {
              if (!isLastUsedBy(block, value, branch, nullptr) || !give(value))
                return fail(branch, "a branch yields a buffer of the "
                                    "enclosing block that is used after the "
                                    "'scf.if' or that the block does not own");
              taken.push_back(value);
            }
      for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()})
        if (!region->empty() && failed(visitBlock(region->front(), taken)))
          return failure();
    } else if (hasBuffer(op.getResultTypes())) {
      if (isa<memref::AllocOp>(op)) {
        own(op.getResult(0));
        continue;
      }
      if (auto call = dyn_cast<func::CallOp>(op)) {
        if (llvm::count_if(call.getResultTypes(), isBuffer) > 1 &&
            !delegates.contains(call.getCalleeAttr().getAttr()))
          return fail(call, "a call of a function other than a delegate "
                            "returns several buffers, which the function "
                            "boundary ABI lets be one buffer");
        for (Value result : call.getResults())
          if (isBuffer(result.getType()))
            own(result);
        continue;
      }
      if (isa<memref::AllocaOp, memref::GetGlobalOp>(op))
        continue;
      auto view = dyn_cast<ViewLikeOpInterface>(op);
      if (!view || op.getNumResults() != 1 ||
          view.getViewDest() != op.getResult(0))
        return fail(&op, "which buffer the op returns is known only at run "
                         "time (it is no allocation, call result or view)");
      continue;
    }
    // A loop's or branch's buffers are those its blocks give the block.
    for (Value result : op.getResults())
      if (isBuffer(result.getType()))
        own(result);
  }

  // The terminator hands its buffers to the parent (or the caller).
  for (Value value : block.getTerminator()->getOperands())
    if (isBuffer(value.getType()) && !give(value))
      return fail(block.getTerminator(),
                  "it hands on a buffer its block does not own (an argument, "
                  "a view, a global) or one buffer twice");
  for (Value value : owned)
    if (value)
      frees.push_back({value, &block});
  return success();
}

/// The op of `block` after which `buffer`, a buffer `block` owns, is used no
/// more: the last op of `block` that uses it or a view of it (directly or
/// in a nested region), or its own producer if nothing does; null when the
/// buffer is an argument of `block` that nothing uses. Views are the only
/// aliases a buffer has where StaticOwnership decides: every other op that
/// takes a buffer declares its effects, a call's results are fresh, and a
/// block yields only buffers it owns. Linear in the uses of the buffer and
/// its views.
static Operation *getLastUser(Block &block, Value buffer) {
  Operation *last = buffer.getDefiningOp();
  if (last && last->getBlock() != &block)
    last = nullptr;
  SmallVector<Value> aliases{buffer};
  while (!aliases.empty()) {
    Value alias = aliases.pop_back_val();
    for (OpOperand &use : alias.getUses()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(use.getOwner());
          view && view.getViewSource() == alias)
        aliases.push_back(view.getViewDest());
      Operation *user = block.findAncestorOpInBlock(*use.getOwner());
      if (user && (!last || last->isBeforeInBlock(user)))
        last = user;
    }
  }
  return last;
}

/// Frees the buffers of each function of `module` whose ownership is
/// static, as StaticOwnership decides, and returns the other functions with
/// a body, for upstream's ownership-based deallocation: those StaticOwnership
/// cannot handle (a remark says why) and any nested in another op. Per
/// function, since both kinds follow the same function boundary ABI: a
/// function frees none of its arguments and returns only buffers it owns,
/// which its caller then owns. StaticOwnership returns only buffers its
/// function's body owns (never an argument, a view or a global), each once,
/// and frees no argument; upstream's pass imposes the ABI on every function
/// it processes (without `private-function-dynamic-ownership`, which would
/// change the signatures of private functions), clones what it returns but
/// does not own, and assumes it of every callee. Upstream may return one
/// buffer twice, which is why StaticOwnership leaves a call with several
/// buffer results (except a delegate's) to upstream's run-time checks.
static SmallVector<func::FuncOp>
freeBuffersAfterLastUse(ModuleOp module, const DenseSet<StringAttr> &delegates,
                        StringRef pass) {
  StaticOwnership ownership(delegates);
  SmallVector<func::FuncOp> fallback;
  module->walk<WalkOrder::PreOrder>([&](Operation *op) {
    auto function = dyn_cast<func::FuncOp>(op);
    if (!function)
      return WalkResult::advance();
    if (function.isExternal())
      return WalkResult::skip();
    Operation *where = function;
    StringRef reason = "the function is nested in an op other than the module";
    if (function->getParentOp() == module) {
      if (succeeded(ownership.analyze(function)))
        return WalkResult::skip();
      where = ownership.fallbackOp;
      reason = ownership.fallbackReason;
    }
    fallback.push_back(function);
    if (InFlightRemark remark =
            remarkMissed(where, "BuffersFreedByUpstream", pass))
      remark << RemarkArg("the function's buffers are freed by upstream's "
                          "ownership-based deallocation, at the end of each "
                          "block")
             << RemarkArg("Reason", reason)
             << RemarkArg("Op", where->getName().getStringRef());
    return WalkResult::skip();
  });

  OpBuilder builder(module.getContext());
  // A loop's initial buffer that its block cannot give: a copy, made right
  // before the loop, is the block's to give.
  for (OpOperand *init : ownership.copiedInits) {
    Value buffer = init->get();
    Operation *loop = init->getOwner();
    Location loc = loop->getLoc();
    builder.setInsertionPoint(loop);
    auto type = cast<MemRefType>(buffer.getType());
    SmallVector<Value> sizes;
    for (auto [dim, size] : llvm::enumerate(type.getShape()))
      if (ShapedType::isDynamic(size))
        sizes.push_back(memref::DimOp::create(builder, loc, buffer, dim));
    auto copy = memref::AllocOp::create(builder, loc, type, sizes);
    // On a device, a copy within the device (convert-etcopy-to-gpu lowers
    // it to gpu.memcpy).
    memref::CopyOp::create(builder, loc, buffer, copy);
    init->set(copy);
    if (InFlightRemark remark = remarkPassed(copy, "LoopStateCopied", pass))
      remark << RemarkArg("the loop's initial buffer is copied into one the "
                          "loop owns and frees")
             << RemarkArg("Buffer", getRemarkValueName(buffer))
             << RemarkArg("Type", buffer.getType());
  }

  // Each buffer is freed right after its last use in the block that owns
  // it rather than at the end of a block, where upstream's pipeline puts
  // every free: the memory a method holds is then its largest live set,
  // not the sum of all its intermediates (a method alternating N delegates
  // with host glue would otherwise hold N results at its end), and a loop
  // body frees what it made in each iteration. Device frees are
  // stream-ordered, and convert-etcopy-to-gpu defers the free of host
  // memory that a copy in flight still uses to the next host wait. The last
  // users are all found before any free is created: creating ops may
  // renumber the blocks' order, which the search queries.
  SmallVector<Operation *> lastUsers;
  for (const BlockFree &free : ownership.frees)
    lastUsers.push_back(getLastUser(*free.block, free.buffer));
  for (auto [free, last] : llvm::zip_equal(ownership.frees, lastUsers)) {
    Block &block = *free.block;
    if (!last)
      builder.setInsertionPointToStart(&block);
    else if (last == block.getTerminator())
      builder.setInsertionPoint(last);
    else
      builder.setInsertionPointAfter(last);
    Location loc = last ? last->getLoc() : free.buffer.getLoc();
    auto dealloc = memref::DeallocOp::create(builder, loc, free.buffer);
    if (InFlightRemark remark = remarkPassed(dealloc, "BufferFreed", pass))
      remark << RemarkArg("freed right after its last use")
             << RemarkArg("Buffer", getRemarkValueName(free.buffer))
             << RemarkArg("Type", free.buffer.getType())
             << RemarkArg("LastUse",
                          !last || last == free.buffer.getDefiningOp()
                              ? StringRef("none")
                              : last->getName().getStringRef());
  }
  return fallback;
}

/// Whether anything in `module` has a tensor operand, result or argument.
static bool hasTensors(ModuleOp module) {
  auto isTensor = [](Type type) { return isa<TensorType>(type); };
  return module
      ->walk([&](Operation *op) {
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
}

void BufferizePass::runOnOperation() {
  ModuleOp module = getOperation();
  bool tensors = hasTensors(module);
  if (tensors) {
    memref::DeallocOp manualFree;
    module->walk([&](memref::DeallocOp dealloc) {
      manualFree = dealloc;
      return WalkResult::interrupt();
    });
    if (manualFree) {
      manualFree.emitError(
          "cannot free the buffers bufferization creates for this module's "
          "tensors: the module also frees buffers itself, which the buffer "
          "deallocation pipeline does not support; free every buffer "
          "explicitly or none");
      return signalPassFailure();
    }
  }

  if (failed(verifyDelegateSignatures(module)))
    return signalPassFailure();
  // Memref-level input: nothing to bufferize, and nothing changed.
  if (!tensors)
    return markAllAnalysesPreserved();
  hoistTensorConstants(module);
  bufferizeDelegateCallsAhead(module);
  SmallVector<func::FuncOp> contractBodies = applyDelegateContract(module);
  LogicalResult bufferized = runPipeline(bufferize, module);
  for (func::FuncOp function : contractBodies)
    function.getBody().getBlocks().clear();
  if (failed(bufferized))
    return signalPassFailure();
  forwardWhileStateWithoutCopies(module);

  DenseSet<StringAttr> delegates;
  for (auto function : module.getOps<func::FuncOp>())
    if (getDelegateDevice(function))
      delegates.insert(function.getSymNameAttr());
  SmallVector<func::FuncOp> fallback =
      freeBuffersAfterLastUse(module, delegates, getArgument());
  if (fallback.empty())
    return;

  // Upstream's deallocation on the functions left to it, and on nothing
  // else: its passes, the canonicalizer and CSE run on each of them alone;
  // only the lowering of bufferization.dealloc runs on the module, which
  // may need a helper function there, and converts those ops alone.
  RewritePatternSet patterns(&getContext());
  patterns.add<SplitDistinctDeallocations>(&getContext(), delegates);
  FrozenRewritePatternSet splitDistinct(std::move(patterns));
  for (func::FuncOp function : fallback)
    if (failed(runPipeline(deallocate, function)) ||
        failed(applyPatternsGreedily(function, splitDistinct)) ||
        failed(runPipeline(simplifyDeallocations, function)))
      return signalPassFailure();

  // The helper functions the lowering adds are cleaned up with the
  // functions that call them.
  DenseSet<Operation *> functions;
  module->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!isa<FunctionOpInterface>(op))
      return WalkResult::advance();
    functions.insert(op);
    return WalkResult::skip();
  });
  if (failed(runPipeline(lowerDeallocations, module)))
    return signalPassFailure();
  module->walk<WalkOrder::PreOrder>([&](Operation *op) {
    auto function = dyn_cast<func::FuncOp>(op);
    if (!function && !isa<FunctionOpInterface>(op))
      return WalkResult::advance();
    if (function && !functions.contains(function))
      fallback.push_back(function);
    return WalkResult::skip();
  });
  for (func::FuncOp function : fallback)
    if (failed(runPipeline(cleanUpDeallocations, function)))
      return signalPassFailure();
}
