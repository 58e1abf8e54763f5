//===- InitAll.h - Register everything etcopy provides --------*- C++ -*-===//
//
// One call each to register the etcopy dialect (with its interface models)
// and every etcopy pass, conversion and named pipeline: what etcopy-opt,
// the mlir-opt plugin and embedding compilers call.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_INITALL_H
#define ETCOPY_INITALL_H

namespace mlir {
class DialectRegistry;
namespace etcopy {

/// Registers the etcopy dialect and its external interface models.
void registerAllDialects(DialectRegistry &registry);

/// Registers every etcopy pass, conversion pass and named pipeline.
void registerAllPasses();

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_INITALL_H
