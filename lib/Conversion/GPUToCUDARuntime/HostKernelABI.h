//===- HostKernelABI.h - Host versions of kernels: names, layout -*- C++ -*-===//
//
// What etcopy-outline-host-kernels (HostKernels.cpp) and
// convert-gpu-to-cuda-runtime (KernelLowering.cpp) agree on about the host
// versions of kernels: the attributes that mark them and their leading
// arguments.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_GPUTOCUDARUNTIME_HOSTKERNELABI_H
#define LIB_CONVERSION_GPUTOCUDARUNTIME_HOSTKERNELABI_H

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::etcopy {

/// The attribute of a host function that is the host version of a kernel:
/// `[gpu.module (later gpu.binary) name, kernel name]`.
constexpr llvm::StringLiteral kHostKernelAttrName =
    EtCopyDialect::getHostKernelAttrName();
/// On a host kernel: why the kernel has no host version (its body is
/// empty).
constexpr llvm::StringLiteral kHostKernelUnsupportedAttrName =
    EtCopyDialect::getHostKernelUnsupportedAttrName();
/// Host kernels take the block id, thread id, block size and grid size (x,
/// y, z each) before the kernel's own arguments (which the attribute's
/// verifier checks).
constexpr unsigned kNumHostKernelIds = EtCopyDialect::getNumHostKernelIds();

} // namespace mlir::etcopy

#endif // LIB_CONVERSION_GPUTOCUDARUNTIME_HOSTKERNELABI_H
