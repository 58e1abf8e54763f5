//===- InitAll.cpp - Register everything etcopy provides ------*- C++ -*-===//
//
// Implements the registration entry points of etcopy/InitAll.h.
//
//===----------------------------------------------------------------------===//

#include "etcopy/InitAll.h"

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::etcopy::registerAllDialects(DialectRegistry &registry) {
  registry.insert<EtCopyDialect>();
}

void mlir::etcopy::registerAllPasses() {}
