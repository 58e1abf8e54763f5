//===- OptimizeTransfers.cpp - Remove needless copies ---------*- C++ -*-===//
//
// The etcopy-optimize-transfers pass: elides same-device round trips, merges
// duplicate copies of one value to one device, removes dead copies, hoists
// copies out of loops (loop-invariant ones and loop-carried pairs) and sinks
// the others to just before their first user; at the memref level, turns a
// move between devices through a host temporary into one etcopy.d2d. Also
// defines the placement rule for functional copies that
// etcopy-propagate-device shares.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Dialect/EtCopy/EtCopyOps.h"
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h"
#include "etcopy/Dialect/EtCopy/RemarkUtils.h"

#include "mlir/Analysis/AliasAnalysis/LocalAliasAnalysis.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/RegionGraphTraits.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SCCIterator.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::etcopy {
#define GEN_PASS_DEF_ETCOPYOPTIMIZETRANSFERS
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;

//===----------------------------------------------------------------------===//
// Placement rule shared with etcopy-propagate-device
//===----------------------------------------------------------------------===//

Block *mlir::etcopy::getUnreachableBlock(Operation *op, Region *scope,
                                         DominanceInfo &domInfo) {
  Block *unreachable = nullptr;
  for (Block *block = op->getBlock(); block;) {
    if (!domInfo.isReachableFromEntry(block))
      unreachable = block;
    if (block->getParent() == scope)
      break;
    Operation *parent = block->getParentOp();
    block = parent ? parent->getBlock() : nullptr;
  }
  return unreachable;
}

/// The first of `users`, or of their ancestors, in `block`.
static Operation *getFirstAncestorInBlock(Block *block,
                                          ArrayRef<Operation *> users) {
  Operation *first = nullptr;
  for (Operation *user : users) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (ancestor && (!first || ancestor->isBeforeInBlock(first)))
      first = ancestor;
  }
  return first;
}

bool CopyPlacement::isInBlockCycle(Block *block) {
  // The cycles of a region, once: its strongly connected components.
  // Blocks unreachable from the entry are on none (they never run).
  Region *region = block->getParent();
  if (regionsWithCycles.insert(region).second)
    for (auto scc = llvm::scc_begin(region); !scc.isAtEnd(); ++scc)
      if (scc.hasCycle())
        blocksOnCycles.insert_range(*scc);
  return blocksOnCycles.contains(block);
}

