//===- EtCopyToGPU.cpp - etcopy to gpu dialect conversion -----*- C++ -*-===//
//
// Lowers memref-level etcopy IR to upstream gpu-dialect ops: out-form copies
// and memref.copy with a device side become gpu.memcpy (statically empty
// ones disappear), device memref.alloc / memref.dealloc become gpu.alloc /
// gpu.dealloc. This is a walk, not a
// dialect conversion: every block gets one chain of async tokens, and a host
// wait is placed only where the host may observe a copy still in flight
// (local alias analysis of the memory effects of each host op and of the ops
// nested in it), before ops of unknown effect, region ops holding device
// work, and terminators. A call to a stream-ordered
// delegate joins the chain instead: its work is ordered on the stream.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Conversion/EtCopyToGPU/EtCopyToGPU.h"

#include "etcopy/Conversion/Passes.h"
#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "etcopy/Dialect/EtCopy/EtCopyOps.h"
#include "etcopy/Dialect/EtCopy/RemarkUtils.h"
#include "mlir/Analysis/AliasAnalysis/LocalAliasAnalysis.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::etcopy {
#define GEN_PASS_DEF_CONVERTETCOPYTOGPU
#include "etcopy/Conversion/Passes.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;

static std::pair<Value, Value> getDeviceCopyOperands(Operation *op);

/// The flag of the pass, the subcategory of its remarks.
static constexpr StringLiteral kPassName = "convert-etcopy-to-gpu";

/// How many frees of host memory in flight may wait for the next host wait
/// before a host allocation makes them wait for their copy alone.
static constexpr size_t kDeferredFreesKept = 8;

/// True for a memref (ranked or unranked) in a device memory space.
static bool isDeviceMemRef(Type type) {
  return isa<BaseMemRefType>(type) && getPlacement(type).isDevice();
}

namespace {

/// A copy issued on the device that the host has not waited for, seen from
/// the host: the host memref it reads (h2d) or writes (d2h).
struct PendingCopy {
  Value hostMemRef;
  /// True when the device writes `hostMemRef` (a d2h destination), false
  /// when it only reads it (an h2d source).
  bool deviceWrites;
  /// The token of the copy, which the host may wait for alone; null for the
  /// host buffers given to device work without one (a stream-ordered
  /// delegate's, a kernel's).
  Value token;
  /// Issue order in the block's chain.
  unsigned order;
};

/// What a host access has to wait for: nothing, one copy in flight (its
/// token and issue order), or everything in flight (a null token).
struct Conflict {
  bool conflicts = false;
  Value token;
  unsigned order = 0;
};

/// What a memref is a view of, for grouping pending copies: the value that
/// view-like ops were applied to, and whether it is an allocation of the
/// function or one of its arguments (neither of which can alias the other).
struct MemRefRoot {
  enum class Kind { Allocation, Argument, Unknown };
  Value value;
  Kind kind;
};

MemRefRoot getRoot(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  if (auto argument = dyn_cast<BlockArgument>(memref)) {
    bool isEntry = argument.getOwner()->isEntryBlock() &&
                   isa<FunctionOpInterface>(argument.getOwner()->getParentOp());
    return {memref,
            isEntry ? MemRefRoot::Kind::Argument : MemRefRoot::Kind::Unknown};
  }
  auto effects = memref.getDefiningOp<MemoryEffectOpInterface>();
  if (effects && effects.getEffectOnValue<MemoryEffects::Allocate>(memref))
    return {memref, MemRefRoot::Kind::Allocation};
  return {memref, MemRefRoot::Kind::Unknown};
}

/// The host sides of the copies in flight, grouped by root, so that a host
/// access is compared only with the copies of memory it may alias: an
/// allocation's with its own and with unknown ones, an argument's with
/// arguments' and unknown ones. At most `kMaxComparisons` copies are
/// compared for one access; beyond that the access is taken to conflict
/// (the host then waits), which keeps the lowering linear in the size of
/// the block.
class PendingCopies {
public:
  static constexpr unsigned kMaxComparisons = 64;

  void add(Value hostMemRef, bool deviceWrites, Value token = Value()) {
    MemRefRoot root = getRoot(hostMemRef);
    auto [entry, inserted] = byRoot.try_emplace(root.value);
    if (inserted)
      roots[static_cast<int>(root.kind)].push_back(root.value);
    entry->second.push_back({hostMemRef, deviceWrites, token, issued++});
  }

  bool empty() const { return byRoot.empty(); }

  /// Forgets the copies issued up to `order`, which are done.
  void removeUpTo(unsigned order) {
    for (auto &entry : byRoot)
      llvm::erase_if(entry.second, [&](const PendingCopy &copy) {
        return copy.order <= order;
      });
  }

