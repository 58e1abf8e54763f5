//===- GraphLowering.cpp - CUDA graphs of the CUDA lowering -----*- C++ -*-===//
//
// cuda-graphs: a function whose device work is stream-ordered from its
// first device op to its last (copies, memsets, kernels, stream-ordered
// delegates, stream-ordered allocations and frees, no host wait, no host
// work between them, host memory only in pinned transfer buffers) records
// that work into a CUDA graph on the first call and replays it with one
// cudaGraphLaunch on every later call whose inputs are the same. The inputs
// are every value the work reads that the function computes before it: the
// aligned pointers (and dynamic layouts) of memrefs, scalars, and the
// function's stream. A call with other inputs captures again. The capture
// runs on a private stream of the function's cell, so that other threads'
// work on the function's stream is never captured; a call that finds the
// cell in use by another thread runs its calls directly.
//
// Lowered form, for a function whose span of work is W:
//
//   <ops before W>
//   <key>[i] = input i                 (stored in a stack array)
//   %state = __etcopy_graph_replay(@cell, <key>, N, %stream)
//   llvm.cond_br (%state == REPLAYED), ^after, ^capture
// ^capture:
//   %s = __etcopy_graph_begin(@cell, %state, %stream)
//   W, on %s
//   __etcopy_graph_end(@cell, %state, <key>, N, %stream)
//   llvm.br ^after
// ^after:
//   <ops after W: the host wait, the return>
//
//===----------------------------------------------------------------------===//

#include "GraphLowering.h"

#include "CopyClassification.h"
#include "etcopy/Dialect/EtCopy/RemarkUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/ScopedPrinter.h"

using namespace mlir;
using namespace mlir::etcopy;
using namespace mlir::etcopy::cuda_lowering;

namespace {

/// The result of __etcopy_graph_replay that skips the work
/// (ETCOPY_GRAPH_REPLAYED of CudaSupport.h).
constexpr int64_t kReplayed = 1;

/// True for a sync-form gpu op: the host waits for it.
bool isSynchronous(Operation *op) {
  auto asyncOp = dyn_cast<gpu::AsyncOpInterface>(op);
  return asyncOp && !asyncOp.getAsyncToken();
}

/// True for an op the host may run once, before the work, instead of at
/// every call: pure, or a host allocation (its address is an input).
bool isHoistable(Operation *op) {
  if (op->getNumRegions() != 0)
    return false;
  if (auto alloc = dyn_cast<memref::AllocOp>(op))
    return classify(alloc.getType()).kind != MemoryPlace::Kind::Device;
  return isMemoryEffectFree(op);
}

/// True when a value of `type` can be one or more words of the key.
bool isKeyType(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type)) {
    SmallVector<int64_t> strides;
    int64_t offset;
    return succeeded(getStridesAndOffset(memref, strides, offset));
  }
  return isa<IndexType, IntegerType, FloatType, LLVM::LLVMPointerType>(type) &&
         (!type.isIntOrFloat() || type.getIntOrFloatBitWidth() <= 64);
}

/// Why the host side `memref` of a copy in the work cannot be replayed, or
/// an empty string: it must be a pinned transfer buffer (CUDA stages
/// pageable memory at the call, which a launch does not repeat).
std::string checkHostSide(Value memref, const ModuleWork &work) {
  memref::AllocOp alloc = getAllocation(memref);
  if (alloc && work.pinTransferBuffers &&
      work.transferBufferAllocs.contains(alloc))
    return "";
  return "it copies pageable host memory (" + getRemarkValueName(memref) +
         "): a graph cannot replay the staging of pageable memory that "
         "CUDA does at each call";
}

