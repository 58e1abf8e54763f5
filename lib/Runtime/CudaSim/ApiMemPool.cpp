//===- ApiMemPool.cpp - CUDA memory pool entry points -----------*- C++ -*-===//
//
// The exported functions of the stream-ordered allocator's memory pools:
// cudaDeviceGetDefaultMemPool, cudaDeviceGetMemPool, cudaDeviceSetMemPool,
// cudaMemPoolCreate, cudaMemPoolDestroy, cudaMemPoolSetAttribute,
// cudaMemPoolGetAttribute, cudaMemPoolTrimTo and cudaMallocFromPoolAsync
// (cudaMallocAsync, which allocates from the current pool of its stream's
// device, is in ApiMemory.cpp). The pools and their checks are in
// MemPools.cpp.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include <cinttypes>
#include <cstring>

using namespace etcopy::cudasim;

//===----------------------------------------------------------------------===//
// Pools of a device
//===----------------------------------------------------------------------===//

/// Shared implementation of cudaDeviceGetDefaultMemPool and
/// cudaDeviceGetMemPool.
static cudaError_t getDevicePool(EntryPoint Which, cudaMemPool_t *MemPool,
                                 int Device) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = entryPointInfo(Which).Name;
  cudaError_t Error = Sim.enterOnDevice(Which);
  if (Error == cudaSuccess && !MemPool)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid argument: memPool is null");
  if (Error == cudaSuccess)
    Error = Sim.checkDeviceOrdinal(Api, "device", Device);
  std::string Name;
  if (Error == cudaSuccess) {
    etcopy::cudasim::MemPool &P = Which == EntryPoint::cudaDeviceGetMemPool
                                      ? Sim.currentPool(Device)
                                      : Sim.defaultPool(Device);
    *MemPool = reinterpret_cast<cudaMemPool_t>(&P);
    Name = Sim.poolName(P);
  }
  Sim.trace("%s(cuda:%d)%s", Api, Device, Sim.result(Error, Name).c_str());
  return Sim.finish(Which, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t
cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device) {
  return getDevicePool(EntryPoint::cudaDeviceGetDefaultMemPool, memPool,
                       device);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool,
                                                     int device) {
  return getDevicePool(EntryPoint::cudaDeviceGetMemPool, memPool, device);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDeviceSetMemPool(int device,
                                                     cudaMemPool_t memPool) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaDeviceSetMemPool";
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaDeviceSetMemPool);
  if (Error == cudaSuccess)
    Error = Sim.checkDeviceOrdinal(Api, "device", device);
  MemPool *P =
      Error == cudaSuccess ? Sim.lookupPool(Api, memPool, Error) : nullptr;
  if (P)
    Error = Sim.setDevicePool(device, *P);
  Sim.trace("%s(cuda:%d, %s)%s", Api, device, Sim.poolLabel(memPool).c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaDeviceSetMemPool, Error);
}

//===----------------------------------------------------------------------===//
// Creating and destroying pools
//===----------------------------------------------------------------------===//

ETCOPY_CUDA_SIM_API cudaError_t
cudaMemPoolCreate(cudaMemPool_t *memPool, const cudaMemPoolProps *poolProps) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaMemPoolCreate);
  if (Error == cudaSuccess)
    Error = Sim.createPool(memPool, poolProps);
  std::string Where = poolProps
                          ? format("cuda:%d, maxSize=%zu",
                                   poolProps->location.id, poolProps->maxSize)
                          : std::string("null");
  Sim.trace("cudaMemPoolCreate(%s)%s", Where.c_str(),
            Sim.result(Error, Error == cudaSuccess ? Sim.poolLabel(*memPool)
                                                   : std::string())
                .c_str());
  return Sim.finish(EntryPoint::cudaMemPoolCreate, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  std::string Label = Sim.poolLabel(memPool);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaMemPoolDestroy);
  MemPool *P = Error == cudaSuccess
                   ? Sim.lookupPool("cudaMemPoolDestroy", memPool, Error)
                   : nullptr;
  if (P)
    Error = Sim.destroyPool(*P);
  Sim.trace("cudaMemPoolDestroy(%s)%s", Label.c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaMemPoolDestroy, Error);
}