  void clear() {
    byRoot.clear();
    for (SmallVector<Value> &kind : roots)
      kind.clear();
  }

  /// Whether a host `effect` on `value` may touch the host side of a copy in
  /// flight.
  bool conflicts(MemoryEffects::Effect *effect, Value value,
                 LocalAliasAnalysis &aliasAnalysis) const {
    return findConflict(effect, value, aliasAnalysis, /*latest=*/false)
        .conflicts;
  }

  /// Same, with what the host would have to wait for: the copy issued last
  /// of those the access may touch (with `latest`; any of them otherwise),
  /// or everything (a null token) where one of them has no token or too
  /// many were compared.
  Conflict findConflict(MemoryEffects::Effect *effect, Value value,
                        LocalAliasAnalysis &aliasAnalysis,
                        bool latest = true) const {
    Conflict conflict;
    auto everything = [&] {
      conflict.conflicts = true;
      conflict.token = Value();
      return conflict;
    };
    // A new allocation cannot be memory a copy in flight already uses.
    if (isa<MemoryEffects::Allocate>(effect))
      return conflict;
    bool hostReads = isa<MemoryEffects::Read>(effect);
    MemRefRoot root = getRoot(value);
    using Kind = MemRefRoot::Kind;
    SmallVector<Value, 4> candidateRoots;
    if (root.kind == Kind::Allocation)
      candidateRoots.push_back(root.value);
    for (Kind kind : {Kind::Allocation, Kind::Argument, Kind::Unknown}) {
      bool mayAlias = kind == Kind::Unknown || root.kind == Kind::Unknown ||
                      (kind == Kind::Argument && root.kind == Kind::Argument);
      if (mayAlias)
        llvm::append_range(candidateRoots, roots[static_cast<int>(kind)]);
    }
    unsigned compared = 0;
    for (Value candidateRoot : candidateRoots) {
      auto it = byRoot.find(candidateRoot);
      if (it == byRoot.end())
        continue;
      for (const PendingCopy &copy : it->second) {
        // Reading the source of an h2d in flight is safe; any other access
        // to a pending copy's host memory is a race.
        if (hostReads && !copy.deviceWrites)
          continue;
        if (++compared > kMaxComparisons)
          return everything();
        if (aliasAnalysis.alias(value, copy.hostMemRef).isNo())
          continue;
        if (!copy.token)
          return everything();
        if (!conflict.conflicts || copy.order > conflict.order) {
          conflict.conflicts = true;
          conflict.token = copy.token;
          conflict.order = copy.order;
        }
        if (!latest)
          return conflict;
      }
    }
    return conflict;
  }

private:
  DenseMap<Value, SmallVector<PendingCopy, 1>> byRoot;
  unsigned issued = 0;
  /// The roots of `byRoot`, by kind.
  SmallVector<Value> roots[3];
};

/// The token chain of one block.
struct BlockChain {
  /// The last token of the chain; null until the first async op.
  Value token;
  /// Whether async ops were issued since the last host wait.
  bool inFlight = false;
  /// The host sides of the copies issued since the last host wait.
  PendingCopies pendingCopies;
  /// Frees of host memory that a copy in flight may still use, moved to
  /// just after the next host wait, each with the copy it waits for (see
  /// Conflict).
  SmallVector<std::pair<Operation *, Conflict>> deferredFrees;
  /// Whether a stream-ordered delegate was called since `token`: its work is
  /// queued after the op that made the token.
  bool callAfterToken = false;
};

/// Lowers the bodies of host functions, block by block.
class EtCopyToGPULowering {
public:
  EtCopyToGPULowering(MLIRContext *context, const EtCopyToGPUOptions &options,
                      EtCopyToGPUStatistics &statistics)
      : options(options), statistics(statistics), rewriter(context),
        tokenType(gpu::AsyncTokenType::get(context)) {}

  /// Lowers every block of `region` and of the regions nested in it, each
  /// with its own token chain.
  LogicalResult lowerRegion(Region &region);

private:
  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op, BlockChain &chain);

  LogicalResult lowerCopy(Operation *op, Value dst, Value src,
                          BlockChain &chain);
  LogicalResult lowerAlloc(memref::AllocOp alloc, BlockChain &chain);
  LogicalResult lowerDealloc(memref::DeallocOp dealloc, BlockChain &chain);
  /// A call to a stream-ordered delegate: no host wait before it, its work
  /// is in flight after it.
  void lowerStreamOrderedCall(CallOpInterface call, BlockChain &chain);

