//===- Passes.h - etcopy conversion passes --------------------*- C++ -*-===//
//
// Declares every etcopy conversion pass (generated from Passes.td) and the
// public populate functions of each conversion.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_CONVERSION_PASSES_H
#define ETCOPY_CONVERSION_PASSES_H

#include "etcopy/Conversion/EtCopyToGPU/EtCopyToGPU.h"
#include "etcopy/Conversion/EtCopyToHost/EtCopyToHost.h"
#include "etcopy/Conversion/GPUToCUDARuntime/GPUToCUDARuntime.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class ModuleOp;
namespace gpu {
class GPUDialect;
} // namespace gpu
namespace LLVM {
class LLVMDialect;
} // namespace LLVM
namespace memref {
class MemRefDialect;
} // namespace memref
namespace tensor {
class TensorDialect;
} // namespace tensor

namespace etcopy {

#define GEN_PASS_DECL
#include "etcopy/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "etcopy/Conversion/Passes.h.inc"

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_CONVERSION_PASSES_H
