//===- OptimizeTransfers.cpp - Remove needless copies ---------*- C++ -*-===//
//
// The etcopy-optimize-transfers pass: elides same-device round trips, merges
// duplicate copies of one value to one device, removes dead copies, hoists
// copies out of loops (loop-invariant ones and loop-carried pairs) and sinks
// the others to just before their first user. Also defines the placement
// rule for functional copies that etcopy-propagate-device shares.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Dialect/EtCopy/EtCopyOps.h"
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::etcopy {
#define GEN_PASS_DEF_ETCOPYOPTIMIZETRANSFERS
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;

//===----------------------------------------------------------------------===//
// Placement rule shared with etcopy-propagate-device
//===----------------------------------------------------------------------===//

/// True if `block` can reach itself through its successors.
static bool isInBlockCycle(Block *block) {
  SmallVector<Block *> worklist(block->getSuccessors());
  SmallPtrSet<Block *, 8> seen;
  while (!worklist.empty()) {
    Block *next = worklist.pop_back_val();
    if (next == block)
      return true;
    if (seen.insert(next).second)
      llvm::append_range(worklist, next->getSuccessors());
  }
  return false;
}

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

Operation *mlir::etcopy::getCopyInsertionPoint(Value source,
                                               ArrayRef<Operation *> users,
                                               DominanceInfo &domInfo) {
  assert(!users.empty() && "a copy without users has no place");
  // Dead code has no dominator tree node, and needs none: a block
  // unreachable from the entry is dominated by every block, so a copy in it
  // before the first of the users serves them all.
  Region *sourceRegion = source.getParentRegion();
  Block *unreachable =
      getUnreachableBlock(users.front(), sourceRegion, domInfo);
  assert(llvm::all_of(users,
                      [&](Operation *user) {
                        return getUnreachableBlock(user, sourceRegion,
                                                   domInfo) == unreachable;
                      }) &&
         "users are all reachable or all in one unreachable block");
  if (unreachable)
    return getFirstAncestorInBlock(unreachable, users);

  Block *block = users.front()->getBlock();
  for (Operation *user : users.drop_front())
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

/// Creates the functional copy of `source` to `type`: an h2d when `type` is
/// on a device, a d2h otherwise.
static Value createCopy(OpBuilder &builder, Location loc, Type type,
                        Value source) {
  if (getPlacement(type).isDevice())
    return H2DOp::create(builder, loc, type, source).getResult();
  return D2HOp::create(builder, loc, type, source).getResult();
}

/// The functional copies nested in `root`, in program order.
static SmallVector<Operation *> collectCopies(Operation *root) {
  SmallVector<Operation *> copies;
  root->walk([&](Operation *op) {
    if (isFunctionalCopy(op))
      copies.push_back(op);
  });
  return copies;
}

/// True when `copy` lies in code unreachable from the definition of its
/// source: the pass leaves it where it is, and only erases it when unused.
static bool isUnreachableCopy(Operation *copy, DominanceInfo &domInfo) {
  return getUnreachableBlock(copy, getCopySource(copy).getParentRegion(),
                             domInfo);
}

/// Gives the users of `copy` in unreachable code a copy of their own, one
/// per unreachable block, placed by getCopyInsertionPoint (so dead code
/// never holds a live copy in place), and returns the other users, each
/// once. Sets `changed` when it made a copy.
static SmallVector<Operation *>
detachUnreachableUsers(Operation *copy, DominanceInfo &domInfo,
                       bool &changed) {
  Value source = getCopySource(copy);
  SetVector<Operation *> reachable;
  llvm::MapVector<Block *, SmallVector<OpOperand *>> unreachable;
  for (OpOperand &use : getCopyResult(copy).getUses()) {
    Operation *user = use.getOwner();
    if (Block *block =
            getUnreachableBlock(user, source.getParentRegion(), domInfo))
      unreachable[block].push_back(&use);
    else
      reachable.insert(user);
  }
  for (auto &[block, uses] : unreachable) {
    SmallVector<Operation *> owners = llvm::map_to_vector(
        uses, [](OpOperand *use) { return use->getOwner(); });
    OpBuilder builder(getCopyInsertionPoint(source, owners, domInfo));
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

/// True when `copy` already sits at `point`: before it in its block with
/// only other functional copies in between (copies sharing a point keep
/// their relative order).
static bool isAtPoint(Operation *copy, Operation *point) {
  if (copy->getBlock() != point->getBlock() || !copy->isBeforeInBlock(point))
    return false;
  for (Operation *op = copy->getNextNode(); op != point; op = op->getNextNode())
    if (!isFunctionalCopy(op))
      return false;
  return true;
}

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
  bool elideRoundTrips(DominanceInfo &domInfo);
  bool eraseDeadCopies();
  bool mergeDuplicates(DominanceInfo &domInfo);
  bool carryLoopCopies();
  bool placeCopies(DominanceInfo &domInfo);
};
} // namespace

/// outer(inner(x)) -> x when both are functional copies in opposite
/// directions and x already has the type outer produces (the rule of the
/// ops' folders; equal types imply equal devices). Copies in unreachable
/// code are left alone.
bool EtCopyOptimizeTransfersPass::elideRoundTrips(DominanceInfo &domInfo) {
  bool changed = false;
  DenseSet<Operation *> erased;
  for (Operation *outer : collectCopies(getOperation())) {
    if (erased.contains(outer))
      continue;
    Operation *inner = getCopySource(outer).getDefiningOp();
    if (!inner || !isFunctionalCopy(inner) ||
        inner->getName() == outer->getName() ||
        isUnreachableCopy(outer, domInfo) || isUnreachableCopy(inner, domInfo))
      continue;
    Value original = getCopySource(inner);
    if (original.getType() != getCopyResult(outer).getType())
      continue;
    getCopyResult(outer).replaceAllUsesWith(original);
    outer->erase();
    ++numRoundTripsElided;
    if (getCopyResult(inner).use_empty()) {
      erased.insert(inner);
      inner->erase();
      ++numRoundTripsElided;
    }
    changed = true;
  }
  return changed;
}

bool EtCopyOptimizeTransfersPass::eraseDeadCopies() {
  bool changed = false;
  // Reverse program order: a dead copy of a copy frees its source.
  SmallVector<Operation *> copies = collectCopies(getOperation());
  for (Operation *copy : llvm::reverse(copies)) {
    if (!getCopyResult(copy).use_empty())
      continue;
    copy->erase();
    ++numDeadElided;
    changed = true;
  }
  return changed;
}

/// Copies of one value to one type become one copy serving all their users,
/// placed by getCopyInsertionPoint. Unlike CSE, this also merges copies in
/// sibling regions. Copies to different types (hence devices) never merge,
/// nor do copies in unreachable code.
bool EtCopyOptimizeTransfersPass::mergeDuplicates(DominanceInfo &domInfo) {
  using Key = std::tuple<Value, Type, OperationName>;
  llvm::MapVector<Key, SmallVector<Operation *, 2>> groups;
  for (Operation *copy : collectCopies(getOperation())) {
    // Merging into a common dominator may hoist: not for copies that can
    // fail (narrowing a dynamic size).
    if (!isSpeculatable(copy) || isUnreachableCopy(copy, domInfo))
      continue;
    groups[{getCopySource(copy), getCopyResult(copy).getType(),
            copy->getName()}]
        .push_back(copy);
  }

  bool changed = false;
  for (auto &[key, copies] : groups) {
    if (copies.size() < 2)
      continue;
    Operation *kept = copies.front();
    SetVector<Operation *> users;
    for (Operation *copy : copies)
      users.insert_range(detachUnreachableUsers(copy, domInfo, changed));
    if (!users.empty())
      kept->moveBefore(getCopyInsertionPoint(std::get<0>(key),
                                             users.getArrayRef(), domInfo));
    for (Operation *copy : llvm::drop_begin(copies)) {
      getCopyResult(copy).replaceAllUsesWith(getCopyResult(kept));
      copy->erase();
      ++numDuplicatesElided;
    }
    changed = true;
  }
  return changed;
}

/// An scf.for iteration argument of type T that the body only copies to U,
/// while the value yielded for it is a copy from U, is carried as U: one
/// copy of the initial value before the loop and one of the result after it
/// replace two copies per iteration.
bool EtCopyOptimizeTransfersPass::carryLoopCopies() {
  SmallVector<scf::ForOp> loops;
  getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });

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
      OpBuilder builder(loop);
      OpOperand &init = loop.getInitsMutable()[index];
      init.set(createCopy(builder, bodyCopies[0]->getLoc(), carriedType,
                          init.get()));
      iterArg.setType(carriedType);
      for (Operation *copy : bodyCopies) {
        getCopyResult(copy).replaceAllUsesWith(iterArg);
        copy->erase();
        ++numHoisted;
      }
      yielded.set(getCopySource(backCopy));
      if (getCopyResult(backCopy).use_empty()) {
        backCopy->erase();
        ++numHoisted;
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

/// Moves every copy to getCopyInsertionPoint: out of the loops its source is
/// invariant in, otherwise down to just before its first user. Copies in
/// unreachable code stay where they are.
bool EtCopyOptimizeTransfersPass::placeCopies(DominanceInfo &domInfo) {
  bool changed = false;
  for (Operation *copy : collectCopies(getOperation())) {
    // Copies that can fail (narrowing a dynamic size) stay where they are.
    if (!isSpeculatable(copy) || isUnreachableCopy(copy, domInfo))
      continue;
    SmallVector<Operation *> users =
        detachUnreachableUsers(copy, domInfo, changed);
    if (users.empty())
      continue;
    Operation *point =
        getCopyInsertionPoint(getCopySource(copy), users, domInfo);
    if (isAtPoint(copy, point))
      continue;
    if (getLoopDepth(point) < getLoopDepth(copy))
      ++numHoisted;
    else
      ++numSunk;
    copy->moveBefore(point);
    changed = true;
  }
  return changed;
}

void EtCopyOptimizeTransfersPass::runOnOperation() {
  // No step creates or changes blocks, so one dominance analysis serves
  // throughout. Each rewrite removes copies from loops or from the IR, moves
  // a copy to its fixed point, or gives dead code copies of its own (once),
  // so this terminates; the bound is a safety net.
  DominanceInfo domInfo(getOperation());
  constexpr unsigned kMaxRounds = 16;
  for (unsigned round = 0; round < kMaxRounds; ++round) {
    bool changed = elideRoundTrips(domInfo);
    changed |= eraseDeadCopies();
    changed |= mergeDuplicates(domInfo);
    changed |= carryLoopCopies();
    changed |= placeCopies(domInfo);
    if (!changed)
      return;
  }
}
