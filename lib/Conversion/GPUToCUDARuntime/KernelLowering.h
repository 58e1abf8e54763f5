//===- KernelLowering.h - gpu.binary and gpu.launch_func lowering -*- C++ -*-===//
//
// The kernels of convert-gpu-to-cuda-runtime: the validation of
// gpu.launch_func (step 1), the lowering of each gpu.binary to the globals
// its launches use (its image, its library handle, a handle per kernel and,
// where the module holds host versions of the kernels, the table the CUDA
// simulator runs them from, beside the image), and the lowering of each planned launch to the
// calls of the runtime support (step 3).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_GPUTOCUDARUNTIME_KERNELLOWERING_H
#define LIB_CONVERSION_GPUTOCUDARUNTIME_KERNELLOWERING_H

#include "HostKernelABI.h"
#include "Planning.h"

namespace mlir::etcopy::cuda_lowering {


/// Reports what the pass cannot lower in `launch` (its kernel must be in a
/// gpu.binary of the module, with an object the CUDA Runtime can load; no
/// cluster size, no async object; with `barePointers`, memref arguments of
/// static shape and identity layout only);
/// false if it reported something.
bool validateLaunch(gpu::LaunchFuncOp launch, SymbolTable &symbols,
                    bool barePointers);

/// The kernel inputs (after the ids) of each host kernel of a module, by
/// name, as they are before the lowering.
using HostKernelInputs = llvm::StringMap<SmallVector<Type>>;
HostKernelInputs collectHostKernelInputs(ModuleOp module);

/// The globals of the module's gpu.binary ops, which it creates and erases
/// the binaries, and the lowering of the launches that use them.
class KernelLowering {
public:
  /// Creates the globals of every gpu.binary of `module` and erases the
  /// binaries; the host kernels of the module (already lowered to
  /// llvm.func) go into the binaries' tables of host kernels.
  /// With `barePointerInputs` (use-bare-pointers-for-kernels; the inputs of
  /// the host kernels before the lowering), each memref argument of a launch
  /// is passed as its aligned pointer alone, and the host kernels' entries
  /// take it so.
  KernelLowering(ModuleOp module, SymbolTable &symbols,
                 const HostKernelInputs *barePointerInputs);

  /// Replaces `launch`, whose lowered operands are `operands`, by the calls
  /// that get its kernel and launch it on the plan's stream, at `builder`'s
  /// insertion point.
  void lowerLaunch(OpBuilder &builder, gpu::LaunchFuncOp launch,
                   ValueRange operands, const OpPlan &plan,
                   RuntimeSupport &support);

private:
  struct Binary {
    LLVM::GlobalOp image;
    /// The table of host kernels; null if the module has none.
    LLVM::GlobalOp hostKernels;
    LLVM::GlobalOp library;
    llvm::StringMap<LLVM::GlobalOp> kernels;
    llvm::StringMap<LLVM::GlobalOp> names;
  };
  LLVM::GlobalOp getKernelCell(Binary &binary, StringRef kernel,
                               StringRef binaryName);
  LLVM::GlobalOp getName(Binary &binary, StringRef kernel);

  ModuleOp module;
  SymbolTable &symbols;
  llvm::StringMap<Binary> binaries;
  bool barePointers;
};

} // namespace mlir::etcopy::cuda_lowering

#endif // LIB_CONVERSION_GPUTOCUDARUNTIME_KERNELLOWERING_H
