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
#include "etcopy/Support/EnumOptionParser.h"
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
namespace func {
class FuncDialect;
} // namespace func
namespace scf {
class SCFDialect;
} // namespace scf
namespace arith {
class ArithDialect;
} // namespace arith
namespace tensor {
class TensorDialect;
} // namespace tensor

namespace etcopy {

/// The memory space convert-etcopy-to-gpu gives device memrefs
/// (`memory-space`).
enum class OutputMemorySpace {
  /// `#etcopy.device<...>`, as in the input.
  EtCopy,
  /// `#gpu.address_space<global>` (cuda:0 only), no etcopy left.
  GPU,
};

} // namespace etcopy
} // namespace mlir

ETCOPY_DECLARE_ENUM_OPTION_PARSER(::mlir::etcopy::OutputMemorySpace)

namespace mlir {
namespace etcopy {

#define GEN_PASS_DECL
#include "etcopy/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "etcopy/Conversion/Passes.h.inc"

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_CONVERSION_PASSES_H
