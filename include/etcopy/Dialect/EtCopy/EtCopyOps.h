//===- EtCopyOps.h - etcopy operations -----------------------*- C++ -*-===//
//
// Declares etcopy.h2d, etcopy.d2h and etcopy.d2d.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_ETCOPYOPS_H
#define ETCOPY_DIALECT_ETCOPY_ETCOPYOPS_H

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "etcopy/Dialect/EtCopy/EtCopyOps.h.inc"

namespace mlir::etcopy {
/// True when `type` has a static shape with no element: a copy of it moves
/// no byte.
bool isStaticallyEmpty(ShapedType type);
} // namespace mlir::etcopy

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPYOPS_H