Operation *CopyPlacement::getInsertionPoint(Value source,
                                            ArrayRef<Operation *> users) {
  assert(!users.empty() && "a copy without users has no place");
  // Dead code has no dominator tree node, and needs none: a block
  // unreachable from the entry is dominated by every block, so a copy in it
  // before the first of the users serves them all.
  Region *sourceRegion = source.getParentRegion();
  Block *unreachable = getUnreachableBlock(users.front(), sourceRegion);
  assert(llvm::all_of(users,
                      [&](Operation *user) {
                        return getUnreachableBlock(user, sourceRegion) ==
                               unreachable;
                      }) &&
         "users are all reachable or all in one unreachable block");
  if (unreachable)
    return getFirstAncestorInBlock(unreachable, users);

  // Walking the dominator tree costs its depth: only when a user is not
  // already dominated (dominance queries take constant time).
  Block *block = users.front()->getBlock();
  for (Operation *user : users.drop_front())
    if (!domInfo.dominates(block, user->getBlock()))
      block = domInfo.findNearestCommonDominator(block, user->getBlock());
  assert(block && "the users of one value have a common dominator");

  // The first user, or the ancestor of a user, in that block. A block that
  // only dominates its users (they sit in its successors) ends with its
  // terminator.
  Operation *first = getFirstAncestorInBlock(block, users);
  if (!first)
    first = block->getTerminator();

  // In front of every loop that does not contain the source's definition:
  // the copy then runs once instead of once per iteration. Conditionals on
  // the way are crossed too (the functional form is speculatable).
  Operation *scope = source.getParentRegion()->getParentOp();
  Operation *point = first;
  for (Operation *parent = block->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (parent->isAncestor(scope) ||
        parent->hasTrait<OpTrait::IsIsolatedFromAbove>())
      break;
    if (isa<LoopLikeOpInterface>(parent))
      point = parent;
  }

  // Loops made of blocks (cf branches) likewise: a point in a block cycle
  // that the source's definition is outside of moves to the definition.
  if (isInBlockCycle(point->getBlock())) {
    Region *region = point->getParentRegion();
    Block *defBlock = source.getParentBlock();
    if (defBlock->getParent() != region)
      point = &region->front().front();
    else if (!isInBlockCycle(defBlock))
      point = isa<BlockArgument>(source) ? &defBlock->front()
                                         : source.getDefiningOp()->getNextNode();
  }

  // Nothing but the terminator's own ops may sit in a terminator's regions
  // (scf.forall.in_parallel): place the copy in front of the terminator.
  while (Operation *parent = point->getParentOp()) {
    if (!parent->hasTrait<OpTrait::IsTerminator>())
      break;
    point = parent;
  }
  return point;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// A functional etcopy.h2d or etcopy.d2h: one tensor in, one tensor out, no
/// effects.
static bool isFunctionalCopy(Operation *op) {
  if (auto h2d = dyn_cast<H2DOp>(op))
    return h2d.hasPureTensorSemantics();
  if (auto d2h = dyn_cast<D2HOp>(op))
    return d2h.hasPureTensorSemantics();
  return false;
}

static Value getCopySource(Operation *copy) { return copy->getOperand(0); }
static Value getCopyResult(Operation *copy) { return copy->getResult(0); }

/// "etcopy.h2d from cpu to cuda:0", for remarks.
static std::string describeCopy(Operation *copy) {
  return (copy->getName().getStringRef() + " from " +
          getPlaceName(getCopySource(copy).getType()) + " to " +
          getPlaceName(getCopyResult(copy).getType()))
      .str();
}

/// Creates the functional copy of `source` to `type`: an h2d when `type` is
/// on a device, a d2h otherwise.
static Value createCopy(OpBuilder &builder, Location loc, Type type,
                        Value source) {
  if (getPlacement(type).isDevice())
    return H2DOp::create(builder, loc, type, source).getResult();
  return D2HOp::create(builder, loc, type, source).getResult();
}

/// The functional copies nested in `root`, in program order, and the
/// scf.for loops, inner ones first: one walk. With `outFormD2Hs`, also the
/// out-form etcopy.d2h ops, in program order.
static void
collectCopiesAndLoops(Operation *root, SmallVectorImpl<Operation *> &copies,
                      SmallVectorImpl<scf::ForOp> &loops,
                      SmallVectorImpl<D2HOp> *outFormD2Hs = nullptr) {
  copies.clear();
  loops.clear();
  root->walk([&](Operation *op) {
    if (isFunctionalCopy(op))
      copies.push_back(op);
    else if (auto loop = dyn_cast<scf::ForOp>(op))
      loops.push_back(loop);
    else if (auto d2h = dyn_cast<D2HOp>(op); d2h && outFormD2Hs)
      outFormD2Hs->push_back(d2h);
  });
}

/// True when `copy` lies in code unreachable from the definition of its
/// source: the pass leaves it where it is, and only erases it when unused.
static bool isUnreachableCopy(Operation *copy, CopyPlacement &placement) {
  return placement.getUnreachableBlock(copy,
                                       getCopySource(copy).getParentRegion());
}

/// Gives the users of `copy` in unreachable code a copy of their own, one
/// per unreachable block, placed by CopyPlacement (so dead code never holds
/// a live copy in place), and returns the other users, each once. Sets
/// `changed` when it made a copy.
static SmallVector<Operation *>
detachUnreachableUsers(Operation *copy, CopyPlacement &placement,
                       bool &changed) {
  Value source = getCopySource(copy);
  SetVector<Operation *> reachable;
  llvm::MapVector<Block *, SmallVector<OpOperand *>> unreachable;
  for (OpOperand &use : getCopyResult(copy).getUses()) {
    Operation *user = use.getOwner();
    if (Block *block =
            placement.getUnreachableBlock(user, source.getParentRegion()))
      unreachable[block].push_back(&use);
    else
      reachable.insert(user);
  }
  for (auto &[block, uses] : unreachable) {
    SmallVector<Operation *> owners = llvm::map_to_vector(
        uses, [](OpOperand *use) { return use->getOwner(); });
    OpBuilder builder(placement.getInsertionPoint(source, owners));
    Value clone = getCopyResult(builder.clone(*copy));
    for (OpOperand *use : uses)
      use->set(clone);
    changed = true;
  }
  return reachable.takeVector();
}

/// Number of loops around `op`.
static unsigned getLoopDepth(Operation *op) {
  unsigned depth = 0;
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    depth += isa<LoopLikeOpInterface>(parent);
  return depth;
}

/// Moves `op` before `point`. Operation::moveBefore splices, which forgets
/// the operation order of the whole block: the next isBeforeInBlock there
/// renumbers it, which over many moves is quadratic. Unlinking and relinking
/// forgets only the order of `op`.
static void moveBefore(Operation *op, Operation *point) {
  op->remove();
  point->getBlock()->getOperations().insert(point->getIterator(), op);
}

namespace {
/// The end of the run of adjacent functional copies that holds an
/// operation: the first operation after it that is not a functional copy
/// (null at the end of a block without terminator). Computed once per run
/// and remembered; the end of a run does not change while only copies move,
/// appear or disappear, so it stays valid through placeCopies.
class CopyRuns {
public:
  Operation *getEnd(Operation *op) {
    if (auto it = ends.find(op); it != ends.end())
      return it->second;
    SmallVector<Operation *> run = {op};
    Operation *end = op->getNextNode();
    while (end && isFunctionalCopy(end)) {
      if (auto it = ends.find(end); it != ends.end()) {
        end = it->second;
        break;
      }
      run.push_back(end);
      end = end->getNextNode();
    }
    for (Operation *member : run)
      ends[member] = end;
    return end;
  }

  /// Records that `copy` moved before `point`.
  void moved(Operation *copy, Operation *point) {
    ends[copy] = isFunctionalCopy(point) ? getEnd(point) : point;
  }

  /// True when `copy` already sits at `point`: is it, or is before it in its
  /// block with only other functional copies in between (copies sharing a
  /// point keep their relative order).
  bool isAtPoint(Operation *copy, Operation *point) {
    if (copy == point)
      return true;
    if (copy->getBlock() != point->getBlock())
      return false;
    if (!isFunctionalCopy(point))
      return getEnd(copy) == point;
    return getEnd(copy) == getEnd(point) && copy->isBeforeInBlock(point);
  }

private:
  DenseMap<Operation *, Operation *> ends;
};
} // namespace

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct EtCopyOptimizeTransfersPass
    : public mlir::etcopy::impl::EtCopyOptimizeTransfersBase<
          EtCopyOptimizeTransfersPass> {
  using EtCopyOptimizeTransfersBase::EtCopyOptimizeTransfersBase;

  void runOnOperation() override;

private:
  /// What one run did, for the statistics and the summary remark.
  struct Counters {
    uint64_t roundTripsElided = 0;
    uint64_t duplicatesElided = 0;
    uint64_t deadElided = 0;
    uint64_t hoisted = 0;
    uint64_t sunk = 0;
    uint64_t grouped = 0;
    uint64_t movedBetweenDevices = 0;
  };

  // Each step takes the copies in program order (as the round found them)
  // and drops from the list those it erases.
  bool elideRoundTrips(SmallVectorImpl<Operation *> &copies,
                       CopyPlacement &placement);
  bool eraseDeadCopies(SmallVectorImpl<Operation *> &copies);
  bool mergeDuplicates(SmallVectorImpl<Operation *> &copies,
                       CopyPlacement &placement);
  bool carryLoopCopies(ArrayRef<scf::ForOp> loops);
  bool placeCopies(ArrayRef<Operation *> copies, CopyPlacement &placement);
  bool groupUploads(ArrayRef<Operation *> copies, CopyPlacement &placement);
  bool moveBetweenDevicesDirectly(ArrayRef<D2HOp> d2hs);
  void remarkKeptCopies(CopyPlacement &placement);

  Counters counters;
};
} // namespace