  /// Handles an op that stays on the host: rejects accesses to device memory
  /// and waits for the chain first where the op may observe it.
  LogicalResult lowerHostOp(Operation *op, BlockChain &chain);
  /// Before `alloc`, an allocation of host memory: makes the deferred frees
  /// whose copies have work queued after them, after a host wait for the
  /// latest of those copies alone.
  void freeBeforeAllocation(memref::AllocOp alloc, BlockChain &chain);
  /// Makes the host wait before `op` for `copy` alone, and makes the frees
  /// that waited for it, where work is queued after it on the chain; returns
  /// false, doing nothing, otherwise (no copy known, or nothing after it).
  bool waitForCopy(Operation *op, BlockChain &chain, const Conflict &copy,
                   const Twine &reason);

  /// Creates a gpu op before `op` with `build(asyncTokenType,
  /// dependencies)`: chained on the block's token in async mode, in its sync
  /// form otherwise.
  template <typename BuildFn>
  auto createDeviceOp(Operation *op, BlockChain &chain, BuildFn build);
  /// The dependency of the next async op before `op`; starts the chain with
  /// `gpu.wait async` if the block has none yet.
  Value getChainToken(Operation *op, BlockChain &chain);
  /// Makes the host wait for everything in flight, at the rewriter's
  /// insertion point, and reports it (a HostWait remark about `scope`, with
  /// `reason`).
  void waitForChain(BlockChain &chain, Location loc, Operation *scope,
                    const Twine &reason);
  /// Same, before `op`.
  void waitBefore(Operation *op, BlockChain &chain, const Twine &reason) {
    rewriter.setInsertionPoint(op);
    waitForChain(chain, op->getLoc(), op, reason);
  }

  const EtCopyToGPUOptions &options;
  EtCopyToGPUStatistics &statistics;
  IRRewriter rewriter;
  LocalAliasAnalysis aliasAnalysis;
  SymbolTableCollection symbolTables;
  Type tokenType;
};

} // namespace

//===----------------------------------------------------------------------===//
// Token chain
//===----------------------------------------------------------------------===//

Value EtCopyToGPULowering::getChainToken(Operation *op, BlockChain &chain) {
  if (!chain.token) {
    rewriter.setInsertionPoint(op);
    chain.token = gpu::WaitOp::create(rewriter, op->getLoc(), tokenType,
                                      /*asyncDependencies=*/ValueRange())
                      .getAsyncToken();
  }
  return chain.token;
}

void EtCopyToGPULowering::waitForChain(BlockChain &chain, Location loc,
                                       Operation *scope, const Twine &reason) {
  if (!chain.inFlight)
    return;
  Operation *wait =
      gpu::WaitOp::create(rewriter, loc, /*asyncToken=*/Type(), chain.token);
  ++statistics.waits;
  for (Operation *free : llvm::make_first_range(chain.deferredFrees)) {
    free->moveAfter(wait);
    wait = free;
  }
  chain.deferredFrees.clear();
  if (InFlightRemark remark =
          emitEtCopyRemark(remark::RemarkKind::RemarkPassed, loc, scope,
                           "HostWait", kPassName))
    remark << RemarkArg("the host waits for the device work in flight")
           << RemarkArg("Reason", reason.str());
  chain.inFlight = false;
  chain.pendingCopies.clear();
}

//===----------------------------------------------------------------------===//
// Device ops
//===----------------------------------------------------------------------===//

template <typename BuildFn>
auto EtCopyToGPULowering::createDeviceOp(Operation *op, BlockChain &chain,
                                         BuildFn build) {
  Type asyncTokenType;
  SmallVector<Value, 1> dependencies;
  if (options.async) {
    asyncTokenType = tokenType;
    dependencies.push_back(getChainToken(op, chain));
  }
  rewriter.setInsertionPoint(op);
  auto deviceOp = build(asyncTokenType, dependencies);
  if (options.async) {
    chain.token = deviceOp.getAsyncToken();
    chain.inFlight = true;
    chain.callAfterToken = false;
  }
  return deviceOp;
}

LogicalResult EtCopyToGPULowering::lowerCopy(Operation *op, Value dst,
                                             Value src, BlockChain &chain) {
  // gpu.memcpy takes ranked memrefs with equal element types and compatible
  // shapes; layouts may differ, so the copy verifiers (etcopy C3-C5,
  // memref.copy's) already guarantee everything but the rank.
  for (Value side : {dst, src})
    if (!isa<MemRefType>(side.getType()))
      return op->emitOpError("cannot copy the unranked memref ")
             << side.getType() << " with gpu.memcpy; cast it to a ranked "
             << "memref first";

  // A statically empty copy moves nothing (the canonicalisation of the
  // etcopy ops, which may not have run since bufferization, does the same):
  // no gpu.memcpy of 0 bytes reaches the CUDA lowering's batches.
  if (isStaticallyEmpty(cast<MemRefType>(dst.getType())) &&
      isStaticallyEmpty(cast<MemRefType>(src.getType()))) {
    rewriter.eraseOp(op);
    return success();
  }

  createDeviceOp(op, chain, [&](Type asyncTokenType, ValueRange dependencies) {
    return gpu::MemcpyOp::create(rewriter, op->getLoc(), asyncTokenType,
                                 dependencies, dst, src);
  });
  // Only host memory can be observed before the next wait: the device side
  // of a copy is ordered with every later device op by the chain.
  if (options.async) {
    if (!isDeviceMemRef(src.getType()))
      chain.pendingCopies.add(src, /*deviceWrites=*/false, chain.token);
    else if (!isDeviceMemRef(dst.getType()))
      chain.pendingCopies.add(dst, /*deviceWrites=*/true, chain.token);
  }
  rewriter.eraseOp(op);
  ++statistics.copies;
  return success();
}

