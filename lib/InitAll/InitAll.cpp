//===- InitAll.cpp - Register everything etcopy provides ------*- C++ -*-===//
//
// Implements the registration entry points of etcopy/InitAll.h.
//
//===----------------------------------------------------------------------===//

#include "etcopy/InitAll.h"

#include "etcopy/Conversion/Passes.h"
#include "etcopy/Dialect/EtCopy/BufferizableOpInterfaceImpl.h"
#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h"
#include "etcopy/Pipelines.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::etcopy::registerAllDialects(DialectRegistry &registry) {
  registry.insert<EtCopyDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
}

void mlir::etcopy::registerAllPasses() {
  registerEtCopyPasses();
  registerEtCopyConversionPasses();
  registerPipelines();
}