//===----------------------------------------------------------------------===//
// Moves between devices through a host temporary (out form)
//===----------------------------------------------------------------------===//

namespace {
/// `etcopy.d2h %src, %tmp` then `etcopy.h2d %tmp, %dst` later in the same
/// block, `%dst` on another device than `%src`, and `%tmp` a `memref.alloc`
/// that nothing else uses but its deallocations: the host copy only relays
/// the data, and one `etcopy.d2d %src, %dst` at the h2d does the same if
/// nothing writes `%src` in between.
struct MoveThroughHost {
  D2HOp d2h;
  H2DOp h2d;
  memref::AllocOp temporary;
};
} // namespace

/// Whether the sizes that the two copies of `move` check at run time are
/// those that one copy from its source to its destination checks, so that
/// the d2d fails exactly where they did: where the source and the
/// destination are both static they agree (the d2d's verifier, C5), each
/// static size of the temporary is static on one side too (where the
/// verifiers made it equal), and each dynamic one is read from one side
/// (`memref.dim`).
static bool checksSameSizes(MoveThroughHost move) {
  Value source = move.d2h.getSource(), dest = move.h2d.getDest();
  auto sourceType = cast<MemRefType>(source.getType());
  auto destType = cast<MemRefType>(dest.getType());
  MemRefType temporaryType = move.temporary.getType();
  for (int64_t dim = 0, rank = temporaryType.getRank(); dim < rank; ++dim) {
    bool staticSource = !sourceType.isDynamicDim(dim);
    bool staticDest = !destType.isDynamicDim(dim);
    if (staticSource && staticDest &&
        sourceType.getDimSize(dim) != destType.getDimSize(dim))
      return false;
    if (!temporaryType.isDynamicDim(dim)) {
      if (!staticSource && !staticDest)
        return false;
      continue;
    }
    auto size = move.temporary.getDynamicSizes()[temporaryType
                                                     .getDynamicDimIndex(dim)]
                    .getDefiningOp<memref::DimOp>();
    std::optional<int64_t> index =
        size ? size.getConstantIndex() : std::nullopt;
    if (!index || *index != dim ||
        (size.getSource() != source && size.getSource() != dest))
      return false;
  }
  return true;
}

