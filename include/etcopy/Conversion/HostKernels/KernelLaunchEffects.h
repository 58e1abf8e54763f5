//===- KernelLaunchEffects.h - Memory effects of kernel launches -*- C++ -*-===//
//
// gpu.launch_func declares no memory effects upstream, so analyses that need
// them (ownership-based buffer deallocation, etcopy's ordering of host work
// around copies) treat a launch as touching anything, or reject it. This
// external model says what a launch does: it reads and writes the memrefs it
// is given.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_CONVERSION_HOSTKERNELS_KERNELLAUNCHEFFECTS_H
#define ETCOPY_CONVERSION_HOSTKERNELS_KERNELLAUNCHEFFECTS_H

namespace mlir {
class DialectRegistry;
namespace etcopy {

/// Attaches the MemoryEffectOpInterface model of gpu.launch_func: a read and
/// a write of each memref operand, and a write of a resource of launches.
void registerKernelLaunchEffectsExternalModel(DialectRegistry &registry);

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_CONVERSION_HOSTKERNELS_KERNELLAUNCHEFFECTS_H
