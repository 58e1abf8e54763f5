//===- ApiMemory.cpp - CUDA memory management entry points ------*- C++ -*-===//
//
// The exported allocation and free functions (cudaMalloc, cudaMallocAsync,
// cudaMallocManaged, cudaMallocHost, cudaHostAlloc, cudaFree, cudaFreeAsync,
// cudaFreeHost), host memory registration, cudaHostGetDevicePointer and
// cudaPointerGetAttributes. The checks and the bookkeeping are in
// Memory.cpp; cudaMallocAsync's memory pools in MemPools.cpp.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include <algorithm>

using namespace etcopy::cudasim;

//===----------------------------------------------------------------------===//
// Memory management
//===----------------------------------------------------------------------===//

/// The "-> 0x..." part of an allocation trace; a request of 0 bytes writes
/// nothing.
static std::string allocationResult(Simulator &Sim, cudaError_t Error,
                                    void **Out, size_t Size) {
  if (Error == cudaSuccess && Size == 0)
    return Sim.result(Error, "nothing written (0 bytes)");
  return Sim.result(Error, Error == cudaSuccess && Out ? hex(*Out) : "");
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMalloc(void **devPtr, size_t size) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaMalloc);
  if (Error == cudaSuccess)
    Error = Sim.checkCaptureSafe("cudaMalloc");
  if (Error == cudaSuccess)
    Error = Sim.allocate("cudaMalloc", devPtr, size, MemKind::Device,
                         CurrentDevice);
  Sim.trace("cudaMalloc(%zu bytes, cuda:%d)%s", size, CurrentDevice,
            allocationResult(Sim, Error, devPtr, size).c_str());
  return Sim.finish(EntryPoint::cudaMalloc, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMallocAsync(void **devPtr, size_t size,
                                                cudaStream_t hStream) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaMallocAsync);
  // The memory comes from the current pool of the stream's device and is
  // usable at once; the simulator does not model stream-ordered
  // availability.
  Stream *S = Error == cudaSuccess
                  ? Sim.lookupStream("cudaMallocAsync", hStream, Error)
                  : nullptr;
  if (S)
    Error = Sim.allocateFromPool("cudaMallocAsync", devPtr, size,
                                 Sim.currentPool(S->Device));
  if (S && S->Capture && Error == cudaSuccess && size != 0)
    Sim.recordAllocationNode(*S, *devPtr);
  Sim.trace("cudaMallocAsync(%zu bytes, stream=%s)%s", size,
            Sim.streamLabel(hStream).c_str(),
            allocationResult(Sim, Error, devPtr, size).c_str());
  return Sim.finish(EntryPoint::cudaMallocAsync, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMallocManaged(void **devPtr, size_t size,
                                                  unsigned int flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaMallocManaged);
  if (Error == cudaSuccess)
    Error = Sim.checkCaptureSafe("cudaMallocManaged");
  if (Error == cudaSuccess && flags != cudaMemAttachGlobal &&
      flags != cudaMemAttachHost)
    Error = Sim.fail("cudaMallocManaged", cudaErrorInvalidValue,
                     "invalid flags 0x%x (expected cudaMemAttachGlobal or "
                     "cudaMemAttachHost)",
                     flags);
  if (Error == cudaSuccess)
    Error = Sim.allocate("cudaMallocManaged", devPtr, size, MemKind::Managed,
                         CurrentDevice);
  Sim.trace("cudaMallocManaged(%zu bytes, flags=%u, cuda:%d)%s", size, flags,
            CurrentDevice, allocationResult(Sim, Error, devPtr, size).c_str());
  return Sim.finish(EntryPoint::cudaMallocManaged, Error);
}

