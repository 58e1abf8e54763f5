//===- EtCopyPasses.h - etcopy transformation passes ----------*- C++ -*-===//
//
// Declares the etcopy transformation passes generated from EtCopyPasses.td.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_H
#define ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_H

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::etcopy {

#define GEN_PASS_DECL
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"

} // namespace mlir::etcopy

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_H