/// Decides whether `ops`, the runtime ops of `func` in order, can be
/// captured; returns the reason if not. `delegates` holds every delegate
/// call of the module. Sets `capture` and hoists what
/// the span holds but does not need.
std::string analyze(func::FuncOp func, ArrayRef<Operation *> ops,
                    const ModuleWork &work,
                    const DenseSet<Operation *> &delegates,
                    GraphCapture &capture) {
  if (!func.getBody().hasOneBlock())
    return "it has control flow (more than one block): the host decides "
           "between device steps";
  std::optional<int64_t> device;
  Operation *first = nullptr, *last = nullptr;
  for (Operation *op : ops) {
    if (isTransferBufferOp(op) || (isa<gpu::WaitOp>(op) && isSynchronous(op)))
      continue;
    if (!first)
      first = op;
    last = op;
    if (isa<gpu::WaitOp>(op))
      continue;
    auto call = work.streamOrderedCalls.find(op);
    int64_t key = call != work.streamOrderedCalls.end() ? call->second
                                                        : getDeviceKey(op);
    if (device && *device != key)
      return "it uses more than one device";
    device = key;
  }
  if (!first)
    return "it has no stream work";

  DenseSet<Operation *> runtimeOps(ops.begin(), ops.end());
  // Ops of the span, in order, after hoisting.
  SmallVector<Operation *> span;
  DenseSet<Operation *> inSpan;
  auto dependsOnSpan = [&](Operation *op) {
    return llvm::any_of(op->getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      return def && inSpan.contains(def);
    });
  };
  for (Operation *op = first;; op = op->getNextNode()) {
    bool isLast = op == last;
    if (runtimeOps.contains(op)) {
      // A transfer buffer's allocation is host work: before the span (its
      // address is an input), as other host allocations.
      if (isa<memref::AllocOp>(op) && isTransferBufferOp(op) &&
          !dependsOnSpan(op)) {
        Operation *next = op->getNextNode();
        op->moveBefore(first);
        op = next->getPrevNode();
        continue;
      }
      if (isTransferBufferOp(op))
        return "a host buffer of transfers is freed between device steps";
      if (isSynchronous(op))
        return ("the host waits for the device between device steps ('" +
                op->getName().getStringRef() + "' is synchronous)")
            .str();
      // cudaMallocManaged is not stream-ordered, and the free of managed
      // memory synchronises.
      if (auto alloc = dyn_cast<gpu::AllocOp>(op); alloc && alloc.getHostShared())
        return "it allocates managed memory (gpu.alloc host_shared), which "
               "is neither allocated nor freed in stream order";
      if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
        auto [src, dst] = classifyCopy(copy);
        for (auto [place, side] : {std::pair(src, copy.getSrc()),
                                   std::pair(dst, copy.getDst())})
          if (place.kind != MemoryPlace::Kind::Device)
            if (std::string why = checkHostSide(side, work); !why.empty())
              return why;
      }
    } else if (auto call = dyn_cast<func::CallOp>(op);
               call && delegates.contains(call)) {
      return ("it calls the plain delegate @" + call.getCallee() +
              ", which synchronises its stream")
          .str();
    } else if (isHoistable(op) && !dependsOnSpan(op)) {
      // Host work that the device work does not wait for: before it.
      if (!isLast) {
        Operation *next = op->getNextNode();
        op->moveBefore(first);
        op = next->getPrevNode();
        continue;
      }
    } else if (!isMemoryEffectFree(op) || op->getNumRegions()) {
      return ("host work between device steps: '" +
              op->getName().getStringRef() +
              "' reads or writes memory, or has regions")
          .str();
    }
    span.push_back(op);
    inSpan.insert(op);
    if (isLast)
      break;
  }

  for (Operation *op : span) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if ((!def || !inSpan.contains(def)) && !isKeyType(operand.getType()))
        return "a value of type " +
               llvm::to_string(operand.getType()) +
               " that the device work reads cannot be compared between "
               "calls";
    }
    for (Value result : op->getResults())
      for (OpOperand &use : result.getUses()) {
        Operation *user = use.getOwner();
        if (inSpan.contains(user))
          continue;
        // A host wait after the work waits for the function's one stream.
        if (isa<gpu::AsyncTokenType>(result.getType()) &&
            isa<gpu::WaitOp>(user) && isSynchronous(user))
          continue;
        return "the device work produces " + getRemarkValueName(result) +
               ", which the host uses after it";
      }
  }
  capture.first = span.front();
  capture.last = span.back();
  return "";
}

/// True for a value that is the same at every call.
bool isConstant(Value value) {
  Operation *def = value.getDefiningOp();
  return def && (matchPattern(value, m_Constant()) ||
                 isa<LLVM::AddressOfOp, LLVM::ZeroOp>(def));
}

