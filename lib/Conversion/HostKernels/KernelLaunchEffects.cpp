//===- KernelLaunchEffects.cpp - Memory effects of kernel launches -*- C++ -*-===//
//
// The MemoryEffectOpInterface model of gpu.launch_func: a kernel may read
// and write every memref it is given (and nothing else: a kernel reaches
// memory only through its arguments), and it runs (a write of a resource
// of its own, so that a launch without memrefs is not dead code).
//
//===----------------------------------------------------------------------===//

#include "etcopy/Conversion/HostKernels/KernelLaunchEffects.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

/// What a launch does besides its memrefs: it runs a kernel, which no pass
/// may drop even when it takes no memref.
struct KernelLaunchResource
    : public SideEffects::Resource::Base<KernelLaunchResource> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(KernelLaunchResource)
  StringRef getName() final { return "<etcopy kernel launch>"; }
};

struct LaunchFuncMemoryEffects
    : public MemoryEffectOpInterface::ExternalModel<LaunchFuncMemoryEffects,
                                                    gpu::LaunchFuncOp> {
  void getEffects(Operation *op,
                  SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                      &effects) const {
    auto launch = cast<gpu::LaunchFuncOp>(op);
    effects.emplace_back(MemoryEffects::Write::get(),
                         KernelLaunchResource::get());
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
