//===- main.cpp - Run a compiled method from its metadata ------*- C++ -*-===//
//
// A host program for code compiled ahead of time by
// `etcopy-opt --etcopy-to-cuda=arena-ownership=caller`. It reads what the
// compiler exported next to the method: its signature
// (method_etcopy_signature: which arguments are device memory) and its
// planned arenas (method_etcopy_arenas). It allocates the arenas once with
// the etcopy runtime, uploads the input the signature places on the device,
// calls the method several times, prints the results and frees everything.
// The CUDA Runtime API is the one the program is linked against: the
// simulator (arena-host) or libcudart (arena-host-cudart).
//
//===----------------------------------------------------------------------===//

#include "etcopy/Runtime/CudaApi.h"
#include "etcopy/Runtime/DeviceAllocator.h"
#include "etcopy/Runtime/EtCopyRuntime.h"

#include <cstdint>
#include <cstdio>
#include <vector>

using namespace etcopy::runtime;

namespace {
/// The descriptor of a rank-1 memref, as the code lowered from MLIR passes
/// it (llvm.emit_c_interface: by pointer).
template <typename T>
struct MemRef1D {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
};

template <typename T>
MemRef1D<T> describe(T *data, int64_t size) {
  return {data, data, 0, {size}, {1}};
}
} // namespace

extern "C" {
// Exported by the compiled method (see method.mlir).
extern const etcopy_method_signature method_etcopy_signature;
extern const etcopy_function_arenas method_etcopy_arenas;
// @method(%arena: memref<512xi8, cuda:0>, %in: memref<8xf32, cuda:0>,
//         %out: memref<8xf32>): the arena comes first (caller ownership).
void _mlir_ciface_method(MemRef1D<int8_t> *arena, MemRef1D<float> *in,
                         MemRef1D<float> *out);
}

static int fail(const char *what, const Error &err) {
  std::fprintf(stderr, "arena-host: %s: %s\n", what, err.toString().c_str());
  return 1;
}

int main() {
  // 1. What the method takes, from the signature the compiler exported.
  Expected<MethodSignature> signature = readSignature(method_etcopy_signature);
  if (!signature)
    return fail("signature", signature.takeError());
  for (size_t i = 0; i < signature->arguments.size(); ++i)
    std::printf("argument #%zu: %s\n", i,
                toString(signature->arguments[i]).c_str());
  if (signature->arguments.size() != 3 ||
      signature->arguments[2].isOnDevice()) {
    std::fprintf(stderr, "arena-host: unexpected signature\n");
    return 1;
  }
  const ValueDescription &inputDescription = signature->arguments[1];

  // 2. What memory it needs, from the arena metadata.
  const etcopy_function_arenas &metadata = method_etcopy_arenas;
  std::printf("method needs %llu arena(s)\n",
              static_cast<unsigned long long>(metadata.num_arenas));
  for (uint64_t i = 0; i < metadata.num_arenas; ++i) {
    const etcopy_arena_desc &desc = metadata.arenas[i];
    std::printf("  arena #%llu: %s:%d, %llu bytes, alignment %llu\n",
                static_cast<unsigned long long>(i),
                etcopy_device_kind_name(desc.device_kind), desc.ordinal,
                static_cast<unsigned long long>(desc.size),
                static_cast<unsigned long long>(desc.alignment));
  }
  // The call below passes exactly one arena, as method.mlir plans.
  if (metadata.num_arenas != 1) {
    std::fprintf(stderr, "arena-host: expected 1 arena\n");
    return 1;
  }

  // 3. A CUDA allocator over the CUDA Runtime API the process is linked with
  // (the simulator or libcudart), so that the arenas and inputs come from
  // the same runtime as the compiled code's streams and copies.
  DeviceAllocatorRegistry registry;
  Expected<std::shared_ptr<CudaAllocator>> cuda = makeCudaAllocator();
  if (!cuda)
    return fail("CUDA allocator", cuda.takeError());
  if (Error err = registry.registerAllocator(*cuda))
    return fail("register", err);

  // 4. The arenas, allocated once (as ExecuTorch allocates planned buffers
  // at method load time), freed when `arenas` goes out of scope.
  Expected<std::vector<DeviceBuffer>> arenas =
      allocateArenas(registry, metadata);
  if (!arenas)
    return fail("allocate arenas", arenas.takeError());
  DeviceBuffer &arena = (*arenas)[0];
  std::printf("allocated %zu bytes on %s\n", arena.size(),
              toString(arena.getDevice()).c_str());

  // 5. Several calls reuse the same arena. The input goes where the
  // signature says the method reads it.
  for (int call = 0; call < 2; ++call) {
    std::vector<float> input(8), output(8, 0.0f);
    for (int i = 0; i < 8; ++i)
      input[i] = static_cast<float>(10 * call + i + 1);
    DeviceBuffer uploaded;
    float *inputData = input.data();
    if (inputDescription.isOnDevice()) {
      Expected<DeviceBuffer> buffer = makeDeviceInput(
          registry, inputDescription.device.kind,
          inputDescription.device.ordinal, input.data(),
          input.size() * sizeof(float));
      if (!buffer)
        return fail("upload the input", buffer.takeError());
      uploaded = std::move(*buffer);
      inputData = static_cast<float *>(uploaded.data());
    }
    auto arenaRef = describe(static_cast<int8_t *>(arena.data()),
                             static_cast<int64_t>(arena.size()));
    auto inRef = describe(inputData, 8);
    auto outRef = describe(output.data(), 8);
    _mlir_ciface_method(&arenaRef, &inRef, &outRef);
    std::printf("call %d:", call);
    for (float value : output)
      std::printf(" %g", value);
    std::printf("\n");
  }

  // 6. Free the arena explicitly to observe a failing free.
  if (Error err = arena.reset())
    return fail("free arena", err);
  std::printf("done\n");
  return 0;
}
