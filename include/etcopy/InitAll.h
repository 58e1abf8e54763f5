//===- InitAll.h - Register everything etcopy provides --------*- C++ -*-===//
//
// One call each to register the etcopy dialect (with its interface models)
// and every etcopy pass, conversion and named pipeline: what etcopy-opt and
// the mlir-opt plugin call; and the one call an embedding compiler makes
// before it runs the pipelines.
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

/// Registers everything --etcopy-to-cuda and --etcopy-to-host need, for a
/// compiler that embeds them: the etcopy dialect and its models, the
/// upstream dialects the pipelines read and produce with the external
/// models they rely on (bufferization and deallocation of arith, func, cf,
/// scf, tensor and linalg; the ConvertToLLVM patterns of every dialect left
/// before the final conversion), and, once per process, etcopy's passes and
/// pipelines (so that textual pipelines and crash reproducers parse).
/// Translating the result to LLVM IR needs the LLVM translations as well
/// (registerBuiltinDialectTranslation, registerLLVMDialectTranslation).
void registerPipelineDependencies(DialectRegistry &registry);

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_INITALL_H
