//===- MemPools.cpp - Memory pools of cudaMallocAsync -----------*- C++ -*-===//
//
// The memory pools behind cudaMallocAsync and cudaMallocFromPoolAsync
// (docs/CudaSimulator.md, "Memory pools"): each device's default pool and
// the pools of cudaMemPoolCreate, their handles, attributes and checks, and
// the byte counts the timing model needs. A pool maps memory in chunks when
// an allocation does not fit in what it holds (POOL_GROW); cudaFreeAsync
// gives an allocation's bytes back to it at once, for reuse in stream order;
// a stream, event or device synchronisation releases the unused chunks of
// every pool of the device that holds more than its release threshold, as
// cudaMemPoolTrimTo does on request. The memory of an allocation itself is
// an ordinary simulator allocation (Memory.cpp), never reused.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include <cinttypes>

namespace etcopy::cudasim {

namespace {

const char *poolAttributeName(int Attr) {
  switch (Attr) {
  case cudaMemPoolReuseFollowEventDependencies:
    return "cudaMemPoolReuseFollowEventDependencies";
  case cudaMemPoolReuseAllowOpportunistic:
    return "cudaMemPoolReuseAllowOpportunistic";
  case cudaMemPoolReuseAllowInternalDependencies:
    return "cudaMemPoolReuseAllowInternalDependencies";
  case cudaMemPoolAttrReleaseThreshold:
    return "cudaMemPoolAttrReleaseThreshold";
  case cudaMemPoolAttrReservedMemCurrent:
    return "cudaMemPoolAttrReservedMemCurrent";
  case cudaMemPoolAttrReservedMemHigh:
    return "cudaMemPoolAttrReservedMemHigh";
  case cudaMemPoolAttrUsedMemCurrent:
    return "cudaMemPoolAttrUsedMemCurrent";
  case cudaMemPoolAttrUsedMemHigh:
    return "cudaMemPoolAttrUsedMemHigh";
  }
  return nullptr;
}

bool *reuseFlag(MemPool &P, int Attr) {
  switch (Attr) {
  case cudaMemPoolReuseFollowEventDependencies:
    return &P.ReuseFollowEventDependencies;
  case cudaMemPoolReuseAllowOpportunistic:
    return &P.ReuseAllowOpportunistic;
  case cudaMemPoolReuseAllowInternalDependencies:
    return &P.ReuseAllowInternalDependencies;
  }
  return nullptr;
}

uint64_t roundUp(uint64_t Value, uint64_t To) {
  uint64_t Rounded = 0;
  if (__builtin_add_overflow(Value, To - 1, &Rounded))
    return UINT64_MAX / To * To;
  return Rounded / To * To;
}

} // namespace

//===----------------------------------------------------------------------===//
// Pools and handles
//===----------------------------------------------------------------------===//

MemPool &Simulator::defaultPool(int Device) {
  DeviceState &D = Devices[size_t(Device)];
  if (!D.DefaultPool) {
    auto Created = std::make_unique<MemPool>();
    Created->Device = Device;
    D.DefaultPool = Created.get();
    // The handle of a default pool is its address too, but it is looked
    // up by scanning the devices (it never appears in PoolHandles, which
    // only holds what cudaMemPoolCreate made).
    AllPools.push_back(std::move(Created));
  }
  return *D.DefaultPool;
}

MemPool &Simulator::currentPool(int Device) {
  DeviceState &D = Devices[size_t(Device)];
  return D.CurrentPool ? *D.CurrentPool : defaultPool(Device);
}

std::string Simulator::poolName(const MemPool &P) const {
  if (!P.isDefault())
    return format("P%u", P.Id);
  return P.Device == 0 ? std::string("P0") : format("P0@cuda:%d", P.Device);
}

std::string Simulator::poolLabel(cudaMemPool_t Handle) const {
  for (const DeviceState &D : Devices)
    if (D.DefaultPool &&
        Handle == reinterpret_cast<cudaMemPool_t>(D.DefaultPool))
      return poolName(*D.DefaultPool);
  auto It = PoolHandles.find(Handle);
  return It == PoolHandles.end() ? hex(Handle) : poolName(*It->second);
}

MemPool *Simulator::lookupPool(const char *Api, cudaMemPool_t Handle,
                               cudaError_t &Error) {
  Error = cudaSuccess;
  for (const DeviceState &D : Devices)
    if (D.DefaultPool &&
        Handle == reinterpret_cast<cudaMemPool_t>(D.DefaultPool))
      return D.DefaultPool;
  auto It = PoolHandles.find(Handle);
  if (It == PoolHandles.end()) {
    // A default pool that was never asked for has no handle yet, so a
    // handle no call returned is invalid either way.
    Error = fail(Api, cudaErrorInvalidValue,
                 "invalid memory pool %s (not returned by "
                 "cudaDeviceGetDefaultMemPool, cudaDeviceGetMemPool or "
                 "cudaMemPoolCreate)",
                 hex(Handle).c_str());
    return nullptr;
  }
  if (It->second->Destroyed) {
    Error = fail(Api, cudaErrorInvalidValue,
                 "invalid memory pool %s (%s was destroyed by "
                 "cudaMemPoolDestroy)",
                 hex(Handle).c_str(), poolName(*It->second).c_str());
    return nullptr;
  }
  return It->second;
}

/// Implements cudaMemPoolCreate for the pools the simulator can model:
/// pinned device memory of one simulated device, without export handles.
/// Fields the documentation requires to be zero must be zero; kinds of pool
/// CUDA 13 documents but the simulator does not model (host and managed
/// pools, shareable handles, hardware decompression) fail with
/// cudaErrorNotSupported rather than being accepted as device pools.
cudaError_t Simulator::createPool(cudaMemPool_t *Out,
                                  const cudaMemPoolProps *Props) {
  const char *Api = "cudaMemPoolCreate";
  if (!Out || !Props)
    return fail(Api, cudaErrorInvalidValue, "invalid argument: %s is null",
                !Out ? "memPool" : "poolProps");
  int Type = int(Props->allocType);
  if (Type != cudaMemAllocationTypePinned &&
      Type != cudaMemAllocationTypeManaged)
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: poolProps->allocType is %d (expected "
                "cudaMemAllocationTypePinned)",
                Type);
  if (Type == cudaMemAllocationTypeManaged)
    return fail(Api, cudaErrorNotSupported,
                "managed memory pools are not simulated");
  int Location = int(Props->location.type);
  if (Location == cudaMemLocationTypeHostNumaCurrent ||
      Location < cudaMemLocationTypeInvalid ||
      Location > cudaMemLocationTypeHostNumaCurrent)
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: poolProps->location.type is %d (expected "
                "cudaMemLocationTypeDevice, Host or HostNuma)",
                Location);
  if (Location != cudaMemLocationTypeDevice)
    return fail(Api, cudaErrorNotSupported,
                "host memory pools (poolProps->location.type %d) are not "
                "simulated; only device pools are",
                Location);
  int Device = Props->location.id;
  if (Device < 0 || Device >= Cfg.NumDevices)
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: poolProps->location.id is %d (%d "
                "device(s) simulated)",
                Device, Cfg.NumDevices);
  unsigned Handles = unsigned(Props->handleTypes);
  if (Handles &
      ~unsigned(cudaMemHandleTypePosixFileDescriptor | cudaMemHandleTypeWin32 |
                cudaMemHandleTypeWin32Kmt | cudaMemHandleTypeFabric))
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: poolProps->handleTypes is 0x%x", Handles);
  if (Handles != cudaMemHandleTypeNone)
    return fail(Api, cudaErrorNotSupported,
                "poolProps->handleTypes 0x%x: pools that export shareable "
                "handles are not simulated (use cudaMemHandleTypeNone)",
                Handles);
  if (Props->win32SecurityAttributes)
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: poolProps->win32SecurityAttributes must be "
                "null without cudaMemHandleTypeWin32");
  for (size_t I = 0; I < sizeof(Props->reserved); ++I)
    if (Props->reserved[I] != 0)
      return fail(Api, cudaErrorInvalidValue,
                  "invalid argument: poolProps->reserved[%zu] is %u; the "
                  "reserved bytes must be 0",
                  I, unsigned(Props->reserved[I]));
  if (Props->usage == cudaMemPoolCreateUsageHwDecompress)
    return fail(Api, cudaErrorNotSupported,
                "poolProps->usage cudaMemPoolCreateUsageHwDecompress: the "
                "simulated device has no decompression engine");
  if (Props->usage != 0)
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: poolProps->usage is 0x%x",
                unsigned(Props->usage));
  auto Created = std::make_unique<MemPool>();
  Created->Id = ++CreatedPools;
  Created->Device = Device;
  Created->MaxSize = Props->maxSize;
  MemPool *P = Created.get();
  AllPools.push_back(std::move(Created));
  PoolHandles[P] = P;
  *Out = reinterpret_cast<cudaMemPool_t>(P);
  return cudaSuccess;
}

