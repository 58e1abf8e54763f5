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
#include "mlir/Pass/Pass.h"

namespace mlir {
class DominanceInfo;
} // namespace mlir

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

#define GEN_PASS_DECL
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"

/// Returns the operation before which a functional copy of `source` that
/// serves `users` belongs: just before the first of them (or its ancestor)
/// in the nearest block that dominates them all, then in front of every
/// enclosing loop that `source` is invariant in. `users` must be non-empty
/// and dominated by the definition of `source`. Both etcopy passes place
/// copies there: a d2h sinks to its first host user, never into a loop, and
/// a copy of a loop-invariant value runs once.
Operation *getCopyInsertionPoint(Value source, ArrayRef<Operation *> users,
                                 DominanceInfo &domInfo);

} // namespace mlir::etcopy

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_H
