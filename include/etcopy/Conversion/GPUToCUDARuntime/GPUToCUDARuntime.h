//===- GPUToCUDARuntime.h - gpu runtime ops to CUDA calls -----*- C++ -*-===//
//
// Entry points of the lowering of gpu.alloc/dealloc/memcpy/memset/wait to
// checked CUDA Runtime API calls (pass convert-gpu-to-cuda-runtime).
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_CONVERSION_GPUTOCUDARUNTIME_GPUTOCUDARUNTIME_H
#define ETCOPY_CONVERSION_GPUTOCUDARUNTIME_GPUTOCUDARUNTIME_H

namespace mlir {
class LLVMTypeConverter;

namespace etcopy {

/// Adds the memory-space conversions of the CUDA lowering to an LLVM type
/// converter: #etcopy.device<...>, #gpu.address_space<...> and integer
/// memory spaces all become address space 0, since host code reaches device
/// memory through generic (unified) pointers; `!gpu.async.token` becomes
/// the stream pointer.
void populateCUDARuntimeTypeConversions(LLVMTypeConverter &converter);

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_CONVERSION_GPUTOCUDARUNTIME_GPUTOCUDARUNTIME_H