/// The move `d2h` starts, if it is one (see MoveThroughHost) whose sizes
/// carry over to a d2d; the writes in between are checked by the caller.
static std::optional<MoveThroughHost> matchMoveThroughHost(D2HOp d2h) {
  if (d2h.hasPureTensorSemantics())
    return std::nullopt;
  Value temporary = d2h.getDest();
  auto alloc = temporary.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return std::nullopt;
  DeviceAttr device = getPlacement(d2h.getSourceType()).device;
  H2DOp h2d;
  SmallVector<memref::DeallocOp> deallocs;
  for (OpOperand &use : temporary.getUses()) {
    Operation *user = use.getOwner();
    if (user == d2h.getOperation())
      continue;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
      deallocs.push_back(dealloc);
      continue;
    }
    // One upload of the temporary, to another device (one to the source's
    // device is no move between devices: a d2d must not stay on one).
    auto upload = dyn_cast<H2DOp>(user);
    if (h2d || !upload || upload.getSource() != temporary ||
        getPlacement(upload.getTargetType()).device == device)
      return std::nullopt;
    h2d = upload;
  }
  if (!h2d || h2d->getBlock() != d2h->getBlock() ||
      !d2h->isBeforeInBlock(h2d))
    return std::nullopt;
  // A free between the copies would make the h2d read freed memory.
  for (memref::DeallocOp dealloc : deallocs) {
    Operation *ancestor = d2h->getBlock()->findAncestorOpInBlock(*dealloc);
    if (ancestor && !h2d->isBeforeInBlock(ancestor))
      return std::nullopt;
  }
  MoveThroughHost move{d2h, h2d, alloc};
  if (!checksSameSizes(move))
    return std::nullopt;
  return move;
}

/// Whether two memrefs may share memory: never on different devices (or a
/// device and the host), otherwise unless the local alias analysis proves
/// them apart (distinct allocations, an allocation and an argument, ...).
static bool mayAlias(Value a, Value b, LocalAliasAnalysis &aliasAnalysis) {
  Placement placementA = getPlacement(a.getType());
  Placement placementB = getPlacement(b.getType());
  if (placementA.kind != Placement::Kind::Unknown &&
      placementB.kind != Placement::Kind::Unknown &&
      (placementA.kind != placementB.kind ||
       placementA.device != placementB.device))
    return false;
  return !aliasAnalysis.alias(a, b).isNo();
}