//===----------------------------------------------------------------------===//
// Attributes and trimming
//===----------------------------------------------------------------------===//

/// The value of a pool attribute as the trace shows it: the Reuse* flags
/// are ints, the others cuuint64_t (CUDA 13, cudaMemPoolAttr).
static std::string attributeValue(int Attr, const void *Value) {
  if (Attr >= cudaMemPoolReuseFollowEventDependencies &&
      Attr <= cudaMemPoolReuseAllowInternalDependencies) {
    int Enabled;
    std::memcpy(&Enabled, Value, sizeof(Enabled));
    return format("%d", Enabled);
  }
  uint64_t Bytes;
  std::memcpy(&Bytes, Value, sizeof(Bytes));
  return format("%" PRIu64, Bytes);
}

/// Shared implementation of cudaMemPoolSetAttribute and
/// cudaMemPoolGetAttribute: looks `memPool` up, applies `Access` (the
/// simulator's set or get) to it and traces the attribute's value.
template <typename AccessFn>
static cudaError_t accessPoolAttribute(EntryPoint Which, const char *Api,
                                       cudaMemPool_t memPool, int Attr,
                                       void *Value, AccessFn Access) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(Which);
  MemPool *P =
      Error == cudaSuccess ? Sim.lookupPool(Api, memPool, Error) : nullptr;
  if (P)
    Error = Access(Sim, *P);
  Sim.trace("%s(%s, attr=%d)%s", Api, Sim.poolLabel(memPool).c_str(), Attr,
            Sim.result(Error, Error == cudaSuccess
                                  ? attributeValue(Attr, Value)
                                  : std::string())
                .c_str());
  return Sim.finish(Which, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemPoolSetAttribute(
    cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value) {
  return accessPoolAttribute(
      EntryPoint::cudaMemPoolSetAttribute, "cudaMemPoolSetAttribute", memPool,
      int(attr), value, [&](Simulator &Sim, MemPool &P) {
        return Sim.setPoolAttribute(P, int(attr), value);
      });
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemPoolGetAttribute(
    cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value) {
  return accessPoolAttribute(
      EntryPoint::cudaMemPoolGetAttribute, "cudaMemPoolGetAttribute", memPool,
      int(attr), value, [&](Simulator &Sim, MemPool &P) {
        return Sim.getPoolAttribute(P, int(attr), value);
      });
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool,
                                                  size_t minBytesToKeep) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaMemPoolTrimTo);
  MemPool *P = Error == cudaSuccess
                   ? Sim.lookupPool("cudaMemPoolTrimTo", memPool, Error)
                   : nullptr;
  if (P)
    Sim.trimPool(*P, minBytesToKeep);
  Sim.trace(
      "cudaMemPoolTrimTo(%s, %zu bytes)%s", Sim.poolLabel(memPool).c_str(),
      minBytesToKeep,
      Sim.result(Error, P ? format("%" PRIu64 " bytes reserved", P->Reserved)
                          : std::string())
          .c_str());
  return Sim.finish(EntryPoint::cudaMemPoolTrimTo, Error);
}

//===----------------------------------------------------------------------===//
// Allocating from a pool
//===----------------------------------------------------------------------===//

ETCOPY_CUDA_SIM_API cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size,
                                                        cudaMemPool_t memPool,
                                                        cudaStream_t stream) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaMallocFromPoolAsync";
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaMallocFromPoolAsync);
  // The pool may belong to another device than the stream: the memory is
  // the pool's device's.
  Stream *S =
      Error == cudaSuccess ? Sim.lookupStream(Api, stream, Error) : nullptr;
  MemPool *P = S ? Sim.lookupPool(Api, memPool, Error) : nullptr;
  if (P)
    Error = Sim.allocateFromPool(Api, ptr, size, *P);
  if (P && S->Capture && Error == cudaSuccess && size != 0)
    Sim.recordAllocationNode(*S, *ptr);
  Sim.trace(
      "%s(%zu bytes, pool=%s, stream=%s)%s", Api, size,
      Sim.poolLabel(memPool).c_str(), Sim.streamLabel(stream).c_str(),
      Sim.result(Error, Error == cudaSuccess && ptr ? hex(*ptr) : "").c_str());
  return Sim.finish(EntryPoint::cudaMallocFromPoolAsync, Error);
}
