//===- ApiKernel.cpp - CUDA library and kernel launch entry points -*- C++ -*-===//
//
// cudaLibraryLoadData, cudaLibraryUnload, cudaLibraryGetKernel and
// cudaLaunchKernel. The simulator cannot run device code: it runs the host
// versions of the kernels, which the code that convert-gpu-to-cuda-runtime
// lowers attaches to each library it loads
// (etcopy_cuda_sim_attach_host_kernels, CudaSimKernels.h: per kernel its
// name, the kinds of its parameters, an entry function and, for a kernel
// without host version, why). cudaLibraryLoadData reads the image only as
// far as its format bounds it. A launch is checked as CUDA checks it
// (configuration, handles), its pointer parameters must be memory of the
// launch's device, and it is queued on its stream; when the stream runs it,
// the entry is called once per thread, block after block and thread after
// thread in order, with device pointers mapped to the simulator's view of
// the memory. Kernels that need threads to run together (gpu.barrier,
// shared memory, warp operations) have no host version: their launch fails
// with cudaErrorNotSupported and says why.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include "CudaSimKernels.h"

#include <cinttypes>
#include <initializer_list>

using namespace etcopy::cudasim;

namespace {

using HostKernel = etcopy_host_kernel;
using HostKernelTable = etcopy_host_kernel_table;

struct Library;

struct Kernel {
  Library *Lib = nullptr;
  const HostKernel *Host = nullptr;
  std::string Name;
};

struct Library {
  uint32_t Id = 0;
  bool Unloaded = false;
  const char *Format = "";
  const HostKernelTable *Table = nullptr;
  std::vector<std::unique_ptr<Kernel>> Kernels;
};

/// Every library ever loaded (unloaded ones stay, so that a stale handle is
/// reported as such) and every kernel handle, guarded by the simulator lock.
std::vector<std::unique_ptr<Library>> Libraries;
std::unordered_map<const void *, Library *> LibraryHandles;
std::unordered_map<const void *, Kernel *> KernelHandles;

/// Dynamic shared memory a block may use without opting in
/// (cudaFuncAttributeMaxDynamicSharedMemorySize), per the CUDA C++
/// Programming Guide, "Shared Memory" (48 KB).
constexpr size_t kDefaultSharedBytes = 48 * 1024;

/// The size of the object at Code: PTX text up to its NUL, a cubin up to
/// its section (or program) headers, a fatbin per its header; 0 if it is
/// none of them. Sets Format. CUDA takes no size with an image, so every
/// read stays within what the bytes already read say the object holds: the
/// magic numbers are compared byte by byte (a shorter string ends at its
/// NUL, which matches none), a header is read only after its magic.
size_t objectSize(const char *Code, const char *&Format) {
  const auto *Bytes = reinterpret_cast<const unsigned char *>(Code);
  auto startsWith = [&](std::initializer_list<unsigned char> Magic) {
    size_t I = 0;
    for (unsigned char Byte : Magic)
      if (Bytes[I++] != Byte)
        return false;
    return true;
  };
  if (startsWith({0x7f, 'E', 'L', 'F', 2 /*ELFCLASS64*/})) {
    // The 64-byte ELF64 header (e_phoff at 0x20, e_shoff at 0x28, ...).
    Format = "cubin";
    uint64_t PhOff, ShOff;
    uint16_t PhEntSize, PhNum, ShEntSize, ShNum;
    memcpy(&PhOff, Code + 0x20, 8);
    memcpy(&ShOff, Code + 0x28, 8);
    memcpy(&PhEntSize, Code + 0x36, 2);
    memcpy(&PhNum, Code + 0x38, 2);
    memcpy(&ShEntSize, Code + 0x3a, 2);
    memcpy(&ShNum, Code + 0x3c, 2);
    return std::max<uint64_t>({64, PhOff + uint64_t(PhEntSize) * PhNum,
                               ShOff + uint64_t(ShEntSize) * ShNum});
  }
  if (startsWith({0x50, 0xed, 0x55, 0xba})) {
    // The 16-byte fatbin header: magic 0xBA55ED50, version, header size,
    // size of what follows.
    Format = "fatbin";
    uint16_t HeaderSize;
    uint64_t FatSize;
    memcpy(&HeaderSize, Code + 6, 2);
    memcpy(&FatSize, Code + 8, 8);
    return HeaderSize + FatSize;
  }
  // PTX: text that declares its version.
  size_t Length = strlen(Code);
  if (memmem(Code, Length, ".version", 8)) {
    Format = "PTX";
    return Length + 1;
  }
  return 0;
}

} // namespace