LogicalResult EtCopyToGPULowering::lowerAlloc(memref::AllocOp alloc,
                                              BlockChain &chain) {
  MemRefType type = alloc.getType();
  if (!type.getLayout().isIdentity())
    return alloc.emitOpError("cannot allocate device memory ")
           << type << " with gpu.alloc: only the identity layout is "
           << "supported";

  auto newAlloc = createDeviceOp(
      alloc, chain, [&](Type asyncTokenType, ValueRange dependencies) {
        return gpu::AllocOp::create(rewriter, alloc.getLoc(), type,
                                    asyncTokenType, dependencies,
                                    alloc.getDynamicSizes(),
                                    /*symbolOperands=*/ValueRange());
      });
  rewriter.replaceOp(alloc, newAlloc.getMemref());
  ++statistics.allocs;
  return success();
}

LogicalResult EtCopyToGPULowering::lowerDealloc(memref::DeallocOp dealloc,
                                                BlockChain &chain) {
  Value memref = dealloc.getMemref();
  if (!isa<MemRefType>(memref.getType()))
    return dealloc.emitOpError("cannot free the unranked device memref ")
           << memref.getType() << " with gpu.dealloc; cast it to a ranked "
           << "memref first";

  // Bufferization frees each buffer right after its last use, which may
  // fall between two copies that convert-gpu-to-cuda-runtime would batch:
  // the free moves past the copies (and frees) that follow it, which
  // cannot use the freed memory, and is lowered when the walk reaches it
  // again there.
  if (options.async) {
    // Past other device frees, allocations and ops without memory effects
    // (none of which the CUDA lowering lets end a batch).
    auto isPassable = [](Operation *op) {
      if (auto other = dyn_cast<memref::DeallocOp>(op))
        return isDeviceMemRef(other.getMemref().getType());
      if (op->getNumRegions() != 0 || op->hasTrait<OpTrait::IsTerminator>())
        return false;
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      return isMemoryEffectFree(op) ||
             (effects && effects.onlyHasEffect<MemoryEffects::Allocate>());
    };
    Operation *next = dealloc->getNextNode();
    while (next && isPassable(next))
      next = next->getNextNode();
    if (next && getDeviceCopyOperands(next).first) {
      dealloc->moveAfter(next);
      return success();
    }
  }

  // A free produces nothing the host or another stream can observe (freed
  // memory cannot be used), so it never makes the host wait: it stays
  // ordered on the chain and completes with it.
  bool wasInFlight = chain.inFlight;
  createDeviceOp(
      dealloc, chain, [&](Type asyncTokenType, ValueRange dependencies) {
        return gpu::DeallocOp::create(rewriter, dealloc.getLoc(),
                                      asyncTokenType, dependencies, memref);
      });
  chain.inFlight = wasInFlight;
  rewriter.eraseOp(dealloc);
  return success();
}

void EtCopyToGPULowering::lowerStreamOrderedCall(CallOpInterface call,
                                                 BlockChain &chain) {
  // The delegate enqueues its work on its device's stream after what is in
  // flight on it, and the CUDA lowering orders the function's other streams
  // around the call: the host need not wait before it. Afterwards its work is
  // in flight like a copy's. A host buffer it is given (the contract passes
  // device buffers, but nothing stops a pointer) may be read or written by
  // that work until the host waits.
  if (!options.async) {
    // Every device op is waited for at once: so is the delegate's work.
    rewriter.setInsertionPointAfter(call);
    gpu::WaitOp::create(rewriter, call.getLoc(), /*asyncToken=*/Type(),
                        /*asyncDependencies=*/ValueRange());
    ++statistics.waits;
    return;
  }
  getChainToken(call, chain);
  chain.inFlight = true;
  chain.callAfterToken = true;
  for (Value operand : call.getArgOperands())
    if (isa<BaseMemRefType>(operand.getType()) &&
        !isDeviceMemRef(operand.getType()))
      chain.pendingCopies.add(operand, /*deviceWrites=*/true);
}

