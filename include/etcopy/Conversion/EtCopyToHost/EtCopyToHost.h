//===- EtCopyToHost.h - etcopy to host-only code --------------*- C++ -*-===//
//
// Entry points of the CPU reference lowering of etcopy (pass
// convert-etcopy-to-host): copies become host copies, device placements are
// erased.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_CONVERSION_ETCOPYTOHOST_ETCOPYTOHOST_H
#define ETCOPY_CONVERSION_ETCOPYTOHOST_ETCOPYTOHOST_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class Operation;
class RewritePatternSet;
namespace etcopy {

/// Patterns rewriting etcopy.h2d / etcopy.d2h to host copies: memref.copy for
/// the out form; for the functional form the source value, or a tensor.cast
/// to the result type where the types differ. Applied after erasePlacements,
/// only differences in static sizes need a cast.
void populateEtCopyToHostConversionPatterns(RewritePatternSet &patterns);

/// Removes every #etcopy.device placement (memory spaces, tensor encodings,
/// function signatures, block arguments) from `root`, and the etcopy
/// attributes of its ops and of their arguments and results
/// (removeEtCopyAttributes).
void erasePlacements(Operation *root);

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_CONVERSION_ETCOPYTOHOST_ETCOPYTOHOST_H
