//===- Diagnostics.cpp - Messages, fault injection, exit checks -*- C++ -*-===//
//
// How the simulator talks to the user: the text helpers and libcudart's
// error names, the reporting of failed calls and the ETCOPY_CUDA_SIM_TRACE
// lines, the counting of every entry point call that ETCOPY_CUDA_SIM_FAIL uses
// to inject failures, the end of a call (last error and host latency), and the
// exit handler that, like libcudart's, runs at exit (or dlclose) and leaves the
// runtime unloading: the checks of queued work never synchronised, leaked
// streams, events, registrations and allocations, and the ETCOPY_CUDA_SIM_STATS
// lines.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <unistd.h>

namespace etcopy::cudasim {

namespace {

/// At most this many per-object lines follow a leak summary.
constexpr size_t kMaxListedLeaks = 32;

} // namespace

//===----------------------------------------------------------------------===//
// Text helpers
//===----------------------------------------------------------------------===//

namespace {

std::string formatV(const char *Fmt, va_list Args) {
  char Small[512];
  va_list Copy;
  va_copy(Copy, Args);
  int Length = vsnprintf(Small, sizeof(Small), Fmt, Copy);
  va_end(Copy);
  if (Length < 0)
    return std::string();
  if (size_t(Length) < sizeof(Small))
    return std::string(Small, size_t(Length));
  std::string Out(size_t(Length) + 1, '\0');
  vsnprintf(&Out[0], Out.size(), Fmt, Args);
  Out.resize(size_t(Length));
  return Out;
}

} // namespace

__attribute__((format(printf, 1, 2))) std::string format(const char *Fmt, ...) {
  va_list Args;
  va_start(Args, Fmt);
  std::string Out = formatV(Fmt, Args);
  va_end(Args);
  return Out;
}

std::string hex(uintptr_t Value) { return format("0x%" PRIxPTR, Value); }
std::string hex(const void *Pointer) {
  return hex(reinterpret_cast<uintptr_t>(Pointer));
}

/// Writes "etcopy-cuda-sim: <severity>: <text>" to stderr as one write.
/// stdout is flushed first so that, in a `2>&1` transcript, the line comes
/// after everything the program printed before the failing call.
void emitLine(const char *Severity, const std::string &Text) {
  std::string Line = kPrefix;
  Line += Severity;
  Line += ": ";
  Line += Text;
  Line += '\n';
  fflush(stdout);
  fwrite(Line.data(), 1, Line.size(), stderr);
}

__attribute__((format(printf, 2, 3))) void emit(const char *Severity,
                                                const char *Fmt, ...) {
  va_list Args;
  va_start(Args, Fmt);
  std::string Text = formatV(Fmt, Args);
  va_end(Args);
  emitLine(Severity, Text);
}

std::string deviceName(int Device) { return format("cuda:%d", Device); }

/// Short spelling used in traces ("HostToDevice"), null for invalid kinds.
const char *copyKindName(int Kind) {
  switch (Kind) {
  case cudaMemcpyHostToHost:
    return "HostToHost";
  case cudaMemcpyHostToDevice:
    return "HostToDevice";
  case cudaMemcpyDeviceToHost:
    return "DeviceToHost";
  case cudaMemcpyDeviceToDevice:
    return "DeviceToDevice";
  case cudaMemcpyDefault:
    return "Default";
  default:
    return nullptr;
  }
}

std::string copyKindLabel(int Kind) {
  if (const char *Name = copyKindName(Kind))
    return Name;
  return format("kind=%d", Kind);
}

//===----------------------------------------------------------------------===//
// Error names
//===----------------------------------------------------------------------===//

namespace {

/// Names and descriptions as returned by libcudart 13.
constexpr ErrorDescription kErrors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError",
     "initialization error"},
    {cudaErrorCudartUnloading, "cudaErrorCudartUnloading",
     "driver shutting down"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidPitchValue, "cudaErrorInvalidPitchValue",
     "invalid pitch argument"},
    {cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {cudaErrorInvalidHostPointer, "cudaErrorInvalidHostPointer",
     "invalid host pointer"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer",
     "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {cudaErrorDevicesUnavailable, "cudaErrorDevicesUnavailable",
     "CUDA-capable device(s) is/are busy or unavailable"},
    {cudaErrorNotYetImplemented, "cudaErrorNotYetImplemented",
     "feature not yet implemented"},
    {cudaErrorStubLibrary, "cudaErrorStubLibrary",
     "CUDA driver is a stub library"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorCallRequiresNewerDriver, "cudaErrorCallRequiresNewerDriver",
     "API call is not supported in the installed CUDA driver"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction",
     "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice",
     "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice",
     "invalid device ordinal"},
    {cudaErrorStartupFailure, "cudaErrorStartupFailure",
     "startup failure in cuda runtime"},
    {cudaErrorInvalidKernelImage, "cudaErrorInvalidKernelImage",
     "device kernel image is invalid"},
    {cudaErrorDeviceUninitialized, "cudaErrorDeviceUninitialized",
     "invalid device context"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle",
     "invalid resource handle"},
    {cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound",
     "named symbol not found"},
    {cudaErrorIllegalState, "cudaErrorIllegalState",
     "the operation cannot be performed in the present state"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress",
     "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources",
     "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "cudaErrorLaunchTimeout",
     "the launch timed out and was terminated"},
    {cudaErrorPeerAccessAlreadyEnabled, "cudaErrorPeerAccessAlreadyEnabled",
     "peer access is already enabled"},
    {cudaErrorPeerAccessNotEnabled, "cudaErrorPeerAccessNotEnabled",
     "peer access has not been enabled"},
    {cudaErrorTooManyPeers, "cudaErrorTooManyPeers",
     "peer mapping resources exhausted"},
    {cudaErrorHostMemoryAlreadyRegistered,
     "cudaErrorHostMemoryAlreadyRegistered",
     "part or all of the requested memory range is already mapped"},
    {cudaErrorHostMemoryNotRegistered, "cudaErrorHostMemoryNotRegistered",
     "pointer does not correspond to a registered memory region"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure",
     "unspecified launch failure"},
    {cudaErrorNotPermitted, "cudaErrorNotPermitted", "operation not permitted"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
     "operation not permitted when stream is capturing"},
    {cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
     "operation failed due to a previous error during capture"},
    {cudaErrorStreamCaptureWrongThread, "cudaErrorStreamCaptureWrongThread",
     "attempt to terminate a thread-local capture sequence from another "
     "thread"},
    {cudaErrorTimeout, "cudaErrorTimeout", "wait operation timed out"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

} // namespace

const ErrorDescription *findError(cudaError_t Error) {
  for (const ErrorDescription &Entry : kErrors)
    if (Entry.Code == int(Error))
      return &Entry;
  return nullptr;
}

const char *errorName(cudaError_t Error) {
  const ErrorDescription *Entry = findError(Error);
  return Entry ? Entry->Name : kUnrecognizedError;
}

//===----------------------------------------------------------------------===//
// Entry points and fault injection
//===----------------------------------------------------------------------===//

namespace {

/// The driver functions return a CUresult and leave the runtime's last
/// error alone.
bool isDriverEntryPoint(EntryPoint Which) {
  return Which == EntryPoint::cuMemsetD8Async ||
         Which == EntryPoint::cuMemsetD16Async ||
         Which == EntryPoint::cuMemsetD32Async;
}

} // namespace

/// Names of the CUresult codes the simulated driver functions return.
const char *driverErrorName(int Result) {
  switch (Result) {
  case CUDA_SUCCESS:
    return "CUDA_SUCCESS";
  case CUDA_ERROR_INVALID_VALUE:
    return "CUDA_ERROR_INVALID_VALUE";
  case CUDA_ERROR_DEINITIALIZED:
    return "CUDA_ERROR_DEINITIALIZED";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_INVALID_HANDLE:
    return "CUDA_ERROR_INVALID_HANDLE";
  default:
    return "CUDA_ERROR_UNKNOWN";
  }
}

cudaError_t Simulator::fail(const char *Api, cudaError_t Code, const char *Fmt,
                            ...) {
  va_list Args;
  va_start(Args, Fmt);
  std::string Text = formatV(Fmt, Args);
  va_end(Args);
  emitLine("error", std::string(Api) + ": " + Text);
  return Code;
}

/// Counts a call of Which and returns the error it must fail with if
/// ETCOPY_CUDA_SIM_FAIL selects it, else 0. Allocations are numbered later,
/// by allocate(), once their arguments are known to be valid.
int Simulator::enter(EntryPoint Which) {
  if (Unloading)
    return failUnloading(Which);
  const EntryPointInfo &Info = entryPointInfo(Which);
  ++Stats.EntryPointCalls[size_t(Which)];
  uint64_t Any = ++Stats.AnyCalls;
  const FaultSpec *Fault = findFault(/*AnyKind=*/true, Info.Kind, Any);
  uint64_t Ordinal = Any;
  if (Info.Kind != CallKind::Alloc) {
    uint64_t KindOrdinal = ++Stats.KindCalls[size_t(Info.Kind)];
    if (!Fault) {
      Fault = findFault(/*AnyKind=*/false, Info.Kind, KindOrdinal);
      Ordinal = KindOrdinal;
    }
  }
  if (!Fault)
    return 0;
  std::string Call = Fault->AnyKind
                         ? format("API call #%" PRIu64, Ordinal)
                         : format("%s call #%" PRIu64,
                                  kCallKindNames[size_t(Info.Kind)], Ordinal);
  const char *Error = isDriverEntryPoint(Which)
                          ? driverErrorName(Info.InjectedError)
                          : errorName(cudaError_t(Info.InjectedError));
  emit("error", "%s: injected failure: %s fails with %s because %s=%s",
       Info.Name, Call.c_str(), Error, Fault->Variable,
       Cfg.faultText(*Fault).c_str());
  return Info.InjectedError;
}

/// Once the exit handler has run, every call fails as libcudart's do after
/// its own exit handler tore the runtime down (the driver functions as the
/// driver's do once deinitialised). Such calls are not counted: the
/// statistics were printed already.
int Simulator::failUnloading(EntryPoint Which) {
  const EntryPointInfo &Info = entryPointInfo(Which);
  bool Driver = isDriverEntryPoint(Which);
  emit("error",
       "%s: the CUDA runtime is unloading: the call came after the "
       "simulator's exit handler (registered at its first call, as libcudart "
       "does); release CUDA resources from an exit handler registered after "
       "the first CUDA call, not from a static destructor (%s)",
       Info.Name,
       Driver ? "CUDA_ERROR_DEINITIALIZED" : "cudaErrorCudartUnloading");
  return Driver ? int(CUDA_ERROR_DEINITIALIZED) : int(cudaErrorCudartUnloading);
}

const FaultSpec *Simulator::findFault(bool AnyKind, CallKind Kind,
                                      uint64_t Ordinal) const {
  for (const FaultSpec &Fault : Cfg.Faults)
    if (Fault.AnyKind == AnyKind && (AnyKind || Fault.Kind == Kind) &&
        Fault.Ordinal == Ordinal)
      return &Fault;
  return nullptr;
}

void Simulator::trace(const char *Fmt, ...) {
  if (!Cfg.Trace)
    return;
  va_list Args;
  va_start(Args, Fmt);
  std::string Text = formatV(Fmt, Args);
  va_end(Args);
  emitLine("trace", Text);
}

std::string Simulator::result(cudaError_t Code, const std::string &OnSuccess) {
  if (Code != cudaSuccess)
    return std::string(" -> ") + errorName(Code);
  return OnSuccess.empty() ? std::string() : " -> " + OnSuccess;
}

/// Ends a runtime call: a successful one (or a query answering "not
/// ready") costs the host its entry point's latency in the timing model,
/// after any wait the call modelled; a failed one sets the last error.
cudaError_t Simulator::finish(EntryPoint Which, cudaError_t Code) {
  // Like libcudart, "not ready" answers of queries are not errors.
  if (Code != cudaSuccess && Code != cudaErrorNotReady)
    LastError = Code;
  else
    HostNs += Cfg.Costs.latency(entryPointInfo(Which).Cost);
  return Code;
}

//===----------------------------------------------------------------------===//
// Exit-time checks
//===----------------------------------------------------------------------===//

/// Prints the clocks of the timing model: the host's, then every stream's
/// (the default streams first), rounded to nanoseconds.
void Simulator::printModelStatistics() {
  auto Ns = [](double Value) { return uint64_t(std::llround(Value)); };
  std::string Line =
      format("model: host_ns=%" PRIu64 " pool_growths=%" PRIu64
             " fresh_pages=%" PRIu64,
             Ns(HostNs), Stats.PoolGrowths, Stats.FreshPages);
  for (const DeviceState &D : Devices)
    Line += format(" %s=%" PRIu64, streamName(*D.DefaultStream).c_str(),
                   Ns(D.DefaultStream->ClockNs));
  for (const auto &S : AllStreams)
    Line += format(" %s=%" PRIu64, streamName(*S).c_str(), Ns(S->ClockNs));
  emitLine("stats", Line);
}

/// Prints the statistics lines that follow the first one.
void Simulator::printStatistics() {
  // Copies between host and device memory by the class of the host side,
  // then every path, then batches.
  const uint64_t *N = Stats.PathCopies, *Bytes = Stats.PathBytes;
  auto Index = [](CopyPath Path) { return size_t(Path); };
  size_t H2DPinned = Index(CopyPath::PinnedToDevice),
         D2HPinned = Index(CopyPath::DeviceToPinned),
         H2DPageable = Index(CopyPath::PageableToDevice),
         D2HPageable = Index(CopyPath::DeviceToPageable);
  std::string Line = format(
      "copies: pinned=%" PRIu64 " pinned_bytes=%" PRIu64 " pageable=%" PRIu64
      " pageable_bytes=%" PRIu64,
      N[H2DPinned] + N[D2HPinned], Bytes[H2DPinned] + Bytes[D2HPinned],
      N[H2DPageable] + N[D2HPageable], Bytes[H2DPageable] + Bytes[D2HPageable]);
  for (size_t Path = 0; Path < kNumCopyPaths; ++Path)
    Line += format(" %s=%" PRIu64 " %s_bytes=%" PRIu64, kCopyPathNames[Path],
                   N[Path], kCopyPathNames[Path], Bytes[Path]);
  Line += format(" batches=%" PRIu64 " batch_copies=%" PRIu64, Stats.Batches,
                 Stats.BatchCopies);
  emitLine("stats", Line);
  printCallStatistics();
  printModelStatistics();
  // The most memory held at once: live device and managed memory per
  // device, and pinned host memory (the simulator sees no other host
  // memory).
  std::string Memory = "memory:";
  for (size_t Device = 0; Device < Devices.size(); ++Device)
    Memory += format(" peak_device_bytes.cuda:%zu=%" PRIu64, Device,
                     Devices[Device].PeakBytes);
  Memory += format(" peak_host_bytes=%" PRIu64, Stats.HostPeakBytes);
  emitLine("stats", Memory);
}

/// Prints the number of calls of each kind and of each entry point that was
/// called, the numbers ETCOPY_CUDA_SIM_FAIL counts.
void Simulator::printCallStatistics() {
  std::string Kinds = format("calls: any=%" PRIu64, Stats.AnyCalls);
  for (size_t Kind = 0; Kind < kNumCallKinds; ++Kind)
    Kinds +=
        format(" %s=%" PRIu64, kCallKindNames[Kind], Stats.KindCalls[Kind]);
  emitLine("stats", Kinds);
  std::string Calls = "entry-points:";
  for (size_t Which = 0; Which < kNumEntryPoints; ++Which)
    if (Stats.EntryPointCalls[Which] != 0)
      Calls += format(" %s=%" PRIu64, kEntryPoints[Which].Name,
                      Stats.EntryPointCalls[Which]);
  emitLine("stats", Calls);
}

void Simulator::runExitChecks() {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (ExitChecksDone)
    return;
  ExitChecksDone = true;
  // Whatever the checks find, the runtime is gone after them.
  Unloading = true;

  // Work still queued was never synchronised, so its effects were never
  // observed. Copies and memsets are dropped (their host buffers may already
  // be gone); frees are applied so they do not show up as leaks.
  uint64_t Pending = 0;
  for (DeviceState &D : Devices) {
    std::vector<Stream *> Queues = D.Streams;
    Queues.push_back(D.DefaultStream.get());
    for (Stream *S : Queues) {
      for (const Op &O : S->Queue) {
        if (O.Kind == OpKind::Wait)
          continue;
        ++Pending;
        if (O.Kind == OpKind::Free)
          release(*O.DstAlloc, "cudaFreeAsync", S->Id);
      }
      S->Queue.clear();
      S->ExecutedSeq = S->EnqueuedSeq;
    }
  }
  if (Pending != 0)
    emit("warning",
         "%" PRIu64 " operation(s) were never synchronised before exit "
         "(queued frees were applied, queued copies and memsets were "
         "discarded)",
         Pending);

  if (Cfg.LeakCheck) {
    std::string Names;
    size_t Count = 0;
    for (const auto &S : AllStreams)
      if (!S->Destroyed && !S->PerThread && Count++ < kMaxListedLeaks)
        Names += (Names.empty() ? "" : ", ") + streamName(*S);
    if (Count != 0)
      emit("warning", "leak: %zu stream(s) never destroyed: %s%s", Count,
           Names.c_str(), Count > kMaxListedLeaks ? ", ..." : "");
    Names.clear();
    Count = 0;
    for (const auto &E : AllEvents)
      if (!E->Destroyed && Count++ < kMaxListedLeaks)
        Names += (Names.empty() ? "" : ", ") + format("E%u", E->Id);
    if (Count != 0)
      emit("warning", "leak: %zu event(s) never destroyed: %s%s", Count,
           Names.c_str(), Count > kMaxListedLeaks ? ", ..." : "");
    if (!Registrations.empty())
      emit("warning",
           "leak: %zu host memory registration(s) never unregistered",
           Registrations.size());
  }

  if (Cfg.Stats) {
    emit("stats",
         "streams_created=%" PRIu64 " streams_destroyed=%" PRIu64
         " syncs=%" PRIu64 " copies=%" PRIu64 " allocs=%" PRIu64
         " frees=%" PRIu64 " memsets=%" PRIu64 " events_created=%" PRIu64
         " events_destroyed=%" PRIu64 " bytes_copied=%" PRIu64,
         Stats.StreamsCreated, Stats.StreamsDestroyed, Stats.Syncs,
         Stats.Copies, Stats.Allocs, Stats.Frees, Stats.Memsets,
         Stats.EventsCreated, Stats.EventsDestroyed, Stats.BytesCopied);
    printStatistics();
  }

  bool Leaked = false;
  if (Cfg.LeakCheck) {
    Allocation *Table = AllocationTable.load(std::memory_order_relaxed);
    size_t Total = AllocationCount.load(std::memory_order_relaxed);
    // Device and managed memory first, then pinned host memory.
    for (int Pinned = 0; Pinned < 2; ++Pinned) {
      uint64_t Count = 0, Bytes = 0;
      for (size_t I = 0; I < Total; ++I) {
        const Allocation &A = Table[I];
        if (!A.Freed.load(std::memory_order_relaxed) &&
            (A.Kind == MemKind::PinnedHost) == bool(Pinned)) {
          ++Count;
          Bytes += A.Size;
        }
      }
      if (Count == 0)
        continue;
      Leaked = true;
      emit("error",
           "leak: %" PRIu64 " %s allocation(s), %" PRIu64
           " bytes, not freed at exit",
           Count, Pinned ? "pinned host" : "device", Bytes);
      size_t Listed = 0;
      for (size_t I = 0; I < Total && Listed < kMaxListedLeaks; ++I) {
        const Allocation &A = Table[I];
        if (A.Freed.load(std::memory_order_relaxed) ||
            (A.Kind == MemKind::PinnedHost) != bool(Pinned))
          continue;
        ++Listed;
        if (A.Kind == MemKind::PinnedHost)
          emit("note", "leaked %zu bytes of pinned host memory at %s (%s)",
               A.Size, hex(A.Base).c_str(), A.Allocator);
        else
          emit("note",
               "leaked %zu bytes of %s memory at %s on cuda:%d (allocation "
               "#%" PRIu64 ", %s)",
               A.Size, memKindName(A.Kind), hex(A.Base).c_str(), A.Device,
               A.Ordinal, A.Allocator);
      }
      if (Count > Listed)
        emit("note", "... and %" PRIu64 " more", Count - Listed);
    }
  }
  if (Leaked) {
    emit("note", "set ETCOPY_CUDA_SIM_LEAK_CHECK=0 to disable the leak check");
    fflush(nullptr);
    _exit(1);
  }
}

void Simulator::runExitHandler(void *) {
  if (Simulator *Sim = getIfCreated())
    Sim->runExitChecks();
}

namespace {

/// Runs when the library is unloaded: at exit after every exit handler and
/// static destructor, or at dlclose after the exit handler (which
/// __cxa_finalize runs first). The checks have normally run by then; this
/// catches a simulator whose exit handler could not be registered. The
/// fault handlers stay until here, so that a late host access to device
/// memory is still reported.
__attribute__((destructor)) void runExitChecksAtUnload() {
  if (Simulator *Sim = Simulator::getIfCreated())
    Sim->runExitChecks();
  restoreFaultHandlers();
}

} // namespace

} // namespace etcopy::cudasim