//===----------------------------------------------------------------------===//
// Host ops
//===----------------------------------------------------------------------===//

/// "reads", "writes", ...: what `effect` does, for diagnostics.
static StringRef describeEffect(MemoryEffects::Effect *effect) {
  return TypeSwitch<MemoryEffects::Effect *, StringRef>(effect)
      .Case<MemoryEffects::Read>([](auto) { return "reads"; })
      .Case<MemoryEffects::Write>([](auto) { return "writes"; })
      .Case<MemoryEffects::Allocate>([](auto) { return "allocates"; })
      .Case<MemoryEffects::Free>([](auto) { return "frees"; })
      .Default([](auto) { return "accesses"; });
}

/// What the user should do instead of touching device memory on the host.
static StringRef suggestFix(MemoryEffects::Effect *effect) {
  return TypeSwitch<MemoryEffects::Effect *, StringRef>(effect)
      .Case<MemoryEffects::Read>(
          [](auto) { return "copy it with etcopy.d2h first"; })
      .Case<MemoryEffects::Write>(
          [](auto) { return "write host memory and copy it with etcopy.h2d"; })
      .Default([](auto) {
        return "only memref.alloc and memref.dealloc manage device memory";
      });
}

/// True for an op that convert-etcopy-to-gpu turns into device work (or
/// that may start some): a copy with a device side, an allocation or free of
/// device memory, a gpu-dialect op, a call.
static bool mayStartDeviceWork(Operation *op) {
  if (isa<H2DOp, D2HOp, D2DOp, CallOpInterface>(op) ||
      isa_and_nonnull<gpu::GPUDialect>(op->getDialect()))
    return true;
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return isDeviceMemRef(copy.getTarget().getType()) ||
           isDeviceMemRef(copy.getSource().getType());
  if (auto alloc = dyn_cast<memref::AllocOp>(op))
    return isDeviceMemRef(alloc.getType());
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
    return isDeviceMemRef(dealloc.getMemref().getType());
  return false;
}