/// Shared implementation of cudaMallocHost and cudaHostAlloc.
static cudaError_t allocatePinned(EntryPoint Which, void **Ptr, size_t Size,
                                  unsigned Flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = entryPointInfo(Which).Name;
  cudaError_t Error = Sim.enterOnDevice(Which);
  if (Error == cudaSuccess)
    Error = Sim.checkCaptureSafe(Api);
  const unsigned Known =
      cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
  if (Error == cudaSuccess && (Flags & ~Known))
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid flags 0x%x (expected a combination of "
                     "cudaHostAllocPortable, cudaHostAllocMapped and "
                     "cudaHostAllocWriteCombined)",
                     Flags);
  // With unified addressing all pinned memory is mapped and portable, and
  // write-combining makes no difference to the simulator.
  if (Error == cudaSuccess)
    Error = Sim.allocate(Api, Ptr, Size, MemKind::PinnedHost, CurrentDevice);
  if (Error == cudaSuccess)
    Sim.spendPinning(Size);
  std::string FlagsText = Which == EntryPoint::cudaHostAlloc
                              ? format(", flags=%u", Flags)
                              : std::string();
  Sim.trace("%s(%zu bytes%s)%s", Api, Size, FlagsText.c_str(),
            allocationResult(Sim, Error, Ptr, Size).c_str());
  return Sim.finish(Which, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMallocHost(void **ptr, size_t size) {
  return allocatePinned(EntryPoint::cudaMallocHost, ptr, size,
                        cudaHostAllocDefault);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaHostAlloc(void **pHost, size_t size,
                                              unsigned int flags) {
  return allocatePinned(EntryPoint::cudaHostAlloc, pHost, size, flags);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaFree(void *devPtr) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaFree);
  if (Error == cudaSuccess)
    Error = Sim.checkCaptureSafe("cudaFree");
  Allocation *A = nullptr;
  // cudaFree(0) is documented as a no-op.
  if (Error == cudaSuccess && devPtr &&
      (Error = Sim.checkFree(FreeApi::Free, devPtr, A)) == cudaSuccess) {
    // cudaFree may synchronise the device before releasing the memory, but
    // not for memory from cudaMallocAsync or cudaMallocFromPoolAsync (a
    // pool's): work still queued on it then finds it freed when it
    // executes.
    DrainContext Ctx("cudaFree");
    if (!A->Pool) {
      Sim.drainDevice(A->Device, /*BlockingOnly=*/false, Ctx);
      Sim.waitUntil(Sim.deviceIdleAt(A->Device));
    }
    Sim.release(*A, "cudaFree", 0);
    ++Sim.Stats.Frees;
    Error = Ctx.Error;
  }
  Sim.trace("cudaFree(%s)%s", hex(devPtr).c_str(), Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaFree, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaFreeAsync(void *devPtr,
                                              cudaStream_t hStream) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaFreeAsync);
  Stream *S = Error == cudaSuccess
                  ? Sim.lookupStream("cudaFreeAsync", hStream, Error)
                  : nullptr;
  // Unlike cudaFree's, cudaFreeAsync's documentation makes no exception for
  // a null pointer.
  if (S && !devPtr)
    Error = Sim.fail("cudaFreeAsync", cudaErrorInvalidValue,
                     "invalid pointer: devPtr is null; the simulator rejects "
                     "it (cudaFree documents a null pointer as a no-op, "
                     "cudaFreeAsync does not)");
  Allocation *A = nullptr;
  if (S && devPtr &&
      (Error = Sim.checkFree(FreeApi::FreeAsync, devPtr, A)) == cudaSuccess &&
      S->Capture && !A->GraphAllocation) {
    // A captured free is a free node, which takes a graph allocation only.
    S->CaptureInvalidated = true;
    Error = Sim.fail("cudaFreeAsync", cudaErrorInvalidValue,
                     "invalid pointer: %s is not a graph allocation (it is "
                     "from %s, not from cudaMallocAsync or "
                     "cudaMallocFromPoolAsync in a capture), and %s is "
                     "capturing a graph, where cudaFreeAsync makes a free "
                     "node; the capture is invalidated",
                     hex(devPtr).c_str(), A->Allocator,
                     Sim.streamName(*S).c_str());
  }
  if (S && devPtr && Error == cudaSuccess) {
    // The pointer is validated now; the memory is released when the free
    // executes in stream order (in a capture: when a launch runs the free
    // node; the graph's own allocations stay the graph's).
    if (!S->Capture) {
      Sim.notePoolFreeQueued(*A);
      A->FreePending = true;
      A->FreeStream = S->Id;
    } else {
      auto &Owned = S->Capture->Allocations;
      if (std::find(Owned.begin(), Owned.end(), A) != Owned.end())
        --S->Capture->UnfreedAllocations;
    }
    Op O;
    O.Kind = OpKind::Free;
    O.Api = "cudaFreeAsync";
    O.Dst = reinterpret_cast<uintptr_t>(devPtr);
    O.DstAlloc = A;
    Sim.enqueue(*S, O);
    if (!S->Capture)
      ++Sim.Stats.Frees;
  }
  Sim.trace("cudaFreeAsync(%s, stream=%s)%s", hex(devPtr).c_str(),
            Sim.streamLabel(hStream).c_str(), Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaFreeAsync, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaFreeHost(void *ptr) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaFreeHost);
  if (Error == cudaSuccess)
    Error = Sim.checkCaptureSafe("cudaFreeHost");
  // The documentation makes no exception for a null pointer.
  if (Error == cudaSuccess && !ptr)
    Error = Sim.fail("cudaFreeHost", cudaErrorInvalidValue,
                     "invalid pointer: ptr is null; the simulator rejects it "
                     "(cudaFree documents a null pointer as a no-op, "
                     "cudaFreeHost does not)");
  Allocation *A = nullptr;
  if (Error == cudaSuccess && ptr &&
      (Error = Sim.checkFree(FreeApi::FreeHost, ptr, A)) == cudaSuccess) {
    // Pinned memory may be used by queued work of any device.
    DrainContext Ctx("cudaFreeHost");
    Sim.drainAllDevices(Ctx);
    Sim.waitUntil(Sim.allDevicesIdleAt());
    Sim.release(*A, "cudaFreeHost", 0);
    ++Sim.Stats.Frees;
    Error = Ctx.Error;
  }
  Sim.trace("cudaFreeHost(%s)%s", hex(ptr).c_str(), Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaFreeHost, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaHostRegister(void *ptr, size_t size,
                                                 unsigned int flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaHostRegister);
  if (Error == cudaSuccess)
    Error = Sim.checkCaptureSafe("cudaHostRegister");
  if (Error == cudaSuccess)
    Error = Sim.registerHostMemory(ptr, size, flags);
  if (Error == cudaSuccess)
    Sim.spendPinning(size);
  Sim.trace("cudaHostRegister(%s, %zu bytes, flags=%u)%s", hex(ptr).c_str(),
            size, flags, Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaHostRegister, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaHostUnregister(void *ptr) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaHostUnregister);
  if (Error == cudaSuccess)
    Error = Sim.unregisterHostMemory(ptr);
  Sim.trace("cudaHostUnregister(%s)%s", hex(ptr).c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaHostUnregister, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaHostGetDevicePointer(void **pDevice,
                                                         void *pHost,
                                                         unsigned int flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaHostGetDevicePointer);
  if (Error == cudaSuccess)
    Error = Sim.getDevicePointer(pDevice, pHost, flags);
  std::string Mapped = Error == cudaSuccess ? hex(*pDevice) : std::string();
  Sim.trace("cudaHostGetDevicePointer(%s, flags=%u)%s", hex(pHost).c_str(),
            flags, Sim.result(Error, Mapped).c_str());
  return Sim.finish(EntryPoint::cudaHostGetDevicePointer, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t
cudaPointerGetAttributes(cudaPointerAttributes *attributes, const void *ptr) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaPointerGetAttributes);
  if (Error == cudaSuccess)
    Error = Sim.getAttributes(attributes, ptr);
  std::string Out;
  if (Error == cudaSuccess) {
    static const char *const TypeNames[] = {"unregistered", "host", "device",
                                            "managed"};
    Out = format("type=%s, device=%d", TypeNames[attributes->type & 3],
                 attributes->device);
  }
  Sim.trace("cudaPointerGetAttributes(%s)%s", hex(ptr).c_str(),
            Sim.result(Error, Out).c_str());
  return Sim.finish(EntryPoint::cudaPointerGetAttributes, Error);
}