/// A launch as queued: the kernel, its configuration and a copy of its
/// parameters (CUDA copies them when the launch is made).
struct etcopy::cudasim::KernelRun {
  const Kernel *K = nullptr;
  dim3 Grid, Block;
  size_t SharedBytes = 0;
  std::vector<std::vector<char>> Params;
};

std::string Simulator::describeKernel(const KernelRun &Run) const {
  return format("%s, grid=(%u, %u, %u), block=(%u, %u, %u), shared=%zu",
                Run.K->Name.c_str(), Run.Grid.x, Run.Grid.y, Run.Grid.z,
                Run.Block.x, Run.Block.y, Run.Block.z, Run.SharedBytes);
}

void Simulator::runKernel(const KernelRun &Run, DrainContext &Ctx) {
  // Device pointers become the simulator's view of their memory; a buffer
  // freed since the launch is a use after free on the device.
  std::vector<std::vector<char>> Params = Run.Params;
  std::vector<void *> Args;
  const char *Kinds = Run.K->Host->kinds;
  for (size_t I = 0; I < Params.size(); ++I) {
    if (Kinds[I] == 'p') {
      uintptr_t Address;
      memcpy(&Address, Params[I].data(), sizeof Address);
      if (Address) {
        PtrInfo Info = classify(Address);
        if (!Info.Alloc || Info.Alloc->Freed.load(std::memory_order_relaxed)) {
          emit("error",
               "%s: kernel %s: parameter %zu (%s) was freed before the "
               "kernel ran",
               Ctx.Api, Run.K->Name.c_str(), I, hex(Address).c_str());
          Ctx.fail(cudaErrorIllegalAddress);
          return;
        }
        char *Mapped = Info.Alloc->View + (Address - Info.Alloc->Base);
        memcpy(Params[I].data(), &Mapped, sizeof Mapped);
      }
    }
    Args.push_back(Params[I].data());
  }
  auto Entry = Run.K->Host->entry;
  uint64_t Ids[12] = {0, 0, 0, 0, 0, 0,
                      Run.Block.x, Run.Block.y, Run.Block.z,
                      Run.Grid.x,  Run.Grid.y,  Run.Grid.z};
  for (uint64_t BZ = 0; BZ < Run.Grid.z; ++BZ)
    for (uint64_t BY = 0; BY < Run.Grid.y; ++BY)
      for (uint64_t BX = 0; BX < Run.Grid.x; ++BX)
        for (uint64_t TZ = 0; TZ < Run.Block.z; ++TZ)
          for (uint64_t TY = 0; TY < Run.Block.y; ++TY)
            for (uint64_t TX = 0; TX < Run.Block.x; ++TX) {
              Ids[0] = BX, Ids[1] = BY, Ids[2] = BZ;
              Ids[3] = TX, Ids[4] = TY, Ids[5] = TZ;
              Entry(Args.data(), Ids);
            }
}

