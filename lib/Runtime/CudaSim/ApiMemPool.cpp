//===- ApiMemPool.cpp - CUDA memory pool entry points -----------*- C++ -*-===//
//
// A minimal stand-in for the stream-ordered allocator's pool API, enough for
// the CUDA lowering's pool policy (CUDALowering.md, "Memory pools"): each
// device's default pool, which is also its current pool, its release
// threshold (cudaMemPoolSetAttribute, cudaMemPoolGetAttribute) and
// cudaMemPoolTrimTo. The thresholds are recorded and traced but cost
// nothing: the timing model does not see pools here.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include <cinttypes>
#include <cstring>

using namespace etcopy::cudasim;

namespace {
/// A device's default pool: what the simulator records of it.
struct DefaultPool {
  uint64_t ReleaseThreshold = 0;
};
} // namespace

/// The default pool of each device; a handle is the address of its entry.
static DefaultPool DefaultPools[kMaxDevices];

/// "P0", or "P0@cuda:1" for another device's default pool.
static std::string poolName(int Device) {
  return Device == 0 ? std::string("P0") : format("P0@cuda:%d", Device);
}

/// The device whose default pool `Handle` is, or -1.
static int poolDevice(const Simulator &Sim, cudaMemPool_t Handle) {
  for (int Device = 0; Device < Sim.Cfg.NumDevices; ++Device)
    if (Handle == reinterpret_cast<cudaMemPool_t>(&DefaultPools[Device]))
      return Device;
  return -1;
}

static std::string poolLabel(const Simulator &Sim, cudaMemPool_t Handle) {
  int Device = poolDevice(Sim, Handle);
  return Device < 0 ? hex(Handle) : poolName(Device);
}

/// The device of the pool `Handle`, or -1 after reporting an invalid one.
static int lookupPool(Simulator &Sim, const char *Api, cudaMemPool_t Handle,
                      cudaError_t &Error) {
  int Device = poolDevice(Sim, Handle);
  if (Device < 0)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid argument: %s is not a memory pool",
                     hex(Handle).c_str());
  return Device;
}

/// cudaDeviceGetDefaultMemPool and cudaDeviceGetMemPool: without
/// cudaDeviceSetMemPool, a device's current pool is its default pool.
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
  if (Error == cudaSuccess)
    *MemPool = reinterpret_cast<cudaMemPool_t>(&DefaultPools[Device]);
  Sim.trace(
      "%s(cuda:%d)%s", Api, Device,
      Sim.result(Error, Error == cudaSuccess ? poolName(Device) : "").c_str());
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

/// Only the release threshold (a cuuint64_t) is modelled; the other
/// attributes fail with cudaErrorNotSupported rather than being ignored.
static cudaError_t accessAttribute(EntryPoint Which, cudaMemPool_t MemPool,
                                   enum cudaMemPoolAttr Attr, void *Value,
                                   bool Set) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = entryPointInfo(Which).Name;
  cudaError_t Error = Sim.enterRuntime(Which);
  int Device = Error == cudaSuccess ? lookupPool(Sim, Api, MemPool, Error) : -1;
  if (Device >= 0 && !Value)
    Error =
        Sim.fail(Api, cudaErrorInvalidValue, "invalid argument: value is null");
  else if (Device >= 0 && Attr != cudaMemPoolAttrReleaseThreshold)
    Error = Sim.fail(Api, cudaErrorNotSupported,
                     "attribute %d is not modelled (only "
                     "cudaMemPoolAttrReleaseThreshold is)",
                     int(Attr));
  uint64_t *Threshold =
      Device >= 0 ? &DefaultPools[Device].ReleaseThreshold : nullptr;
  if (Error == cudaSuccess && Set)
    std::memcpy(Threshold, Value, sizeof(*Threshold));
  else if (Error == cudaSuccess)
    std::memcpy(Value, Threshold, sizeof(*Threshold));
  Sim.trace(
      "%s(%s, attr=%d)%s", Api, poolLabel(Sim, MemPool).c_str(), int(Attr),
      Sim.result(Error, Error == cudaSuccess ? format("%" PRIu64, *Threshold)
                                             : std::string())
          .c_str());
  return Sim.finish(Which, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemPoolSetAttribute(
    cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value) {
  return accessAttribute(EntryPoint::cudaMemPoolSetAttribute, memPool, attr,
                         value, /*Set=*/true);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemPoolGetAttribute(
    cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value) {
  return accessAttribute(EntryPoint::cudaMemPoolGetAttribute, memPool, attr,
                         value, /*Set=*/false);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool,
                                                  size_t minBytesToKeep) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaMemPoolTrimTo);
  if (Error == cudaSuccess)
    lookupPool(Sim, "cudaMemPoolTrimTo", memPool, Error);
  Sim.trace("cudaMemPoolTrimTo(%s, %zu bytes)%s",
            poolLabel(Sim, memPool).c_str(), minBytesToKeep,
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaMemPoolTrimTo, Error);
}
