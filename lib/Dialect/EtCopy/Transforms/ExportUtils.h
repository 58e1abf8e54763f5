//===- ExportUtils.h - Metadata globals for host programs -----*- C++ -*-===//
//
// Shared by the passes that export C-readable metadata next to compiled
// functions (planned arenas, method signatures): constant LLVM-dialect
// globals whose layout etcopy/Runtime/EtCopyRuntime.h declares.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_ETCOPY_TRANSFORMS_EXPORTUTILS_H
#define LIB_DIALECT_ETCOPY_TRANSFORMS_EXPORTUTILS_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::etcopy {

/// Creates at `builder`'s insertion point a constant global `name` of
/// `type` whose initializer is `fillInitializer(builder, zero)`: the
/// aggregate built by inserting fields into a zero value.
LLVM::GlobalOp
createConstantGlobal(OpBuilder &builder, Location loc, Type type,
                     StringRef name, LLVM::Linkage linkage,
                     function_ref<Value(OpBuilder &, Value)> fillInitializer);

} // namespace mlir::etcopy

#endif // LIB_DIALECT_ETCOPY_TRANSFORMS_EXPORTUTILS_H