ETCOPY_CUDA_SIM_API cudaError_t
cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
                    enum cudaJitOption *jitOptions, void **jitOptionsValues,
                    unsigned int numJitOptions,
                    enum cudaLibraryOption *libraryOptions,
                    void **libraryOptionValues, unsigned int numLibraryOptions) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  EntryPoint Which = EntryPoint::cudaLibraryLoadData;
  const char *Api = entryPointInfo(Which).Name;
  cudaError_t Error = Sim.enterOnDevice(Which);
  const char *Format = "";
  size_t Size = 0;
  if (Error == cudaSuccess && (!library || !code))
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid argument: %s is null",
                     !library ? "library" : "code");
  if (Error == cudaSuccess &&
      ((numJitOptions && (!jitOptions || !jitOptionsValues)) ||
       (numLibraryOptions && (!libraryOptions || !libraryOptionValues))))
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid argument: options are counted but null");
  if (Error == cudaSuccess) {
    Size = objectSize(static_cast<const char *>(code), Format);
    if (Size == 0)
      Error = Sim.fail(Api, cudaErrorInvalidKernelImage,
                       "the image at %s is not PTX (text with a .version "
                       "directive), a cubin (64-bit ELF) or a fatbin",
                       hex(code).c_str());
  }
  if (Error == cudaSuccess) {
    auto Lib = std::make_unique<Library>();
    Lib->Id = uint32_t(Libraries.size() + 1);
    Lib->Format = Format;
    *library = reinterpret_cast<cudaLibrary_t>(Lib.get());
    LibraryHandles[Lib.get()] = Lib.get();
    Libraries.push_back(std::move(Lib));
  }
  Sim.trace("%s(%s image, %zu bytes)%s", Api, Format, Size,
            Sim.result(Error, Error == cudaSuccess
                                  ? format("library %u",
                                           Libraries.back()->Id)
                                  : "")
                .c_str());
  return Sim.finish(Which, Error);
}

/// The library of Handle, or null with Error set.
static Library *lookupLibrary(Simulator &Sim, const char *Api,
                              cudaLibrary_t Handle, cudaError_t &Error) {
  auto It = LibraryHandles.find(Handle);
  if (It == LibraryHandles.end()) {
    Error = Sim.fail(Api, cudaErrorInvalidResourceHandle,
                     "invalid library handle %s (not loaded by "
                     "cudaLibraryLoadData)",
                     hex(Handle).c_str());
    return nullptr;
  }
  if (It->second->Unloaded) {
    Error = Sim.fail(Api, cudaErrorInvalidResourceHandle,
                     "invalid library handle %s (library %u was unloaded by "
                     "cudaLibraryUnload)",
                     hex(Handle).c_str(), It->second->Id);
    return nullptr;
  }
  return It->second;
}

/// Not a CUDA entry point (CudaSimKernels.h): the side channel through which
/// lowered code gives a library the host versions of its kernels.
ETCOPY_CUDA_SIM_API cudaError_t etcopy_cuda_sim_attach_host_kernels(
    cudaLibrary_t library, const etcopy_host_kernel_table *table) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = ETCOPY_CUDA_SIM_ATTACH_HOST_KERNELS;
  cudaError_t Error = cudaSuccess;
  Library *Lib = nullptr;
  if (Sim.isUnloading())
    Error = Sim.fail(Api, cudaErrorCudartUnloading,
                     "called while the runtime is unloading");
  if (Error == cudaSuccess)
    Lib = lookupLibrary(Sim, Api, library, Error);
  if (Lib && !table)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid argument: table is null");
  else if (Lib && memcmp(table->magic, ETCOPY_HOST_KERNEL_TABLE_MAGIC, 8))
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "%s is not a table of host kernels (it does not start "
                     "with \"" ETCOPY_HOST_KERNEL_TABLE_MAGIC "\")",
                     hex(table).c_str());
  else if (Lib && Lib->Table)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "library %u has host kernels already", Lib->Id);
  if (Error == cudaSuccess)
    Lib->Table = table;
  Sim.trace("%s(%s, %s)%s", Api,
            Lib ? format("library %u", Lib->Id).c_str() : hex(library).c_str(),
            Error == cudaSuccess
                ? format("%" PRIu64 " host kernels", table->count).c_str()
                : hex(table).c_str(),
            Sim.result(Error).c_str());
  return Error;
}

