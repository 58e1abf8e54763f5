//===- etcopy-opt.cpp - etcopy optimizer driver ---------------*- C++ -*-===//
//
// The etcopy-opt driver: MlirOptMain with every upstream dialect, extension
// and pass, plus the etcopy dialect, its passes, conversions and named
// pipelines. `--version` names the etcopy version and the MLIR it was built
// against.
//
//===----------------------------------------------------------------------===//

#include "etcopy/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllPasses();
  mlir::etcopy::registerAllDialects(registry);
  mlir::etcopy::registerAllPasses();

  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "etcopy version " << ETCOPY_VERSION
       << ", built against MLIR " LLVM_VERSION_STRING "\n";
  });
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "etcopy optimizer driver\n", registry));
}
