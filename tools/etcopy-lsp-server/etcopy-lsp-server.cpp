//===- etcopy-lsp-server.cpp - etcopy MLIR language server ----*- C++ -*-===//
//
// An MLIR language server (LSP over stdin/stdout) that knows exactly the
// dialects etcopy-opt knows, so that an editor shows etcopy IR with the
// verifier's diagnostics, hovers, definitions and completion. See
// docs/LanguageServer.md.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Tools/ToolRegistration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::etcopy::registerToolDialects(registry);
  mlir::etcopy::registerToolVersionPrinter();
  return mlir::failed(mlir::MlirLspServerMain(argc, argv, registry));
}
