//===- EtCopyPlugin.cpp - etcopy as an mlir-opt plugin --------*- C++ -*-===//
//
// Lets a stock mlir-opt load etcopy: `--load-dialect-plugin=libEtCopyPlugin.so`
// registers the dialect (with its interface models), and
// `--load-pass-plugin=libEtCopyPlugin.so` registers its passes and pipelines.
//
//===----------------------------------------------------------------------===//

#include "etcopy/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "EtCopy", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::etcopy::registerAllDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "EtCopyPasses", LLVM_VERSION_STRING,
          []() { mlir::etcopy::registerAllPasses(); }};
}