/// Implements cudaMemPoolDestroy: the handle becomes invalid at once; the
/// allocations still made from the pool stay valid until they are freed
/// (the record stays for them). A device whose current pool it was goes
/// back to its default pool.
cudaError_t Simulator::destroyPool(MemPool &P) {
  if (P.isDefault())
    return fail("cudaMemPoolDestroy", cudaErrorInvalidValue,
                "%s is the default memory pool of cuda:%d, which cannot be "
                "destroyed",
                poolName(P).c_str(), P.Device);
  P.Destroyed = true;
  for (DeviceState &D : Devices)
    if (D.CurrentPool == &P)
      D.CurrentPool = nullptr;
  return cudaSuccess;
}

cudaError_t Simulator::setDevicePool(int Device, MemPool &P) {
  if (P.Device != Device)
    return fail("cudaDeviceSetMemPool", cudaErrorInvalidValue,
                "invalid argument: %s holds memory of cuda:%d, not of "
                "cuda:%d; a device's current pool must be local to it",
                poolName(P).c_str(), P.Device, Device);
  Devices[size_t(Device)].CurrentPool = P.isDefault() ? nullptr : &P;
  return cudaSuccess;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

/// Implements cudaMemPoolSetAttribute. The reuse policies take an int, 0 or
/// 1 (the simulator rejects other values, which the documentation does not
/// give a meaning); the release threshold any cuuint64_t; the high
/// watermarks can only be reset, to 0; the current amounts are read-only.
cudaError_t Simulator::setPoolAttribute(MemPool &P, int Attr,
                                        const void *Value) {
  const char *Api = "cudaMemPoolSetAttribute";
  const char *Name = poolAttributeName(Attr);
  if (!Name)
    return fail(Api, cudaErrorInvalidValue,
                "invalid attribute %d (not a cudaMemPoolAttr)", Attr);
  if (!Value)
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: value is null (setting %s)", Name);
  if (bool *Flag = reuseFlag(P, Attr)) {
    int Enabled = 0;
    memcpy(&Enabled, Value, sizeof(Enabled));
    if (Enabled != 0 && Enabled != 1)
      return fail(Api, cudaErrorInvalidValue,
                  "invalid value %d for %s (expected an int, 0 or 1)", Enabled,
                  Name);
    *Flag = Enabled != 0;
    return cudaSuccess;
  }
  uint64_t Bytes = 0;
  switch (Attr) {
  case cudaMemPoolAttrReleaseThreshold:
    memcpy(&P.ReleaseThreshold, Value, sizeof(P.ReleaseThreshold));
    return cudaSuccess;
  case cudaMemPoolAttrReservedMemHigh:
  case cudaMemPoolAttrUsedMemHigh:
    memcpy(&Bytes, Value, sizeof(Bytes));
    if (Bytes != 0)
      return fail(Api, cudaErrorInvalidValue,
                  "invalid value %" PRIu64 " for %s: a high watermark can "
                  "only be reset to 0",
                  Bytes, Name);
    // Reset to the current amount, which is the high watermark from now.
    if (Attr == cudaMemPoolAttrReservedMemHigh)
      P.ReservedHigh = P.Reserved;
    else
      P.UsedHigh = P.Used;
    return cudaSuccess;
  default:
    return fail(Api, cudaErrorInvalidValue, "%s is read-only", Name);
  }
}

cudaError_t Simulator::getPoolAttribute(const MemPool &P, int Attr,
                                        void *Value) {
  const char *Api = "cudaMemPoolGetAttribute";
  const char *Name = poolAttributeName(Attr);
  if (!Name)
    return fail(Api, cudaErrorInvalidValue,
                "invalid attribute %d (not a cudaMemPoolAttr)", Attr);
  if (!Value)
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: value is null (reading %s)", Name);
  int Enabled = -1;
  uint64_t Bytes = 0;
  switch (Attr) {
  case cudaMemPoolReuseFollowEventDependencies:
    Enabled = P.ReuseFollowEventDependencies;
    break;
  case cudaMemPoolReuseAllowOpportunistic:
    Enabled = P.ReuseAllowOpportunistic;
    break;
  case cudaMemPoolReuseAllowInternalDependencies:
    Enabled = P.ReuseAllowInternalDependencies;
    break;
  case cudaMemPoolAttrReleaseThreshold:
    Bytes = P.ReleaseThreshold;
    break;
  case cudaMemPoolAttrReservedMemCurrent:
    Bytes = P.Reserved;
    break;
  case cudaMemPoolAttrReservedMemHigh:
    Bytes = P.ReservedHigh;
    break;
  case cudaMemPoolAttrUsedMemCurrent:
    Bytes = P.Used;
    break;
  case cudaMemPoolAttrUsedMemHigh:
    Bytes = P.UsedHigh;
    break;
  }
  if (Enabled >= 0)
    memcpy(Value, &Enabled, sizeof(Enabled));
  else
    memcpy(Value, &Bytes, sizeof(Bytes));
  return cudaSuccess;
}

//===----------------------------------------------------------------------===//
// Allocation, free and release
//===----------------------------------------------------------------------===//

/// Allocates Size bytes of P's device from P. An allocation that does not
/// fit in the pool's unused bytes makes it map the missing bytes, rounded
/// up to whole chunks (capped by the pool's maxSize), which costs the host
/// POOL_GROW once whatever the size.
cudaError_t Simulator::allocateFromPool(const char *Api, void **Out,
                                        size_t Size, MemPool &P) {
  uint64_t Unused = P.Reserved - P.Used;
  uint64_t Grow = 0;
  if (Out && Size > Unused) {
    uint64_t Missing = Size - Unused;
    Grow = roundUp(Missing, Cfg.PoolChunkBytes);
    if (P.MaxSize != 0) {
      if (P.Reserved > P.MaxSize || Missing > P.MaxSize - P.Reserved)
        return fail(Api, cudaErrorMemoryAllocation,
                    "out of memory: %zu bytes requested from %s, which holds "
                    "%" PRIu64 " bytes (%" PRIu64 " in use) of its maxSize "
                    "of %" PRIu64,
                    Size, poolName(P).c_str(), P.Reserved, P.Used, P.MaxSize);
      Grow = std::min(Grow, P.MaxSize - P.Reserved);
    }
  }
  cudaError_t Error = allocate(Api, Out, Size, MemKind::Device, P.Device);
  // An allocation of 0 bytes succeeds without writing *Out (Memory.cpp).
  if (Error != cudaSuccess || Size == 0)
    return Error;
  Allocation *A = findAllocation(reinterpret_cast<uintptr_t>(*Out));
  A->Pool = &P;
  P.Used += Size;
  P.UsedHigh = std::max(P.UsedHigh, P.Used);
  if (Grow != 0) {
    P.Reserved += Grow;
    P.ReservedHigh = std::max(P.ReservedHigh, P.Reserved);
    spend(Latency::PoolGrow);
    ++Stats.PoolGrowths;
  }
  return cudaSuccess;
}

/// A cudaFreeAsync of A was queued: its bytes go back to the pool at once,
/// for allocations later in stream order (and, under the default reuse
/// policies, on other streams, after a dependency the allocator may insert).
void Simulator::notePoolFreeQueued(Allocation &A) {
  if (A.Pool)
    A.Pool->Used -= A.Size;
}

/// A is released (Memory.cpp): a pool allocation that no cudaFreeAsync gave
/// back (cudaFree, cudaDeviceReset) gives its bytes back now.
void Simulator::notePoolRelease(Allocation &A) {
  if (A.Pool && !A.FreePending)
    A.Pool->Used -= A.Size;
}

/// Releases P's unused chunks while it holds more than Keep bytes. The
/// model counts bytes, not addresses: any chunk's worth of bytes not in use
/// can be released, and a pool with nothing in use can release everything.
void Simulator::trimPool(MemPool &P, uint64_t Keep) {
  if (P.Reserved <= Keep)
    return;
  uint64_t Chunk = Cfg.PoolChunkBytes;
  uint64_t Release =
      std::min((P.Reserved - P.Used) / Chunk, (P.Reserved - Keep) / Chunk) *
      Chunk;
  if (P.Used == 0 && Keep == 0)
    Release = P.Reserved;
  P.Reserved -= Release;
}

/// After a stream, event or device synchronisation of Device: every pool
/// of the device that holds more than its release threshold gives its
/// unused memory back to the OS.
void Simulator::trimPoolsAtSync(int Device) {
  for (const auto &P : AllPools)
    if (P->Device == Device)
      trimPool(*P, P->ReleaseThreshold);
}

/// cudaDeviceReset: the device's pools are destroyed (their allocations
/// were released) and its default pool starts afresh.
void Simulator::resetPools(int Device) {
  DeviceState &D = Devices[size_t(Device)];
  for (const auto &P : AllPools)
    if (P->Device == Device && !P->isDefault())
      P->Destroyed = true;
  D.CurrentPool = nullptr;
  if (D.DefaultPool) {
    MemPool *Default = D.DefaultPool;
    *Default = MemPool();
    Default->Device = Device;
  }
}

} // namespace etcopy::cudasim