/// Appends the memory effects of the ops nested in `op` to `effects`.
/// Returns false where they are not all known host effects: a nested op has
/// neither MemoryEffectOpInterface nor RecursiveMemoryEffects, or may start
/// device work (which its own chain would not order after this one's).
/// Effects on values defined inside `op` are kept: they cannot alias a copy
/// in flight, which the conflict check finds.
static bool
collectNestedHostEffects(Operation *op,
                         SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  WalkResult result = op->walk([&](Operation *nested) {
    if (nested == op)
      return WalkResult::advance();
    if (mayStartDeviceWork(nested))
      return WalkResult::interrupt();
    if (auto effectInterface = dyn_cast<MemoryEffectOpInterface>(nested)) {
      effectInterface.getEffects(effects);
      return WalkResult::advance();
    }
    return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
               ? WalkResult::advance()
               : WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

LogicalResult EtCopyToGPULowering::lowerHostOp(Operation *op,
                                               BlockChain &chain) {
  SmallVector<MemoryEffects::EffectInstance> effects;
  auto effectInterface = dyn_cast<MemoryEffectOpInterface>(op);
  if (effectInterface)
    effectInterface.getEffects(effects);
  for (const MemoryEffects::EffectInstance &effect : effects) {
    Value value = effect.getValue();
    if (value && isDeviceMemRef(value.getType()))
      return op->emitOpError()
             << describeEffect(effect.getEffect()) << " device memory "
             << value.getType() << " on the host; "
             << suggestFix(effect.getEffect());
  }

  // An op with regions is judged by the effects of its nested ops too
  // (linalg.generic's payload, scf.for's body): host work of known effects
  // waits only where it may touch a copy in flight, like any other op.
  // Unknown effects (a call, say) or nested device work, which runs on its
  // own chain, may observe anything in flight.
  if (op->getNumRegions() != 0) {
    bool knownEffects =
        (effectInterface ||
         op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) &&
        collectNestedHostEffects(op, effects);
    if (!knownEffects) {
      waitBefore(op, chain,
                 "'" + op->getName().getStringRef() +
                     "' holds device work or ops of unknown memory effects");
      return success();
    }
  } else if (!effectInterface) {
    if (!isMemoryEffectFree(op))
      waitBefore(op, chain,
                 "'" + op->getName().getStringRef() +
                     "' has unknown memory effects");
    return success();
  }
  // The free of host memory a copy in flight may use waits for the next
  // host wait instead of making one: nothing after it uses the memory, so it
  // may as well go later, and moving it is cheaper than draining the queue
  // (bufferization frees each buffer right after its last use, which for
  // the source of an upload is the upload itself).
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
      dealloc && options.async) {
    Conflict conflict = chain.pendingCopies.findConflict(
        MemoryEffects::Free::get(), dealloc.getMemref(), aliasAnalysis);
    if (conflict.conflicts) {
      chain.deferredFrees.push_back({op, conflict});
      if (InFlightRemark remark = emitEtCopyRemark(
              remark::RemarkKind::RemarkPassed, op->getLoc(), op,
              "FreeDeferred", kPassName))
        remark << RemarkArg("the free waits for the next host wait, or for "
                            "the copy alone before a host allocation")
               << RemarkArg("Reason",
                            "a copy in flight may still use the memory");
      return success();
    }
  }
  // A host allocation may reuse the memory of deferred frees.
  if (auto alloc = dyn_cast<memref::AllocOp>(op);
      alloc && options.async && !chain.deferredFrees.empty())
    freeBeforeAllocation(alloc, chain);
  // Known effects: wait only if one may touch the host side of a copy in
  // flight (or names no value, so could touch anything). A full wait, not
  // one for the copy alone: the host reads or writes memory of the chain's
  // work here, and more waits follow in such code (a method's glue reading
  // each download); waiting for the copy alone added a wait per step there
  // (docs/CUDALowering.md).
  const MemoryEffects::EffectInstance *conflict =
      llvm::find_if(effects, [&](const MemoryEffects::EffectInstance &effect) {
        Value value = effect.getValue();
        return !value || chain.pendingCopies.conflicts(effect.getEffect(),
                                                       value, aliasAnalysis);
      });
  if (conflict != effects.end()) {
    std::string reason;
    llvm::raw_string_ostream os(reason);
    os << "'" << op->getName() << "' " << describeEffect(conflict->getEffect());
    if (Value value = conflict->getValue())
      os << " " << value.getType()
         << ", which may be the host side of a copy in flight";
    else
      os << " memory it does not name";
    waitBefore(op, chain, reason);
  }
  return success();
}

bool EtCopyToGPULowering::waitForCopy(Operation *op, BlockChain &chain,
                                      const Conflict &copy,
                                      const Twine &reason) {
  // Where device work is queued after the copy (a stream-ordered delegate,
  // the next copies), waiting for the copy alone (an event recorded after
  // it, in the CUDA lowering) lets that work run on; where nothing is, the
  // wait would be a full one.
  if (!copy.token || (copy.token == chain.token && !chain.callAfterToken))
    return false;
  rewriter.setInsertionPoint(op);
  auto wait = gpu::WaitOp::create(rewriter, op->getLoc(),
                                  /*asyncToken=*/Type(), copy.token);
  wait->setAttr(EtCopyDialect::getWaitsForOneOpAttrName(),
                rewriter.getUnitAttr());
  if (InFlightRemark remark =
          emitEtCopyRemark(remark::RemarkKind::RemarkPassed, op->getLoc(), op,
                           "HostWait", kPassName))
    remark << RemarkArg("the host waits for one copy in flight, not for the "
                        "work queued after it")
           << RemarkArg("Reason", reason.str());
  // The chain is one sequence: with that copy, those before it are done,
  // and so are the frees that waited for them.
  chain.pendingCopies.removeUpTo(copy.order);
  Operation *last = wait;
  SmallVector<std::pair<Operation *, Conflict>> kept;
  for (auto &[free, conflict] : chain.deferredFrees) {
    if (!conflict.token || conflict.order > copy.order) {
      kept.push_back({free, conflict});
      continue;
    }
    free->moveAfter(last);
    last = free;
    if (InFlightRemark remark =
            emitEtCopyRemark(remark::RemarkKind::RemarkPassed, free->getLoc(),
                             free, "FreeAfterCopy", kPassName))
      remark << RemarkArg("the free waits for the copy that uses the memory "
                          "(an event recorded after it), not for the stream")
             << RemarkArg("Reason", reason.str());
  }
  chain.deferredFrees = std::move(kept);
  return true;
}

void EtCopyToGPULowering::freeBeforeAllocation(memref::AllocOp alloc,
                                               BlockChain &chain) {
  // The host would hold the deferred buffers until the next host wait while
  // it allocates more. The copies that free them are done long before that
  // wait where device work is queued after them: the host waits for the
  // last of those alone, and the memory can serve the allocation. Where
  // nothing is queued after a copy, that wait would be a full one: its frees
  // stay deferred, adding no wait. Up to kDeferredFreesKept frees wait for
  // the next host wait, as before: a method alternating uploads with
  // delegates and host reads of their results has one per step, freed by
  // the wait that reads the step's result, and a short chain of delegates
  // a few; an event wait there costs more time than the buffers it frees
  // early are worth (docs/CUDALowering.md). More mean the host runs ahead
  // of the device, holding a buffer per upload: the wait bounds that.
  if (chain.deferredFrees.size() <= kDeferredFreesKept)
    return;
  std::optional<Conflict> target;
  for (const Conflict &conflict : llvm::make_second_range(chain.deferredFrees))
    if (conflict.token &&
        (conflict.token != chain.token || chain.callAfterToken) &&
        (!target || conflict.order > target->order))
      target = conflict;
  if (target)
    (void)waitForCopy(alloc, chain, *target,
                      "host memory is allocated while frees wait for a copy "
                      "in flight");
}

//===----------------------------------------------------------------------===//
// Walk
//===----------------------------------------------------------------------===//

/// The copy `op` performs when lowered to gpu.memcpy: an out-form etcopy copy
/// or a memref.copy with a device side. Null values otherwise.
static std::pair<Value, Value> getDeviceCopyOperands(Operation *op) {
  return TypeSwitch<Operation *, std::pair<Value, Value>>(op)
      .Case<H2DOp, D2HOp, D2DOp>([](auto copy) -> std::pair<Value, Value> {
        return {copy.getDest(), copy.getSource()};
      })
      .Case([](memref::CopyOp copy) -> std::pair<Value, Value> {
        if (!isDeviceMemRef(copy.getTarget().getType()) &&
            !isDeviceMemRef(copy.getSource().getType()))
          return {};
        return {copy.getTarget(), copy.getSource()};
      })
      .Default([](Operation *) -> std::pair<Value, Value> { return {}; });
}

LogicalResult EtCopyToGPULowering::lowerOp(Operation *op, BlockChain &chain) {
  // Functional copies have no memory to copy yet.
  if (isa<H2DOp, D2HOp, D2DOp>(op) && op->getNumResults() != 0)
    return op->emitOpError(
        "is a functional (tensor) copy, which has no gpu-dialect form; "
        "bufferize first (one-shot-bufferize with "
        "use-encoding-for-memory-space)");

  if (auto [dst, src] = getDeviceCopyOperands(op); dst)
    return lowerCopy(op, dst, src, chain);

  if (auto alloc = dyn_cast<memref::AllocOp>(op);
      alloc && isDeviceMemRef(alloc.getType()))
    return lowerAlloc(alloc, chain);

  if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
      dealloc && isDeviceMemRef(dealloc.getMemref().getType()))
    return lowerDealloc(dealloc, chain);

  if (auto alloca = dyn_cast<memref::AllocaOp>(op);
      alloca && isDeviceMemRef(alloca.getType()))
    return alloca.emitError("device memory cannot be allocated on the host "
                            "stack (memref.alloca of ")
           << alloca.getType() << ")";

  // Data leaves the block: the successor or parent must see the results of
  // everything in flight.
  if (op->hasTrait<OpTrait::IsTerminator>()) {
    waitBefore(op, chain,
               "data leaves the block at '" + op->getName().getStringRef() +
                   "'");
    return success();
  }

  // A sync-form kernel launch is device work like a copy: with async, it
  // goes on the chain (async form) and is in flight after it; the host
  // buffers it is given may be accessed until the host waits.
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
      launch && options.async && !launch.getAsyncToken() &&
      launch.getAsyncDependencies().empty() && !launch.getAsyncObject()) {
    createDeviceOp(op, chain, [&](Type tokenType, ValueRange dependencies) {
      return gpu::LaunchFuncOp::create(
          rewriter, launch.getLoc(), launch.getKernel(),
          launch.getGridSizeOperandValues(), launch.getBlockSizeOperandValues(),
          launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
          tokenType, dependencies,
          launch.hasClusterSize()
              ? std::optional(launch.getClusterSizeOperandValues())
              : std::nullopt);
    });
    for (Value operand : launch.getKernelOperands())
      if (isa<BaseMemRefType>(operand.getType()) &&
          !isDeviceMemRef(operand.getType()))
        chain.pendingCopies.add(operand, /*deviceWrites=*/true);
    rewriter.eraseOp(launch);
    return success();
  }

  // Other gpu-dialect ops (async launches, say) are not on this chain:
  // order them after it. Their regions hold device code, not host code.
  if (isa_and_nonnull<gpu::GPUDialect>(op->getDialect())) {
    waitBefore(op, chain,
               "'" + op->getName().getStringRef() +
                   "' is not ordered on the block's chain");
    return success();
  }

  if (auto call = dyn_cast<CallOpInterface>(op)) {
    Operation *callee = call.resolveCallableInTable(&symbolTables);
    if (callee && isStreamOrderedDelegate(callee)) {
      lowerStreamOrderedCall(call, chain);
      return success();
    }
  }

  if (failed(lowerHostOp(op, chain)))
    return failure();
  // Nested blocks get their own chains.
  for (Region &region : op->getRegions())
    if (failed(lowerRegion(region)))
      return failure();
  return success();
}

