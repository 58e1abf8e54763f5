//===- EtCopyToGPU.h - etcopy to gpu dialect conversion -------*- C++ -*-===//
//
// Entry points of the conversion of out-form etcopy copies and device
// allocations to gpu-dialect ops (pass convert-etcopy-to-gpu).
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_CONVERSION_ETCOPYTOGPU_ETCOPYTOGPU_H
#define ETCOPY_CONVERSION_ETCOPYTOGPU_ETCOPYTOGPU_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class Operation;
namespace etcopy {

/// Options of convertEtCopyToGPU, mirroring the pass options.
struct EtCopyToGPUOptions {
  /// Emit async ops chained by tokens; false emits the sync forms.
  bool async = true;
  /// Replace #etcopy.device<cuda:0> memory spaces by
  /// #gpu.address_space<global> and #etcopy.device<cpu> by none, and drop
  /// the etcopy.* discardable attributes (fails on non-zero ordinals).
  bool useGPUAddressSpace = false;
};

/// Statistics collected by convertEtCopyToGPU.
struct EtCopyToGPUStatistics {
  unsigned copies = 0;
  unsigned allocs = 0;
  unsigned waits = 0;
};

/// Rewrites every host function under `root` (gpu.module bodies are device
/// code and left alone): device copies, allocations and deallocations become
/// gpu-dialect ops with host waits where needed. Emits diagnostics and fails
/// on what cannot be converted: functional copies, host accesses to device
/// memory, device memref.alloca, non-identity device allocations and, with
/// `useGPUAddressSpace`, devices other than cuda:0.
LogicalResult convertEtCopyToGPU(Operation *root,
                                 const EtCopyToGPUOptions &options,
                                 EtCopyToGPUStatistics *statistics = nullptr);

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_CONVERSION_ETCOPYTOGPU_ETCOPYTOGPU_H
