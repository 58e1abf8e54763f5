//===- EtCopyOps.h - etcopy operations -----------------------*- C++ -*-===//
//
// Declares etcopy.h2d and etcopy.d2h.
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

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPYOPS_H