bool EtCopyOptimizeTransfersPass::moveBetweenDevicesDirectly(
    ArrayRef<D2HOp> d2hs) {
  // The moves the d2h ops start, by block, in program order.
  llvm::MapVector<Block *, SmallVector<MoveThroughHost>> candidates;
  for (D2HOp d2h : d2hs)
    if (std::optional<MoveThroughHost> move = matchMoveThroughHost(d2h))
      candidates[d2h->getBlock()].push_back(*move);
  if (candidates.empty())
    return false;

  // Each block is swept from its first candidate's d2h until no move is in
  // progress. The moves in progress are keyed by their h2d; a write that
  // may touch the source of one cancels it. At most kMaxPending are
  // followed at a time (a later d2h is then left alone), which keeps the
  // sweep linear in the size of the block.
  constexpr unsigned kMaxPending = 64;
  llvm::MapVector<Operation *, MoveThroughHost> pending;
  SmallVector<MoveThroughHost> moves;
  LocalAliasAnalysis aliasAnalysis;
  auto cancelWritesOf = [&](Operation *op) {
    // Every memory write of `op` and of the ops nested in it: one of
    // unknown target, or an op whose effects are unknown, cancels all.
    WalkResult walk = op->walk([&](Operation *nested) {
      if (pending.empty())
        return WalkResult::interrupt();
      auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
      if (!effects)
        return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                   ? WalkResult::advance()
                   : WalkResult::interrupt();
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &instance : instances) {
        if (!isa<MemoryEffects::Write, MemoryEffects::Free>(
                instance.getEffect()))
          continue;
        Value written = instance.getValue();
        if (!written || !isa<BaseMemRefType>(written.getType()))
          return WalkResult::interrupt();
        pending.remove_if([&](const auto &entry) {
          D2HOp d2h = entry.second.d2h;
          return mayAlias(written, d2h.getSource(), aliasAnalysis);
        });
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      pending.clear();
  };
  for (auto &[block, blockMoves] : candidates) {
    pending.clear();
    ArrayRef<MoveThroughHost> next = blockMoves;
    for (Operation *op = next.front().d2h; op && (!pending.empty() ||
                                                 !next.empty());
         op = op->getNextNode()) {
      // The h2d of a move in progress finishes it; like any op, it then
      // cancels the moves whose source it may write (its destination).
      if (!pending.empty()) {
        if (auto it = pending.find(op); it != pending.end()) {
          moves.push_back(it->second);
          pending.erase(it);
        }
        cancelWritesOf(op);
      }
      if (!next.empty() && next.front().d2h == op) {
        if (pending.size() < kMaxPending)
          pending.insert({next.front().h2d, next.front()});
        next = next.drop_front();
      }
    }
  }

  // Rewritten after the sweeps, which the erasures would disturb.
  for (MoveThroughHost move : moves) {
    if (InFlightRemark remark =
            remarkPassed(move.h2d, "MovedBetweenDevices", getArgument()))
      remark << ("etcopy.d2h from " + getPlaceName(move.d2h.getSourceType()) +
                 " and etcopy.h2d to " +
                 getPlaceName(move.h2d.getTargetType()) +
                 " through a host temporary: one etcopy.d2d");
    OpBuilder builder(move.h2d);
    D2DOp::create(builder, move.h2d.getLoc(), move.d2h.getSource(),
                  move.h2d.getDest());
    move.h2d.erase();
    move.d2h.erase();
    for (Operation *user : llvm::make_early_inc_range(
             move.temporary.getResult().getUsers()))
      user->erase();
    move.temporary.erase();
  }
  counters.movedBetweenDevices += moves.size();
  return !moves.empty();
}

/// outer(inner(x)) -> x when both are functional copies in opposite
/// directions and x already has the type outer produces (the rule of the
/// ops' folders; equal types imply equal devices). Copies in unreachable
/// code are left alone.
bool EtCopyOptimizeTransfersPass::elideRoundTrips(
    SmallVectorImpl<Operation *> &copies, CopyPlacement &placement) {
  bool changed = false;
  DenseSet<Operation *> erased;
  for (Operation *outer : copies) {
    if (erased.contains(outer))
      continue;
    Operation *inner = getCopySource(outer).getDefiningOp();
    if (!inner || !isFunctionalCopy(inner) ||
        inner->getName() == outer->getName() ||
        isUnreachableCopy(outer, placement) ||
        isUnreachableCopy(inner, placement))
      continue;
    Value original = getCopySource(inner);
    if (original.getType() != getCopyResult(outer).getType())
      continue;
    InFlightRemark remark =
        remarkPassed(outer, "RoundTripElided", getArgument());
    if (remark)
      remark << (outer->getName().getStringRef() + "(" +
                 inner->getName().getStringRef() + "(x)) -> x: x is already " +
                 "on " + getPlaceName(original.getType()))
                    .str();
    getCopyResult(outer).replaceAllUsesWith(original);
    erased.insert(outer);
    outer->erase();
    ++counters.roundTripsElided;
    bool innerErased = getCopyResult(inner).use_empty();
    if (innerErased) {
      erased.insert(inner);
      inner->erase();
      ++counters.roundTripsElided;
    }
    if (remark)
      remark << RemarkArg("CopiesErased", innerErased ? 2 : 1);
    changed = true;
  }
  llvm::erase_if(copies, [&](Operation *copy) { return erased.contains(copy); });
  return changed;
}

bool EtCopyOptimizeTransfersPass::eraseDeadCopies(
    SmallVectorImpl<Operation *> &copies) {
  bool changed = false;
  // Reverse program order: a dead copy of a copy frees its source.
  DenseSet<Operation *> erased;
  for (Operation *copy : llvm::reverse(copies)) {
    if (!getCopyResult(copy).use_empty())
      continue;
    if (InFlightRemark remark =
            remarkPassed(copy, "DeadCopyErased", getArgument()))
      remark << describeCopy(copy) + ": nothing uses its result";
    erased.insert(copy);
    copy->erase();
    ++counters.deadElided;
    changed = true;
  }
  llvm::erase_if(copies, [&](Operation *copy) { return erased.contains(copy); });
  return changed;
}

/// Copies of one value to one type become one copy serving all their users,
/// placed by CopyPlacement. Unlike CSE, this also merges copies in
/// sibling regions. Copies to different types (hence devices) never merge,
/// nor do copies in unreachable code.
bool EtCopyOptimizeTransfersPass::mergeDuplicates(
    SmallVectorImpl<Operation *> &copies, CopyPlacement &placement) {
  using Key = std::tuple<Value, Type, OperationName>;
  llvm::MapVector<Key, SmallVector<Operation *, 2>> groups;
  for (Operation *copy : copies) {
    // Merging into a common dominator may hoist: not for copies that can
    // fail (narrowing a dynamic size).
    if (!isSpeculatable(copy) || isUnreachableCopy(copy, placement))
      continue;
    groups[{getCopySource(copy), getCopyResult(copy).getType(),
            copy->getName()}]
        .push_back(copy);
  }

  bool changed = false;
  DenseSet<Operation *> erased;
  for (auto &[key, duplicates] : groups) {
    if (duplicates.size() < 2)
      continue;
    Operation *kept = duplicates.front();
    if (InFlightRemark remark =
            remarkPassed(kept, "DuplicatesMerged", getArgument()))
      remark << (Twine(duplicates.size()) + " copies " +
                 describeCopy(kept) + " of one value merged into one")
                    .str();
    SetVector<Operation *> users;
    for (Operation *copy : duplicates)
      users.insert_range(detachUnreachableUsers(copy, placement, changed));
    if (!users.empty())
      moveBefore(kept, placement.getInsertionPoint(std::get<0>(key),
                                                   users.getArrayRef()));
    for (Operation *copy : llvm::drop_begin(duplicates)) {
      getCopyResult(copy).replaceAllUsesWith(getCopyResult(kept));
      erased.insert(copy);
      copy->erase();
      ++counters.duplicatesElided;
    }
    changed = true;
  }
  llvm::erase_if(copies, [&](Operation *copy) { return erased.contains(copy); });
  return changed;
}

/// An scf.for iteration argument of type T that the body only copies to U,
/// while the value yielded for it is a copy from U, is carried as U: one
/// copy of the initial value before the loop and one of the result after it
/// replace two copies per iteration.
bool EtCopyOptimizeTransfersPass::carryLoopCopies(ArrayRef<scf::ForOp> loops) {
  bool changed = false;
  for (scf::ForOp loop : loops) {
    for (auto [index, iterArg] : llvm::enumerate(loop.getRegionIterArgs())) {
      if (iterArg.use_empty() || !isa<RankedTensorType>(iterArg.getType()))
        continue;

      // Every use is a functional copy, all of one kind to one type.
      SmallVector<Operation *> bodyCopies;
      Type carriedType;
      for (Operation *user : iterArg.getUsers()) {
        // A copy that may fail (narrowing a dynamic size) must not run
        // before a loop that might not.
        if (!isFunctionalCopy(user) || !isSpeculatable(user) ||
            (carriedType && (getCopyResult(user).getType() != carriedType ||
                             user->getName() != bodyCopies[0]->getName()))) {
          carriedType = nullptr;
          break;
        }
        carriedType = getCopyResult(user).getType();
        bodyCopies.push_back(user);
      }
      if (!carriedType)
        continue;

      // The yielded value is a functional copy from that type.
      OpOperand &yielded = (*loop.getYieldedValuesMutable())[index];
      Operation *backCopy = yielded.get().getDefiningOp();
      if (!backCopy || !isFunctionalCopy(backCopy) ||
          getCopySource(backCopy).getType() != carriedType)
        continue;

      Type originalType = iterArg.getType();
      if (InFlightRemark remark =
              remarkPassed(loop, "LoopStateCarried", getArgument()))
        remark << ("iteration argument #" + Twine(index) + " of '" +
                   loop->getName().getStringRef() + "' carried on " +
                   getPlaceName(carriedType) + ": " +
                   Twine(bodyCopies.size() + 1) +
                   " copies per iteration become one before the loop and "
                   "one after it")
                      .str();
      OpBuilder builder(loop);
      OpOperand &init = loop.getInitsMutable()[index];
      init.set(createCopy(builder, bodyCopies[0]->getLoc(), carriedType,
                          init.get()));
      iterArg.setType(carriedType);
      for (Operation *copy : bodyCopies) {
        getCopyResult(copy).replaceAllUsesWith(iterArg);
        copy->erase();
        ++counters.hoisted;
      }
      yielded.set(getCopySource(backCopy));
      if (getCopyResult(backCopy).use_empty()) {
        backCopy->erase();
        ++counters.hoisted;
      }
      Value result = loop.getResult(index);
      result.setType(carriedType);
      if (!result.use_empty()) {
        builder.setInsertionPointAfter(loop);
        Value originalResult =
            createCopy(builder, loop.getLoc(), originalType, result);
        result.replaceAllUsesExcept(originalResult,
                                    originalResult.getDefiningOp());
      }
      changed = true;
    }
  }
  return changed;
}

/// Moves every copy to its CopyPlacement point: out of the loops its source
/// is invariant in, otherwise down to just before its first user. Copies in
/// unreachable code stay where they are.
bool EtCopyOptimizeTransfersPass::placeCopies(ArrayRef<Operation *> copies,
                                              CopyPlacement &placement) {
  bool changed = false;
  CopyRuns runs;
  for (Operation *copy : copies) {
    // Copies that can fail (narrowing a dynamic size) stay where they are.
    if (!isSpeculatable(copy) || isUnreachableCopy(copy, placement))
      continue;
    SmallVector<Operation *> users =
        detachUnreachableUsers(copy, placement, changed);
    if (users.empty())
      continue;
    Operation *point = placement.getInsertionPoint(getCopySource(copy), users);
    if (runs.isAtPoint(copy, point))
      continue;
    unsigned depth = getLoopDepth(copy), newDepth = getLoopDepth(point);
    bool hoisted = newDepth < depth;
    if (hoisted)
      ++counters.hoisted;
    else
      ++counters.sunk;
    if (InFlightRemark remark = remarkPassed(
            copy, hoisted ? "CopyHoisted" : "CopySunk", getArgument())) {
      if (hoisted)
        remark << (describeCopy(copy) + " moved out of " +
                   Twine(depth - newDepth) + " loop(s): its source is " +
                   "invariant in them")
                      .str();
      else
        remark << (describeCopy(copy) + " moved to just before '" +
                   point->getName().getStringRef() +
                   "', the first point serving all its users")
                      .str();
    }
    moveBefore(copy, point);
    runs.moved(copy, point);
    changed = true;
  }
  return changed;
}

/// The bytes of a statically shaped tensor, if its elements have a size.
static std::optional<uint64_t> getStaticBytes(Type type, DataLayout &layout) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  Type element = tensor.getElementType();
  if (!element.isIntOrIndexOrFloat() && !isa<ComplexType>(element))
    return std::nullopt;
  return llvm::SaturatingMultiply<uint64_t>(
      tensor.getNumElements(), layout.getTypeSize(element).getFixedValue());
}

/// Moves each small upload up to the previous upload to the same device in
/// its block when its source is already defined there, so that the uploads
/// a block issues one by one (each sunk to its delegate) become one run of
/// copies, which the CUDA lowering issues as one batch. A group takes at
/// most `uploadGroupBytes` bytes of moved uploads: moving an upload up
/// holds its device buffer longer. Runs once, after the rounds (whose
/// sinking would undo it), in one pass over the copies.
bool EtCopyOptimizeTransfersPass::groupUploads(ArrayRef<Operation *> copies,
                                               CopyPlacement &placement) {
  struct Group {
    /// The last upload of the group: the next one goes after it.
    Operation *last;
    /// The bytes of the uploads moved into the group.
    uint64_t bytes;
  };
  DenseMap<std::pair<Block *, DeviceAttr>, Group> groups;
  DominanceInfo &domInfo = placement.getDominanceInfo();
  DataLayout layout = DataLayout::closest(getOperation());
  bool changed = false;
  for (Operation *copy : copies) {
    auto h2d = dyn_cast<H2DOp>(copy);
    if (!h2d || !isSpeculatable(copy) || isUnreachableCopy(copy, placement))
      continue;
    DeviceAttr device = getPlacement(h2d.getResult().getType()).device;
    if (!device)
      continue;
    auto [it, isFirst] = groups.try_emplace({copy->getBlock(), device},
                                            Group{copy, 0});
    if (isFirst)
      continue;
    Group &group = it->second;
    std::optional<uint64_t> bytes =
        getStaticBytes(h2d.getSource().getType(), layout);
    if (!bytes || *bytes > uploadGroupBytes - group.bytes ||
        !domInfo.properlyDominates(h2d.getSource(), group.last)) {
      group = Group{copy, 0};
      continue;
    }
    Operation *point = group.last->getNextNode();
    group.last = copy;
    if (copy == point)
      continue;
    group.bytes += *bytes;
    ++counters.grouped;
    if (InFlightRemark remark =
            remarkPassed(copy, "UploadGrouped", getArgument()))
      remark << describeCopy(copy) + " moved up to the previous upload to " +
                    getPlaceName(h2d.getResult().getType()) +
                    ", to be issued in one batch with it";
    moveBefore(copy, point);
    changed = true;
  }
  return changed;
}

void EtCopyOptimizeTransfersPass::runOnOperation() {
  // No step creates or changes blocks, so one dominance analysis serves
  // throughout. Each rewrite removes copies from loops or from the IR, moves
  // a copy to its fixed point, or gives dead code copies of its own (once),
  // so this terminates; the bound is a safety net.
  // Each round walks the IR once (twice when it merges or carries copies,
  // which moves them), then takes linear time.
  CopyPlacement placement(getOperation());
  counters = Counters();
  SmallVector<Operation *> copies;
  SmallVector<scf::ForOp> loops;
  constexpr unsigned kMaxRounds = 16;
  SmallVector<D2HOp> outFormD2Hs;
  bool changedIR = false;
  for (unsigned round = 0; round < kMaxRounds; ++round) {
    // The out-form copies, which the rounds leave alone, are rewritten
    // first, from the first round's walk: they never touch the functional
    // copies and loops it collects.
    collectCopiesAndLoops(getOperation(), copies, loops,
                          round == 0 ? &outFormD2Hs : nullptr);
    if (round == 0)
      changedIR |= moveBetweenDevicesDirectly(outFormD2Hs);
    if (copies.empty())
      break;
    bool changed = elideRoundTrips(copies, placement);
    changed |= eraseDeadCopies(copies);
    bool moved = mergeDuplicates(copies, placement);
    moved |= carryLoopCopies(loops);
    if (moved)
      collectCopiesAndLoops(getOperation(), copies, loops);
    changed |= moved;
    changed |= placeCopies(copies, placement);
    changedIR |= changed;
    if (!changed)
      break;
  }
  if (uploadGroupBytes != 0) {
    collectCopiesAndLoops(getOperation(), copies, loops);
    changedIR |= groupUploads(copies, placement);
  }
  numRoundTripsElided += counters.roundTripsElided;
  numDuplicatesElided += counters.duplicatesElided;
  numDeadElided += counters.deadElided;
  numHoisted += counters.hoisted;
  numSunk += counters.sunk;
  numGrouped += counters.grouped;
  numMovedBetweenDevices += counters.movedBetweenDevices;
  if (getContext().getRemarkEngine()) {
    remarkKeptCopies(placement);
    remarkSummary(getOperation(), getArgument(),
                  {{"round-trip-copies-elided", counters.roundTripsElided},
                   {"duplicate-copies-elided", counters.duplicatesElided},
                   {"dead-copies-elided", counters.deadElided},
                   {"copies-hoisted", counters.hoisted},
                   {"copies-sunk", counters.sunk},
                   {"uploads-grouped", counters.grouped},
                   {"moves-between-devices-direct",
                    counters.movedBetweenDevices}});
  }
  // Nothing to verify again when nothing changed.
  if (!changedIR)
    markAllAnalysesPreserved();
}

/// Says why each copy left in the module stays. One walk, only when remarks
/// are enabled.
void EtCopyOptimizeTransfersPass::remarkKeptCopies(CopyPlacement &placement) {
  getOperation()->walk([&](Operation *copy) {
    if (!isa<H2DOp, D2HOp>(copy))
      return;
    InFlightRemark remark = remarkMissed(copy, "CopyKept", getArgument());
    if (!remark)
      return;
    if (!isFunctionalCopy(copy)) {
      remark << (copy->getName().getStringRef() +
                 " into a memref destination")
                    .str()
             << RemarkArg("Reason",
                          "an out-form copy reads and writes memory: the "
                          "pass only makes a move between devices through "
                          "a host buffer that nothing else uses one "
                          "etcopy.d2d");
      return;
    }
    remark << describeCopy(copy);
    std::string reason;
    if (isUnreachableCopy(copy, placement)) {
      reason = "it is in code unreachable from its source's definition, "
               "which never runs";
    } else {
      // The second half of a round trip that was not elided: a transfer
      // between devices through the host, or a change of type.
      Operation *inner = getCopySource(copy).getDefiningOp();
      std::string here = getPlaceName(getCopyResult(copy).getType());
      if (inner && isFunctionalCopy(inner) &&
          inner->getName() != copy->getName()) {
        Type original = getCopySource(inner).getType();
        if (getPlaceName(original) != here) {
          reason = "it moves a value from " + getPlaceName(original) +
                   " on through the host: a transfer between devices is "
                   "never elided";
        } else {
          llvm::raw_string_ostream os(reason);
          os << "it undoes '" << inner->getName() << "' of a value of "
             << "another type (" << original << "), which cannot replace it";
        }
      } else if (isa<D2HOp>(copy) && !getCopyResult(copy).use_empty() &&
                 llvm::all_of(getCopyResult(copy).getUsers(),
                              [](Operation *user) {
                                return isa<H2DOp>(user) &&
                                       isFunctionalCopy(user);
                              })) {
        reason = "it takes a value from " +
                 getPlaceName(getCopySource(copy).getType()) +
                 " through the host to another device: a transfer between "
                 "devices is never elided";
      } else {
        reason = "its users need the value on " + here +
                 ", where nothing else holds it";
      }
      if (!isSpeculatable(copy))
        reason += "; it may fail (it narrows a dynamic size), so it is "
                  "neither moved nor merged";
    }
    remark << RemarkArg("Reason", reason);
  });
}
