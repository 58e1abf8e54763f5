//===- Pipelines.h - etcopy named pass pipelines --------------*- C++ -*-===//
//
// The end-to-end pipelines: --etcopy-to-cuda (CUDA Runtime calls) and
// --etcopy-to-host (the CPU reference semantics), as functions that fill an
// OpPassManager for embedding compilers and as registered named pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_PIPELINES_H
#define ETCOPY_PIPELINES_H

namespace mlir {
class OpPassManager;
namespace etcopy {

/// From tensor- or memref-level IR with etcopy ops to the LLVM dialect with
/// checked CUDA Runtime API calls.
void buildEtCopyToCUDAPipeline(OpPassManager &pm);

/// From tensor- or memref-level IR with etcopy ops to host-only LLVM dialect
/// code: copies are host copies, placements are erased.
void buildEtCopyToHostPipeline(OpPassManager &pm);

/// Registers both as --etcopy-to-cuda and --etcopy-to-host.
void registerPipelines();

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_PIPELINES_H
