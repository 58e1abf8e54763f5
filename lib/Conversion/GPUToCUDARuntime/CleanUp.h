//===- CleanUp.h - Clean-up after the CUDA lowering -------------*- C++ -*-===//
//
// What both lowering passes run over the LLVM dialect the conversion and
// the lowering of the runtime ops leave (step 4 of GPUToCUDARuntime.cpp):
// the unrealized casts that cancel out are folded, then each function's
// constants, descriptor reads and dead ops are cleaned up.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_GPUTOCUDARUNTIME_CLEANUP_H
#define LIB_CONVERSION_GPUTOCUDARUNTIME_CLEANUP_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
class ModuleOp;
class Operation;
namespace LLVM {
class LLVMFuncOp;
} // namespace LLVM
} // namespace mlir

namespace mlir::etcopy::cuda_lowering {

/// Folds the unrealized casts of `module` that cancel out, as
/// reconcile-unrealized-casts would (once every op is converted, the casts
/// between the patterns' types do), so that a pipeline needs no pass over
/// (and verification of) the whole lowered module for it. Before the
/// clean-up, which then sees the descriptors the casts hid. Casts that do
/// not cancel are left.
void reconcileCasts(ModuleOp module);

/// Cleans up what the conversion and the lowering of the runtime ops leave
/// behind in `func`, in one pass over its ops and one back, linear in its
/// size:
///  * reads of descriptor fields and constant address arithmetic fold, and
///    a field read again in its block is not read twice;
///  * the size idiom `ptrtoint(getelementptr null[N])` of an element of a
///    known size,
///    and integer arithmetic on constants (the padding of a size to its
///    alignment), become constants;
///  * constants are made unique, as the canonicalizer does (though without
///    moving those of the entry block, so that a call's location stays next
///    to it): each lowering materialises the constants it needs where it
///    needs them, so that one value would otherwise be printed, verified
///    and translated once per use site;
///  * dead pure ops are erased.
/// `visitKept`, if given, is called on each op of the body that stays, last
/// to first, so that a caller's own checks of the result need no walk of
/// their own.
void cleanUpFunction(LLVM::LLVMFuncOp func, unsigned indexBitwidth,
                     function_ref<void(Operation *)> visitKept = nullptr);

} // namespace mlir::etcopy::cuda_lowering

#endif // LIB_CONVERSION_GPUTOCUDARUNTIME_CLEANUP_H
