//===- KernelLaunchEffects.cpp - Memory effects of kernel launches -*- C++ -*-===//
//
// The MemoryEffectOpInterface model of gpu.launch_func: a kernel may read
// and write every memref it is given (and nothing else: a kernel reaches
// memory only through its arguments).
//
//===----------------------------------------------------------------------===//

#include "etcopy/Conversion/HostKernels/KernelLaunchEffects.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

struct LaunchFuncMemoryEffects
    : public MemoryEffectOpInterface::ExternalModel<LaunchFuncMemoryEffects,
                                                    gpu::LaunchFuncOp> {
  void getEffects(Operation *op,
                  SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                      &effects) const {
    auto launch = cast<gpu::LaunchFuncOp>(op);
    for (OpOperand &operand : launch.getKernelOperandsMutable()) {
      if (!isa<BaseMemRefType>(operand.get().getType()))
        continue;
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    }
  }
};

} // namespace

void mlir::etcopy::registerKernelLaunchEffectsExternalModel(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, gpu::GPUDialect *) {
    gpu::LaunchFuncOp::attachInterface<LaunchFuncMemoryEffects>(*context);
  });
}
