// Parses IR with the etcopy dialect and runs an etcopy pipeline, using only
// the installed headers and libraries.
#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "etcopy/InitAll.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

int main() {
  mlir::DialectRegistry registry;
  mlir::etcopy::registerAllDialects(registry);
  registry.insert<mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(
          "func.func private @f(memref<4xf32, #etcopy.device<CUDA:2>>)",
          &context);
  if (!module)
    return 1;
  module->print(llvm::outs());
  return 0;
}
