//===- GraphLowering.h - CUDA graphs of the CUDA lowering -------*- C++ -*-===//
//
// The cuda-graphs option of convert-gpu-to-cuda-runtime: which functions
// have their stream work captured into a CUDA graph on a first call and
// replayed with one cudaGraphLaunch on later calls with the same inputs
// (findGraphCaptures, before planning), and the capture and replay around
// that work (lowerGraphCaptures, after planning, before the conversion).
// docs/CUDALowering.md ("CUDA graphs") explains the rules.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_GPUTOCUDARUNTIME_GRAPHLOWERING_H
#define LIB_CONVERSION_GPUTOCUDARUNTIME_GRAPHLOWERING_H

#include "Planning.h"

namespace mlir::etcopy::cuda_lowering {

/// A function whose stream work is captured: the ops of its entry block
/// from `first` to `last`, which hold all of its device work and nothing
/// the host must do on every call.
struct GraphCapture {
  Operation *first;
  Operation *last;
};

/// The functions of `work` whose stream work can be captured, each with
/// its span; every function with device work gets a remark saying whether
/// and, if not, why (`pass` names the pass in remarks). Moves the host
/// allocations and pure ops that a span holds but does not need before it.
/// Linear in the size of the functions.
llvm::MapVector<func::FuncOp, GraphCapture>
findGraphCaptures(const ModuleWork &work, StringRef pass);

/// Wraps the span of each planned function in the capture and replay of
/// its graph: a key of the span's inputs, a cell global per function, the
/// calls of the runtime support and the blocks that skip the span on a
/// replay. The span's ops then use the stream that captures them. A
/// function that planning gave several streams or device switches is left
/// as it is (its copies unbatched, as planned for a capture), with a
/// remark.
void lowerGraphCaptures(
    const llvm::MapVector<func::FuncOp, GraphCapture> &captures,
    const DenseMap<Operation *, FunctionPlan *> &functionPlans,
    PlanMap &plans, SymbolTable &symbols, StringRef pass);

} // namespace mlir::etcopy::cuda_lowering

#endif // LIB_CONVERSION_GPUTOCUDARUNTIME_GRAPHLOWERING_H