ETCOPY_CUDA_SIM_API cudaError_t cudaLibraryUnload(cudaLibrary_t library) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  EntryPoint Which = EntryPoint::cudaLibraryUnload;
  const char *Api = entryPointInfo(Which).Name;
  cudaError_t Error = Sim.enterRuntime(Which);
  Library *Lib = nullptr;
  if (Error == cudaSuccess)
    Lib = lookupLibrary(Sim, Api, library, Error);
  if (Lib)
    Lib->Unloaded = true;
  Sim.trace("%s(%s)%s", Api,
            Lib ? format("library %u", Lib->Id).c_str() : hex(library).c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(Which, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel,
                                                     cudaLibrary_t library,
                                                     const char *name) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  EntryPoint Which = EntryPoint::cudaLibraryGetKernel;
  const char *Api = entryPointInfo(Which).Name;
  cudaError_t Error = Sim.enterRuntime(Which);
  Library *Lib = nullptr;
  if (Error == cudaSuccess && (!pKernel || !name))
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid argument: %s is null",
                     !pKernel ? "pKernel" : "name");
  if (Error == cudaSuccess)
    Lib = lookupLibrary(Sim, Api, library, Error);
  const HostKernel *Host = nullptr;
  if (Lib && Lib->Table)
    for (uint64_t I = 0; I < Lib->Table->count && !Host; ++I)
      if (strcmp(Lib->Table->kernels[I].name, name) == 0)
        Host = &Lib->Table->kernels[I];
  if (Lib && !Host)
    Error = Sim.fail(
        Api, cudaErrorSymbolNotFound,
        Lib->Table ? "library %u has no kernel named '%s'"
                   : "library %u has no host versions of its kernels, so the "
                     "simulator cannot find or run '%s' (lower the kernels' "
                     "gpu.module with etcopy-outline-host-kernels, as "
                     "--etcopy-to-cuda does)",
        Lib->Id, name);
  if (Host) {
    Kernel *K = nullptr;
    for (const auto &Existing : Lib->Kernels)
      if (Existing->Host == Host)
        K = Existing.get();
    if (!K) {
      Lib->Kernels.push_back(std::make_unique<Kernel>());
      K = Lib->Kernels.back().get();
      K->Lib = Lib;
      K->Host = Host;
      K->Name = name;
      KernelHandles[K] = K;
    }
    *pKernel = reinterpret_cast<cudaKernel_t>(K);
  }
  Sim.trace("%s(library %u, \"%s\")%s", Api, Lib ? Lib->Id : 0,
            name ? name : "(null)", Sim.result(Error).c_str());
  return Sim.finish(Which, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaLaunchKernel(const void *func,
                                                 dim3 gridDim, dim3 blockDim,
                                                 void **args, size_t sharedMem,
                                                 cudaStream_t stream) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  EntryPoint Which = EntryPoint::cudaLaunchKernel;
  const char *Api = entryPointInfo(Which).Name;
  auto Run = std::make_shared<KernelRun>();
  Run->Grid = gridDim;
  Run->Block = blockDim;
  Run->SharedBytes = sharedMem;
  cudaError_t Error = Sim.enterOnDevice(Which);
  Stream *S = nullptr;
  if (Error == cudaSuccess)
    S = Sim.lookupStream(Api, stream, Error);
  const Kernel *K = nullptr;
  if (Error == cudaSuccess) {
    auto It = KernelHandles.find(func);
    if (It == KernelHandles.end())
      Error = Sim.fail(Api, cudaErrorInvalidDeviceFunction,
                       "%s is not a kernel handle from cudaLibraryGetKernel "
                       "(the simulator launches no other functions)",
                       hex(func).c_str());
    else if (It->second->Lib->Unloaded)
      Error = Sim.fail(Api, cudaErrorInvalidResourceHandle,
                       "kernel %s: its library %u was unloaded",
                       It->second->Name.c_str(), It->second->Lib->Id);
    else
      K = Run->K = It->second;
  }
  // The execution configuration: CUDA C++ Programming Guide, "Compute
  // Capabilities", table "Technical Specifications per Compute Capability"
  // (block at most 1024 x 1024 x 64 and 1024 threads, grid at most
  // (2^31 - 1) x 65535 x 65535); cudaErrorInvalidConfiguration: "Requesting
  // more shared memory per block than the device supports will trigger this
  // error, as will requesting too many threads or blocks."
  if (Error == cudaSuccess) {
    uint64_t Threads = uint64_t(blockDim.x) * blockDim.y * blockDim.z;
    if (!gridDim.x || !gridDim.y || !gridDim.z || !blockDim.x ||
        !blockDim.y || !blockDim.z)
      Error = Sim.fail(Api, cudaErrorInvalidConfiguration,
                       "kernel %s: a grid or block dimension is 0",
                       K->Name.c_str());
    else if (blockDim.x > 1024 || blockDim.y > 1024 || blockDim.z > 64 ||
             Threads > 1024)
      Error = Sim.fail(Api, cudaErrorInvalidConfiguration,
                       "kernel %s: block (%u, %u, %u) exceeds the limits "
                       "(1024 x 1024 x 64, 1024 threads per block)",
                       K->Name.c_str(), blockDim.x, blockDim.y, blockDim.z);
    else if (gridDim.x > 0x7fffffffu || gridDim.y > 65535 ||
             gridDim.z > 65535)
      Error = Sim.fail(Api, cudaErrorInvalidConfiguration,
                       "kernel %s: grid (%u, %u, %u) exceeds the limits "
                       "((2^31 - 1) x 65535 x 65535)",
                       K->Name.c_str(), gridDim.x, gridDim.y, gridDim.z);
    else if (sharedMem > kDefaultSharedBytes)
      Error = Sim.fail(Api, cudaErrorInvalidConfiguration,
                       "kernel %s: %zu bytes of dynamic shared memory exceed "
                       "the %zu a block may use without "
                       "cudaFuncAttributeMaxDynamicSharedMemorySize",
                       K->Name.c_str(), sharedMem, kDefaultSharedBytes);
    else if (!K->Host->entry)
      Error = Sim.fail(Api, cudaErrorNotSupported,
                       "kernel %s cannot run on the simulator: %s",
                       K->Name.c_str(),
                       K->Host->unsupported ? K->Host->unsupported
                                            : "it has no host version");
  }
  // The parameters, copied now; pointers must be memory of the launch's
  // device (the kernel would fault on anything else).
  if (Error == cudaSuccess) {
    const char *Kinds = K->Host->kinds;
    size_t Count = strlen(Kinds);
    if (Count && !args)
      Error = Sim.fail(Api, cudaErrorInvalidValue,
                       "kernel %s takes %zu parameters but args is null",
                       K->Name.c_str(), Count);
    for (size_t I = 0; Error == cudaSuccess && I < Count; ++I) {
      size_t Bytes = Kinds[I] == 'p' ? sizeof(void *) : size_t(Kinds[I] - '0');
      const char *From = static_cast<const char *>(args[I]);
      Run->Params.emplace_back(From, From + Bytes);
      if (Kinds[I] != 'p')
        continue;
      uintptr_t Address;
      memcpy(&Address, From, sizeof Address);
      if (!Address)
        continue;
      PtrInfo Info = Sim.classify(Address);
      if (!Info.isDeviceAccessible() || Info.Alloc->Device != S->Device ||
          Info.Offset > Info.Alloc->Size ||
          Info.Alloc->Freed.load(std::memory_order_relaxed))
        Error = Sim.fail(Api, cudaErrorIllegalAddress,
                         "kernel %s: parameter %zu (%s) is not memory of "
                         "%s: %s",
                         K->Name.c_str(), I, hex(Address).c_str(),
                         deviceName(S->Device).c_str(),
                         Sim.describe(Info).c_str());
    }
  }
  Op O;
  O.Kind = OpKind::Kernel;
  O.Api = Api;
  O.Kernel = Run;
  if (Error == cudaSuccess) {
    Sim.enqueue(*S, O);
    Sim.launch(*S, O, /*BlocksHost=*/false);
  }
  Sim.trace("%s%s",
            K ? Sim.describeOp(O, Sim.streamLabel(stream)).c_str()
              : format("%s(%s)", Api, hex(func).c_str()).c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(Which, Error);
}
