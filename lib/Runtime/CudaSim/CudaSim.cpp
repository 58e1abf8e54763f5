//===- CudaSim.cpp - Strict CUDA Runtime API simulator ------*- C++ -*-===//
//
// This file implements libetcopy_cuda_sim.so, a stand-in for libcudart that
// provides the subset of the CUDA Runtime API used by etcopy's generated code
// and host runtime on machines without a GPU. It is a test runtime, so it is
// deliberately stricter than a real device: device memory cannot be touched
// by host code (it is mapped PROT_NONE and a fault handler names the
// allocation), asynchronous work only takes effect at synchronisation points
// (a missing wait shows up as stale data), freed memory is quarantined so
// stale pointers are reported as use after free, every copy is checked
// against the kind and bounds of the allocations it touches, and leaks fail
// the process at exit. docs/CudaSimulator.md describes the behaviour, the
// environment variables and the message formats.
//
//===----------------------------------------------------------------------===//

#if defined(ETCOPY_CUDA_SIM_HAVE_CUDA_HEADERS)
#include <cuda_runtime_api.h>
// cuda.h and the driver function pointer types, to check the simulated
// driver functions against them.
#include <cudaTypedefs.h>
#else
#include "CudaRuntimeSubset.h"
#endif
#include "CudaSimModel.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

/// Marks the exported CUDA entry points; everything else is hidden.
#define ETCOPY_CUDA_SIM_API extern "C" __attribute__((visibility("default")))

