//===- EtCopyPasses.h - etcopy transformation passes ----------*- C++ -*-===//
//
// Declares the etcopy transformation passes generated from EtCopyPasses.td
// and the placement rule they share for functional copies.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_H
#define ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_H

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "etcopy/Support/EnumOptionParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::etcopy {

/// Who allocates the arenas of a function planned by
/// etcopy-plan-device-memory.
enum class ArenaOwnership {
  /// The function itself, at entry; it frees them before each return.
  Function,
  /// The caller: the arenas are leading arguments of the function.
  Caller,
};

/// Prints the option spelling of `ownership` ("function", "caller").
inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     ArenaOwnership ownership) {
  return os << (ownership == ArenaOwnership::Caller ? "caller" : "function");
}

} // namespace mlir::etcopy

ETCOPY_DECLARE_ENUM_OPTION_PARSER(::mlir::etcopy::ArenaOwnership)

namespace mlir::etcopy {

#define GEN_PASS_DECL
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"

/// Returns the outermost block enclosing `op`, up to and including the
/// blocks of `scope`, that is unreachable from the entry of its region, or
/// null when there is none: `op` is then reachable wherever `scope` is.
/// Code in such a block never runs and has no dominator tree node; all three
/// etcopy passes treat it as dead (see docs/Placement.md and
/// docs/MemoryPlanning.md).
Block *getUnreachableBlock(Operation *op, Region *scope,
                           DominanceInfo &domInfo);

/// The placement rule for functional copies that both etcopy passes share.
/// It caches facts about the block structure (dominance, the blocks that lie
/// on cycles), so it stays valid while operations are created, moved and
/// erased, but not once blocks are.
class CopyPlacement {
public:
  explicit CopyPlacement(Operation *root) : domInfo(root) {}

  DominanceInfo &getDominanceInfo() { return domInfo; }

  /// getUnreachableBlock with the cached dominance.
  Block *getUnreachableBlock(Operation *op, Region *scope) {
    return etcopy::getUnreachableBlock(op, scope, domInfo);
  }

  /// Returns the operation before which a functional copy of `source` that
  /// serves `users` belongs: just before the first of them (or its ancestor)
  /// in the nearest block that dominates them all, then in front of every
  /// enclosing loop that `source` is invariant in. `users` must be
  /// non-empty and dominated by the definition of `source`. Both etcopy
  /// passes place copies there: a d2h sinks to its first host user, never
  /// into a loop, and a copy of a loop-invariant value runs once.
  ///
  /// `users` must all be reachable from the definition of `source`, or all
  /// lie in one block unreachable from it (getUnreachableBlock with the
  /// region of `source`): in dead code the copy goes just before the first
  /// of them in that block, so that dead users never move the copies of
  /// live ones.
  ///
  /// Costs O(|users| x nesting depth) once the region's cycles are known
  /// (one linear pass per region, on first use).
  Operation *getInsertionPoint(Value source, ArrayRef<Operation *> users);

private:
  /// True if `block` can reach itself through its successors.
  bool isInBlockCycle(Block *block);

  DominanceInfo domInfo;
  /// Regions whose cycles have been computed, and the blocks on them.
  DenseSet<Region *> regionsWithCycles;
  DenseSet<Block *> blocksOnCycles;
};

} // namespace mlir::etcopy

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_H