/// Appends to `words` the i64 words of `value` the key compares.
void appendKeyWords(OpBuilder &builder, Location loc, Value value,
                    SmallVectorImpl<Value> &words) {
  Type i64 = builder.getI64Type();
  auto toI64 = [&](Value index) -> Value {
    return arith::IndexCastOp::create(builder, loc, i64, index);
  };
  Type type = value.getType();
  if (auto memrefType = dyn_cast<MemRefType>(type)) {
    words.push_back(toI64(memref::ExtractAlignedPointerAsIndexOp::create(
        builder, loc, value)));
    SmallVector<int64_t> strides;
    int64_t offset;
    bool isStatic = memrefType.hasStaticShape() &&
                    succeeded(getStridesAndOffset(memrefType, strides,
                                                  offset)) &&
                    !ShapedType::isDynamic(offset) &&
                    llvm::none_of(strides, ShapedType::isDynamic);
    if (isStatic)
      return;
    auto metadata =
        memref::ExtractStridedMetadataOp::create(builder, loc, value);
    words.push_back(toI64(metadata.getOffset()));
    for (Value size : metadata.getSizes())
      words.push_back(toI64(size));
    for (Value stride : metadata.getStrides())
      words.push_back(toI64(stride));
    return;
  }
  if (isa<LLVM::LLVMPointerType>(type)) {
    words.push_back(LLVM::PtrToIntOp::create(builder, loc, i64, value));
    return;
  }
  if (isa<IndexType>(type)) {
    words.push_back(toI64(value));
    return;
  }
  if (auto floatType = dyn_cast<FloatType>(type))
    value = arith::BitcastOp::create(
        builder, loc, builder.getIntegerType(floatType.getWidth()), value);
  if (value.getType() != i64)
    value = arith::ExtUIOp::create(builder, loc, i64, value);
  words.push_back(value);
}

/// The cell of `func`: a zero-initialised global of the layout of
/// etcopy_graph_cell with `keyWords` words of key.
LLVM::GlobalOp createCell(func::FuncOp func, SymbolTable &symbols,
                          size_t keyWords) {
  MLIRContext *ctx = func.getContext();
  Type i64 = IntegerType::get(ctx, 64);
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  auto type = LLVM::LLVMStructType::getLiteral(
      ctx, {i64, ptr, ptr, i64, i64, LLVM::LLVMArrayType::get(i64, keyWords)});
  OpBuilder builder(ctx);
  auto cell = LLVM::GlobalOp::create(
      builder, func.getLoc(), type, /*isConstant=*/false,
      LLVM::Linkage::Internal, ("__etcopy_graph." + func.getName()).str(),
      Attribute());
  Block *init = builder.createBlock(&cell.getInitializerRegion());
  builder.setInsertionPointToStart(init);
  Value zero = LLVM::ZeroOp::create(builder, func.getLoc(), type);
  LLVM::ReturnOp::create(builder, func.getLoc(), zero);
  symbols.insert(cell);
  return cell;
}

} // namespace

llvm::MapVector<func::FuncOp, GraphCapture>
mlir::etcopy::cuda_lowering::findGraphCaptures(const ModuleWork &work,
                                               StringRef pass) {
  llvm::MapVector<func::FuncOp, GraphCapture> captures;
  DenseSet<Operation *> delegates;
  for (auto [call, device] : work.delegateCalls)
    delegates.insert(call);
  for (const auto &[constFunc, ops] : work.runtimeOps) {
    func::FuncOp func = constFunc;
    GraphCapture capture{};
    std::string why = analyze(func, ops, work, delegates, capture);
    if (!why.empty()) {
      if (InFlightRemark remark = remarkMissed(func, "GraphNotCaptured", pass))
        remark << RemarkArg("stream work called directly, not captured into "
                            "a CUDA graph")
               << RemarkArg("Reason", why);
      continue;
    }
    captures[func] = capture;
  }
  return captures;
}