LogicalResult EtCopyToGPULowering::lowerBlock(Block &block) {
  BlockChain chain;
  for (Operation &op : llvm::make_early_inc_range(block))
    if (failed(lowerOp(&op, chain)))
      return failure();
  // Blocks without a terminator (in regions that allow none) still finish
  // their work before control leaves them.
  rewriter.setInsertionPointToEnd(&block);
  waitForChain(chain, block.getParentOp()->getLoc(), block.getParentOp(),
               "control leaves the block");
  return success();
}

LogicalResult EtCopyToGPULowering::lowerRegion(Region &region) {
  for (Block &block : region)
    if (failed(lowerBlock(block)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Memory spaces
//===----------------------------------------------------------------------===//

/// Replaces `#etcopy.device<cuda:0>` memory spaces by
/// `#gpu.address_space<global>` and `#etcopy.device<cpu>` by none throughout
/// `root` (types of values, block arguments and function signatures), and
/// drops the `etcopy.*` discardable attributes, so that the IR no longer
/// needs the etcopy dialect.
static LogicalResult replaceDeviceMemorySpaces(Operation *root) {
  MLIRContext *context = root->getContext();
  auto globalSpace =
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Global);

  // Types are replaced once each (the replacer caches them): the first op
  // holding a type with no gpu equivalent reports it.
  Type unsupportedType;
  AttrTypeReplacer replacer;
  replacer.addReplacement([&](MemRefType type) -> std::optional<Type> {
    auto device = dyn_cast_or_null<DeviceAttr>(type.getMemorySpace());
    if (!device)
      return std::nullopt;
    if (device.isHost())
      return MemRefType::Builder(type).setMemorySpace(Attribute());
    if (device.getKind() == DeviceKind::CUDA && device.getOrdinal() == 0)
      return MemRefType::Builder(type).setMemorySpace(globalSpace);
    unsupportedType = type;
    return std::nullopt;
  });

  WalkResult result = root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    replacer.replaceElementsIn(op, /*replaceAttrs=*/true,
                               /*replaceLocs=*/false, /*replaceTypes=*/true);
    if (unsupportedType) {
      op->emitOpError("uses ")
          << unsupportedType << ", whose memory space "
          << cast<MemRefType>(unsupportedType).getMemorySpace()
          << " has no #gpu.address_space equivalent; memory-space=gpu "
             "supports cuda:0 only";
      return WalkResult::interrupt();
    }
    // Without the attribute no later pass would pass the stream it expects.
    if (isStreamOrderedDelegate(op)) {
      op->emitOpError("is a stream-ordered delegate, which needs the "
                      "etcopy attributes that memory-space=gpu drops; use "
                      "memory-space=etcopy");
      return WalkResult::interrupt();
    }
    // Those of function arguments too: `etcopy.writes` is only valid on a
    // delegate, and the delegate's `etcopy.device` goes.
    removeEtCopyAttributes(op);
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

LogicalResult
mlir::etcopy::convertEtCopyToGPU(Operation *root,
                                 const EtCopyToGPUOptions &options,
                                 EtCopyToGPUStatistics *statistics) {
  EtCopyToGPUStatistics localStatistics;
  EtCopyToGPULowering lowering(root->getContext(), options,
                               statistics ? *statistics : localStatistics);

  // Lower host functions; gpu.module bodies are device code.
  WalkResult result = root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::GPUModuleOp>(op))
      return WalkResult::skip();
    auto function = dyn_cast<FunctionOpInterface>(op);
    if (!function)
      return WalkResult::advance();
    if (failed(lowering.lowerRegion(function.getFunctionBody())))
      return WalkResult::interrupt();
    return WalkResult::skip();
  });
  if (result.wasInterrupted())
    return failure();

  if (options.useGPUAddressSpace)
    return replaceDeviceMemorySpaces(root);
  return success();
}

namespace {

struct ConvertEtCopyToGPUPass
    : public etcopy::impl::ConvertEtCopyToGPUBase<ConvertEtCopyToGPUPass> {
  using ConvertEtCopyToGPUBase::ConvertEtCopyToGPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    EtCopyToGPUOptions conversionOptions;
    conversionOptions.async = async;
    conversionOptions.useGPUAddressSpace =
        memorySpace == etcopy::OutputMemorySpace::GPU;
    EtCopyToGPUStatistics statistics;
    if (failed(convertEtCopyToGPU(module, conversionOptions, &statistics)))
      return signalPassFailure();
    numCopies += statistics.copies;
    numAllocs += statistics.allocs;
    numWaits += statistics.waits;
  }
};

} // namespace
