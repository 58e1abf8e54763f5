//===- etcopy-opt.cpp - etcopy optimizer driver ---------------*- C++ -*-===//
//
// The etcopy-opt driver: MlirOptMain with every upstream dialect, extension
// and pass, plus the etcopy dialect, its passes, conversions and named
// pipelines (etcopy/Tools/ToolRegistration.h). `--version` names the etcopy
// version and the MLIR it was built against.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Tools/ToolRegistration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::etcopy::registerToolDialects(registry);
  mlir::etcopy::registerToolPasses();
  mlir::etcopy::registerToolVersionPrinter();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "etcopy optimizer driver\n", registry));
}
