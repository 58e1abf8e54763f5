//===- Streams.cpp - Devices, streams, events and queued work ---*- C++ -*-===//
//
// The simulator's instance and its devices, streams and events: handles and
// their lookup, the per-thread current device and last error, peer access
// between devices, the queues of asynchronous work with the legacy default
// stream's implicit waits, and the execution of queued work, which only
// happens at synchronisation points (so a missing wait shows up as stale
// data) and reports use after free. Also cudaDeviceReset.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include <cinttypes>
#include <cstring>
#include <pthread.h>
#include <unistd.h>

namespace etcopy::cudasim {

//===----------------------------------------------------------------------===//
// The simulator state
//===----------------------------------------------------------------------===//

std::atomic<Simulator *> Simulator::Instance{nullptr};

} // namespace etcopy::cudasim

// The handle of this library, so that its exit handler also runs when a
// dlopen'ed simulator is dlclose'd, and the registration function behind
// atexit.
extern "C" void *__dso_handle __attribute__((visibility("hidden")));
extern "C" int __cxa_atexit(void (*Function)(void *), void *Argument,
                            void *Dso);

namespace etcopy::cudasim {

Simulator &Simulator::get() {
  // Created by the first call of any thread and never destroyed, so that
  // calls made after the exit handler (from static destructors, other
  // libraries' exit handlers) find an unloading runtime rather than a
  // destroyed one. Through pthread_once rather than a function-local static:
  // ThreadSanitizer intercepts pthread_once, but does not see the inline
  // guard check of a local static when this library is not instrumented, and
  // a program built with -fsanitize=thread reported the first thread's
  // creation as racing with another's first lock of Mutex.
  static pthread_once_t Once = PTHREAD_ONCE_INIT;
  pthread_once(&Once, [] {
    Instance.store(new Simulator(), std::memory_order_release);
    // As libcudart does when it initialises. Exit handlers and the
    // destructors of C++ statics run in the reverse order of their
    // registration, and destructor functions after all of them: what a
    // program registers once the runtime is initialised is released while
    // the runtime is alive; earlier statics and destructor functions come
    // too late.
    __cxa_atexit(&Simulator::runExitHandler, nullptr, &__dso_handle);
  });
  return *Instance.load(std::memory_order_acquire);
}

Simulator::Simulator() : Cfg(Config::fromEnvironment()) {
  long Page = sysconf(_SC_PAGESIZE);
  if (Page > 0)
    PageSize = size_t(Page);
  Devices.resize(size_t(Cfg.NumDevices));
  PeerEnabled.assign(size_t(Cfg.NumDevices) * size_t(Cfg.NumDevices), false);
  for (int Device = 0; Device < Cfg.NumDevices; ++Device) {
    auto Default = std::make_unique<Stream>();
    Default->Device = Device;
    Devices[size_t(Device)].DefaultStream = std::move(Default);
  }
}

cudaError_t Simulator::requireDevice(const char *Api) {
  if (Cfg.NumDevices == 0)
    return fail(Api, cudaErrorNoDevice,
                "no simulated device (ETCOPY_CUDA_SIM_DEVICES=0)");
  return cudaSuccess;
}

std::string Simulator::streamName(const Stream &S) const {
  if (S.PerThread)
    return format("S%u/per-thread", S.Id);
  if (!S.isDefault())
    return format("S%u", S.Id);
  return S.Device == 0 ? std::string("S0") : format("S0@cuda:%d", S.Device);
}

std::string Simulator::streamLabel(cudaStream_t Handle) const {
  if (Handle == cudaStreamPerThread && Cfg.NumDevices != 0) {
    const auto &PerThread = Devices[size_t(CurrentDevice)].PerThreadStreams;
    auto It = PerThread.find(std::this_thread::get_id());
    return It == PerThread.end() || It->second->Destroyed
               ? std::string("cudaStreamPerThread")
               : streamName(*It->second);
  }
  if (Handle == nullptr || Handle == cudaStreamLegacy ||
      Handle == cudaStreamPerThread)
    return Cfg.NumDevices == 0
               ? std::string("S0")
               : streamName(*Devices[size_t(CurrentDevice)].DefaultStream);
  auto It = StreamHandles.find(Handle);
  return It == StreamHandles.end() ? hex(Handle) : streamName(*It->second);
}

std::string Simulator::eventLabel(cudaEvent_t Handle) const {
  auto It = EventHandles.find(Handle);
  return It == EventHandles.end() ? hex(Handle) : format("E%u", It->second->Id);
}

Stream *Simulator::lookupStream(const char *Api, cudaStream_t Handle,
                                cudaError_t &Error) {
  if (Handle == nullptr || Handle == cudaStreamLegacy ||
      Handle == cudaStreamPerThread) {
    Error = requireDevice(Api);
    if (Error != cudaSuccess)
      return nullptr;
    if (Handle == cudaStreamPerThread)
      return perThreadStream();
    return Devices[size_t(CurrentDevice)].DefaultStream.get();
  }
  auto It = StreamHandles.find(Handle);
  if (It == StreamHandles.end()) {
    Error = fail(Api, cudaErrorInvalidResourceHandle,
                 "invalid stream handle %s (not created by "
                 "cudaStreamCreate or cudaStreamCreateWithFlags)",
                 hex(Handle).c_str());
    return nullptr;
  }
  if (It->second->Destroyed) {
    Error = fail(Api, cudaErrorInvalidResourceHandle,
                 "invalid stream handle %s (%s was destroyed by "
                 "cudaStreamDestroy)",
                 hex(Handle).c_str(), streamName(*It->second).c_str());
    return nullptr;
  }
  Error = cudaSuccess;
  return It->second;
}

Event *Simulator::lookupEvent(const char *Api, cudaEvent_t Handle,
                              cudaError_t &Error) {
  auto It = EventHandles.find(Handle);
  if (It == EventHandles.end()) {
    Error = fail(Api, cudaErrorInvalidResourceHandle,
                 "invalid event handle %s (not created by cudaEventCreate or "
                 "cudaEventCreateWithFlags)",
                 hex(Handle).c_str());
    return nullptr;
  }
  if (It->second->Destroyed) {
    Error = fail(Api, cudaErrorInvalidResourceHandle,
                 "invalid event handle %s (E%u was destroyed by "
                 "cudaEventDestroy)",
                 hex(Handle).c_str(), It->second->Id);
    return nullptr;
  }
  Error = cudaSuccess;
  return It->second;
}

Stream *Simulator::createStream(unsigned Flags) {
  auto Created = std::make_unique<Stream>();
  Created->Id = uint32_t(AllStreams.size() + 1);
  Created->Device = CurrentDevice;
  Created->Flags = Flags;
  Stream *S = Created.get();
  AllStreams.push_back(std::move(Created));
  StreamHandles[S] = S;
  Devices[size_t(S->Device)].Streams.push_back(S);
  ++Stats.StreamsCreated;
  return S;
}

// CUDA's "Stream synchronization behavior" page: "The per-thread default
// stream is an implicit stream local to both the thread and the CUcontext,
// and which does not synchronize with other streams (just like explicitly
// created streams). The per-thread default stream is not a non-blocking
// stream and will synchronize with the legacy default stream if both are
// used in a program." So it is a blocking stream of its thread and device:
// it waits for the legacy default stream, which waits for it, and for no
// other stream.
Stream *Simulator::perThreadStream() {
  DeviceState &D = Devices[size_t(CurrentDevice)];
  Stream *&S = D.PerThreadStreams[std::this_thread::get_id()];
  // cudaDeviceReset destroyed the previous one.
  if (!S || S->Destroyed) {
    auto Created = std::make_unique<Stream>();
    Created->Id = uint32_t(AllStreams.size() + 1);
    Created->Device = CurrentDevice;
    Created->Flags = cudaStreamDefault;
    Created->PerThread = true;
    S = Created.get();
    AllStreams.push_back(std::move(Created));
    D.Streams.push_back(S);
  }
  return S;
}

Event *Simulator::createEvent(unsigned Flags) {
  auto Created = std::make_unique<Event>();
  Created->Id = uint32_t(AllEvents.size() + 1);
  Created->Device = CurrentDevice;
  Created->Flags = Flags;
  Event *E = Created.get();
  AllEvents.push_back(std::move(Created));
  EventHandles[E] = E;
  ++Stats.EventsCreated;
  return E;
}

void Simulator::destroyStream(Stream &S) {
  S.Destroyed = true;
  ++Stats.StreamsDestroyed;
  // Queued work is not executed here: the stream stays in its device's list
  // and runs at the next device-wide synchronisation, like an orphan queue.
  if (!S.hasPendingWork()) {
    std::vector<Stream *> &List = Devices[size_t(S.Device)].Streams;
    List.erase(std::remove(List.begin(), List.end(), &S), List.end());
  }
}

/// Models the legacy default stream: work on it waits for all work already
/// queued on the device's blocking streams, and work on a blocking stream
/// waits for all work already queued on the default stream.
void Simulator::addImplicitWaits(Stream &S) {
  DeviceState &D = Devices[size_t(S.Device)];
  auto WaitFor = [&](Stream &Other) {
    if (!Other.hasPendingWork())
      return;
    uint64_t &Covered = S.ImplicitWaits[&Other];
    if (Covered >= Other.EnqueuedSeq)
      return;
    Covered = Other.EnqueuedSeq;
    Op Wait;
    Wait.Kind = OpKind::Wait;
    Wait.Api = "implicit";
    Wait.WaitOn = &Other;
    Wait.WaitSeq = Other.EnqueuedSeq;
    Wait.Seq = ++S.EnqueuedSeq;
    S.Queue.push_back(Wait);
  };
  if (S.isDefault()) {
    for (Stream *Other : D.Streams)
      if (Other->isBlocking())
        WaitFor(*Other);
  } else if (S.isBlocking()) {
    WaitFor(*D.DefaultStream);
  }
}

void Simulator::enqueue(Stream &S, Op O) {
  // A capturing stream records the op in its graph (ApiGraph.cpp).
  if (S.Capture) {
    S.Capture->Nodes.push_back(std::move(O));
    return;
  }
  addImplicitWaits(S);
  O.Seq = ++S.EnqueuedSeq;
  S.Queue.push_back(O);
}

void Simulator::drain(Stream &S, uint64_t UpTo, DrainContext &Ctx) {
  if (S.Draining) {
    // Waits only ever name work queued before them, so a stream can only be
    // re-entered for ops it has already executed.
    if (S.ExecutedSeq < UpTo) {
      emit("error",
           "%s: internal error: cyclic wait on %s (op %" PRIu64
           " while executing op %" PRIu64 ")",
           Ctx.Api, streamName(S).c_str(), UpTo, S.ExecutedSeq + 1);
      Ctx.fail(cudaErrorIllegalState);
    }
    return;
  }
  S.Draining = true;
  while (!S.Queue.empty() && S.ExecutedSeq < UpTo) {
    Op O = S.Queue.front();
    S.Queue.pop_front();
    execute(O, &S, Ctx);
    S.ExecutedSeq = O.Seq;
  }
  S.Draining = false;
}

void Simulator::drainDevice(int Device, bool BlockingOnly, DrainContext &Ctx) {
  DeviceState &D = Devices[size_t(Device)];
  drain(*D.DefaultStream, D.DefaultStream->EnqueuedSeq, Ctx);
  // Index-based: draining never adds streams, but keep it robust anyway.
  for (size_t I = 0; I < D.Streams.size(); ++I) {
    Stream &S = *D.Streams[I];
    if (!BlockingOnly || S.isBlocking())
      drain(S, S.EnqueuedSeq, Ctx);
  }
  // Destroyed streams whose queue ran dry are gone for good.
  D.Streams.erase(std::remove_if(D.Streams.begin(), D.Streams.end(),
                                 [](const Stream *S) {
                                   return S->Destroyed && !S->hasPendingWork();
                                 }),
                  D.Streams.end());
}

void Simulator::drainAllDevices(DrainContext &Ctx) {
  for (int Device = 0; Device < Cfg.NumDevices; ++Device)
    drainDevice(Device, /*BlockingOnly=*/false, Ctx);
}

/// Spells O like the call that enqueued it; StreamText is empty for the
/// synchronous variants.
std::string Simulator::describeOp(const Op &O,
                                  const std::string &StreamText) const {
  std::string Where =
      StreamText.empty() ? std::string() : ", stream=" + StreamText;
  switch (O.Kind) {
  case OpKind::Copy:
    if (O.IsPeer)
      return format("%s(dst=%s, dstDevice=%d, src=%s, srcDevice=%d, %zu "
                    "bytes%s)",
                    O.Api, hex(O.Dst).c_str(), O.DstDevice, hex(O.Src).c_str(),
                    O.SrcDevice, O.Width, Where.c_str());
    if (O.InBatch)
      return format("%s[%zu](dst=%s, src=%s, %zu bytes%s)", O.Api, O.BatchIndex,
                    hex(O.Dst).c_str(), hex(O.Src).c_str(), O.Width,
                    Where.c_str());
    if (O.Is2D)
      return format("%s(dst=%s, dpitch=%zu, src=%s, spitch=%zu, width=%zu, "
                    "height=%zu, %s%s)",
                    O.Api, hex(O.Dst).c_str(), O.DstPitch, hex(O.Src).c_str(),
                    O.SrcPitch, O.Width, O.Height,
                    copyKindLabel(O.CopyKind).c_str(), Where.c_str());
    return format("%s(dst=%s, src=%s, %zu bytes, %s%s)", O.Api,
                  hex(O.Dst).c_str(), hex(O.Src).c_str(), O.Width,
                  copyKindLabel(O.CopyKind).c_str(), Where.c_str());
  case OpKind::Memset:
    if (O.DriverMemset)
      return format("%s(dst=%s, value=0x%x, %zu elements%s)", O.Api,
                    hex(O.Dst).c_str(), unsigned(O.Value),
                    O.Width / O.ElementSize, Where.c_str());
    return format("%s(dst=%s, value=%d, %zu bytes%s)", O.Api,
                  hex(O.Dst).c_str(), O.Value, O.Width, Where.c_str());
  case OpKind::Free:
    return format("%s(%s%s)", O.Api, hex(O.Dst).c_str(), Where.c_str());
  case OpKind::Wait:
    return format("wait for op %" PRIu64 " of %s", O.WaitSeq,
                  O.WaitOn ? streamName(*O.WaitOn).c_str() : "?");
  case OpKind::Kernel:
    return format("%s(%s%s)", O.Api, describeKernel(*O.Kernel).c_str(),
                  Where.c_str());
  }
  return "?";
}

void Simulator::execute(const Op &O, const Stream *S, DrainContext &Ctx) {
  switch (O.Kind) {
  case OpKind::Wait:
    drain(*O.WaitOn, O.WaitSeq, Ctx);
    return;
  case OpKind::Free:
    release(*O.DstAlloc, "cudaFreeAsync", S ? S->Id : 0);
    return;
  case OpKind::Kernel:
    runKernel(*O.Kernel, Ctx);
    return;
  case OpKind::Copy:
  case OpKind::Memset:
    break;
  }

  // The allocations were live when the op was enqueued; a free that ran in
  // between (from another stream, or a synchronous cudaFree of another
  // device) makes this a use after free on the device.
  for (int Role = 0; Role < 2; ++Role) {
    // A snapshot was taken while the source was known to be live.
    Allocation *A = Role == 0 ? O.DstAlloc : O.Snapshot ? nullptr : O.SrcAlloc;
    if (!A || !A->Freed.load(std::memory_order_relaxed))
      continue;
    std::string FreedBy = A->FreedBy;
    if (A->FreeStream != 0)
      FreedBy += format(" on S%u", A->FreeStream);
    emit("error",
         "%s: use after free: %s %s %s in a %zu-byte %s allocation %s on "
         "cuda:%d that was freed (by %s) before the operation executed",
         Ctx.Api, describeOp(O, S ? streamName(*S) : "").c_str(),
         Role == 0 ? "writes dst" : "reads src",
         hex(Role == 0 ? O.Dst : O.Src).c_str(), A->Size, memKindName(A->Kind),
         hex(A->Base).c_str(), A->Device, FreedBy.c_str());
    Ctx.fail(cudaErrorIllegalAddress);
    return;
  }

  auto Translate = [](uintptr_t Address, const Allocation *A) {
    return A ? A->View + (Address - A->Base)
             : reinterpret_cast<char *>(Address);
  };
  char *Dst = Translate(O.Dst, O.DstAlloc);
  if (O.Kind == OpKind::Memset) {
    if (O.ElementSize == 1) {
      memset(Dst, O.Value, O.Width);
      return;
    }
    // The pattern's low ElementSize bytes, in the host's (and the device's)
    // little-endian order.
    uint32_t Pattern = uint32_t(O.Value);
    for (size_t Offset = 0; Offset < O.Width; Offset += O.ElementSize)
      memcpy(Dst + Offset, &Pattern, O.ElementSize);
    return;
  }
  const char *Src =
      O.Snapshot ? O.Snapshot->data() : Translate(O.Src, O.SrcAlloc);
  for (size_t Row = 0; Row < O.Height; ++Row)
    memmove(Dst + Row * O.DstPitch, Src + Row * O.SrcPitch, O.Width);
  Stats.BytesCopied += uint64_t(O.Width) * O.Height;
}

/// Performs a synchronous copy or memset: it runs on the legacy default
/// stream, so queued work of the default and blocking streams of the
/// devices involved executes first. Non-blocking streams are not waited
/// for, as on a real device.
cudaError_t Simulator::runSynchronously(const char *Api, const Op &O) {
  DrainContext Ctx(Api);
  drainBlockingStreams(O, Ctx);
  execute(O, nullptr, Ctx);
  return Ctx.Error;
}

/// Executes the queued work of the default and blocking streams of the
/// devices a synchronous copy or memset involves, which it waits for.
void Simulator::drainBlockingStreams(const Op &O, DrainContext &Ctx) {
  bool Involved[kMaxDevices] = {};
  involvedDevices(O, Involved);
  for (int Device = 0; Device < Cfg.NumDevices; ++Device)
    if (Involved[Device])
      drainDevice(Device, /*BlockingOnly=*/true, Ctx);
}

/// Whether a synchronous copy or memset may return before the device has
/// done it (CUDA 13 Runtime API, "API synchronization behavior": "For
/// transfers from pageable host memory to device memory, ... The function
/// will return once the pageable buffer has been copied to the staging
/// memory for DMA transfer to device memory, but the DMA to final
/// destination may not have completed."; "For transfers from device memory
/// to device memory, no host-side synchronization is performed."; "The
/// cudaMemset functions are asynchronous with respect to the host
/// except when the target is pinned host memory or a Unified Memory
/// region."). Managed memory is left synchronous: the host may read it.
bool Simulator::returnsBeforeDone(const Op &O) {
  auto isDevice = [](const Allocation *A) {
    return A && A->Kind == MemKind::Device;
  };
  if (O.Kind == OpKind::Memset)
    return isDevice(O.DstAlloc);
  if (O.Path == CopyPath::PageableToDevice)
    return isDevice(O.DstAlloc);
  if (O.Path == CopyPath::DeviceToDevice)
    return isDevice(O.DstAlloc) && isDevice(O.SrcAlloc);
  return false;
}

/// Performs a synchronous copy or memset that returnsBeforeDone: the op
/// joins the current device's legacy default stream, behind the work of
/// the blocking streams (the legacy stream's implicit waits), and executes
/// when that stream is next drained. Work on non-blocking streams that no
/// event or synchronisation orders after it does not see its result. A
/// pageable source is staged now, after the work queued before the call
/// ("a stream sync is performed before the copy is initiated").
cudaError_t Simulator::queueOnLegacyStream(const char *Api, Op O) {
  if (O.Kind == OpKind::Copy && O.Path == CopyPath::PageableToDevice) {
    DrainContext Ctx(Api);
    drainBlockingStreams(O, Ctx);
    if (Ctx.Error != cudaSuccess)
      return Ctx.Error;
    O.Snapshot = snapshotSource(O);
  }
  enqueue(*Devices[size_t(CurrentDevice)].DefaultStream, std::move(O));
  return cudaSuccess;
}

/// The devices a synchronous copy or memset waits for: the current one and
/// those whose memory it touches.
void Simulator::involvedDevices(const Op &O,
                                bool (&Involved)[kMaxDevices]) const {
  Involved[CurrentDevice] = true;
  if (O.DstAlloc && O.DstAlloc->Kind != MemKind::PinnedHost)
    Involved[O.DstAlloc->Device] = true;
  if (O.SrcAlloc && O.SrcAlloc->Kind != MemKind::PinnedHost)
    Involved[O.SrcAlloc->Device] = true;
}

/// Implements cudaDeviceReset: queued work of the current device is
/// discarded and its streams, events, allocations and host registrations are
/// destroyed, so none of them is reported as leaked.
cudaError_t Simulator::resetCurrentDevice() {
  int Device = CurrentDevice;
  DeviceState &D = Devices[size_t(Device)];
  D.Streams.push_back(D.DefaultStream.get());
  for (Stream *S : D.Streams) {
    S->Queue.clear();
    S->ExecutedSeq = S->EnqueuedSeq;
    // Discarded work takes no more time.
    S->ClockNs = std::min(S->ClockNs, HostNs);
  }
  D.IdleAtNs = std::min(D.IdleAtNs, HostNs);
  D.Streams.clear();
  for (const auto &S : AllStreams)
    if (S->Device == Device && !S->Destroyed) {
      S->Destroyed = true;
      if (!S->PerThread)
        ++Stats.StreamsDestroyed;
    }
  for (const auto &E : AllEvents)
    if (E->Device == Device && !E->Destroyed) {
      E->Destroyed = true;
      ++Stats.EventsDestroyed;
    }
  Allocation *Table = AllocationTable.load(std::memory_order_relaxed);
  size_t Total = AllocationCount.load(std::memory_order_relaxed);
  for (size_t I = 0; I < Total; ++I)
    if (Table[I].Device == Device &&
        !Table[I].Freed.load(std::memory_order_relaxed))
      release(Table[I], "cudaDeviceReset", 0);
  resetPools(Device);
  for (auto It = Registrations.begin(); It != Registrations.end();)
    It = It->second.Device == Device ? Registrations.erase(It) : std::next(It);
  // Peer access from and to the device ends with its context.
  size_t N = size_t(Cfg.NumDevices);
  for (size_t Other = 0; Other < N; ++Other)
    PeerEnabled[size_t(Device) * N + Other] =
        PeerEnabled[Other * N + size_t(Device)] = false;
  return cudaSuccess;
}

//===----------------------------------------------------------------------===//
// Peer access
//===----------------------------------------------------------------------===//

cudaError_t Simulator::checkDeviceOrdinal(const char *Api, const char *Role,
                                          int Device) {
  if (Device < 0 || Device >= Cfg.NumDevices)
    return fail(Api, cudaErrorInvalidDevice,
                "invalid device ordinal %d for %s (%d device(s) simulated)",
                Device, Role, Cfg.NumDevices);
  return cudaSuccess;
}

cudaError_t Simulator::canAccessPeer(int *CanAccess, int Device, int Peer) {
  const char *Api = "cudaDeviceCanAccessPeer";
  if (!CanAccess)
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: canAccessPeer is null");
  if (cudaError_t Error = checkDeviceOrdinal(Api, "device", Device))
    return Error;
  if (cudaError_t Error = checkDeviceOrdinal(Api, "peerDevice", Peer))
    return Error;
  *CanAccess =
      Cfg.PeerCapable[size_t(Device) * size_t(Cfg.NumDevices) + size_t(Peer)];
  return cudaSuccess;
}

cudaError_t Simulator::enablePeerAccess(int Peer, unsigned Flags) {
  const char *Api = "cudaDeviceEnablePeerAccess";
  if (cudaError_t Error = checkDeviceOrdinal(Api, "peerDevice", Peer))
    return Error;
  if (Flags != 0)
    return fail(Api, cudaErrorInvalidValue, "invalid flags 0x%x (must be 0)",
                Flags);
  size_t Index = size_t(CurrentDevice) * size_t(Cfg.NumDevices) + size_t(Peer);
  // As the documentation says: cudaErrorInvalidDevice whenever
  // cudaDeviceCanAccessPeer answers 0, which it does for the device itself.
  if (Peer == CurrentDevice)
    return fail(Api, cudaErrorInvalidDevice,
                "cuda:%d cannot enable peer access to itself", Peer);
  if (!Cfg.PeerCapable[Index])
    return fail(Api, cudaErrorInvalidDevice,
                "cuda:%d cannot access cuda:%d (see "
                "ETCOPY_CUDA_SIM_PEER_ACCESS)",
                CurrentDevice, Peer);
  if (PeerEnabled[Index])
    return fail(Api, cudaErrorPeerAccessAlreadyEnabled,
                "peer access from cuda:%d to cuda:%d is already enabled",
                CurrentDevice, Peer);
  PeerEnabled[Index] = true;
  return cudaSuccess;
}

cudaError_t Simulator::disablePeerAccess(int Peer) {
  const char *Api = "cudaDeviceDisablePeerAccess";
  if (cudaError_t Error = checkDeviceOrdinal(Api, "peerDevice", Peer))
    return Error;
  size_t Index = size_t(CurrentDevice) * size_t(Cfg.NumDevices) + size_t(Peer);
  if (!PeerEnabled[Index])
    return fail(Api, cudaErrorPeerAccessNotEnabled,
                "peer access from cuda:%d to cuda:%d is not enabled",
                CurrentDevice, Peer);
  PeerEnabled[Index] = false;
  return cudaSuccess;
}

} // namespace etcopy::cudasim
