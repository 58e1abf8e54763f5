//===- ToolRegistration.h - What every etcopy tool registers --*- C++ -*-===//
//
// The dialects, extensions, passes and version line shared by etcopy's
// command-line tools, so that etcopy-opt and etcopy-lsp-server accept
// exactly the same IR: every upstream MLIR dialect and extension plus the
// etcopy dialect with its interface models.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_TOOLS_TOOLREGISTRATION_H
#define ETCOPY_TOOLS_TOOLREGISTRATION_H

namespace mlir {
class DialectRegistry;
namespace etcopy {

/// Registers every upstream dialect and dialect extension, and the etcopy
/// dialect with its external interface models.
void registerToolDialects(DialectRegistry &registry);

/// Registers every upstream pass and every etcopy pass, conversion and named
/// pipeline.
void registerToolPasses();

/// Adds the line `etcopy version X.Y.Z, built against MLIR V` to the output
/// of `--version`.
void registerToolVersionPrinter();

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_TOOLS_TOOLREGISTRATION_H
