//===- ToolRegistration.cpp - What every etcopy tool registers -*- C++ -*-===//
//
// Implements etcopy/Tools/ToolRegistration.h. The upstream registration
// headers are the most expensive includes of the tools; they are compiled
// once here and shared by every tool.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Tools/ToolRegistration.h"

#include "etcopy/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

void mlir::etcopy::registerToolDialects(DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary (the kernel stages of --etcopy-to-cuda) translates
  // gpu.modules to LLVM IR.
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  etcopy::registerAllDialects(registry);
}

void mlir::etcopy::registerToolPasses() {
  mlir::registerAllPasses();
  etcopy::registerAllPasses();
}

void mlir::etcopy::registerToolVersionPrinter() {
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "etcopy version " << ETCOPY_VERSION
       << ", built against MLIR " LLVM_VERSION_STRING "\n";
  });
}