namespace etcopy::cudasim {
namespace {

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

constexpr const char *kPrefix = "etcopy-cuda-sim: ";
constexpr int kMaxDevices = 64;
constexpr int kRuntimeVersion = 13000;
constexpr int kDriverVersion = 13000;
/// Capacity of the allocation table. Records are never reused (freed
/// allocations stay quarantined), so this bounds the number of allocations
/// over the lifetime of the process.
constexpr size_t kMaxAllocations = size_t(1) << 22;
/// Preferred and minimum size of the reserved device address space. The
/// reservation is PROT_NONE and MAP_NORESERVE, so it costs no memory.
constexpr size_t kMaxArenaBytes = size_t(1) << 40;
constexpr size_t kMinArenaBytes = size_t(1) << 30;
/// Fresh allocations are filled with this byte so that reading memory that
/// was never written gives visibly wrong results instead of zeros.
constexpr unsigned char kPoisonByte = 0xA5;
/// At most this many per-object lines follow a leak summary.
constexpr size_t kMaxListedLeaks = 32;

//===----------------------------------------------------------------------===//
// Text helpers
//===----------------------------------------------------------------------===//

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

struct ErrorDescription {
  int Code;
  const char *Name;
  const char *Text;
};

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
    {cudaErrorTimeout, "cudaErrorTimeout", "wait operation timed out"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

/// libcudart answers both queries with this text for codes it does not know.
constexpr const char *kUnrecognizedError = "unrecognized error code";

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
// Entry points and call kinds
//===----------------------------------------------------------------------===//

/// The kinds of API call that ETCOPY_CUDA_SIM_FAIL numbers and can fail, in
/// the order the statistics list them.
enum class CallKind : uint8_t {
  Alloc,
  Free,
  Copy,
  Batch,
  Memset,
  Stream,
  Event,
  Sync,
  SetDevice,
  HostAlloc,
  Peer,
  Other,
};

constexpr const char *kCallKindNames[] = {
    "alloc", "free", "copy",       "batch",      "memset", "stream",
    "event", "sync", "set-device", "host-alloc", "peer",   "other"};
constexpr size_t kNumCallKinds = sizeof(kCallKindNames) / sizeof(char *);

/// The latencies of the timing model (docs/CudaSimulator.md explains each
/// default and where it comes from); ETCOPY_CUDA_SIM_COST_<NAME>_NS
/// overrides one. The first ones are host-side costs of API calls, the last
/// two are paid on the device by every copy and memset.
enum class Latency : uint8_t {
  Call,
  Launch,
  BatchEntry,
  Sync,
  Query,
  Event,
  StreamCreate,
  StreamDestroy,
  EventCreate,
  EventDestroy,
  Malloc,
  Free,
  MallocAsync,
  FreeAsync,
  HostAlloc,
  HostFree,
  Copy,
  BatchCopy,
  /// Not a latency: the call's host cost is charged where its work is
  /// scheduled (launches of queued work).
  None,
};

/// A cost of the timing model: the <NAME> of its environment variable and
/// its default value.
struct CostDefault {
  const char *Name;
  double Value;
};

/// Latencies in nanoseconds, in the order of Latency.
constexpr CostDefault kLatencyDefaults[] = {
    {"CALL", 100},           {"LAUNCH", 3000},         {"BATCH_ENTRY", 100},
    {"SYNC", 2000},          {"QUERY", 500},           {"EVENT", 1000},
    {"STREAM_CREATE", 5000}, {"STREAM_DESTROY", 3000}, {"EVENT_CREATE", 1000},
    {"EVENT_DESTROY", 1000}, {"MALLOC", 10000},        {"FREE", 10000},
    {"MALLOC_ASYNC", 1000},  {"FREE_ASYNC", 1000},     {"HOST_ALLOC", 50000},
    {"HOST_FREE", 20000},    {"COPY", 1500},           {"BATCH_COPY", 1200}};
constexpr size_t kNumLatencies =
    sizeof(kLatencyDefaults) / sizeof(kLatencyDefaults[0]);
static_assert(kNumLatencies == size_t(Latency::None),
              "one default per latency");

/// Every counted entry point: its name, its kind, the error an injected
/// failure returns (a cudaError_t, or a CUresult for the driver functions)
/// and the host-side latency the timing model charges when it succeeds.
/// cudaGetLastError, cudaPeekAtLastError, cudaGetErrorName and
/// cudaGetErrorString only read the error state: they are neither counted
/// nor failed, and cost nothing. The order is the order of the statistics.
#define ETCOPY_CUDA_SIM_ENTRY_POINTS(X)                                        \
  X(cudaGetDeviceCount, Other, cudaErrorNoDevice, Call)                        \
  X(cudaGetDevice, SetDevice, cudaErrorDevicesUnavailable, Call)               \
  X(cudaSetDevice, SetDevice, cudaErrorDevicesUnavailable, Call)               \
  X(cudaDeviceSynchronize, Sync, cudaErrorLaunchFailure, Sync)                 \
  X(cudaDeviceReset, Other, cudaErrorUnknown, Call)                            \
  X(cudaRuntimeGetVersion, Other, cudaErrorInvalidValue, Call)                 \
  X(cudaDriverGetVersion, Other, cudaErrorInvalidValue, Call)                  \
  X(cudaMalloc, Alloc, cudaErrorMemoryAllocation, Malloc)                      \
  X(cudaMallocAsync, Alloc, cudaErrorMemoryAllocation, MallocAsync)            \
  X(cudaMallocManaged, Alloc, cudaErrorMemoryAllocation, Malloc)               \
  X(cudaFree, Free, cudaErrorInvalidValue, Free)                               \
  X(cudaFreeAsync, Free, cudaErrorInvalidValue, FreeAsync)                     \
  X(cudaMallocHost, HostAlloc, cudaErrorMemoryAllocation, HostAlloc)           \
  X(cudaHostAlloc, HostAlloc, cudaErrorMemoryAllocation, HostAlloc)            \
  X(cudaFreeHost, HostAlloc, cudaErrorInvalidValue, HostFree)                  \
  X(cudaHostRegister, HostAlloc, cudaErrorMemoryAllocation, HostAlloc)         \
  X(cudaHostUnregister, HostAlloc, cudaErrorInvalidValue, HostFree)            \
  X(cudaHostGetDevicePointer, Other, cudaErrorMemoryAllocation, Call)          \
  X(cudaPointerGetAttributes, Other, cudaErrorInvalidValue, Call)              \
  X(cudaMemcpy, Copy, cudaErrorInvalidValue, None)                             \
  X(cudaMemcpyAsync, Copy, cudaErrorInvalidValue, None)                        \
  X(cudaMemcpy2D, Copy, cudaErrorInvalidValue, None)                           \
  X(cudaMemcpy2DAsync, Copy, cudaErrorInvalidValue, None)                      \
  X(cudaMemcpyPeer, Copy, cudaErrorInvalidValue, None)                         \
  X(cudaMemcpyPeerAsync, Copy, cudaErrorInvalidValue, None)                    \
  X(cudaMemcpyBatchAsync, Batch, cudaErrorInvalidValue, None)                  \
  X(cudaMemset, Memset, cudaErrorInvalidValue, None)                           \
  X(cudaMemsetAsync, Memset, cudaErrorInvalidValue, None)                      \
  X(cuMemsetD8Async, Memset, CUDA_ERROR_INVALID_VALUE, None)                   \
  X(cuMemsetD16Async, Memset, CUDA_ERROR_INVALID_VALUE, None)                  \
  X(cuMemsetD32Async, Memset, CUDA_ERROR_INVALID_VALUE, None)                  \
  X(cudaStreamCreate, Stream, cudaErrorMemoryAllocation, StreamCreate)         \
  X(cudaStreamCreateWithFlags, Stream, cudaErrorMemoryAllocation,              \
    StreamCreate)                                                              \
  X(cudaStreamDestroy, Stream, cudaErrorInvalidResourceHandle, StreamDestroy)  \
  X(cudaStreamSynchronize, Sync, cudaErrorLaunchFailure, Sync)                 \
  X(cudaStreamQuery, Stream, cudaErrorInvalidResourceHandle, Query)            \
  X(cudaStreamWaitEvent, Event, cudaErrorInvalidResourceHandle, Event)         \
  X(cudaEventCreate, Event, cudaErrorMemoryAllocation, EventCreate)            \
  X(cudaEventCreateWithFlags, Event, cudaErrorMemoryAllocation, EventCreate)   \
  X(cudaEventRecord, Event, cudaErrorInvalidResourceHandle, None)              \
  X(cudaEventSynchronize, Sync, cudaErrorLaunchFailure, Sync)                  \
  X(cudaEventQuery, Event, cudaErrorInvalidResourceHandle, Query)              \
  X(cudaEventDestroy, Event, cudaErrorInvalidResourceHandle, EventDestroy)     \
  X(cudaDeviceCanAccessPeer, Peer, cudaErrorInvalidDevice, Call)               \
  X(cudaDeviceEnablePeerAccess, Peer, cudaErrorTooManyPeers, Call)             \
  X(cudaDeviceDisablePeerAccess, Peer, cudaErrorInvalidDevice, Call)           \
  X(cudaGetDriverEntryPointByVersion, Other, cudaErrorNotSupported, Call)

enum class EntryPoint : uint8_t {
#define ETCOPY_CUDA_SIM_ENUMERATOR(Name, Kind, Error, Cost) Name,
  ETCOPY_CUDA_SIM_ENTRY_POINTS(ETCOPY_CUDA_SIM_ENUMERATOR)
#undef ETCOPY_CUDA_SIM_ENUMERATOR
};

struct EntryPointInfo {
  const char *Name;
  CallKind Kind;
  int InjectedError;
  Latency Cost;
};

constexpr EntryPointInfo kEntryPoints[] = {
#define ETCOPY_CUDA_SIM_ENTRY(Name, Kind, Error, Cost)                         \
  {#Name, CallKind::Kind, int(Error), Latency::Cost},
    ETCOPY_CUDA_SIM_ENTRY_POINTS(ETCOPY_CUDA_SIM_ENTRY)
#undef ETCOPY_CUDA_SIM_ENTRY
};
constexpr size_t kNumEntryPoints =
    sizeof(kEntryPoints) / sizeof(kEntryPoints[0]);

const EntryPointInfo &entryPointInfo(EntryPoint Which) {
  return kEntryPoints[size_t(Which)];
}

/// The driver functions return a CUresult and leave the runtime's last
/// error alone.
bool isDriverEntryPoint(EntryPoint Which) {
  return Which == EntryPoint::cuMemsetD8Async ||
         Which == EntryPoint::cuMemsetD16Async ||
         Which == EntryPoint::cuMemsetD32Async;
}

/// Names of the CUresult codes the simulated driver functions return.
const char *driverErrorName(int Result) {
  switch (Result) {
  case CUDA_SUCCESS:
    return "CUDA_SUCCESS";
  case CUDA_ERROR_INVALID_VALUE:
    return "CUDA_ERROR_INVALID_VALUE";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_INVALID_HANDLE:
    return "CUDA_ERROR_INVALID_HANDLE";
  default:
    return "CUDA_ERROR_UNKNOWN";
  }
}

//===----------------------------------------------------------------------===//
// Copy paths and the costs of the timing model
//===----------------------------------------------------------------------===//

/// How a copy moves its bytes, from the memory on each side: host memory is
/// pinned (cudaMallocHost, cudaHostAlloc, or wholly inside a cudaHostRegister
/// range) or pageable; device and managed memory are device memory. Copies
/// between two devices are peer copies, direct when peer access is enabled
/// between the devices and staged through host memory otherwise.
enum class CopyPath : uint8_t {
  HostToHost,
  PinnedToDevice,
  PageableToDevice,
  DeviceToPinned,
  DeviceToPageable,
  DeviceToDevice,
  PeerDirect,
  PeerStaged,
};

/// The names of the paths in statistics and traces.
constexpr const char *kCopyPathNames[] = {
    "h2h",          "h2d_pinned", "h2d_pageable", "d2h_pinned",
    "d2h_pageable", "d2d",        "peer_direct",  "peer_staged"};
constexpr size_t kNumCopyPaths = sizeof(kCopyPathNames) / sizeof(char *);

/// The bandwidths of the timing model, in GB/s (10^9 bytes per second, that
/// is bytes per nanosecond): one per copy path, then memsets.
/// ETCOPY_CUDA_SIM_BW_<NAME>_GBPS overrides one.
constexpr CostDefault kBandwidthDefaults[] = {
    {"H2H", 10},        {"H2D_PINNED", 54},   {"H2D_PAGEABLE", 13},
    {"D2H_PINNED", 54}, {"D2H_PAGEABLE", 13}, {"D2D", 2000},
    {"PEER", 380},      {"PEER_STAGED", 27},  {"MEMSET", 3600}};
constexpr size_t kNumBandwidths =
    sizeof(kBandwidthDefaults) / sizeof(kBandwidthDefaults[0]);
constexpr size_t kMemsetBandwidth = kNumCopyPaths;
static_assert(kNumBandwidths == kNumCopyPaths + 1,
              "one bandwidth per copy path, then memsets");

/// The costs of the timing model, from the defaults and the environment.
struct CostModel {
  double LatencyNs[kNumLatencies];
  double GBps[kNumBandwidths];

  double latency(Latency Which) const {
    return Which == Latency::None ? 0 : LatencyNs[size_t(Which)];
  }
};

/// The links of a device that carry one transfer at a time in the timing
/// model: each direction of its PCIe connection, its own memory (copies
/// within the device and memsets), and each direction of its NVLink.
enum class Link : uint8_t { ToDevice, FromDevice, Local, PeerOut, PeerIn };
constexpr size_t kNumLinks = 5;

struct LinkUse {
  int Device;
  Link Which;
};

//===----------------------------------------------------------------------===//
// Configuration from the environment
//===----------------------------------------------------------------------===//

/// Parses a decimal integer with no sign and no trailing text.
bool parseUnsigned(const char *Text, uint64_t &Value) {
  if (!Text || *Text < '0' || *Text > '9')
    return false;
  errno = 0;
  char *End = nullptr;
  unsigned long long Parsed = strtoull(Text, &End, 10);
  if (errno != 0 || *End != '\0')
    return false;
  Value = Parsed;
  return true;
}

/// Parses a byte count with an optional binary K, M or G suffix.
bool parseByteCount(const char *Text, uint64_t &Value) {
  if (!Text || *Text < '0' || *Text > '9')
    return false;
  errno = 0;
  char *End = nullptr;
  unsigned long long Parsed = strtoull(Text, &End, 10);
  if (errno != 0)
    return false;
  unsigned Shift = 0;
  switch (*End) {
  case '\0':
    break;
  case 'k':
  case 'K':
    Shift = 10;
    break;
  case 'm':
  case 'M':
    Shift = 20;
    break;
  case 'g':
  case 'G':
    Shift = 30;
    break;
  default:
    return false;
  }
  if (Shift != 0 && End[1] != '\0')
    return false;
  if (Shift != 0 && Parsed > (UINT64_MAX >> Shift))
    return false;
  Value = uint64_t(Parsed) << Shift;
  return true;
}

/// An unset variable gives Default; "", "0", "false", "no" and "off" are
/// false and anything else is true.
bool envFlag(const char *Name, bool Default) {
  const char *Text = getenv(Name);
  if (!Text)
    return Default;
  return !(*Text == '\0' || !strcmp(Text, "0") || !strcasecmp(Text, "false") ||
           !strcasecmp(Text, "no") || !strcasecmp(Text, "off"));
}

/// One item of ETCOPY_CUDA_SIM_FAIL (or ETCOPY_CUDA_SIM_FAIL_ALLOC): the
/// Ordinal-th call of Kind, or of any kind, fails.
struct FaultSpec {
  bool AnyKind = false;
  CallKind Kind = CallKind::Other;
  uint64_t Ordinal = 0;
  /// The variable the item came from, for messages.
  const char *Variable = "";
};

struct Config {
  int NumDevices = 1;
  bool Trace = false;
  bool Stats = false;
  bool LeakCheck = true;
  bool Poison = true;
  /// Bytes of device plus managed memory per device; 0 means unlimited.
  uint64_t MemoryLimit = 0;
  /// PeerCapable[A * NumDevices + B]: device A can access device B's memory
  /// once peer access is enabled (ETCOPY_CUDA_SIM_PEER_ACCESS).
  std::vector<bool> PeerCapable;
  /// The costs of the timing model.
  CostModel Costs;
  /// The calls that must fail, and the variables' text for messages.
  std::vector<FaultSpec> Faults;
  std::string FailText;
  std::string FailAllocText;

  static Config fromEnvironment();
  /// The text of the variable a fault came from.
  const std::string &faultText(const FaultSpec &Fault) const {
    return strcmp(Fault.Variable, "ETCOPY_CUDA_SIM_FAIL") == 0 ? FailText
                                                               : FailAllocText;
  }
};

/// Calls Item(Text) for every comma-separated item of List, empty ones too.
template <typename Callback>
void forEachListItem(const std::string &List, Callback Item) {
  size_t Start = 0;
  while (Start <= List.size()) {
    size_t Comma = List.find(',', Start);
    if (Comma == std::string::npos)
      Comma = List.size();
    Item(List.substr(Start, Comma - Start));
    Start = Comma + 1;
  }
}

/// Parses ETCOPY_CUDA_SIM_FAIL: comma-separated KIND:N items.
void parseFaults(const char *Text, Config &Cfg) {
  Cfg.FailText = Text;
  forEachListItem(Cfg.FailText, [&](const std::string &Item) {
    if (Item.empty())
      return;
    size_t Colon = Item.rfind(':');
    FaultSpec Fault;
    Fault.Variable = "ETCOPY_CUDA_SIM_FAIL";
    bool Ok = Colon != std::string::npos &&
              parseUnsigned(Item.c_str() + Colon + 1, Fault.Ordinal) &&
              Fault.Ordinal > 0;
    std::string Kind = Ok ? Item.substr(0, Colon) : std::string();
    if (Ok && Kind == "any") {
      Fault.AnyKind = true;
    } else if (Ok) {
      const char *const *Found =
          std::find_if(std::begin(kCallKindNames), std::end(kCallKindNames),
                       [&](const char *Name) { return Kind == Name; });
      Ok = Found != std::end(kCallKindNames);
      if (Ok)
        Fault.Kind = CallKind(Found - std::begin(kCallKindNames));
    }
    if (Ok) {
      Cfg.Faults.push_back(Fault);
      return;
    }
    std::string Kinds = "any";
    for (const char *Name : kCallKindNames)
      Kinds += std::string(", ") + Name;
    emit("warning",
         "ignoring '%s' in ETCOPY_CUDA_SIM_FAIL='%s': expected KIND:N with "
         "N >= 1 and KIND one of %s",
         Item.c_str(), Text, Kinds.c_str());
  });
}

/// Reads a cost of the timing model from Variable if it is set: a decimal
/// number, at least Minimum (exclusive when Strict).
void parseCost(const std::string &Variable, const char *Unit, double Minimum,
               bool Strict, double &Value) {
  const char *Text = getenv(Variable.c_str());
  if (!Text)
    return;
  errno = 0;
  char *End = nullptr;
  double Parsed = strtod(Text, &End);
  if (End != Text && *End == '\0' && errno == 0 && std::isfinite(Parsed) &&
      (Strict ? Parsed > Minimum : Parsed >= Minimum)) {
    Value = Parsed;
    return;
  }
  emit("warning", "ignoring %s='%s': expected a number of %s %s %g; using %g",
       Variable.c_str(), Text, Unit, Strict ? "above" : "of at least", Minimum,
       Value);
}

CostModel costsFromEnvironment() {
  CostModel Costs;
  for (size_t I = 0; I < kNumLatencies; ++I) {
    Costs.LatencyNs[I] = kLatencyDefaults[I].Value;
    parseCost(std::string("ETCOPY_CUDA_SIM_COST_") + kLatencyDefaults[I].Name +
                  "_NS",
              "nanoseconds", 0, /*Strict=*/false, Costs.LatencyNs[I]);
  }
  for (size_t I = 0; I < kNumBandwidths; ++I) {
    Costs.GBps[I] = kBandwidthDefaults[I].Value;
    parseCost(std::string("ETCOPY_CUDA_SIM_BW_") + kBandwidthDefaults[I].Name +
                  "_GBPS",
              "GB/s", 0, /*Strict=*/true, Costs.GBps[I]);
  }
  return Costs;
}

/// Parses ETCOPY_CUDA_SIM_PEER_ACCESS: `all` (the default: every pair of
/// distinct devices), `none`, or comma-separated pairs A-B of devices that
/// can access each other.
void parsePeerAccess(const char *Text, Config &Cfg) {
  size_t N = size_t(Cfg.NumDevices);
  bool All = !Text || !strcmp(Text, "all");
  Cfg.PeerCapable.assign(N * N, false);
  for (size_t A = 0; All && A < N; ++A)
    for (size_t B = 0; B < N; ++B)
      Cfg.PeerCapable[A * N + B] = A != B;
  if (All || !strcmp(Text, "none"))
    return;
  forEachListItem(Text, [&](const std::string &Item) {
    if (Item.empty())
      return;
    size_t Dash = Item.find('-');
    uint64_t A = 0, B = 0;
    if (Dash != std::string::npos &&
        parseUnsigned(Item.substr(0, Dash).c_str(), A) &&
        parseUnsigned(Item.c_str() + Dash + 1, B) && A < N && B < N && A != B) {
      Cfg.PeerCapable[A * N + B] = Cfg.PeerCapable[B * N + A] = true;
      return;
    }
    emit("warning",
         "ignoring '%s' in ETCOPY_CUDA_SIM_PEER_ACCESS='%s': expected `all`, "
         "`none` or pairs A-B of distinct devices below %zu",
         Item.c_str(), Text, N);
  });
}

Config Config::fromEnvironment() {
  Config Cfg;
  if (const char *Text = getenv("ETCOPY_CUDA_SIM_DEVICES")) {
    uint64_t Count = 0;
    if (parseUnsigned(Text, Count) && Count <= uint64_t(kMaxDevices))
      Cfg.NumDevices = int(Count);
    else
      emit("warning",
           "ignoring ETCOPY_CUDA_SIM_DEVICES='%s': expected an integer in "
           "[0, %d]; simulating 1 device",
           Text, kMaxDevices);
  }
  Cfg.Trace = envFlag("ETCOPY_CUDA_SIM_TRACE", false);
  Cfg.Stats = Cfg.Trace || envFlag("ETCOPY_CUDA_SIM_STATS", false);
  Cfg.LeakCheck = envFlag("ETCOPY_CUDA_SIM_LEAK_CHECK", true);
  Cfg.Poison = envFlag("ETCOPY_CUDA_SIM_POISON", true);
  if (const char *Text = getenv("ETCOPY_CUDA_SIM_MEMORY_LIMIT")) {
    if (!parseByteCount(Text, Cfg.MemoryLimit))
      emit("warning",
           "ignoring ETCOPY_CUDA_SIM_MEMORY_LIMIT='%s': expected a byte "
           "count with an optional K, M or G suffix",
           Text);
  }
  parsePeerAccess(getenv("ETCOPY_CUDA_SIM_PEER_ACCESS"), Cfg);
  Cfg.Costs = costsFromEnvironment();
  if (const char *Text = getenv("ETCOPY_CUDA_SIM_FAIL"))
    parseFaults(Text, Cfg);
  // The older spelling of ETCOPY_CUDA_SIM_FAIL=alloc:N,alloc:M,...
  if (const char *Text = getenv("ETCOPY_CUDA_SIM_FAIL_ALLOC")) {
    Cfg.FailAllocText = Text;
    forEachListItem(Cfg.FailAllocText, [&](const std::string &Item) {
      FaultSpec Fault;
      Fault.Kind = CallKind::Alloc;
      Fault.Variable = "ETCOPY_CUDA_SIM_FAIL_ALLOC";
      if (parseUnsigned(Item.c_str(), Fault.Ordinal) && Fault.Ordinal > 0)
        Cfg.Faults.push_back(Fault);
      else if (!Item.empty())
        emit("warning",
             "ignoring '%s' in ETCOPY_CUDA_SIM_FAIL_ALLOC='%s': expected "
             "a comma-separated list of allocation numbers starting at 1",
             Item.c_str(), Text);
    });
  }
  return Cfg;
}

//===----------------------------------------------------------------------===//
// Allocations and the fault handler
//===----------------------------------------------------------------------===//

enum class MemKind : uint8_t { Device, Managed, PinnedHost };

const char *memKindName(MemKind Kind) {
  switch (Kind) {
  case MemKind::Device:
    return "device";
  case MemKind::Managed:
    return "managed";
  case MemKind::PinnedHost:
    return "pinned host";
  }
  return "?";
}

/// One allocation made by the simulator. Records live in an append-only
/// table sorted by address (the address space is handed out by a bump
/// pointer and never reused), which is what lets the SIGSEGV handler find
/// the allocation of a faulting address without taking a lock: it only
/// reads fields that are written before the record is published, plus the
/// atomic Freed flag.
struct Allocation {
  uintptr_t Base = 0;
  /// The requested size; bounds checks use it, not the page-rounded size.
  size_t Size = 0;
  /// Bytes mapped at Base (Size rounded up to pages).
  size_t MappedBytes = 0;
  /// Address space owned from Base: MappedBytes plus the guard page.
  size_t ReservedBytes = 0;
  /// The simulator's read/write view of the bytes. For device memory this is
  /// a second mapping of the same memfd; host-accessible kinds use Base.
  char *View = nullptr;
  /// 1-based number among device and managed allocations, 0 for pinned host.
  uint64_t Ordinal = 0;
  const char *Allocator = "";
  int Device = 0;
  MemKind Kind = MemKind::Device;
  std::atomic<bool> Freed{false};

  // The fields below are only touched with the simulator lock held.
  /// A cudaFreeAsync of this allocation is queued but has not executed.
  bool FreePending = false;
  uint32_t FreeStream = 0;
  const char *FreedBy = "";
};

std::atomic<uintptr_t> ArenaBegin{0};
std::atomic<uintptr_t> ArenaEnd{0};
std::atomic<Allocation *> AllocationTable{nullptr};
std::atomic<size_t> AllocationCount{0};
struct sigaction PreviousSegvAction;
struct sigaction PreviousBusAction;
std::atomic<bool> FaultHandlersInstalled{false};

/// Returns the allocation whose reserved range (mapping and guard page)
/// contains Address, or null. Safe to call from a signal handler.
Allocation *findAllocation(uintptr_t Address) {
  Allocation *Table = AllocationTable.load(std::memory_order_acquire);
  size_t Low = 0, High = AllocationCount.load(std::memory_order_acquire);
  if (!Table)
    return nullptr;
  while (Low < High) {
    size_t Mid = Low + (High - Low) / 2;
    if (Table[Mid].Base <= Address)
      Low = Mid + 1;
    else
      High = Mid;
  }
  if (Low == 0 || Address - Table[Low - 1].Base >= Table[Low - 1].ReservedBytes)
    return nullptr;
  return &Table[Low - 1];
}

bool inArena(uintptr_t Address) {
  uintptr_t Begin = ArenaBegin.load(std::memory_order_acquire);
  return Begin != 0 && Address >= Begin &&
         Address < ArenaEnd.load(std::memory_order_acquire);
}

/// A fixed buffer for building the fault report with async-signal-safe code
/// only (no stdio, no allocation).
class SignalSafeText {
public:
  SignalSafeText &operator<<(const char *Text) {
    while (*Text && Length < sizeof(Data))
      Data[Length++] = *Text++;
    return *this;
  }
  SignalSafeText &decimal(uint64_t Value) {
    char Digits[24];
    size_t Count = 0;
    do {
      Digits[Count++] = char('0' + Value % 10);
      Value /= 10;
    } while (Value != 0);
    while (Count > 0 && Length < sizeof(Data))
      Data[Length++] = Digits[--Count];
    return *this;
  }
  SignalSafeText &hexadecimal(uint64_t Value) {
    char Digits[20];
    size_t Count = 0;
    do {
      Digits[Count++] = "0123456789abcdef"[Value & 0xF];
      Value >>= 4;
    } while (Value != 0);
    *this << "0x";
    while (Count > 0 && Length < sizeof(Data))
      Data[Length++] = Digits[--Count];
    return *this;
  }
  void writeToStderr() const {
    size_t Written = 0;
    while (Written < Length) {
      ssize_t Result = write(STDERR_FILENO, Data + Written, Length - Written);
      if (Result <= 0 && errno != EINTR)
        return;
      if (Result > 0)
        Written += size_t(Result);
    }
  }

private:
  char Data[768];
  size_t Length = 0;
};

/// Reports a host access to simulator-owned address space and exits. Runs
/// inside the SIGSEGV/SIGBUS handler.
[[noreturn]] void reportHostFault(uintptr_t Address) {
  SignalSafeText Text;
  Text << kPrefix << "error: ";
  Allocation *A = findAllocation(Address);
  if (!A) {
    Text << "host code dereferenced pointer ";
    Text.hexadecimal(Address)
        << ", which lies in the simulator's device address space but "
           "belongs to no allocation\n";
    Text.writeToStderr();
    _exit(1);
  }
  uint64_t Offset = Address - A->Base;
  bool Freed = A->Freed.load(std::memory_order_acquire);
  const char *Kind = memKindName(A->Kind);
  Text << "host code dereferenced " << Kind << " pointer ";
  Text.hexadecimal(Address) << " (offset ";
  Text.decimal(Offset);
  if (Freed) {
    Text << " in a freed " << Kind << " allocation of ";
    Text.decimal(A->Size) << " bytes";
  } else if (Offset < A->Size) {
    Text << " in a ";
    Text.decimal(A->Size) << "-byte allocation";
  } else {
    Text << ", past the end of a ";
    Text.decimal(A->Size) << "-byte ";
    if (A->Kind != MemKind::Device)
      Text << Kind << " ";
    Text << "allocation";
  }
  if (A->Kind != MemKind::PinnedHost) {
    Text << " on cuda:";
    Text.decimal(uint64_t(A->Device));
  }
  Text << ")\n";
  if (A->Kind == MemKind::Device && !Freed)
    Text << kPrefix
         << "note: device memory is not accessible from the host; copy it "
            "with cudaMemcpy or cudaMemcpyAsync\n";
  Text.writeToStderr();
  _exit(1);
}

void onHostFault(int Signal, siginfo_t *Info, void *Context) {
  // si_code > 0 means the kernel raised the signal for a real fault; a
  // SIGSEGV sent with kill() carries no meaningful address.
  if (Info && Info->si_code > 0 &&
      inArena(reinterpret_cast<uintptr_t>(Info->si_addr)))
    reportHostFault(reinterpret_cast<uintptr_t>(Info->si_addr));

  // Not ours: hand the signal to whoever was installed before us.
  int SavedErrno = errno;
  const struct sigaction &Previous =
      Signal == SIGBUS ? PreviousBusAction : PreviousSegvAction;
  if (Previous.sa_flags & SA_SIGINFO) {
    if (Previous.sa_sigaction) {
      Previous.sa_sigaction(Signal, Info, Context);
      errno = SavedErrno;
      return;
    }
  } else if (Previous.sa_handler != SIG_DFL && Previous.sa_handler != SIG_IGN) {
    Previous.sa_handler(Signal);
    errno = SavedErrno;
    return;
  }
  bool SentByProcess = !Info || Info->si_code <= 0;
  if (!(Previous.sa_flags & SA_SIGINFO) && Previous.sa_handler == SIG_IGN &&
      SentByProcess)
    return;
  // Default action: reinstall it and let the faulting instruction run again
  // (or re-raise a signal that was sent rather than caused by a fault).
  struct sigaction Default;
  memset(&Default, 0, sizeof(Default));
  Default.sa_handler = SIG_DFL;
  sigemptyset(&Default.sa_mask);
  sigaction(Signal, &Default, nullptr);
  if (SentByProcess)
    raise(Signal);
  errno = SavedErrno;
}

void installFaultHandlers() {
  if (FaultHandlersInstalled.exchange(true))
    return;
  struct sigaction Action;
  memset(&Action, 0, sizeof(Action));
  Action.sa_sigaction = onHostFault;
  Action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&Action.sa_mask);
  sigaction(SIGSEGV, &Action, &PreviousSegvAction);
  sigaction(SIGBUS, &Action, &PreviousBusAction);
}

/// Puts back the handlers we replaced, if ours are still the installed ones,
/// so that nothing points into this library once it may be unloaded.
void restoreFaultHandlers() {
  if (!FaultHandlersInstalled.exchange(false))
    return;
  const int Signals[] = {SIGSEGV, SIGBUS};
  for (int Signal : Signals) {
    struct sigaction Current;
    if (sigaction(Signal, nullptr, &Current) != 0)
      continue;
    if ((Current.sa_flags & SA_SIGINFO) && Current.sa_sigaction == onHostFault)
      sigaction(Signal,
                Signal == SIGBUS ? &PreviousBusAction : &PreviousSegvAction,
                nullptr);
  }
}

//===----------------------------------------------------------------------===//
// Streams, events and queued work
//===----------------------------------------------------------------------===//

struct Stream;

enum class OpKind : uint8_t { Copy, Memset, Free, Wait };

/// One unit of queued work. Copies and memsets keep raw addresses and are
/// only performed (reading the source bytes too) when the op executes.
struct Op {
  OpKind Kind = OpKind::Copy;
  /// The API call that enqueued the op, for messages.
  const char *Api = "";
  /// Position of the op in its stream (1-based, including waits).
  uint64_t Seq = 0;
  uintptr_t Dst = 0;
  uintptr_t Src = 0;
  size_t Width = 0;
  size_t Height = 1;
  size_t DstPitch = 0;
  size_t SrcPitch = 0;
  /// Memset: the byte value, or for the driver memsets the 8-, 16- or
  /// 32-bit pattern of each ElementSize-byte element.
  int Value = 0;
  unsigned ElementSize = 1;
  bool DriverMemset = false;
  int CopyKind = cudaMemcpyDefault;
  bool Is2D = false;
  /// Copy: how it moves its bytes; set by checkCopy.
  CopyPath Path = CopyPath::HostToHost;
  /// cudaMemcpyPeer and cudaMemcpyPeerAsync: the devices named by the call.
  bool IsPeer = false;
  int DstDevice = 0;
  int SrcDevice = 0;
  /// A copy of a cudaMemcpyBatchAsync: its index in the batch.
  bool InBatch = false;
  size_t BatchIndex = 0;
  /// The source bytes, read when the call was made, for batch copies whose
  /// attributes say cudaMemcpySrcAccessOrderDuringApiCall.
  std::shared_ptr<const std::vector<char>> Snapshot;
  /// The simulator allocations behind Dst and Src (null for memory the
  /// simulator does not own); for Free, DstAlloc is the one to release.
  Allocation *DstAlloc = nullptr;
  Allocation *SrcAlloc = nullptr;
  /// Wait: block until WaitOn has executed its op number WaitSeq.
  Stream *WaitOn = nullptr;
  uint64_t WaitSeq = 0;
  /// Wait: the event waited on (0 for the implicit legacy-stream waits).
  uint32_t EventId = 0;
};

struct Stream {
  /// 0 for the per-device default stream, else a process-wide number.
  uint32_t Id = 0;
  int Device = 0;
  unsigned Flags = cudaStreamDefault;
  bool Destroyed = false;
  /// Set while the queue is being executed, to catch dependency cycles.
  bool Draining = false;
  std::deque<Op> Queue;
  uint64_t EnqueuedSeq = 0;
  uint64_t ExecutedSeq = 0;
  /// EnqueuedSeq when cudaStreamQuery last answered cudaErrorNotReady.
  uint64_t QueriedAtSeq = 0;
  /// Timing model: when the last work queued on the stream ends.
  double ClockNs = 0;
  /// For the legacy default-stream semantics: the highest op number of
  /// another stream that this stream already has an implicit wait for.
  std::unordered_map<const Stream *, uint64_t> ImplicitWaits;

  bool isDefault() const { return Id == 0; }
  bool isBlocking() const { return !(Flags & cudaStreamNonBlocking); }
  bool hasPendingWork() const { return ExecutedSeq < EnqueuedSeq; }
};

struct Event {
  uint32_t Id = 0;
  int Device = 0;
  unsigned Flags = cudaEventDefault;
  bool Destroyed = false;
  /// The latest record: complete once RecordedOn has executed RecordSeq.
  Stream *RecordedOn = nullptr;
  uint64_t RecordSeq = 0;
  uint64_t Records = 0;
  /// Records when cudaEventQuery last answered cudaErrorNotReady.
  uint64_t QueriedAtRecord = 0;
  /// Timing model: when the latest record completes.
  double TimeNs = 0;

  bool isComplete() const {
    return !RecordedOn || RecordedOn->ExecutedSeq >= RecordSeq;
  }
};

struct DeviceState {
  std::unique_ptr<Stream> DefaultStream;
  /// Created streams of this device, including destroyed ones that still
  /// have queued work (the "orphans" that run at the next device-wide sync).
  std::vector<Stream *> Streams;
  /// Bytes of live device and managed memory, for the memory limit.
  uint64_t LiveBytes = 0;
  /// Timing model: when the last work queued on any stream of the device
  /// ends, and the intervals during which each link is busy (sorted and
  /// disjoint; those that ended before the host clock are dropped).
  double IdleAtNs = 0;
  std::deque<std::pair<double, double>> Busy[kNumLinks];
};

struct Registration {
  size_t Size = 0;
  int Device = 0;
};

/// The three ways to free simulator memory, which accept different kinds.
enum class FreeApi : uint8_t { Free, FreeAsync, FreeHost };

const char *freeApiName(FreeApi Which) {
  switch (Which) {
  case FreeApi::Free:
    return "cudaFree";
  case FreeApi::FreeAsync:
    return "cudaFreeAsync";
  case FreeApi::FreeHost:
    return "cudaFreeHost";
  }
  return "?";
}

/// What the simulator knows about an address.
enum class PtrClass : uint8_t { Null, Pageable, Registered, Owned };

struct PtrInfo {
  PtrClass Class = PtrClass::Null;
  /// For Owned: the allocation at or below the address (it may not contain
  /// the address, which is then out of bounds); null if there is none.
  Allocation *Alloc = nullptr;
  size_t Offset = 0;
  /// For Registered: the device current when the range was registered, and
  /// the size of the range.
  int Device = 0;
  size_t RangeSize = 0;

  bool isHostAccessible() const {
    return Class == PtrClass::Pageable || Class == PtrClass::Registered ||
           (Class == PtrClass::Owned && Alloc &&
            Alloc->Kind != MemKind::Device);
  }
  bool isDeviceAccessible() const {
    return Class == PtrClass::Owned && Alloc &&
           Alloc->Kind != MemKind::PinnedHost;
  }
};

/// Errors found while executing queued work are reported by the API call
/// that triggered the execution; the first error code is returned.
struct DrainContext {
  const char *Api;
  cudaError_t Error = cudaSuccess;

  explicit DrainContext(const char *CallName) : Api(CallName) {}
  void fail(cudaError_t Code) {
    if (Error == cudaSuccess)
      Error = Code;
  }
};

struct Counters {
  uint64_t StreamsCreated = 0;
  uint64_t StreamsDestroyed = 0;
  uint64_t Syncs = 0;
  uint64_t Copies = 0;
  uint64_t Allocs = 0;
  uint64_t Frees = 0;
  uint64_t Memsets = 0;
  uint64_t EventsCreated = 0;
  uint64_t EventsDestroyed = 0;
  uint64_t BytesCopied = 0;
  /// Accepted cudaMemcpyBatchAsync calls and the non-empty copies in them.
  uint64_t Batches = 0;
  uint64_t BatchCopies = 0;
  /// Accepted non-empty copies and their bytes, by path.
  uint64_t PathCopies[kNumCopyPaths] = {};
  uint64_t PathBytes[kNumCopyPaths] = {};
  /// Calls of each entry point, of each kind (numbered as ETCOPY_CUDA_SIM_FAIL
  /// numbers them) and of all entry points together.
  uint64_t EntryPointCalls[kNumEntryPoints] = {};
  uint64_t KindCalls[kNumCallKinds] = {};
  uint64_t AnyCalls = 0;
};

thread_local int CurrentDevice = 0;
thread_local cudaError_t LastError = cudaSuccess;

//===----------------------------------------------------------------------===//
// The simulator state
//===----------------------------------------------------------------------===//

/// All simulator state, guarded by Mutex. Created on first use and never
/// destroyed, so late calls from other libraries' exit handlers still work.
class Simulator {
public:
  static Simulator &get();
  /// The instance if any API call created it, else null.
  static Simulator *getIfCreated() {
    return Instance.load(std::memory_order_acquire);
  }

  std::mutex Mutex;
  Config Cfg;
  Counters Stats;

  // Reporting.
  __attribute__((format(printf, 4, 5))) cudaError_t
  fail(const char *Api, cudaError_t Code, const char *Fmt, ...);
  __attribute__((format(printf, 2, 3))) void trace(const char *Fmt, ...);
  std::string result(cudaError_t Code, const std::string &OnSuccess = "");
  cudaError_t finish(EntryPoint Which, cudaError_t Code);

  // Counting and fault injection.
  int enter(EntryPoint Which);
  cudaError_t enterRuntime(EntryPoint Which) {
    return cudaError_t(enter(Which));
  }
  /// enterRuntime, then the check that a device is simulated.
  cudaError_t enterOnDevice(EntryPoint Which) {
    cudaError_t Error = enterRuntime(Which);
    return Error ? Error : requireDevice(entryPointInfo(Which).Name);
  }
  const FaultSpec *findFault(bool AnyKind, CallKind Kind,
                             uint64_t Ordinal) const;

  // Devices, streams and events.
  cudaError_t requireDevice(const char *Api);
  std::string streamName(const Stream &S) const;
  std::string streamLabel(cudaStream_t Handle) const;
  std::string eventLabel(cudaEvent_t Handle) const;
  Stream *lookupStream(const char *Api, cudaStream_t Handle,
                       cudaError_t &Error);
  Event *lookupEvent(const char *Api, cudaEvent_t Handle, cudaError_t &Error);
  Stream *createStream(unsigned Flags);
  Event *createEvent(unsigned Flags);
  void destroyStream(Stream &S);
  void enqueue(Stream &S, Op O);
  void addImplicitWaits(Stream &S);

  // Execution.
  void drain(Stream &S, uint64_t UpTo, DrainContext &Ctx);
  void drainDevice(int Device, bool BlockingOnly, DrainContext &Ctx);
  void drainAllDevices(DrainContext &Ctx);
  void execute(const Op &O, const Stream *S, DrainContext &Ctx);
  std::string describeOp(const Op &O, const std::string &StreamText) const;

  // Memory.
  PtrInfo classify(uintptr_t Address) const;
  std::string describe(const PtrInfo &Info) const;
  cudaError_t allocate(const char *Api, void **Out, size_t Size, MemKind Kind,
                       int Device);
  cudaError_t checkFree(FreeApi Which, const void *Pointer, Allocation *&Alloc);
  void release(Allocation &A, const char *By, uint32_t StreamId);
  cudaError_t checkRange(const char *Api, const char *Role, uintptr_t Address,
                         const PtrInfo &Info, size_t Extent,
                         const std::string &Shape);
  cudaError_t checkCopy(const char *Api, Op &O);
  cudaError_t checkMemset(const char *Api, Op &O);
  std::shared_ptr<const std::vector<char>> snapshotSource(const Op &O) const;
  CopyPath copyPath(const PtrInfo &Dst, size_t DstExtent, const PtrInfo &Src,
                    size_t SrcExtent) const;
  void countCopy(const Op &O);
  cudaError_t runSynchronously(const char *Api, const Op &O);

  cudaError_t resetCurrentDevice();
  void involvedDevices(const Op &O, bool (&Involved)[kMaxDevices]) const;

  // The timing model.
  double HostNs = 0;
  void spend(Latency Which) { HostNs += Cfg.Costs.latency(Which); }
  void waitUntil(double Ns) { HostNs = std::max(HostNs, Ns); }
  double streamReady(const Stream &S) const;
  void endOn(Stream &S, double EndNs) {
    S.ClockNs = std::max(S.ClockNs, EndNs);
    DeviceState &D = Devices[size_t(S.Device)];
    D.IdleAtNs = std::max(D.IdleAtNs, S.ClockNs);
  }
  double reserve(const LinkUse *Uses, size_t NumUses, double ReadyNs,
                 double DurationNs);
  double transfer(const Op &O, double ReadyNs);
  double modelOp(const Op &O, double ReadyNs);
  double modelBatch(const std::vector<Op> &Copies, double ReadyNs);
  void launch(Stream &S, const Op &O, bool BlocksHost);
  void runSynchronouslyInModel(const Op &O, bool HostWaits);
  double deviceIdleAt(int Device) const {
    return Devices[size_t(Device)].IdleAtNs;
  }
  double allDevicesIdleAt() const;
  void resetModelledTime();
  void printModelStatistics();
  cudaError_t registerHostMemory(void *Pointer, size_t Size, unsigned Flags);
  cudaError_t unregisterHostMemory(void *Pointer);
  cudaError_t getAttributes(cudaPointerAttributes *Attributes,
                            const void *Pointer);
  cudaError_t getDevicePointer(void **Device, void *Host, unsigned Flags);
  cudaError_t checkDeviceOrdinal(const char *Api, const char *Role, int Device);
  cudaError_t canAccessPeer(int *CanAccess, int Device, int Peer);
  cudaError_t enablePeerAccess(int Peer, unsigned Flags);
  cudaError_t disablePeerAccess(int Peer);
  cudaError_t checkPeerCopy(const char *Api, Op &O);
  void runExitChecks();
  void printStatistics();
  void printCallStatistics();

private:
  Simulator();
  bool ensureArena(const char *Api);
  char *mapAllocation(uintptr_t Base, size_t Bytes, MemKind Kind);

  static std::atomic<Simulator *> Instance;

  std::vector<DeviceState> Devices;
  /// PeerEnabled[A * NumDevices + B]: cudaDeviceEnablePeerAccess(B) was
  /// called with A current (and neither device was reset since).
  std::vector<bool> PeerEnabled;
  std::vector<std::unique_ptr<Stream>> AllStreams;
  std::vector<std::unique_ptr<Event>> AllEvents;
  /// Handle to object, for every stream and event ever created; destroyed
  /// ones stay so that a stale handle is reported as such.
  std::unordered_map<const void *, Stream *> StreamHandles;
  std::unordered_map<const void *, Event *> EventHandles;
  std::map<uintptr_t, Registration> Registrations;
  uintptr_t ArenaNext = 0;
  size_t PageSize = 4096;
  bool ExitChecksDone = false;
};

std::atomic<Simulator *> Simulator::Instance{nullptr};

Simulator &Simulator::get() {
  // Never destroyed: a static destructor could run before other code that
  // still calls into the runtime at exit.
  static Simulator *Sim = [] {
    Simulator *Created = new Simulator();
    Instance.store(Created, std::memory_order_release);
    return Created;
  }();
  return *Sim;
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

cudaError_t Simulator::requireDevice(const char *Api) {
  if (Cfg.NumDevices == 0)
    return fail(Api, cudaErrorNoDevice,
                "no simulated device (ETCOPY_CUDA_SIM_DEVICES=0)");
  return cudaSuccess;
}

std::string Simulator::streamName(const Stream &S) const {
  if (!S.isDefault())
    return format("S%u", S.Id);
  return S.Device == 0 ? std::string("S0") : format("S0@cuda:%d", S.Device);
}

std::string Simulator::streamLabel(cudaStream_t Handle) const {
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
  // The legacy and per-thread default streams are both modelled as the
  // current device's default stream.
  if (Handle == nullptr || Handle == cudaStreamLegacy ||
      Handle == cudaStreamPerThread) {
    Error = requireDevice(Api);
    if (Error != cudaSuccess)
      return nullptr;
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

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

PtrInfo Simulator::classify(uintptr_t Address) const {
  PtrInfo Info;
  if (Address == 0)
    return Info;
  if (inArena(Address)) {
    Info.Class = PtrClass::Owned;
    Info.Alloc = findAllocation(Address);
    if (Info.Alloc)
      Info.Offset = Address - Info.Alloc->Base;
    return Info;
  }
  auto It = Registrations.upper_bound(Address);
  if (It != Registrations.begin()) {
    --It;
    if (Address - It->first < It->second.Size) {
      Info.Class = PtrClass::Registered;
      Info.Offset = Address - It->first;
      Info.Device = It->second.Device;
      Info.RangeSize = It->second.Size;
      return Info;
    }
  }
  Info.Class = PtrClass::Pageable;
  return Info;
}

std::string Simulator::describe(const PtrInfo &Info) const {
  switch (Info.Class) {
  case PtrClass::Null:
    return "null";
  case PtrClass::Pageable:
    return "pageable host memory";
  case PtrClass::Registered:
    return "registered host memory";
  case PtrClass::Owned:
    break;
  }
  const Allocation *A = Info.Alloc;
  if (!A)
    return "unallocated device address space";
  std::string Text = A->Freed.load(std::memory_order_relaxed) ? "freed " : "";
  Text += memKindName(A->Kind);
  Text += " memory";
  if (A->Kind != MemKind::PinnedHost)
    Text += " on " + deviceName(A->Device);
  return Text;
}

bool Simulator::ensureArena(const char *Api) {
  if (ArenaNext != 0)
    return true;
  size_t TableBytes = kMaxAllocations * sizeof(Allocation);
  void *Table = mmap(nullptr, TableBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (Table == MAP_FAILED) {
    fail(Api, cudaErrorMemoryAllocation,
         "cannot map the allocation table (%zu bytes): %s", TableBytes,
         strerror(errno));
    return false;
  }
  void *Arena = MAP_FAILED;
  size_t ArenaBytes = kMaxArenaBytes;
  for (; ArenaBytes >= kMinArenaBytes; ArenaBytes /= 2) {
    Arena = mmap(nullptr, ArenaBytes, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (Arena != MAP_FAILED)
      break;
  }
  if (Arena == MAP_FAILED) {
    munmap(Table, TableBytes);
    fail(Api, cudaErrorMemoryAllocation,
         "cannot reserve %zu bytes of address space for simulated device "
         "memory: %s",
         kMinArenaBytes, strerror(errno));
    return false;
  }
  uintptr_t Begin = reinterpret_cast<uintptr_t>(Arena);
  AllocationTable.store(static_cast<Allocation *>(Table),
                        std::memory_order_release);
  ArenaEnd.store(Begin + ArenaBytes, std::memory_order_release);
  ArenaBegin.store(Begin, std::memory_order_release);
  ArenaNext = Begin;
  installFaultHandlers();
  return true;
}

/// Maps Bytes at Base and returns the simulator's read/write view of them.
/// Device memory comes from a memfd mapped twice: PROT_NONE at the address
/// handed out, so that host dereferences fault, and read/write at an
/// address only the simulator knows. (Mapping the same file also leaves room
/// for host-emulated kernels that lift the protection temporarily.)
char *Simulator::mapAllocation(uintptr_t Base, size_t Bytes, MemKind Kind) {
  void *Address = reinterpret_cast<void *>(Base);
  if (Kind != MemKind::Device) {
    void *Mapped = mmap(Address, Bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    return Mapped == MAP_FAILED ? nullptr : static_cast<char *>(Mapped);
  }
  int Fd = memfd_create("etcopy-cuda-sim", MFD_CLOEXEC);
  if (Fd >= 0) {
    void *View = MAP_FAILED;
    if (ftruncate(Fd, off_t(Bytes)) == 0 &&
        mmap(Address, Bytes, PROT_NONE, MAP_SHARED | MAP_FIXED, Fd, 0) !=
            MAP_FAILED)
      View = mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
    // The mappings keep the file alive; the descriptor is not needed.
    close(Fd);
    if (View != MAP_FAILED)
      return static_cast<char *>(View);
    mmap(Address, Bytes, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  }
  // Without memfd (or out of descriptors) the public range simply stays
  // reserved and the private view is anonymous memory: the simulator behaves
  // the same.
  void *View = mmap(nullptr, Bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return View == MAP_FAILED ? nullptr : static_cast<char *>(View);
}

cudaError_t Simulator::allocate(const char *Api, void **Out, size_t Size,
                                MemKind Kind, int Device) {
  if (!Out)
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: the result pointer is null");
  *Out = nullptr;
  // Like libcudart, a zero-byte request succeeds and yields a null pointer.
  if (Size == 0)
    return cudaSuccess;

  uint64_t Ordinal = 0;
  if (Kind != MemKind::PinnedHost) {
    Ordinal = ++Stats.KindCalls[size_t(CallKind::Alloc)];
    if (const FaultSpec *Fault =
            findFault(/*AnyKind=*/false, CallKind::Alloc, Ordinal))
      return fail(Api, cudaErrorMemoryAllocation,
                  "injected allocation failure: device allocation #%" PRIu64
                  " (%zu bytes on cuda:%d) fails because %s=%s",
                  Ordinal, Size, Device, Fault->Variable,
                  Cfg.faultText(*Fault).c_str());
    uint64_t Live = Devices[size_t(Device)].LiveBytes;
    if (Cfg.MemoryLimit != 0 &&
        (Live > Cfg.MemoryLimit || Size > Cfg.MemoryLimit - Live))
      return fail(Api, cudaErrorMemoryAllocation,
                  "out of memory: %zu bytes requested on cuda:%d with %" PRIu64
                  " of %" PRIu64 " bytes in use (ETCOPY_CUDA_SIM_MEMORY_LIMIT)",
                  Size, Device, Live, Cfg.MemoryLimit);
  }

  if (!ensureArena(Api))
    return cudaErrorMemoryAllocation;
  size_t Mapped = (Size + PageSize - 1) / PageSize * PageSize;
  uintptr_t End = ArenaEnd.load(std::memory_order_relaxed);
  size_t Count = AllocationCount.load(std::memory_order_relaxed);
  if (Count == kMaxAllocations)
    return fail(Api, cudaErrorMemoryAllocation,
                "the simulator's allocation table is full (%zu allocations "
                "over the life of the process)",
                kMaxAllocations);
  // One unmapped guard page follows every allocation so that running off
  // the end of host-accessible (managed, pinned) memory faults as well.
  if (Mapped < Size || Mapped > End - ArenaNext ||
      PageSize > End - ArenaNext - Mapped)
    return fail(Api, cudaErrorMemoryAllocation,
                "out of simulated address space: %zu bytes requested on "
                "cuda:%d with %zu bytes left (freed ranges are never reused, "
                "so that stale pointers stay detectable)",
                Size, Device, size_t(End - ArenaNext));

  uintptr_t Base = ArenaNext;
  char *View = mapAllocation(Base, Mapped, Kind);
  if (!View)
    return fail(Api, cudaErrorMemoryAllocation, "cannot map %zu bytes: %s",
                Mapped, strerror(errno));
  ArenaNext += Mapped + PageSize;
  if (Cfg.Poison)
    memset(View, kPoisonByte, Size);

  Allocation *Table = AllocationTable.load(std::memory_order_relaxed);
  Allocation *A = new (&Table[Count]) Allocation();
  A->Base = Base;
  A->Size = Size;
  A->MappedBytes = Mapped;
  A->ReservedBytes = Mapped + PageSize;
  A->View = View;
  A->Ordinal = Ordinal;
  A->Allocator = Api;
  A->Device = Device;
  A->Kind = Kind;
  // Publish after the record is complete; the fault handler reads it.
  AllocationCount.store(Count + 1, std::memory_order_release);

  if (Kind != MemKind::PinnedHost)
    Devices[size_t(Device)].LiveBytes += Size;
  ++Stats.Allocs;
  *Out = reinterpret_cast<void *>(Base);
  return cudaSuccess;
}

/// Unmaps the memory behind A but keeps its address range reserved
/// (PROT_NONE) and its record, so later uses are reported as use after free.
void Simulator::release(Allocation &A, const char *By, uint32_t StreamId) {
  // A queued cross-device free can outlive a cudaDeviceReset that already
  // released the allocation.
  if (A.Freed.load(std::memory_order_relaxed))
    return;
  void *Address = reinterpret_cast<void *>(A.Base);
  if (A.Kind == MemKind::Device)
    munmap(A.View, A.MappedBytes);
  mmap(Address, A.MappedBytes, PROT_NONE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  A.View = nullptr;
  A.FreePending = false;
  A.FreedBy = By;
  A.FreeStream = StreamId;
  A.Freed.store(true, std::memory_order_release);
  if (A.Kind != MemKind::PinnedHost)
    Devices[size_t(A.Device)].LiveBytes -= A.Size;
}

/// Checks that Pointer may be freed by Which and returns its allocation.
cudaError_t Simulator::checkFree(FreeApi Which, const void *Pointer,
                                 Allocation *&Alloc) {
  const char *Api = freeApiName(Which);
  // cudaFree takes device and managed memory, cudaFreeAsync device memory
  // and cudaFreeHost pinned memory.
  const char *Allocators = "cudaMalloc, cudaMallocAsync or cudaMallocManaged";
  if (Which == FreeApi::FreeAsync)
    Allocators = "cudaMalloc or cudaMallocAsync";
  else if (Which == FreeApi::FreeHost)
    Allocators = "cudaMallocHost or cudaHostAlloc";
  PtrInfo Info = classify(reinterpret_cast<uintptr_t>(Pointer));
  if (Info.Class != PtrClass::Owned)
    return fail(Api, cudaErrorInvalidValue,
                "invalid pointer: %s is %s, not memory returned by %s",
                hex(Pointer).c_str(), describe(Info).c_str(), Allocators);
  Allocation *A = Info.Alloc;
  if (!A)
    return fail(Api, cudaErrorInvalidValue,
                "invalid pointer: %s lies in the simulator's device address "
                "space but belongs to no allocation",
                hex(Pointer).c_str());
  std::string Where = A->Kind == MemKind::PinnedHost
                          ? std::string()
                          : " on " + deviceName(A->Device);
  if (A->Freed.load(std::memory_order_relaxed)) {
    std::string FreedBy = A->FreedBy;
    if (A->FreeStream != 0)
      FreedBy += format(" on S%u", A->FreeStream);
    return fail(Api, cudaErrorInvalidValue,
                "double free: %s was already freed (a %zu-byte %s "
                "allocation%s, freed by %s)",
                hex(Pointer).c_str(), A->Size, memKindName(A->Kind),
                Where.c_str(), FreedBy.c_str());
  }
  if (A->FreePending)
    return fail(Api, cudaErrorInvalidValue,
                "double free: %s (a %zu-byte %s allocation%s) already has a "
                "cudaFreeAsync pending on S%u",
                hex(Pointer).c_str(), A->Size, memKindName(A->Kind),
                Where.c_str(), A->FreeStream);
  if (Info.Offset != 0)
    return fail(Api, cudaErrorInvalidValue,
                "invalid pointer: %s is not the start of an allocation "
                "(offset %zu in the %zu-byte %s allocation %s%s)",
                hex(Pointer).c_str(), Info.Offset, A->Size,
                memKindName(A->Kind), hex(A->Base).c_str(), Where.c_str());
  bool KindOk = A->Kind != MemKind::PinnedHost;
  if (Which == FreeApi::FreeAsync)
    KindOk = A->Kind == MemKind::Device;
  else if (Which == FreeApi::FreeHost)
    KindOk = A->Kind == MemKind::PinnedHost;
  if (!KindOk)
    return fail(Api, cudaErrorInvalidValue,
                "invalid pointer: %s is %s memory (from %s); free it with %s",
                hex(Pointer).c_str(), memKindName(A->Kind), A->Allocator,
                A->Kind == MemKind::PinnedHost ? "cudaFreeHost" : "cudaFree");
  Alloc = A;
  return cudaSuccess;
}

/// Checks that [Address, Address + Extent) lies in one live allocation.
cudaError_t Simulator::checkRange(const char *Api, const char *Role,
                                  uintptr_t Address, const PtrInfo &Info,
                                  size_t Extent, const std::string &Shape) {
  const Allocation *A = Info.Alloc;
  if (!A)
    return fail(Api, cudaErrorInvalidValue,
                "invalid pointer: %s %s lies in the simulator's device "
                "address space but belongs to no allocation",
                Role, hex(Address).c_str());
  std::string Where = A->Kind == MemKind::PinnedHost
                          ? std::string()
                          : " on " + deviceName(A->Device);
  if (A->Freed.load(std::memory_order_relaxed)) {
    std::string FreedBy = A->FreedBy;
    if (A->FreeStream != 0)
      FreedBy += format(" on S%u", A->FreeStream);
    return fail(Api, cudaErrorInvalidValue,
                "use after free: %s %s points into a freed %zu-byte %s "
                "allocation %s%s (freed by %s)",
                Role, hex(Address).c_str(), A->Size, memKindName(A->Kind),
                hex(A->Base).c_str(), Where.c_str(), FreedBy.c_str());
  }
  if (A->FreePending)
    return fail(Api, cudaErrorInvalidValue,
                "use after free: %s %s points into a %zu-byte %s allocation "
                "%s%s that has a cudaFreeAsync pending on S%u",
                Role, hex(Address).c_str(), A->Size, memKindName(A->Kind),
                hex(A->Base).c_str(), Where.c_str(), A->FreeStream);
  if (Info.Offset >= A->Size || Extent > A->Size - Info.Offset)
    return fail(Api, cudaErrorInvalidValue,
                "out-of-bounds: %s %s + %zu bytes (offset %zu%s) exceeds the "
                "%zu-byte %s allocation %s%s",
                Role, hex(Address).c_str(), Extent, Info.Offset, Shape.c_str(),
                A->Size, memKindName(A->Kind), hex(A->Base).c_str(),
                Where.c_str());
  return cudaSuccess;
}

/// Returns the bytes spanned by Height rows of Width bytes Pitch apart, or
/// false on overflow.
bool pitchedExtent(size_t Width, size_t Height, size_t Pitch, size_t &Extent) {
  size_t Rows = 0;
  if (__builtin_mul_overflow(Height - 1, Pitch, &Rows))
    return false;
  return !__builtin_add_overflow(Rows, Width, &Extent);
}

/// Validates a copy at enqueue time and fills in its allocations. O must
/// have a non-zero Width and Height.
cudaError_t Simulator::checkCopy(const char *Api, Op &O) {
  if (O.Is2D) {
    if (O.Width > O.DstPitch)
      return fail(Api, cudaErrorInvalidPitchValue,
                  "invalid pitch: width %zu exceeds dpitch %zu", O.Width,
                  O.DstPitch);
    if (O.Width > O.SrcPitch)
      return fail(Api, cudaErrorInvalidPitchValue,
                  "invalid pitch: width %zu exceeds spitch %zu", O.Width,
                  O.SrcPitch);
  }
  size_t DstExtent = 0, SrcExtent = 0;
  if (!pitchedExtent(O.Width, O.Height, O.DstPitch, DstExtent) ||
      !pitchedExtent(O.Width, O.Height, O.SrcPitch, SrcExtent))
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: the pitched extent of %zu rows overflows",
                O.Height);
  std::string Size = O.Is2D ? format("%zu rows of %zu bytes", O.Height, O.Width)
                            : format("%zu bytes", O.Width);
  if (O.Dst == 0 || O.Src == 0)
    return fail(Api, cudaErrorInvalidValue,
                "invalid pointer: %s is null in a copy of %s",
                O.Dst == 0 ? "dst" : "src", Size.c_str());

  PtrInfo DstInfo = classify(O.Dst);
  PtrInfo SrcInfo = classify(O.Src);
  std::string DstShape, SrcShape;
  if (O.Is2D && O.Height > 1) {
    DstShape = format("; %zu rows of %zu bytes with pitch %zu", O.Height,
                      O.Width, O.DstPitch);
    SrcShape = format("; %zu rows of %zu bytes with pitch %zu", O.Height,
                      O.Width, O.SrcPitch);
  }
  if (DstInfo.Class == PtrClass::Owned)
    if (cudaError_t Error =
            checkRange(Api, "dst", O.Dst, DstInfo, DstExtent, DstShape))
      return Error;
  if (SrcInfo.Class == PtrClass::Owned)
    if (cudaError_t Error =
            checkRange(Api, "src", O.Src, SrcInfo, SrcExtent, SrcShape))
      return Error;

  bool Ok = true;
  switch (O.CopyKind) {
  case cudaMemcpyHostToHost:
    Ok = SrcInfo.isHostAccessible() && DstInfo.isHostAccessible();
    break;
  case cudaMemcpyHostToDevice:
    Ok = SrcInfo.isHostAccessible() && DstInfo.isDeviceAccessible();
    break;
  case cudaMemcpyDeviceToHost:
    Ok = SrcInfo.isDeviceAccessible() && DstInfo.isHostAccessible();
    break;
  case cudaMemcpyDeviceToDevice:
    Ok = SrcInfo.isDeviceAccessible() && DstInfo.isDeviceAccessible();
    break;
  default:
    break;
  }
  if (!Ok)
    return fail(Api, cudaErrorInvalidValue,
                "wrong copy kind: %s copy of %s from src %s (%s) to dst %s "
                "(%s)",
                copyKindLabel(O.CopyKind).c_str(), Size.c_str(),
                hex(O.Src).c_str(), describe(SrcInfo).c_str(),
                hex(O.Dst).c_str(), describe(DstInfo).c_str());

  // The source and destination must not overlap (CUDA leaves it undefined).
  if (O.Dst < O.Src + SrcExtent && O.Src < O.Dst + DstExtent &&
      O.Src + SrcExtent > O.Src && O.Dst + DstExtent > O.Dst)
    return fail(Api, cudaErrorInvalidValue,
                "overlapping copy: dst %s + %zu bytes overlaps src %s + %zu "
                "bytes",
                hex(O.Dst).c_str(), DstExtent, hex(O.Src).c_str(), SrcExtent);

  O.DstAlloc = DstInfo.Class == PtrClass::Owned ? DstInfo.Alloc : nullptr;
  O.SrcAlloc = SrcInfo.Class == PtrClass::Owned ? SrcInfo.Alloc : nullptr;
  O.Path = copyPath(DstInfo, DstExtent, SrcInfo, SrcExtent);
  return cudaSuccess;
}

/// The side of a copy: pinned or pageable host memory, or device memory
/// (device or managed) on Device.
enum class CopySide : uint8_t { Pageable, Pinned, Device };

CopySide copySide(const PtrInfo &Info, size_t Extent, int &Device) {
  switch (Info.Class) {
  case PtrClass::Owned:
    if (Info.Alloc->Kind == MemKind::PinnedHost)
      return CopySide::Pinned;
    Device = Info.Alloc->Device;
    return CopySide::Device;
  case PtrClass::Registered:
    // Only a copy wholly inside the registered range can use it directly.
    return Extent <= Info.RangeSize - Info.Offset ? CopySide::Pinned
                                                  : CopySide::Pageable;
  case PtrClass::Null:
  case PtrClass::Pageable:
    break;
  }
  return CopySide::Pageable;
}

/// The path of a checked copy; the allocations of both sides are known to
/// be live and to contain the extents.
CopyPath Simulator::copyPath(const PtrInfo &Dst, size_t DstExtent,
                             const PtrInfo &Src, size_t SrcExtent) const {
  int DstDevice = 0, SrcDevice = 0;
  CopySide To = copySide(Dst, DstExtent, DstDevice);
  CopySide From = copySide(Src, SrcExtent, SrcDevice);
  if (From != CopySide::Device && To != CopySide::Device)
    return CopyPath::HostToHost;
  if (From != CopySide::Device)
    return From == CopySide::Pinned ? CopyPath::PinnedToDevice
                                    : CopyPath::PageableToDevice;
  if (To != CopySide::Device)
    return To == CopySide::Pinned ? CopyPath::DeviceToPinned
                                  : CopyPath::DeviceToPageable;
  if (SrcDevice == DstDevice)
    return CopyPath::DeviceToDevice;
  // Without peer access in either direction the driver stages the copy
  // through host memory.
  size_t N = size_t(Cfg.NumDevices);
  return PeerEnabled[size_t(SrcDevice) * N + size_t(DstDevice)] ||
                 PeerEnabled[size_t(DstDevice) * N + size_t(SrcDevice)]
             ? CopyPath::PeerDirect
             : CopyPath::PeerStaged;
}

/// Counts an accepted non-empty copy.
void Simulator::countCopy(const Op &O) {
  ++Stats.Copies;
  ++Stats.PathCopies[size_t(O.Path)];
  Stats.PathBytes[size_t(O.Path)] += uint64_t(O.Width) * O.Height;
}

/// Checks that the two sides of a cudaMemcpyPeer are device memory on the
/// devices the call names. Freed or out-of-bounds pointers are left to
/// checkCopy, which reports them as such.
cudaError_t Simulator::checkPeerCopy(const char *Api, Op &O) {
  for (int Role = 0; Role < 2; ++Role) {
    uintptr_t Address = Role == 0 ? O.Dst : O.Src;
    int Device = Role == 0 ? O.DstDevice : O.SrcDevice;
    const char *Name = Role == 0 ? "dst" : "src";
    PtrInfo Info = classify(Address);
    if (Info.Class == PtrClass::Null)
      continue;
    if (Info.Class == PtrClass::Owned &&
        (!Info.Alloc || Info.Alloc->Freed.load(std::memory_order_relaxed)))
      continue;
    if (!Info.isDeviceAccessible())
      return fail(Api, cudaErrorInvalidValue,
                  "invalid pointer: %s %s is %s; %s needs device memory on "
                  "cuda:%d (%sDevice)",
                  Name, hex(Address).c_str(), describe(Info).c_str(), Api,
                  Device, Name);
    if (Info.Alloc->Device != Device)
      return fail(Api, cudaErrorInvalidValue,
                  "invalid pointer: %s %s is %s, not on cuda:%d (%sDevice)",
                  Name, hex(Address).c_str(), describe(Info).c_str(), Device,
                  Name);
  }
  return cudaSuccess;
}

/// Reads the source bytes of a validated 1-D copy now.
std::shared_ptr<const std::vector<char>>
Simulator::snapshotSource(const Op &O) const {
  const char *Src = O.SrcAlloc ? O.SrcAlloc->View + (O.Src - O.SrcAlloc->Base)
                               : reinterpret_cast<const char *>(O.Src);
  return std::make_shared<const std::vector<char>>(Src, Src + O.Width);
}

/// Validates a memset at enqueue time. O must have a non-zero Width.
cudaError_t Simulator::checkMemset(const char *Api, Op &O) {
  if (O.Dst == 0)
    return fail(Api, cudaErrorInvalidValue,
                "invalid pointer: dst is null in a memset of %zu bytes",
                O.Width);
  PtrInfo Info = classify(O.Dst);
  std::string Shape = O.DriverMemset
                          ? format("; %zu elements of %u bytes",
                                   O.Width / O.ElementSize, O.ElementSize)
                          : std::string();
  if (Info.Class == PtrClass::Owned)
    if (cudaError_t Error = checkRange(Api, "dst", O.Dst, Info, O.Width, Shape))
      return Error;
  if (!Info.isDeviceAccessible())
    return fail(Api, cudaErrorInvalidValue,
                "invalid pointer: dst %s is %s; %s needs device or managed "
                "memory",
                hex(O.Dst).c_str(), describe(Info).c_str(), Api);
  O.DstAlloc = Info.Alloc;
  return cudaSuccess;
}

/// Performs a synchronous copy or memset: it runs on the legacy default
/// stream, so queued work of the default and blocking streams of the
/// devices involved executes first. Non-blocking streams are not waited
/// for, as on a real device.
cudaError_t Simulator::runSynchronously(const char *Api, const Op &O) {
  DrainContext Ctx(Api);
  bool Involved[kMaxDevices] = {};
  involvedDevices(O, Involved);
  for (int Device = 0; Device < Cfg.NumDevices; ++Device)
    if (Involved[Device])
      drainDevice(Device, /*BlockingOnly=*/true, Ctx);
  execute(O, nullptr, Ctx);
  return Ctx.Error;
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

//===----------------------------------------------------------------------===//
// The timing model
//===----------------------------------------------------------------------===//

/// When work queued on S now can start: once the host has issued it, once
/// the previous work of S has ended and, with the legacy default stream
/// semantics, once the work of the blocking streams (for the default
/// stream) or of the default stream (for a blocking stream) has ended.
double Simulator::streamReady(const Stream &S) const {
  const DeviceState &D = Devices[size_t(S.Device)];
  double Ready = std::max(HostNs, S.ClockNs);
  if (S.isDefault()) {
    for (const Stream *Other : D.Streams)
      if (Other->isBlocking())
        Ready = std::max(Ready, Other->ClockNs);
  } else if (S.isBlocking()) {
    Ready = std::max(Ready, D.DefaultStream->ClockNs);
  }
  return Ready;
}

/// Books DurationNs on every link of Uses at the earliest time from ReadyNs
/// at which all of them are free, and returns that time.
double Simulator::reserve(const LinkUse *Uses, size_t NumUses, double ReadyNs,
                          double DurationNs) {
  double Start = ReadyNs;
  if (DurationNs <= 0)
    return Start;
  auto Busy = [&](size_t I) -> std::deque<std::pair<double, double>> & {
    return Devices[size_t(Uses[I].Device)].Busy[size_t(Uses[I].Which)];
  };
  // Move Start past every busy interval it would overlap, until it fits in
  // a gap of all the links.
  for (bool Moved = true; Moved;) {
    Moved = false;
    for (size_t I = 0; I < NumUses; ++I) {
      auto &Intervals = Busy(I);
      auto It = std::upper_bound(
          Intervals.begin(), Intervals.end(), Start,
          [](double T, const std::pair<double, double> &Interval) {
            return T < Interval.second;
          });
      for (; It != Intervals.end() && It->first < Start + DurationNs; ++It) {
        Start = It->second;
        Moved = true;
      }
    }
  }
  for (size_t I = 0; I < NumUses; ++I) {
    auto &Intervals = Busy(I);
    std::pair<double, double> Booked(Start, Start + DurationNs);
    Intervals.insert(
        std::upper_bound(Intervals.begin(), Intervals.end(), Booked), Booked);
    // No later work can start before the host clock.
    while (!Intervals.empty() && Intervals.front().second <= HostNs)
      Intervals.pop_front();
  }
  return Start;
}

/// Books the transfer of the copy or memset O, which can start at ReadyNs,
/// on the links it uses and returns when it ends. Copies between host
/// buffers use no device link.
double Simulator::transfer(const Op &O, double ReadyNs) {
  const CostModel &Costs = Cfg.Costs;
  uint64_t Bytes = uint64_t(O.Width) * O.Height;
  auto DeviceOf = [](const Allocation *A) { return A ? A->Device : 0; };
  int Dst = DeviceOf(O.DstAlloc), Src = DeviceOf(O.SrcAlloc);
  LinkUse Uses[2];
  size_t NumUses = 0;
  double Ns = 0;
  if (O.Kind == OpKind::Memset) {
    Uses[NumUses++] = {Dst, Link::Local};
    Ns = double(Bytes) / Costs.GBps[kMemsetBandwidth];
  } else {
    Ns = double(Bytes) / Costs.GBps[size_t(O.Path)];
    switch (O.Path) {
    case CopyPath::HostToHost:
      break;
    case CopyPath::PinnedToDevice:
    case CopyPath::PageableToDevice:
      Uses[NumUses++] = {Dst, Link::ToDevice};
      break;
    case CopyPath::DeviceToPinned:
    case CopyPath::DeviceToPageable:
      Uses[NumUses++] = {Src, Link::FromDevice};
      break;
    case CopyPath::DeviceToDevice:
      Uses[NumUses++] = {Src, Link::Local};
      break;
    case CopyPath::PeerDirect:
      Uses[NumUses++] = {Src, Link::PeerOut};
      Uses[NumUses++] = {Dst, Link::PeerIn};
      break;
    case CopyPath::PeerStaged:
      // Out of the source device and into the destination over PCIe,
      // pipelined through host memory.
      Uses[NumUses++] = {Src, Link::FromDevice};
      Uses[NumUses++] = {Dst, Link::ToDevice};
      break;
    }
  }
  return reserve(Uses, NumUses, ReadyNs, Ns) + Ns;
}

/// A copy or memset that can start at ReadyNs: its fixed latency, then its
/// transfer. Returns when it ends.
double Simulator::modelOp(const Op &O, double ReadyNs) {
  return transfer(O, ReadyNs + Cfg.Costs.latency(Latency::Copy));
}

/// A batch that can start at ReadyNs: one copy latency for the batch, then
/// each copy's own latency and transfer, in order. Returns when it ends.
double Simulator::modelBatch(const std::vector<Op> &Copies, double ReadyNs) {
  double Ns = ReadyNs + Cfg.Costs.latency(Latency::Copy);
  for (const Op &O : Copies)
    Ns = transfer(O, Ns + Cfg.Costs.latency(Latency::BatchCopy));
  return Ns;
}

/// Models an asynchronous copy or memset queued on S: the host pays the
/// launch latency, then the work runs when S is ready. A call that must
/// stage pageable memory (or copy between host buffers) returns only when
/// its work has ended.
void Simulator::launch(Stream &S, const Op &O, bool BlocksHost) {
  spend(Latency::Launch);
  double End = modelOp(O, streamReady(S));
  endOn(S, End);
  if (BlocksHost)
    waitUntil(End);
}

/// Models a synchronous copy or memset: after the launch latency it runs on
/// the current device's legacy default stream once the default and blocking
/// streams of every device involved are done, and holds back their later
/// work. The host waits for it, plus the synchronisation latency, only when
/// host memory is involved (CUDA's "API synchronization behavior": copies
/// between device memory and memsets of device memory return at once).
void Simulator::runSynchronouslyInModel(const Op &O, bool HostWaits) {
  spend(Latency::Launch);
  bool Involved[kMaxDevices] = {};
  involvedDevices(O, Involved);
  double Ready = HostNs;
  for (int Device = 0; Device < Cfg.NumDevices; ++Device)
    if (Involved[Device])
      Ready =
          std::max(Ready, streamReady(*Devices[size_t(Device)].DefaultStream));
  double End = modelOp(O, Ready);
  for (int Device = 0; Device < Cfg.NumDevices; ++Device)
    if (Involved[Device])
      endOn(*Devices[size_t(Device)].DefaultStream, End);
  if (HostWaits) {
    waitUntil(End);
    spend(Latency::Sync);
  }
}

double Simulator::allDevicesIdleAt() const {
  double IdleAt = 0;
  for (const DeviceState &D : Devices)
    IdleAt = std::max(IdleAt, D.IdleAtNs);
  return IdleAt;
}

/// Restarts the host clock at 0. Every other clock moves back by the same
/// amount (not below 0), so that work still in flight keeps the time it has
/// left.
void Simulator::resetModelledTime() {
  double Shift = HostNs;
  auto Rebase = [Shift](double &Ns) { Ns = std::max(0.0, Ns - Shift); };
  HostNs = 0;
  for (DeviceState &D : Devices) {
    Rebase(D.IdleAtNs);
    Rebase(D.DefaultStream->ClockNs);
    for (auto &Intervals : D.Busy) {
      for (auto &Interval : Intervals) {
        Rebase(Interval.first);
        Rebase(Interval.second);
      }
      while (!Intervals.empty() && Intervals.front().second <= 0)
        Intervals.pop_front();
    }
  }
  for (const auto &S : AllStreams)
    Rebase(S->ClockNs);
  for (const auto &E : AllEvents)
    Rebase(E->TimeNs);
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
// Exit-time checks
//===----------------------------------------------------------------------===//

/// Prints the clocks of the timing model: the host's, then every stream's
/// (the default streams first), rounded to nanoseconds.
void Simulator::printModelStatistics() {
  auto Ns = [](double Value) { return uint64_t(std::llround(Value)); };
  std::string Line = format("model: host_ns=%" PRIu64, Ns(HostNs));
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
      if (!S->Destroyed && Count++ < kMaxListedLeaks)
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
  // This library may be unloaded after this point.
  restoreFaultHandlers();
}

/// Runs when the library is unloaded or, for a library loaded at startup,
/// from _dl_fini after every atexit handler and static destructor of the
/// program: late enough that memory freed by those is not reported as
/// leaked.
__attribute__((destructor)) void runExitChecksAtUnload() {
  if (Simulator *Sim = Simulator::getIfCreated())
    Sim->runExitChecks();
}

} // namespace
} // namespace etcopy::cudasim

using namespace etcopy::cudasim;

//===----------------------------------------------------------------------===//
// Device management and errors
//===----------------------------------------------------------------------===//

ETCOPY_CUDA_SIM_API cudaError_t cudaGetDeviceCount(int *count) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaGetDeviceCount);
  if (Error == cudaSuccess && !count)
    Error = Sim.fail("cudaGetDeviceCount", cudaErrorInvalidValue,
                     "invalid argument: count is null");
  else if (Error == cudaSuccess && (*count = Sim.Cfg.NumDevices) == 0)
    Error = cudaErrorNoDevice;
  Sim.trace("cudaGetDeviceCount()%s",
            Sim.result(Error, format("%d", Sim.Cfg.NumDevices)).c_str());
  return Sim.finish(EntryPoint::cudaGetDeviceCount, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaGetDevice(int *device) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaGetDevice);
  if (Error == cudaSuccess && !device)
    Error = Sim.fail("cudaGetDevice", cudaErrorInvalidValue,
                     "invalid argument: device is null");
  if (Error == cudaSuccess)
    *device = CurrentDevice;
  Sim.trace("cudaGetDevice()%s",
            Sim.result(Error, format("%d", CurrentDevice)).c_str());
  return Sim.finish(EntryPoint::cudaGetDevice, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaSetDevice(int device) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaSetDevice);
  if (Error == cudaSuccess && (device < 0 || device >= Sim.Cfg.NumDevices))
    Error = Sim.fail("cudaSetDevice", cudaErrorInvalidDevice,
                     "invalid device ordinal %d (%d device(s) simulated; set "
                     "ETCOPY_CUDA_SIM_DEVICES for more)",
                     device, Sim.Cfg.NumDevices);
  if (Error == cudaSuccess)
    CurrentDevice = device;
  Sim.trace("cudaSetDevice(%d)%s", device, Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaSetDevice, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDeviceSynchronize(void) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaDeviceSynchronize);
  if (Error == cudaSuccess) {
    DrainContext Ctx("cudaDeviceSynchronize");
    Sim.drainDevice(CurrentDevice, /*BlockingOnly=*/false, Ctx);
    Sim.waitUntil(Sim.deviceIdleAt(CurrentDevice));
    Error = Ctx.Error;
    ++Sim.Stats.Syncs;
  }
  Sim.trace("cudaDeviceSynchronize(cuda:%d)%s", CurrentDevice,
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaDeviceSynchronize, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDeviceReset(void) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaDeviceReset);
  if (Error == cudaSuccess)
    Error = Sim.resetCurrentDevice();
  Sim.trace("cudaDeviceReset(cuda:%d)%s", CurrentDevice,
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaDeviceReset, Error);
}

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

ETCOPY_CUDA_SIM_API cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer,
                                                        int device,
                                                        int peerDevice) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaDeviceCanAccessPeer);
  if (Error == cudaSuccess)
    Error = Sim.canAccessPeer(canAccessPeer, device, peerDevice);
  Sim.trace(
      "cudaDeviceCanAccessPeer(device=%d, peerDevice=%d)%s", device, peerDevice,
      Sim.result(Error, Error == cudaSuccess ? format("%d", *canAccessPeer)
                                             : std::string())
          .c_str());
  return Sim.finish(EntryPoint::cudaDeviceCanAccessPeer, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDeviceEnablePeerAccess(int peerDevice,
                                                           unsigned int flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaDeviceEnablePeerAccess);
  if (Error == cudaSuccess)
    Error = Sim.enablePeerAccess(peerDevice, flags);
  Sim.trace("cudaDeviceEnablePeerAccess(peerDevice=%d, flags=%u, cuda:%d)%s",
            peerDevice, flags, CurrentDevice, Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaDeviceEnablePeerAccess, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDeviceDisablePeerAccess(int peerDevice) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error =
      Sim.enterOnDevice(EntryPoint::cudaDeviceDisablePeerAccess);
  if (Error == cudaSuccess)
    Error = Sim.disablePeerAccess(peerDevice);
  Sim.trace("cudaDeviceDisablePeerAccess(peerDevice=%d, cuda:%d)%s", peerDevice,
            CurrentDevice, Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaDeviceDisablePeerAccess, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaGetLastError(void) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = LastError;
  LastError = cudaSuccess;
  Sim.trace("cudaGetLastError() -> %s", errorName(Error));
  return Error;
}

ETCOPY_CUDA_SIM_API cudaError_t cudaPeekAtLastError(void) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  Sim.trace("cudaPeekAtLastError() -> %s", errorName(LastError));
  return LastError;
}

ETCOPY_CUDA_SIM_API const char *cudaGetErrorName(cudaError_t error) {
  return errorName(error);
}

ETCOPY_CUDA_SIM_API const char *cudaGetErrorString(cudaError_t error) {
  const ErrorDescription *Entry = findError(error);
  return Entry ? Entry->Text : kUnrecognizedError;
}

ETCOPY_CUDA_SIM_API cudaError_t cudaRuntimeGetVersion(int *runtimeVersion) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaRuntimeGetVersion);
  if (Error == cudaSuccess && !runtimeVersion)
    Error = Sim.fail("cudaRuntimeGetVersion", cudaErrorInvalidValue,
                     "invalid argument: runtimeVersion is null");
  if (Error == cudaSuccess)
    *runtimeVersion = kRuntimeVersion;
  Sim.trace("cudaRuntimeGetVersion()%s",
            Sim.result(Error, format("%d", kRuntimeVersion)).c_str());
  return Sim.finish(EntryPoint::cudaRuntimeGetVersion, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDriverGetVersion(int *driverVersion) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaDriverGetVersion);
  if (Error == cudaSuccess && !driverVersion)
    Error = Sim.fail("cudaDriverGetVersion", cudaErrorInvalidValue,
                     "invalid argument: driverVersion is null");
  if (Error == cudaSuccess)
    *driverVersion = kDriverVersion;
  Sim.trace("cudaDriverGetVersion()%s",
            Sim.result(Error, format("%d", kDriverVersion)).c_str());
  return Sim.finish(EntryPoint::cudaDriverGetVersion, Error);
}

//===----------------------------------------------------------------------===//
// Memory management
//===----------------------------------------------------------------------===//

/// The "-> 0x..." part of an allocation trace.
static std::string allocationResult(Simulator &Sim, cudaError_t Error,
                                    void **Out) {
  return Sim.result(Error, Error == cudaSuccess && Out ? hex(*Out) : "");
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMalloc(void **devPtr, size_t size) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaMalloc);
  if (Error == cudaSuccess)
    Error = Sim.allocate("cudaMalloc", devPtr, size, MemKind::Device,
                         CurrentDevice);
  Sim.trace("cudaMalloc(%zu bytes, cuda:%d)%s", size, CurrentDevice,
            allocationResult(Sim, Error, devPtr).c_str());
  return Sim.finish(EntryPoint::cudaMalloc, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMallocAsync(void **devPtr, size_t size,
                                                cudaStream_t hStream) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaMallocAsync);
  // The memory belongs to the stream's device and is usable at once; the
  // simulator does not model stream-ordered availability.
  Stream *S = Error == cudaSuccess
                  ? Sim.lookupStream("cudaMallocAsync", hStream, Error)
                  : nullptr;
  if (S)
    Error = Sim.allocate("cudaMallocAsync", devPtr, size, MemKind::Device,
                         S->Device);
  Sim.trace("cudaMallocAsync(%zu bytes, stream=%s)%s", size,
            Sim.streamLabel(hStream).c_str(),
            allocationResult(Sim, Error, devPtr).c_str());
  return Sim.finish(EntryPoint::cudaMallocAsync, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMallocManaged(void **devPtr, size_t size,
                                                  unsigned int flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaMallocManaged);
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
            CurrentDevice, allocationResult(Sim, Error, devPtr).c_str());
  return Sim.finish(EntryPoint::cudaMallocManaged, Error);
}

/// Shared implementation of cudaMallocHost and cudaHostAlloc.
static cudaError_t allocatePinned(EntryPoint Which, void **Ptr, size_t Size,
                                  unsigned Flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = entryPointInfo(Which).Name;
  cudaError_t Error = Sim.enterOnDevice(Which);
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
  std::string FlagsText = Which == EntryPoint::cudaHostAlloc
                              ? format(", flags=%u", Flags)
                              : std::string();
  Sim.trace("%s(%zu bytes%s)%s", Api, Size, FlagsText.c_str(),
            allocationResult(Sim, Error, Ptr).c_str());
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
  Allocation *A = nullptr;
  if (Error == cudaSuccess && devPtr &&
      (Error = Sim.checkFree(FreeApi::Free, devPtr, A)) == cudaSuccess) {
    // cudaFree synchronises the device before releasing the memory.
    DrainContext Ctx("cudaFree");
    Sim.drainDevice(A->Device, /*BlockingOnly=*/false, Ctx);
    Sim.waitUntil(Sim.deviceIdleAt(A->Device));
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
  Allocation *A = nullptr;
  if (S && devPtr &&
      (Error = Sim.checkFree(FreeApi::FreeAsync, devPtr, A)) == cudaSuccess) {
    // The pointer is validated now; the memory is released when the free
    // executes in stream order.
    A->FreePending = true;
    A->FreeStream = S->Id;
    Op O;
    O.Kind = OpKind::Free;
    O.Api = "cudaFreeAsync";
    O.Dst = reinterpret_cast<uintptr_t>(devPtr);
    O.DstAlloc = A;
    Sim.enqueue(*S, O);
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

cudaError_t Simulator::registerHostMemory(void *Pointer, size_t Size,
                                          unsigned Flags) {
  const char *Api = "cudaHostRegister";
  if (cudaError_t Error = requireDevice(Api))
    return Error;
  uintptr_t Begin = reinterpret_cast<uintptr_t>(Pointer), End = 0;
  if (!Pointer || Size == 0 || __builtin_add_overflow(Begin, Size, &End))
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: %s + %zu bytes is not a valid range",
                hex(Pointer).c_str(), Size);
  if (Flags & ~unsigned(0xF))
    return fail(Api, cudaErrorInvalidValue, "invalid flags 0x%x", Flags);
  uintptr_t OwnedBegin = ArenaBegin.load(std::memory_order_relaxed);
  if (OwnedBegin != 0 && Begin < ArenaEnd.load(std::memory_order_relaxed) &&
      OwnedBegin < End)
    return fail(Api, cudaErrorInvalidValue,
                "invalid pointer: %s is %s; only pageable host memory can be "
                "registered",
                hex(Pointer).c_str(), describe(classify(Begin)).c_str());
  auto Next = Registrations.lower_bound(Begin);
  auto Clash = Registrations.end();
  if (Next != Registrations.end() && Next->first < End)
    Clash = Next;
  if (Next != Registrations.begin() &&
      std::prev(Next)->first + std::prev(Next)->second.Size > Begin)
    Clash = std::prev(Next);
  if (Clash != Registrations.end())
    return fail(Api, cudaErrorHostMemoryAlreadyRegistered,
                "%s + %zu bytes overlaps the registered range %s + %zu bytes",
                hex(Pointer).c_str(), Size, hex(Clash->first).c_str(),
                Clash->second.Size);
  Registration &R = Registrations[Begin];
  R.Size = Size;
  R.Device = CurrentDevice;
  return cudaSuccess;
}

cudaError_t Simulator::unregisterHostMemory(void *Pointer) {
  auto It = Registrations.find(reinterpret_cast<uintptr_t>(Pointer));
  if (It == Registrations.end())
    return fail("cudaHostUnregister", cudaErrorHostMemoryNotRegistered,
                "%s is not the start of a range registered with "
                "cudaHostRegister",
                hex(Pointer).c_str());
  Registrations.erase(It);
  return cudaSuccess;
}

ETCOPY_CUDA_SIM_API cudaError_t cudaHostRegister(void *ptr, size_t size,
                                                 unsigned int flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaHostRegister);
  if (Error == cudaSuccess)
    Error = Sim.registerHostMemory(ptr, size, flags);
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

/// Implements cudaHostGetDevicePointer. With unified addressing every pinned
/// allocation and registered range is mapped, at the same address.
cudaError_t Simulator::getDevicePointer(void **Device, void *Host,
                                        unsigned Flags) {
  const char *Api = "cudaHostGetDevicePointer";
  if (!Device)
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: pDevice is null");
  if (Flags != 0)
    return fail(Api, cudaErrorInvalidValue, "invalid flags 0x%x (must be 0)",
                Flags);
  uintptr_t Address = reinterpret_cast<uintptr_t>(Host);
  PtrInfo Info = classify(Address);
  if (Info.Class == PtrClass::Owned)
    if (cudaError_t Error = checkRange(Api, "pHost", Address, Info, 1, ""))
      return Error;
  bool Pinned = Info.Class == PtrClass::Registered ||
                (Info.Class == PtrClass::Owned &&
                 Info.Alloc->Kind == MemKind::PinnedHost);
  if (!Pinned)
    return fail(Api, cudaErrorInvalidValue,
                "invalid pointer: pHost %s is %s, not memory from "
                "cudaMallocHost, cudaHostAlloc or cudaHostRegister",
                hex(Host).c_str(), describe(Info).c_str());
  *Device = Host;
  return cudaSuccess;
}

ETCOPY_CUDA_SIM_API cudaError_t cudaHostGetDevicePointer(void **pDevice,
                                                         void *pHost,
                                                         unsigned int flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaHostGetDevicePointer);
  if (Error == cudaSuccess)
    Error = Sim.getDevicePointer(pDevice, pHost, flags);
  Sim.trace("cudaHostGetDevicePointer(%s, flags=%u)%s", hex(pHost).c_str(),
            flags, allocationResult(Sim, Error, pDevice).c_str());
  return Sim.finish(EntryPoint::cudaHostGetDevicePointer, Error);
}

cudaError_t Simulator::getAttributes(cudaPointerAttributes *Attributes,
                                     const void *Pointer) {
  const char *Api = "cudaPointerGetAttributes";
  if (!Attributes)
    return fail(Api, cudaErrorInvalidValue,
                "invalid argument: attributes is null");
  memset(Attributes, 0, sizeof(*Attributes));
  void *Mutable = const_cast<void *>(Pointer);
  PtrInfo Info = classify(reinterpret_cast<uintptr_t>(Pointer));
  switch (Info.Class) {
  case PtrClass::Null:
  case PtrClass::Pageable:
    // As libcudart since CUDA 11: unregistered host memory is not an error.
    Attributes->type = cudaMemoryTypeUnregistered;
    Attributes->device = cudaInvalidDeviceId;
    Attributes->hostPointer = Mutable;
    return cudaSuccess;
  case PtrClass::Registered:
    Attributes->type = cudaMemoryTypeHost;
    Attributes->device = Info.Device;
    Attributes->devicePointer = Mutable;
    Attributes->hostPointer = Mutable;
    return cudaSuccess;
  case PtrClass::Owned:
    break;
  }
  if (cudaError_t Error = checkRange(
          Api, "pointer", reinterpret_cast<uintptr_t>(Pointer), Info, 1, ""))
    return Error;
  const Allocation &A = *Info.Alloc;
  Attributes->device = A.Device;
  Attributes->devicePointer = Mutable;
  switch (A.Kind) {
  case MemKind::Device:
    Attributes->type = cudaMemoryTypeDevice;
    break;
  case MemKind::Managed:
    Attributes->type = cudaMemoryTypeManaged;
    Attributes->hostPointer = Mutable;
    break;
  case MemKind::PinnedHost:
    Attributes->type = cudaMemoryTypeHost;
    Attributes->hostPointer = Mutable;
    break;
  }
  return cudaSuccess;
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

//===----------------------------------------------------------------------===//
// Copies and memsets
//===----------------------------------------------------------------------===//

/// An asynchronous copy that the driver stages through a pinned bounce
/// buffer (pageable memory) or that the host performs (between host
/// buffers) returns only when it is done.
static bool hostPerformsAsyncCopy(CopyPath Path) {
  return Path == CopyPath::HostToHost || Path == CopyPath::PageableToDevice ||
         Path == CopyPath::DeviceToPageable;
}

static bool touchesHostMemory(CopyPath Path) {
  switch (Path) {
  case CopyPath::HostToHost:
  case CopyPath::PinnedToDevice:
  case CopyPath::PageableToDevice:
  case CopyPath::DeviceToPinned:
  case CopyPath::DeviceToPageable:
    return true;
  case CopyPath::DeviceToDevice:
  case CopyPath::PeerDirect:
  case CopyPath::PeerStaged:
    break;
  }
  return false;
}

/// Shared implementation of the six copy entry points. Async copies are
/// validated and queued on Handle; synchronous ones run at once.
static cudaError_t copyCommon(EntryPoint Which, Op O, bool Async,
                              cudaStream_t Handle) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = entryPointInfo(Which).Name;
  O.Api = Api;
  cudaError_t Error = Sim.enterOnDevice(Which);
  Stream *S = nullptr;
  if (Error == cudaSuccess && Async)
    S = Sim.lookupStream(Api, Handle, Error);
  if (Error == cudaSuccess && !copyKindName(O.CopyKind))
    Error = Sim.fail(Api, cudaErrorInvalidMemcpyDirection,
                     "invalid copy kind %d", O.CopyKind);
  if (Error == cudaSuccess && O.IsPeer)
    Error = Sim.checkDeviceOrdinal(Api, "dstDevice", O.DstDevice);
  if (Error == cudaSuccess && O.IsPeer)
    Error = Sim.checkDeviceOrdinal(Api, "srcDevice", O.SrcDevice);
  // Empty copies are valid no-ops whatever the pointers are.
  bool Empty = O.Width == 0 || O.Height == 0;
  if (Error == cudaSuccess && !Empty && O.IsPeer)
    Error = Sim.checkPeerCopy(Api, O);
  if (Error == cudaSuccess && !Empty)
    Error = Sim.checkCopy(Api, O);
  if (Error == cudaSuccess && !Empty) {
    Sim.countCopy(O);
    if (Async) {
      Sim.enqueue(*S, O);
      Sim.launch(*S, O, hostPerformsAsyncCopy(O.Path));
    } else {
      Error = Sim.runSynchronously(Api, O);
      Sim.runSynchronouslyInModel(O, touchesHostMemory(O.Path));
    }
  } else if (Error == cudaSuccess) {
    Sim.spend(Latency::Call);
  }
  std::string Path = Error == cudaSuccess && !Empty
                         ? format(" [%s]", kCopyPathNames[size_t(O.Path)])
                         : std::string();
  Sim.trace("%s%s%s",
            Sim.describeOp(O, Async ? Sim.streamLabel(Handle) : "").c_str(),
            Path.c_str(), Sim.result(Error).c_str());
  return Sim.finish(Which, Error);
}

static Op makeCopy(void *Dst, size_t DstPitch, const void *Src, size_t SrcPitch,
                   size_t Width, size_t Height, cudaMemcpyKind Kind,
                   bool Is2D) {
  Op O;
  O.Kind = OpKind::Copy;
  O.Dst = reinterpret_cast<uintptr_t>(Dst);
  O.Src = reinterpret_cast<uintptr_t>(Src);
  O.DstPitch = DstPitch;
  O.SrcPitch = SrcPitch;
  O.Width = Width;
  O.Height = Height;
  O.CopyKind = int(Kind);
  O.Is2D = Is2D;
  return O;
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemcpy(void *dst, const void *src,
                                           size_t count,
                                           enum cudaMemcpyKind kind) {
  return copyCommon(EntryPoint::cudaMemcpy,
                    makeCopy(dst, count, src, count, count, 1, kind, false),
                    /*Async=*/false, nullptr);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemcpyAsync(void *dst, const void *src,
                                                size_t count,
                                                enum cudaMemcpyKind kind,
                                                cudaStream_t stream) {
  return copyCommon(EntryPoint::cudaMemcpyAsync,
                    makeCopy(dst, count, src, count, count, 1, kind, false),
                    /*Async=*/true, stream);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemcpy2D(void *dst, size_t dpitch,
                                             const void *src, size_t spitch,
                                             size_t width, size_t height,
                                             enum cudaMemcpyKind kind) {
  return copyCommon(
      EntryPoint::cudaMemcpy2D,
      makeCopy(dst, dpitch, src, spitch, width, height, kind, true),
      /*Async=*/false, nullptr);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemcpy2DAsync(
    void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
    size_t height, enum cudaMemcpyKind kind, cudaStream_t stream) {
  return copyCommon(
      EntryPoint::cudaMemcpy2DAsync,
      makeCopy(dst, dpitch, src, spitch, width, height, kind, true),
      /*Async=*/true, stream);
}

static Op makePeerCopy(void *Dst, int DstDevice, const void *Src, int SrcDevice,
                       size_t Count) {
  Op O = makeCopy(Dst, Count, Src, Count, Count, 1, cudaMemcpyDeviceToDevice,
                  /*Is2D=*/false);
  O.IsPeer = true;
  O.DstDevice = DstDevice;
  O.SrcDevice = SrcDevice;
  return O;
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemcpyPeer(void *dst, int dstDevice,
                                               const void *src, int srcDevice,
                                               size_t count) {
  return copyCommon(EntryPoint::cudaMemcpyPeer,
                    makePeerCopy(dst, dstDevice, src, srcDevice, count),
                    /*Async=*/false, nullptr);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice,
                                                    const void *src,
                                                    int srcDevice, size_t count,
                                                    cudaStream_t stream) {
  return copyCommon(EntryPoint::cudaMemcpyPeerAsync,
                    makePeerCopy(dst, dstDevice, src, srcDevice, count),
                    /*Async=*/true, stream);
}

//===----------------------------------------------------------------------===//
// Batched copies
//===----------------------------------------------------------------------===//

/// Checks one cudaMemLocation hint of a batch attribute.
static cudaError_t checkLocationHint(Simulator &Sim, const char *Api,
                                     size_t Index, const char *Field,
                                     const cudaMemLocation &Hint) {
  int Type = int(Hint.type);
  if (Type < int(cudaMemLocationTypeInvalid) ||
      Type > int(cudaMemLocationTypeHostNumaCurrent))
    return Sim.fail(Api, cudaErrorInvalidValue,
                    "invalid attribute: attrs[%zu].%s.type is %d, not a "
                    "cudaMemLocationType",
                    Index, Field, Type);
  if (Type == int(cudaMemLocationTypeDevice) &&
      (Hint.id < 0 || Hint.id >= Sim.Cfg.NumDevices))
    return Sim.fail(Api, cudaErrorInvalidValue,
                    "invalid attribute: attrs[%zu].%s names device %d (%d "
                    "device(s) simulated)",
                    Index, Field, Hint.id, Sim.Cfg.NumDevices);
  return cudaSuccess;
}

/// Checks the attribute arrays of a batch as libcudart does: one attribute
/// at least and at most one per copy, attrsIdxs starting at 0, strictly
/// increasing and below Count, and valid fields.
static cudaError_t checkBatchAttributes(Simulator &Sim, const char *Api,
                                        size_t Count,
                                        const cudaMemcpyAttributes *Attrs,
                                        const size_t *AttrsIdxs,
                                        size_t NumAttrs) {
  if (NumAttrs == 0 || NumAttrs > Count)
    return Sim.fail(Api, cudaErrorInvalidValue,
                    "invalid argument: numAttrs is %zu; it must be between 1 "
                    "and count (%zu)",
                    NumAttrs, Count);
  if (!Attrs || !AttrsIdxs)
    return Sim.fail(Api, cudaErrorInvalidValue, "invalid argument: %s is null",
                    !Attrs ? "attrs" : "attrsIdxs");
  for (size_t K = 0; K < NumAttrs; ++K) {
    if (K == 0 && AttrsIdxs[0] != 0)
      return Sim.fail(Api, cudaErrorInvalidValue,
                      "invalid argument: attrsIdxs[0] is %zu; the first "
                      "attribute must apply from copy 0",
                      AttrsIdxs[0]);
    if (K > 0 && AttrsIdxs[K] <= AttrsIdxs[K - 1])
      return Sim.fail(Api, cudaErrorInvalidValue,
                      "invalid argument: attrsIdxs[%zu] is %zu, not greater "
                      "than attrsIdxs[%zu] (%zu)",
                      K, AttrsIdxs[K], K - 1, AttrsIdxs[K - 1]);
    if (AttrsIdxs[K] >= Count)
      return Sim.fail(Api, cudaErrorInvalidValue,
                      "invalid argument: attrsIdxs[%zu] is %zu, not below "
                      "count (%zu)",
                      K, AttrsIdxs[K], Count);
    const cudaMemcpyAttributes &Attr = Attrs[K];
    int Order = int(Attr.srcAccessOrder);
    if (Order != cudaMemcpySrcAccessOrderStream &&
        Order != cudaMemcpySrcAccessOrderDuringApiCall &&
        Order != cudaMemcpySrcAccessOrderAny)
      return Sim.fail(Api, cudaErrorInvalidValue,
                      "invalid attribute: attrs[%zu].srcAccessOrder is %d; "
                      "expected cudaMemcpySrcAccessOrderStream, "
                      "DuringApiCall or Any",
                      K, Order);
    if (Attr.flags & ~unsigned(cudaMemcpyFlagPreferOverlapWithCompute))
      return Sim.fail(Api, cudaErrorInvalidValue,
                      "invalid attribute: attrs[%zu].flags is 0x%x", K,
                      Attr.flags);
    if (cudaError_t Error =
            checkLocationHint(Sim, Api, K, "srcLocHint", Attr.srcLocHint))
      return Error;
    if (cudaError_t Error =
            checkLocationHint(Sim, Api, K, "dstLocHint", Attr.dstLocHint))
      return Error;
  }
  return cudaSuccess;
}

/// Copies of one batch have no order among themselves, so one that writes
/// memory another reads or writes is a race (undefined behaviour in CUDA).
static cudaError_t checkBatchIndependence(Simulator &Sim, const char *Api,
                                          const std::vector<Op> &Copies) {
  struct Range {
    uintptr_t Begin, End;
    size_t Copy;
    bool Writes;
  };
  auto EndOf = [](uintptr_t Begin, size_t Width) {
    uintptr_t End = 0;
    return __builtin_add_overflow(Begin, Width, &End) ? UINTPTR_MAX : End;
  };
  std::vector<Range> Ranges;
  Ranges.reserve(Copies.size() * 2);
  for (const Op &O : Copies) {
    Ranges.push_back({O.Dst, EndOf(O.Dst, O.Width), O.BatchIndex, true});
    Ranges.push_back({O.Src, EndOf(O.Src, O.Width), O.BatchIndex, false});
  }
  std::sort(Ranges.begin(), Ranges.end(),
            [](const Range &A, const Range &B) { return A.Begin < B.Begin; });
  // The range reaching furthest among those seen, and among the written
  // ones. A copy's own ranges never overlap (checkCopy), so an overlap with
  // either is one between two copies.
  const Range *Furthest = nullptr, *FurthestWrite = nullptr;
  for (const Range &R : Ranges) {
    const Range *Other = nullptr;
    if (R.Writes && Furthest && Furthest->End > R.Begin)
      Other = Furthest;
    else if (FurthestWrite && FurthestWrite->End > R.Begin)
      Other = FurthestWrite;
    if (Other) {
      const Range &W = R.Writes ? R : *Other;
      const Range &X = R.Writes ? *Other : R;
      return Sim.fail(Api, cudaErrorInvalidValue,
                      "dependent copies: copy %zu writes %s + %zu bytes, which "
                      "copy %zu %s at %s + %zu bytes; copies of one batch "
                      "are not ordered",
                      W.Copy, hex(W.Begin).c_str(), size_t(W.End - W.Begin),
                      X.Copy, X.Writes ? "also writes" : "reads",
                      hex(X.Begin).c_str(), size_t(X.End - X.Begin));
    }
    if (!Furthest || R.End > Furthest->End)
      Furthest = &R;
    if (R.Writes && (!FurthestWrite || R.End > FurthestWrite->End))
      FurthestWrite = &R;
  }
  return cudaSuccess;
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemcpyBatchAsync(
    void *const *dsts, const void *const *srcs, const size_t *sizes,
    size_t count, cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
    size_t numAttrs, cudaStream_t stream) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaMemcpyBatchAsync";
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaMemcpyBatchAsync);
  if (Error == cudaSuccess && (stream == nullptr || stream == cudaStreamLegacy))
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid stream: the legacy default stream cannot be "
                     "used; pass a created stream or cudaStreamPerThread");
  Stream *S =
      Error == cudaSuccess ? Sim.lookupStream(Api, stream, Error) : nullptr;
  if (S && count == 0)
    Error =
        Sim.fail(Api, cudaErrorInvalidValue, "invalid argument: count is 0");
  else if (S && (!dsts || !srcs || !sizes))
    Error = Sim.fail(Api, cudaErrorInvalidValue, "invalid argument: %s is null",
                     !dsts   ? "dsts"
                     : !srcs ? "srcs"
                             : "sizes");
  if (Error == cudaSuccess)
    Error = checkBatchAttributes(Sim, Api, count, attrs, attrsIdxs, numAttrs);

  // Check every copy as cudaMemcpyAsync with cudaMemcpyDefault would, and
  // queue nothing unless all of them pass.
  uint64_t Bytes = 0;
  for (size_t I = 0; sizes && I < count; ++I)
    if (__builtin_add_overflow(Bytes, sizes[I], &Bytes))
      Bytes = UINT64_MAX;
  std::vector<Op> Copies;
  bool BlocksHost = false;
  for (size_t I = 0, K = 0; Error == cudaSuccess && I < count; ++I) {
    while (K + 1 < numAttrs && attrsIdxs[K + 1] <= I)
      ++K;
    // Empty copies are valid no-ops whatever the pointers are.
    if (sizes[I] == 0)
      continue;
    Op O = makeCopy(dsts[I], sizes[I], srcs[I], sizes[I], sizes[I], 1,
                    cudaMemcpyDefault, /*Is2D=*/false);
    O.Api = Api;
    O.InBatch = true;
    O.BatchIndex = I;
    std::string Where = format("%s: copy %zu", Api, I);
    Error = Sim.checkCopy(Where.c_str(), O);
    cudaMemcpySrcAccessOrder Order = attrs[K].srcAccessOrder;
    if (Error == cudaSuccess && Order == cudaMemcpySrcAccessOrderDuringApiCall)
      O.Snapshot = Sim.snapshotSource(O);
    // The call returns only after reading DuringApiCall sources and after
    // staging pageable memory, unless the order lets a pageable source be
    // read later; the model makes it wait for the whole batch.
    BlocksHost |= Order == cudaMemcpySrcAccessOrderDuringApiCall ||
                  (O.Path == CopyPath::PageableToDevice
                       ? Order != cudaMemcpySrcAccessOrderAny
                       : hostPerformsAsyncCopy(O.Path));
    Copies.push_back(std::move(O));
  }
  if (Error == cudaSuccess)
    Error = checkBatchIndependence(Sim, Api, Copies);
  std::string Paths;
  if (Error == cudaSuccess) {
    // One launch for the batch and a small host cost per copy, then the
    // batch runs as one unit of S.
    Sim.spend(Latency::Launch);
    Sim.HostNs +=
        double(Copies.size()) * Sim.Cfg.Costs.latency(Latency::BatchEntry);
    double End = Sim.modelBatch(Copies, Sim.streamReady(*S));
    Sim.endOn(*S, End);
    if (BlocksHost)
      Sim.waitUntil(End);
    // The trace lists how many copies take each path.
    size_t PerPath[kNumCopyPaths] = {};
    for (Op &O : Copies) {
      Sim.countCopy(O);
      ++PerPath[size_t(O.Path)];
      Sim.enqueue(*S, std::move(O));
    }
    ++Sim.Stats.Batches;
    Sim.Stats.BatchCopies += Copies.size();
    for (size_t Path = 0; Path < kNumCopyPaths; ++Path)
      if (PerPath[Path] != 0)
        Paths += format("%s%s %zu", Paths.empty() ? " [" : ", ",
                        kCopyPathNames[Path], PerPath[Path]);
    if (!Paths.empty())
      Paths += "]";
  }
  Sim.trace("%s(%zu copies, %" PRIu64
            " bytes, %zu attribute(s), stream=%s)%s%s",
            Api, count, Bytes, numAttrs, Sim.streamLabel(stream).c_str(),
            Paths.c_str(), Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaMemcpyBatchAsync, Error);
}

/// Shared implementation of cudaMemset and cudaMemsetAsync.
static cudaError_t memsetCommon(EntryPoint Which, void *DevPtr, int Value,
                                size_t Count, bool Async, cudaStream_t Handle) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = entryPointInfo(Which).Name;
  Op O;
  O.Kind = OpKind::Memset;
  O.Api = Api;
  O.Dst = reinterpret_cast<uintptr_t>(DevPtr);
  O.Value = Value;
  O.Width = Count;
  cudaError_t Error = Sim.enterOnDevice(Which);
  Stream *S = nullptr;
  if (Error == cudaSuccess && Async)
    S = Sim.lookupStream(Api, Handle, Error);
  if (Error == cudaSuccess && Count != 0)
    Error = Sim.checkMemset(Api, O);
  if (Error == cudaSuccess && Count != 0) {
    ++Sim.Stats.Memsets;
    if (Async) {
      Sim.enqueue(*S, O);
      Sim.launch(*S, O, /*BlocksHost=*/false);
    } else {
      // Device memory only: cudaMemset does not wait for it either.
      Error = Sim.runSynchronously(Api, O);
      Sim.runSynchronouslyInModel(O, /*HostWaits=*/false);
    }
  } else if (Error == cudaSuccess) {
    Sim.spend(Latency::Call);
  }
  Sim.trace("%s%s",
            Sim.describeOp(O, Async ? Sim.streamLabel(Handle) : "").c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(Which, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemset(void *devPtr, int value,
                                           size_t count) {
  return memsetCommon(EntryPoint::cudaMemset, devPtr, value, count,
                      /*Async=*/false, nullptr);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaMemsetAsync(void *devPtr, int value,
                                                size_t count,
                                                cudaStream_t stream) {
  return memsetCommon(EntryPoint::cudaMemsetAsync, devPtr, value, count,
                      /*Async=*/true, stream);
}

//===----------------------------------------------------------------------===//
// Driver memsets and cudaGetDriverEntryPointByVersion
//===----------------------------------------------------------------------===//

/// The CUresult for an error of the checks shared with the runtime.
static CUresult driverResult(cudaError_t Error) {
  switch (Error) {
  case cudaSuccess:
    return CUDA_SUCCESS;
  case cudaErrorNoDevice:
    return CUDA_ERROR_NO_DEVICE;
  case cudaErrorInvalidResourceHandle:
    return CUDA_ERROR_INVALID_HANDLE;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

/// Shared implementation of the simulated cuMemsetD8Async, cuMemsetD16Async
/// and cuMemsetD32Async: N elements of ElementSize bytes set to Pattern, in
/// stream order like cudaMemsetAsync. Driver calls return a CUresult and do
/// not touch the runtime's last error.
static CUresult driverMemset(EntryPoint Which, CUdeviceptr Dst,
                             uint32_t Pattern, unsigned ElementSize, size_t N,
                             CUstream Handle) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = entryPointInfo(Which).Name;
  Op O;
  O.Kind = OpKind::Memset;
  O.Api = Api;
  O.Dst = uintptr_t(Dst);
  O.Value = int(Pattern);
  O.ElementSize = ElementSize;
  O.DriverMemset = true;
  CUresult Result = CUresult(Sim.enter(Which));
  cudaError_t Error = cudaSuccess;
  if (Result == CUDA_SUCCESS)
    Error = Sim.requireDevice(Api);
  Stream *S = Result == CUDA_SUCCESS && Error == cudaSuccess
                  ? Sim.lookupStream(Api, Handle, Error)
                  : nullptr;
  if (S && __builtin_mul_overflow(N, size_t(ElementSize), &O.Width))
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid argument: %zu elements of %u bytes overflow the "
                     "address space",
                     N, ElementSize);
  else if (S && N != 0 && O.Dst % ElementSize != 0)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "misaligned pointer: dst %s is not %u-byte aligned",
                     hex(O.Dst).c_str(), ElementSize);
  if (S && Error == cudaSuccess && N != 0)
    Error = Sim.checkMemset(Api, O);
  if (S && Error == cudaSuccess && N != 0) {
    ++Sim.Stats.Memsets;
    Sim.enqueue(*S, O);
    Sim.launch(*S, O, /*BlocksHost=*/false);
  } else if (S && Error == cudaSuccess) {
    Sim.spend(Latency::Call);
  }
  if (Result == CUDA_SUCCESS)
    Result = driverResult(Error);
  Sim.trace("%s(dst=%s, value=0x%x, %zu elements, stream=%s)%s%s", Api,
            hex(O.Dst).c_str(), Pattern, N, Sim.streamLabel(Handle).c_str(),
            Result == CUDA_SUCCESS ? "" : " -> ",
            Result == CUDA_SUCCESS ? "" : driverErrorName(Result));
  return Result;
}

static CUresult simMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc,
                                 size_t N, CUstream hStream) {
  return driverMemset(EntryPoint::cuMemsetD8Async, dstDevice, uc, 1, N,
                      hStream);
}

static CUresult simMemsetD16Async(CUdeviceptr dstDevice, unsigned short us,
                                  size_t N, CUstream hStream) {
  return driverMemset(EntryPoint::cuMemsetD16Async, dstDevice, us, 2, N,
                      hStream);
}

static CUresult simMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui,
                                  size_t N, CUstream hStream) {
  return driverMemset(EntryPoint::cuMemsetD32Async, dstDevice, ui, 4, N,
                      hStream);
}

// The functions handed out must have exactly the driver's types (checked
// against cudaTypedefs.h when the toolkit is found).
static_assert(
    std::is_same<decltype(&simMemsetD8Async), PFN_cuMemsetD8Async_v3020>::value,
    "cuMemsetD8Async has the driver's type");
static_assert(std::is_same<decltype(&simMemsetD16Async),
                           PFN_cuMemsetD16Async_v3020>::value,
              "cuMemsetD16Async has the driver's type");
static_assert(std::is_same<decltype(&simMemsetD32Async),
                           PFN_cuMemsetD32Async_v3020>::value,
              "cuMemsetD32Async has the driver's type");

namespace {
/// A driver function cudaGetDriverEntryPointByVersion can return: its name,
/// the simulated function and the CUDA version that introduced the ABI.
struct DriverSymbol {
  const char *Name;
  void *Function;
  unsigned Introduced;
};
} // namespace

static const DriverSymbol kDriverSymbols[] = {
    {"cuMemsetD8Async", reinterpret_cast<void *>(&simMemsetD8Async), 3020},
    {"cuMemsetD16Async", reinterpret_cast<void *>(&simMemsetD16Async), 3020},
    {"cuMemsetD32Async", reinterpret_cast<void *>(&simMemsetD32Async), 3020},
};

static const char *queryResultName(cudaDriverEntryPointQueryResult Status) {
  switch (Status) {
  case cudaDriverEntryPointSuccess:
    return "cudaDriverEntryPointSuccess";
  case cudaDriverEntryPointSymbolNotFound:
    return "cudaDriverEntryPointSymbolNotFound";
  case cudaDriverEntryPointVersionNotSufficent:
    return "cudaDriverEntryPointVersionNotSufficent";
  }
  return "?";
}

ETCOPY_CUDA_SIM_API cudaError_t cudaGetDriverEntryPointByVersion(
    const char *symbol, void **funcPtr, unsigned int cudaVersion,
    unsigned long long flags, cudaDriverEntryPointQueryResult *driverStatus) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaGetDriverEntryPointByVersion";
  cudaError_t Error =
      Sim.enterOnDevice(EntryPoint::cudaGetDriverEntryPointByVersion);
  if (Error == cudaSuccess && (!symbol || !funcPtr))
    Error = Sim.fail(Api, cudaErrorInvalidValue, "invalid argument: %s is null",
                     !symbol ? "symbol" : "funcPtr");
  else if (Error == cudaSuccess && flags != cudaEnableDefault &&
           flags != cudaEnableLegacyStream &&
           flags != cudaEnablePerThreadDefaultStream)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid flags 0x%llx (expected cudaEnableDefault, "
                     "cudaEnableLegacyStream or "
                     "cudaEnablePerThreadDefaultStream)",
                     flags);
  else if (Error == cudaSuccess && cudaVersion > unsigned(kDriverVersion))
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "cudaVersion %u is newer than the driver (%d)",
                     cudaVersion, kDriverVersion);
  std::string Out;
  if (Error == cudaSuccess) {
    // As the real driver: an unknown symbol, or one newer than cudaVersion,
    // is not an error but yields a null pointer and a status saying why.
    // The legacy and per-thread default streams are the same stream in the
    // simulator, so both flags give the same functions.
    const DriverSymbol *Found = nullptr;
    for (const DriverSymbol &Candidate : kDriverSymbols)
      if (!strcmp(Candidate.Name, symbol))
        Found = &Candidate;
    cudaDriverEntryPointQueryResult Status = cudaDriverEntryPointSuccess;
    if (!Found)
      Status = cudaDriverEntryPointSymbolNotFound;
    else if (cudaVersion < Found->Introduced)
      Status = cudaDriverEntryPointVersionNotSufficent;
    *funcPtr =
        Status == cudaDriverEntryPointSuccess ? Found->Function : nullptr;
    if (driverStatus)
      *driverStatus = Status;
    Out = format("%s (%s)", *funcPtr ? hex(*funcPtr).c_str() : "NULL",
                 queryResultName(Status));
  }
  Sim.trace("%s(\"%s\", cudaVersion=%u, flags=%llu)%s", Api,
            symbol ? symbol : "(null)", cudaVersion, flags,
            Sim.result(Error, Out).c_str());
  return Sim.finish(EntryPoint::cudaGetDriverEntryPointByVersion, Error);
}

//===----------------------------------------------------------------------===//
// Streams
//===----------------------------------------------------------------------===//

static cudaError_t createStreamCommon(EntryPoint Which, cudaStream_t *PStream,
                                      unsigned Flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = entryPointInfo(Which).Name;
  cudaError_t Error = Sim.enterOnDevice(Which);
  if (Error == cudaSuccess && !PStream)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid argument: pStream is null");
  if (Error == cudaSuccess && Flags != cudaStreamDefault &&
      Flags != cudaStreamNonBlocking)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid flags 0x%x (expected cudaStreamDefault or "
                     "cudaStreamNonBlocking)",
                     Flags);
  std::string Name;
  if (Error == cudaSuccess) {
    Stream *S = Sim.createStream(Flags);
    *PStream = reinterpret_cast<cudaStream_t>(S);
    Name = Sim.streamName(*S);
  }
  if (Which == EntryPoint::cudaStreamCreate)
    Sim.trace("cudaStreamCreate(cuda:%d)%s", CurrentDevice,
              Sim.result(Error, Name).c_str());
  else
    Sim.trace("cudaStreamCreateWithFlags(flags=%u, cuda:%d)%s", Flags,
              CurrentDevice, Sim.result(Error, Name).c_str());
  return Sim.finish(Which, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaStreamCreate(cudaStream_t *pStream) {
  return createStreamCommon(EntryPoint::cudaStreamCreate, pStream,
                            cudaStreamDefault);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream,
                                                          unsigned int flags) {
  return createStreamCommon(EntryPoint::cudaStreamCreateWithFlags, pStream,
                            flags);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  std::string Label = Sim.streamLabel(stream);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaStreamDestroy);
  bool IsDefault = stream == nullptr || stream == cudaStreamLegacy ||
                   stream == cudaStreamPerThread;
  if (Error == cudaSuccess && IsDefault)
    Error = Sim.fail("cudaStreamDestroy", cudaErrorInvalidResourceHandle,
                     "the default stream cannot be destroyed");
  else if (Error == cudaSuccess)
    if (Stream *S = Sim.lookupStream("cudaStreamDestroy", stream, Error))
      Sim.destroyStream(*S);
  Sim.trace("cudaStreamDestroy(%s)%s", Label.c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaStreamDestroy, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaStreamSynchronize);
  Stream *S = Error == cudaSuccess
                  ? Sim.lookupStream("cudaStreamSynchronize", stream, Error)
                  : nullptr;
  if (S) {
    DrainContext Ctx("cudaStreamSynchronize");
    Sim.drain(*S, S->EnqueuedSeq, Ctx);
    Sim.waitUntil(S->ClockNs);
    Error = Ctx.Error;
    ++Sim.Stats.Syncs;
  }
  Sim.trace("cudaStreamSynchronize(%s)%s", Sim.streamLabel(stream).c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaStreamSynchronize, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaStreamQuery(cudaStream_t stream) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaStreamQuery);
  Stream *S = Error == cudaSuccess
                  ? Sim.lookupStream("cudaStreamQuery", stream, Error)
                  : nullptr;
  if (S) {
    // The first query of pending work answers "not ready" without running
    // it, so a program that reads results after one query sees stale data.
    // Asking again about the same work completes it, so that polling loops
    // terminate; a query that returned cudaSuccess is a valid sync point.
    if (S->hasPendingWork()) {
      if (S->QueriedAtSeq == S->EnqueuedSeq) {
        DrainContext Ctx("cudaStreamQuery");
        Sim.drain(*S, S->EnqueuedSeq, Ctx);
        Error = Ctx.Error;
      } else {
        S->QueriedAtSeq = S->EnqueuedSeq;
        Error = cudaErrorNotReady;
      }
    }
    // Once the program sees the stream idle, the host has waited for it.
    if (Error == cudaSuccess)
      Sim.waitUntil(S->ClockNs);
  }
  Sim.trace("cudaStreamQuery(%s)%s", Sim.streamLabel(stream).c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaStreamQuery, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaStreamWaitEvent(cudaStream_t stream,
                                                    cudaEvent_t event,
                                                    unsigned int flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaStreamWaitEvent";
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaStreamWaitEvent);
  Stream *S =
      Error == cudaSuccess ? Sim.lookupStream(Api, stream, Error) : nullptr;
  Event *E = S ? Sim.lookupEvent(Api, event, Error) : nullptr;
  if (E && (flags & ~unsigned(cudaEventWaitExternal))) {
    Error = Sim.fail(Api, cudaErrorInvalidValue, "invalid flags 0x%x", flags);
    E = nullptr;
  }
  // The wait captures the event's latest record now; recording the event
  // again later does not affect it.
  if (E && !E->isComplete()) {
    Op Wait;
    Wait.Kind = OpKind::Wait;
    Wait.Api = Api;
    Wait.WaitOn = E->RecordedOn;
    Wait.WaitSeq = E->RecordSeq;
    Wait.EventId = E->Id;
    Sim.enqueue(*S, Wait);
  }
  // In the model, later work on S starts after the recorded work ends.
  if (E && E->RecordedOn)
    Sim.endOn(*S, E->TimeNs);
  Sim.trace("cudaStreamWaitEvent(%s, %s)%s", Sim.streamLabel(stream).c_str(),
            Sim.eventLabel(event).c_str(), Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaStreamWaitEvent, Error);
}

//===----------------------------------------------------------------------===//
// Events
//===----------------------------------------------------------------------===//

static cudaError_t createEventCommon(EntryPoint Which, cudaEvent_t *PEvent,
                                     unsigned Flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = entryPointInfo(Which).Name;
  cudaError_t Error = Sim.enterOnDevice(Which);
  const unsigned Known =
      cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
  if (Error == cudaSuccess && !PEvent)
    Error =
        Sim.fail(Api, cudaErrorInvalidValue, "invalid argument: event is null");
  if (Error == cudaSuccess &&
      ((Flags & ~Known) ||
       ((Flags & cudaEventInterprocess) && !(Flags & cudaEventDisableTiming))))
    Error = Sim.fail(Api, cudaErrorInvalidValue, "invalid flags 0x%x", Flags);
  std::string Name;
  if (Error == cudaSuccess) {
    Event *E = Sim.createEvent(Flags);
    *PEvent = reinterpret_cast<cudaEvent_t>(E);
    Name = format("E%u", E->Id);
  }
  if (Which == EntryPoint::cudaEventCreate)
    Sim.trace("cudaEventCreate(cuda:%d)%s", CurrentDevice,
              Sim.result(Error, Name).c_str());
  else
    Sim.trace("cudaEventCreateWithFlags(flags=%u, cuda:%d)%s", Flags,
              CurrentDevice, Sim.result(Error, Name).c_str());
  return Sim.finish(Which, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaEventCreate(cudaEvent_t *event) {
  return createEventCommon(EntryPoint::cudaEventCreate, event,
                           cudaEventDefault);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event,
                                                         unsigned int flags) {
  return createEventCommon(EntryPoint::cudaEventCreateWithFlags, event, flags);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaEventRecord(cudaEvent_t event,
                                                cudaStream_t stream) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaEventRecord";
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaEventRecord);
  Event *E =
      Error == cudaSuccess ? Sim.lookupEvent(Api, event, Error) : nullptr;
  Stream *S = E ? Sim.lookupStream(Api, stream, Error) : nullptr;
  if (S && E->Device != S->Device)
    Error = Sim.fail(Api, cudaErrorInvalidResourceHandle,
                     "event E%u was created on cuda:%d but stream %s belongs "
                     "to cuda:%d",
                     E->Id, E->Device, Sim.streamName(*S).c_str(), S->Device);
  if (Error == cudaSuccess) {
    // Recording is a stream operation, so it takes part in the legacy
    // default-stream ordering like any other.
    Sim.addImplicitWaits(*S);
    E->RecordedOn = S;
    E->RecordSeq = S->EnqueuedSeq;
    ++E->Records;
    // The record completes when the work queued before it ends.
    Sim.spend(Latency::Event);
    E->TimeNs = Sim.streamReady(*S);
    Sim.endOn(*S, E->TimeNs);
  }
  Sim.trace("cudaEventRecord(%s, stream=%s)%s", Sim.eventLabel(event).c_str(),
            Sim.streamLabel(stream).c_str(), Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaEventRecord, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaEventSynchronize);
  Event *E = Error == cudaSuccess
                 ? Sim.lookupEvent("cudaEventSynchronize", event, Error)
                 : nullptr;
  if (E) {
    DrainContext Ctx("cudaEventSynchronize");
    if (E->RecordedOn) {
      Sim.drain(*E->RecordedOn, E->RecordSeq, Ctx);
      Sim.waitUntil(E->TimeNs);
    }
    Error = Ctx.Error;
    ++Sim.Stats.Syncs;
  }
  Sim.trace("cudaEventSynchronize(%s)%s", Sim.eventLabel(event).c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaEventSynchronize, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaEventQuery(cudaEvent_t event) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaEventQuery);
  Event *E = Error == cudaSuccess
                 ? Sim.lookupEvent("cudaEventQuery", event, Error)
                 : nullptr;
  // Same policy as cudaStreamQuery: "not ready" once, then complete.
  if (E && !E->isComplete()) {
    if (E->QueriedAtRecord == E->Records) {
      DrainContext Ctx("cudaEventQuery");
      Sim.drain(*E->RecordedOn, E->RecordSeq, Ctx);
      Error = Ctx.Error;
    } else {
      E->QueriedAtRecord = E->Records;
      Error = cudaErrorNotReady;
    }
  }
  // Once the program sees the record complete, the host has waited for it.
  if (E && E->RecordedOn && Error == cudaSuccess)
    Sim.waitUntil(E->TimeNs);
  Sim.trace("cudaEventQuery(%s)%s", Sim.eventLabel(event).c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaEventQuery, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaEventDestroy(cudaEvent_t event) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaEventDestroy);
  // A pending record needs nothing from the event object: waits refer to
  // the recording stream, so destroying it early is harmless, as in CUDA.
  Event *E = Error == cudaSuccess
                 ? Sim.lookupEvent("cudaEventDestroy", event, Error)
                 : nullptr;
  if (E) {
    E->Destroyed = true;
    ++Sim.Stats.EventsDestroyed;
  }
  Sim.trace("cudaEventDestroy(%s)%s", Sim.eventLabel(event).c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaEventDestroy, Error);
}

//===----------------------------------------------------------------------===//
// The timing model's interface (CudaSimModel.h)
//===----------------------------------------------------------------------===//

ETCOPY_CUDA_SIM_API unsigned long long etcopy_cuda_sim_modelled_time_ns(void) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  return (unsigned long long)std::llround(Sim.HostNs);
}

ETCOPY_CUDA_SIM_API void etcopy_cuda_sim_reset_modelled_time(void) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  Sim.resetModelledTime();
}