void mlir::etcopy::cuda_lowering::lowerGraphCaptures(
    const llvm::MapVector<func::FuncOp, GraphCapture> &captures,
    const DenseMap<Operation *, FunctionPlan *> &functionPlans,
    PlanMap &plans, SymbolTable &symbols, StringRef pass) {
  for (auto [constFunc, capture] : captures) {
    func::FuncOp func = constFunc;
    FunctionPlan &plan = *functionPlans.lookup(func);
    Operation *first = capture.first, *last = capture.last;
    // Delegates of another device than the function's were given device
    // switches around them: host work between device steps.
    bool switches = false;
    for (Operation *op = first; op != last->getNextNode();
         op = op->getNextNode())
      switches |= isa<LLVM::CallOp>(op);
    if (plan.streams.size() != 1 || plan.switchesDevices || switches) {
      if (InFlightRemark remark = remarkMissed(func, "GraphNotCaptured", pass))
        remark << RemarkArg("stream work called directly, not captured into "
                            "a CUDA graph")
               << RemarkArg("Reason", "its work selects devices between "
                                      "device steps");
      continue;
    }
    Value stream = plan.streams.front().second;
    SmallVector<Operation *> span;
    for (Operation *op = first; op != last->getNextNode();
         op = op->getNextNode())
      span.push_back(op);
    DenseSet<Operation *> inSpan(span.begin(), span.end());

    // The key, in program order: every input of the span but constants,
    // and the stream.
    llvm::SetVector<Value> inputs;
    inputs.insert(stream);
    for (Operation *op : span)
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if ((def && inSpan.contains(def)) || isConstant(operand) ||
            isa<gpu::AsyncTokenType>(operand.getType()))
          continue;
        inputs.insert(operand);
      }
    Location loc = func.getLoc();
    OpBuilder builder(first);
    SmallVector<Value> words;
    for (Value input : inputs)
      appendKeyWords(builder, first->getLoc(), input, words);
    FunctionValues &values = plan.values;
    Type i64 = builder.getI64Type();
    Type keyType = LLVM::LLVMArrayType::get(i64, words.size());
    // Slot numbers of the lowering are small; this one is the key's.
    Value key = values.getSlot(builder, keyType, /*index=*/1u << 20);
    for (auto [index, word] : llvm::enumerate(words)) {
      Value address = LLVM::GEPOp::create(
          builder, loc, key.getType(), keyType, key,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index)});
      LLVM::StoreOp::create(builder, loc, word, address);
    }
    LLVM::GlobalOp cellGlobal = createCell(func, symbols, words.size());
    Value cell = LLVM::AddressOfOp::create(builder, loc, cellGlobal);
    Value count = values.getI64(builder, words.size());
    RuntimeSupport &support = values.getSupport();
    SmallVector<Value, 3> at = values.getLocation(builder, first->getLoc());
    SmallVector<Value> replayArguments{cell, key, count, stream};
    llvm::append_range(replayArguments, at);
    Value state =
        support.call(builder, loc, "__etcopy_graph_replay", replayArguments);
    Value replayed = LLVM::ICmpOp::create(
        builder, loc, LLVM::ICmpPredicate::eq, state,
        values.getI32(builder, kReplayed));

    // Split: entry | capture (the span) | after.
    Block *entry = first->getBlock();
    Block *captureBlock = entry->splitBlock(first);
    Block *after = captureBlock->splitBlock(last->getNextNode());
    builder.setInsertionPointToEnd(entry);
    LLVM::CondBrOp::create(builder, loc, replayed, after, captureBlock);
    builder.setInsertionPointToStart(captureBlock);
    SmallVector<Value> beginArguments{cell, state, stream};
    llvm::append_range(beginArguments, at);
    Value captureStream =
        support.call(builder, loc, "__etcopy_graph_begin", beginArguments);
    builder.setInsertionPointToEnd(captureBlock);
    SmallVector<Value, 3> atEnd = values.getLocation(builder, last->getLoc());
    SmallVector<Value> endArguments{cell, state, key, count, stream};
    llvm::append_range(endArguments, atEnd);
    support.call(builder, loc, "__etcopy_graph_end", endArguments);
    LLVM::BrOp::create(builder, loc, after);

    // The span's work goes to the capturing stream.
    size_t numOps = 0, numDelegates = 0;
    for (Operation *op : span) {
      auto it = plans.find(op);
      if (it == plans.end())
        continue;
      it->second.stream = captureStream;
      if (isa<func::CallOp>(op)) {
        ++numDelegates;
        op->setOperand(op->getNumOperands() - 1, captureStream);
      } else {
        ++numOps;
      }
    }
    // The host waits after the work wait for the function's one stream.
    for (Operation &op : *after)
      if (auto wait = dyn_cast<gpu::WaitOp>(op); wait && isSynchronous(wait)) {
        SmallVector<Value> kept;
        for (Value dependency : wait.getAsyncDependencies())
          if (!inSpan.contains(dependency.getDefiningOp()))
            kept.push_back(dependency);
        wait.getAsyncDependenciesMutable().assign(kept);
      }
    if (InFlightRemark remark = remarkPassed(func, "GraphCaptured", pass))
      remark << RemarkArg("stream work captured into a CUDA graph at the "
                          "first call and replayed with one cudaGraphLaunch "
                          "while its inputs stay the same")
             << RemarkArg("Ops", static_cast<int64_t>(numOps))
             << RemarkArg("Delegates", static_cast<int64_t>(numDelegates))
             << RemarkArg("KeyWords", static_cast<int64_t>(words.size()));
  }
}
