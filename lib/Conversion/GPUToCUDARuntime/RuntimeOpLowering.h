//===- RuntimeOpLowering.h - Planned runtime ops to calls -------*- C++ -*-===//
//
// Step 3 of convert-gpu-to-cuda-runtime (see GPUToCUDARuntime.cpp), after
// the dialect conversion: each planned runtime op is replaced in place by
// the calls of the runtime support that its plan says.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_GPUTOCUDARUNTIME_RUNTIMEOPLOWERING_H
#define LIB_CONVERSION_GPUTOCUDARUNTIME_RUNTIMEOPLOWERING_H

#include "Planning.h"

namespace mlir {
class LLVMTypeConverter;
} // namespace mlir

namespace mlir::etcopy::cuda_lowering {

class KernelLowering;

/// Lowers the runtime ops of `work` (its `runtimeOps`, without the delegate
/// calls, which the conversion lowered), function by function, in program
/// order, once the dialect conversion has lowered the rest of the module
/// around them: each op becomes the calls its plan in `plans` says, and is
/// erased with its plan. `addressOnlyViews` are the memref.view ops the
/// conversion left unconverted, whose address the copies compute
/// themselves. `kernels` lowers the launches (null without launches).
void lowerRuntimeOps(const ModuleWork &work, const LLVMTypeConverter &converter,
                     RuntimeSupport &support, PlanMap &plans,
                     const DenseSet<Operation *> &addressOnlyViews,
                     KernelLowering *kernels);

} // namespace mlir::etcopy::cuda_lowering

#endif // LIB_CONVERSION_GPUTOCUDARUNTIME_RUNTIMEOPLOWERING_H
