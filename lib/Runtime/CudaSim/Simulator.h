//===- Simulator.h - State of the CUDA Runtime API simulator ----*- C++ -*-===//
//
// The internal header of libetcopy_cuda_sim.so (docs/CudaSimulator.md): the
// Simulator class that holds all state behind one mutex, the records it keeps
// (allocations, streams, events, queued operations), the configuration read
// from the environment, the table of entry points with their call kinds,
// injected errors and costs, and the small text helpers every part uses. The
// exported functions live in the Api*.cpp files; the Simulator's methods are
// implemented by concern in Config.cpp, Diagnostics.cpp, Memory.cpp,
// HostFaultHandler.cpp, MemPools.cpp, Streams.cpp and TimingModel.cpp.
// Everything here is hidden: only the cuda* and etcopy_cuda_sim_* functions
// are exported.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_RUNTIME_CUDASIM_SIMULATOR_H
#define ETCOPY_RUNTIME_CUDASIM_SIMULATOR_H

#if defined(ETCOPY_CUDA_SIM_HAVE_CUDA_HEADERS)
#include <cuda_runtime_api.h>
// cuda.h, for the CUresult codes the simulated driver functions return.
#include <cuda.h>
#else
#include "CudaRuntimeSubset.h"
#endif

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

/// Marks the exported CUDA entry points; everything else is hidden.
#define ETCOPY_CUDA_SIM_API extern "C" __attribute__((visibility("default")))

namespace etcopy::cudasim {

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

constexpr const char *kPrefix = "etcopy-cuda-sim: ";
constexpr int kMaxDevices = 64;
constexpr int kRuntimeVersion = 13000;
constexpr int kDriverVersion = 13000;

//===----------------------------------------------------------------------===//
// Text helpers (Diagnostics.cpp)
//===----------------------------------------------------------------------===//

__attribute__((format(printf, 1, 2))) std::string format(const char *Fmt, ...);
std::string hex(uintptr_t Value);
std::string hex(const void *Pointer);
/// Writes "etcopy-cuda-sim: <severity>: <text>" to stderr as one write.
/// stdout is flushed first so that, in a `2>&1` transcript, the line comes
/// after everything the program printed before the failing call.
void emitLine(const char *Severity, const std::string &Text);
__attribute__((format(printf, 2, 3))) void emit(const char *Severity,
                                                const char *Fmt, ...);
std::string deviceName(int Device);
/// Short spelling used in traces ("HostToDevice"), null for invalid kinds.
const char *copyKindName(int Kind);
std::string copyKindLabel(int Kind);

//===----------------------------------------------------------------------===//
// Error names
//===----------------------------------------------------------------------===//

struct ErrorDescription {
  int Code;
  const char *Name;
  const char *Text;
};

/// libcudart answers both queries with this text for codes it does not know.
constexpr const char *kUnrecognizedError = "unrecognized error code";

/// The entry of Error in the table of libcudart 13's names and descriptions,
/// or null if libcudart does not know it.
const ErrorDescription *findError(cudaError_t Error);
const char *errorName(cudaError_t Error);
/// Names of the CUresult codes the simulated driver functions return.
const char *driverErrorName(int Result);

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

inline constexpr const char *kCallKindNames[] = {
    "alloc", "free", "copy",       "batch",      "memset", "stream",
    "event", "sync", "set-device", "host-alloc", "peer",   "other"};
constexpr size_t kNumCallKinds = sizeof(kCallKindNames) / sizeof(char *);

/// The latencies of the timing model (docs/CudaSimulator.md explains each
/// default and where it comes from); ETCOPY_CUDA_SIM_COST_<NAME>_NS
/// overrides one. The first ones are host-side costs of API calls, COPY and
/// BATCH_COPY are paid on the device by every copy and memset, POOL_GROW by
/// an allocation that makes its memory pool map more memory, and PAGE_FAULT
/// by a copy per 4 KiB of pageable memory that was never touched.
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
  PoolGrow,
  PageFault,
  GraphInstantiate,
  GraphLaunch,
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

/// Latencies in nanoseconds, in the order of Latency. The defaults are
/// calibrated to the raw limits measured on an H200; docs/CudaSimulator.md
/// gives the source of each ("Costs and where the defaults come from") and
/// the calibration table, and test/Runtime/CudaSim/model-calibration.c
/// checks them.
inline constexpr CostDefault kLatencyDefaults[] = {
    {"CALL", 100},           {"LAUNCH", 2450},         {"BATCH_ENTRY", 100},
    {"SYNC", 2000},          {"QUERY", 500},           {"EVENT", 1000},
    {"STREAM_CREATE", 3500}, {"STREAM_DESTROY", 2100}, {"EVENT_CREATE", 1000},
    {"EVENT_DESTROY", 1000}, {"MALLOC", 10000},        {"FREE", 10000},
    {"MALLOC_ASYNC", 400},   {"FREE_ASYNC", 200},      {"HOST_ALLOC", 490000},
    {"HOST_FREE", 100000},   {"COPY", 2450},           {"BATCH_COPY", 940},
    {"POOL_GROW", 105000},   {"PAGE_FAULT", 1430},     {"GRAPH_INSTANTIATE", 20000},
    {"GRAPH_LAUNCH", 2450}};
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
  X(cudaMallocFromPoolAsync, Alloc, cudaErrorMemoryAllocation, MallocAsync)    \
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
  X(cudaDeviceGetDefaultMemPool, Other, cudaErrorInvalidValue, Call)           \
  X(cudaDeviceGetMemPool, Other, cudaErrorInvalidValue, Call)                  \
  X(cudaDeviceSetMemPool, Other, cudaErrorInvalidValue, Call)                  \
  X(cudaMemPoolCreate, Other, cudaErrorNotSupported, Call)                     \
  X(cudaMemPoolDestroy, Other, cudaErrorInvalidValue, Call)                    \
  X(cudaMemPoolSetAttribute, Other, cudaErrorInvalidValue, Call)               \
  X(cudaMemPoolGetAttribute, Other, cudaErrorInvalidValue, Call)               \
  X(cudaMemPoolTrimTo, Other, cudaErrorInvalidValue, Call)                     \
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
  X(cudaGetDriverEntryPointByVersion, Other, cudaErrorNotSupported, Call)     \
  X(cudaLibraryLoadData, Other, cudaErrorInvalidKernelImage, Call)             \
  X(cudaLibraryUnload, Other, cudaErrorInvalidResourceHandle, Call)            \
  X(cudaLibraryGetKernel, Other, cudaErrorSymbolNotFound, Call)                \
  X(cudaLaunchKernel, Other, cudaErrorLaunchFailure, None)                    \
  X(cudaStreamBeginCapture, Stream, cudaErrorInvalidValue, Call)               \
  X(cudaStreamEndCapture, Stream, cudaErrorInvalidValue, Call)                 \
  X(cudaStreamIsCapturing, Stream, cudaErrorInvalidValue, Call)                \
  X(cudaGraphInstantiate, Other, cudaErrorInvalidValue, GraphInstantiate)      \
  X(cudaGraphLaunch, Other, cudaErrorInvalidValue, GraphLaunch)                \
  X(cudaGraphExecDestroy, Other, cudaErrorInvalidValue, Call)                  \
  X(cudaGraphDestroy, Other, cudaErrorInvalidValue, Call)

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

inline constexpr EntryPointInfo kEntryPoints[] = {
#define ETCOPY_CUDA_SIM_ENTRY(Name, Kind, Error, Cost)                         \
  {#Name, CallKind::Kind, int(Error), Latency::Cost},
    ETCOPY_CUDA_SIM_ENTRY_POINTS(ETCOPY_CUDA_SIM_ENTRY)
#undef ETCOPY_CUDA_SIM_ENTRY
};
constexpr size_t kNumEntryPoints =
    sizeof(kEntryPoints) / sizeof(kEntryPoints[0]);

inline const EntryPointInfo &entryPointInfo(EntryPoint Which) {
  return kEntryPoints[size_t(Which)];
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
inline constexpr const char *kCopyPathNames[] = {
    "h2h",          "h2d_pinned", "h2d_pageable", "d2h_pinned",
    "d2h_pageable", "d2d",        "peer_direct",  "peer_staged"};
constexpr size_t kNumCopyPaths = sizeof(kCopyPathNames) / sizeof(char *);

/// The bandwidths of the timing model, in GB/s (10^9 bytes per second, that
/// is bytes per nanosecond): one per copy path, then memsets, then the rate
/// at which cudaMallocHost, cudaHostAlloc and cudaHostRegister pin host
/// memory. ETCOPY_CUDA_SIM_BW_<NAME>_GBPS overrides one.
inline constexpr CostDefault kBandwidthDefaults[] = {
    {"H2H", 10},        {"H2D_PINNED", 55},     {"H2D_PAGEABLE", 6.8},
    {"D2H_PINNED", 55}, {"D2H_PAGEABLE", 13},   {"D2D", 2000},
    {"PEER", 380},      {"PEER_STAGED", 27.5},  {"MEMSET", 3600},
    {"HOST_PIN", 1.7}};
constexpr size_t kNumBandwidths =
    sizeof(kBandwidthDefaults) / sizeof(kBandwidthDefaults[0]);
constexpr size_t kMemsetBandwidth = kNumCopyPaths;
constexpr size_t kHostPinBandwidth = kNumCopyPaths + 1;
static_assert(kNumBandwidths == kNumCopyPaths + 2,
              "one bandwidth per copy path, then memsets and pinning");
/// The page size of the host the costs describe (x86-64): PAGE_FAULT is
/// charged per this many bytes of fresh pageable memory.
constexpr size_t kModelPageBytes = 4096;

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
// Configuration from the environment (Config.cpp)
//===----------------------------------------------------------------------===//

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
  /// The granularity at which a memory pool maps memory in the timing model
  /// (ETCOPY_CUDA_SIM_POOL_CHUNK; docs/CudaSimulator.md, "Memory pools").
  uint64_t PoolChunkBytes = uint64_t(1) << 20;
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

//===----------------------------------------------------------------------===//
// Allocations (Memory.cpp) and the fault handler (HostFaultHandler.cpp)
//===----------------------------------------------------------------------===//

enum class MemKind : uint8_t { Device, Managed, PinnedHost };

struct MemPool;

const char *memKindName(MemKind Kind);

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
  /// The memory pool the allocation came from (cudaMallocAsync,
  /// cudaMallocFromPoolAsync), or null.
  MemPool *Pool = nullptr;
  /// Made by an allocation node: cudaMallocAsync or cudaMallocFromPoolAsync
  /// in a capture. Only such memory may be freed in a capture.
  bool GraphAllocation = false;
  /// A cudaFreeAsync of this allocation is queued but has not executed.
  bool FreePending = false;
  uint32_t FreeStream = 0;
  const char *FreedBy = "";
};

/// The reserved device address space and the allocation table. They are
/// atomics because the fault handler reads them without the simulator lock.
extern std::atomic<uintptr_t> ArenaBegin;
extern std::atomic<uintptr_t> ArenaEnd;
extern std::atomic<Allocation *> AllocationTable;
extern std::atomic<size_t> AllocationCount;

/// Returns the allocation whose reserved range (mapping and guard page)
/// contains Address, or null. Safe to call from a signal handler.
Allocation *findAllocation(uintptr_t Address);
bool inArena(uintptr_t Address);

/// Installs the SIGSEGV/SIGBUS handler that reports host accesses to device
/// memory; later calls do nothing.
void installFaultHandlers();
/// Puts back the handlers we replaced, if ours are still the installed ones,
/// so that nothing points into this library once it may be unloaded.
void restoreFaultHandlers();

//===----------------------------------------------------------------------===//
// Streams, events and queued work
//===----------------------------------------------------------------------===//

struct Stream;

enum class OpKind : uint8_t { Copy, Memset, Free, Wait, Kernel };

/// A queued kernel launch (ApiKernel.cpp).
struct KernelRun;

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
  /// Timing model: bytes of pageable host memory the copy touches that were
  /// never touched before it (not resident when the call was made).
  uint64_t FreshHostBytes = 0;
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
  /// Kernel: the launch, run when the op executes.
  std::shared_ptr<const KernelRun> Kernel;
};

/// The work of a captured graph (ApiGraph.cpp): the ops captured from one
/// stream, in order, which every launch of an instance queues again, and
/// the allocations the capture made (cudaMallocAsync in capture: an
/// allocation node, whose address stays the same for the graph's life).
/// Shared by the graph and its instances; the allocations are released
/// when the last of them is destroyed.
struct GraphBody {
  int Device = 0;
  std::vector<Op> Nodes;
  std::vector<Allocation *> Allocations;
  /// Allocations of the capture that no captured cudaFreeAsync frees.
  size_t UnfreedAllocations = 0;
  /// Whether an instance was launched: the allocations no free node frees
  /// are then live, and outlive the graph (releaseGraphBody).
  bool Launched = false;
};

struct Graph {
  uint32_t Id = 0;
  bool Destroyed = false;
  std::shared_ptr<GraphBody> Body;
};

struct GraphExec {
  uint32_t Id = 0;
  bool Destroyed = false;
  bool Launched = false;
  std::shared_ptr<GraphBody> Body;
};

struct Stream {
  /// 0 for the per-device default stream, else a process-wide number.
  uint32_t Id = 0;
  int Device = 0;
  unsigned Flags = cudaStreamDefault;
  bool Destroyed = false;
  /// cudaStreamPerThread of one host thread on this device: a blocking
  /// stream that the program neither creates nor destroys.
  bool PerThread = false;
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
  /// Stream capture: the graph being captured (work queued on the stream is
  /// recorded there instead), its mode and thread, and whether an illegal
  /// call invalidated it.
  std::shared_ptr<GraphBody> Capture;
  int CaptureMode = 0;
  std::thread::id CaptureThread;
  bool CaptureInvalidated = false;

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

/// A memory pool of the stream-ordered allocator (MemPools.cpp): a device's
/// default pool or one made by cudaMemPoolCreate. Allocations from a pool
/// are ordinary simulator allocations (never reused, so that stale pointers
/// stay detectable); the pool keeps the byte counts that decide what an
/// allocation costs in the timing model and what its attributes report.
struct MemPool {
  /// 0 for the default pools, else a process-wide number.
  uint32_t Id = 0;
  int Device = 0;
  bool Destroyed = false;
  /// cudaMemPoolProps::maxSize; 0 means no limit.
  uint64_t MaxSize = 0;
  // Attributes.
  uint64_t ReleaseThreshold = 0;
  bool ReuseFollowEventDependencies = true;
  bool ReuseAllowOpportunistic = true;
  bool ReuseAllowInternalDependencies = true;
  /// Bytes mapped for the pool (a multiple of the chunk size, unless capped
  /// by MaxSize), and bytes of its allocations not yet freed.
  uint64_t Reserved = 0;
  uint64_t Used = 0;
  uint64_t ReservedHigh = 0;
  uint64_t UsedHigh = 0;

  bool isDefault() const { return Id == 0; }
};

struct DeviceState {
  std::unique_ptr<Stream> DefaultStream;
  /// The default memory pool (created on first use) and the current one
  /// (cudaDeviceSetMemPool); a null CurrentPool means the default pool.
  MemPool *DefaultPool = nullptr;
  MemPool *CurrentPool = nullptr;
  /// Created streams of this device, including destroyed ones that still
  /// have queued work (the "orphans" that run at the next device-wide sync),
  /// and the per-thread default streams.
  std::vector<Stream *> Streams;
  /// The per-thread default stream of each host thread that used one on
  /// this device (owned by AllStreams).
  std::map<std::thread::id, Stream *> PerThreadStreams;
  /// Bytes of live device and managed memory, for the memory limit.
  uint64_t LiveBytes = 0;
  /// The most LiveBytes ever held (peak_device_bytes of the statistics).
  uint64_t PeakBytes = 0;
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
  /// Timing model: allocations that made a pool map memory, and pages of
  /// fresh pageable memory that copies touched.
  uint64_t PoolGrowths = 0;
  uint64_t FreshPages = 0;
  /// Bytes of live pinned host memory (cudaMallocHost, cudaHostAlloc), and
  /// the most ever held (peak_host_bytes).
  uint64_t HostLiveBytes = 0;
  uint64_t HostPeakBytes = 0;
};

/// The current device and the last error of the calling thread. Inline
/// definitions, so that every file sees the constant initializers and
/// accesses them directly rather than through TLS wrapper functions.
inline thread_local int CurrentDevice = 0;
inline thread_local cudaError_t LastError = cudaSuccess;

//===----------------------------------------------------------------------===//
// The simulator state
//===----------------------------------------------------------------------===//

/// All simulator state, guarded by Mutex. Created on first use and never
/// destroyed. Like libcudart, whose initialisation registers an exit handler
/// that tears the runtime down, creating it registers an exit handler
/// (runExitHandler) that runs the exit checks and then makes the runtime
/// unloading: every later call fails with cudaErrorCudartUnloading.
class Simulator {
public:
  static Simulator &get();
  /// The instance if any API call created it, else null.
  static Simulator *getIfCreated() {
    return Instance.load(std::memory_order_acquire);
  }
  /// The exit handler registered when the simulator is created; it also
  /// runs when a dlopen'ed simulator is dlclose'd.
  static void runExitHandler(void *);

  std::mutex Mutex;
  Config Cfg;
  Counters Stats;

  // Reporting, counting and fault injection, exit checks (Diagnostics.cpp).
  __attribute__((format(printf, 4, 5))) cudaError_t
  fail(const char *Api, cudaError_t Code, const char *Fmt, ...);
  __attribute__((format(printf, 2, 3))) void trace(const char *Fmt, ...);
  std::string result(cudaError_t Code, const std::string &OnSuccess = "");
  cudaError_t finish(EntryPoint Which, cudaError_t Code);
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
  /// Runs the exit checks once, then makes the runtime unloading.
  void runExitChecks();
  /// Fails a call made while the runtime is unloading.
  int failUnloading(EntryPoint Which);
  bool isUnloading() const { return Unloading; }
  void printStatistics();
  void printCallStatistics();
  void printModelStatistics();

  // Devices, streams and events (Streams.cpp).
  cudaError_t requireDevice(const char *Api);
  std::string streamName(const Stream &S) const;
  std::string streamLabel(cudaStream_t Handle) const;
  std::string eventLabel(cudaEvent_t Handle) const;
  Stream *lookupStream(const char *Api, cudaStream_t Handle,
                       cudaError_t &Error);
  Event *lookupEvent(const char *Api, cudaEvent_t Handle, cudaError_t &Error);
  Stream *createStream(unsigned Flags);
  /// The calling thread's cudaStreamPerThread on the current device, made at
  /// its first use.
  Stream *perThreadStream();
  Event *createEvent(unsigned Flags);
  void destroyStream(Stream &S);
  void enqueue(Stream &S, Op O);
  void addImplicitWaits(Stream &S);
  cudaError_t resetCurrentDevice();
  cudaError_t checkDeviceOrdinal(const char *Api, const char *Role, int Device);
  cudaError_t canAccessPeer(int *CanAccess, int Device, int Peer);
  cudaError_t enablePeerAccess(int Peer, unsigned Flags);
  cudaError_t disablePeerAccess(int Peer);

  // Execution (Streams.cpp).
  void drain(Stream &S, uint64_t UpTo, DrainContext &Ctx);
  void drainDevice(int Device, bool BlockingOnly, DrainContext &Ctx);
  void drainAllDevices(DrainContext &Ctx);
  void execute(const Op &O, const Stream *S, DrainContext &Ctx);
  std::string describeOp(const Op &O, const std::string &StreamText) const;
  cudaError_t runSynchronously(const char *Api, const Op &O);
  void drainBlockingStreams(const Op &O, DrainContext &Ctx);
  static bool returnsBeforeDone(const Op &O);
  cudaError_t queueOnLegacyStream(const char *Api, Op O);
  void involvedDevices(const Op &O, bool (&Involved)[kMaxDevices]) const;

  // Kernels (ApiKernel.cpp).
  void runKernel(const KernelRun &Run, DrainContext &Ctx);
  std::string describeKernel(const KernelRun &Run) const;

  // Stream capture and graphs (ApiGraph.cpp).
  /// Makes the allocation at Pointer, which a stream-ordered allocation on
  /// capturing stream S just returned, an allocation node of the capture.
  void recordAllocationNode(Stream &S, void *Pointer);
  /// Fails a call that stream capture forbids while `S` captures
  /// (synchronisation, queries, events): cudaErrorStreamCaptureUnsupported,
  /// and the capture is invalidated.
  cudaError_t failInCapture(const char *Api, Stream &S, const char *What);
  /// Fails a potentially unsafe call (one that may synchronise implicitly:
  /// cudaMalloc, synchronous copies, ...) made while a capture forbids it:
  /// one in cudaStreamCaptureModeGlobal on any thread, or one of this
  /// thread in cudaStreamCaptureModeThreadLocal. Those captures are
  /// invalidated.
  cudaError_t checkCaptureSafe(const char *Api);
  /// Fails cudaDeviceSynchronize while a stream of `Device` captures.
  cudaError_t checkDeviceNotCapturing(const char *Api, int Device);
  /// Releases the allocations of a graph body no graph refers to any more.
  void releaseGraphBody(GraphBody &Body, const char *By);
  std::vector<std::unique_ptr<Graph>> AllGraphs;
  std::vector<std::unique_ptr<GraphExec>> AllGraphExecs;
  std::unordered_map<const void *, Graph *> GraphHandles;
  std::unordered_map<const void *, GraphExec *> GraphExecHandles;
  /// Streams capturing now, for the checks of unsafe calls.
  std::vector<Stream *> CapturingStreams;

  // Memory (Memory.cpp).
  PtrInfo classify(uintptr_t Address) const;
  std::string describe(const PtrInfo &Info) const;
  cudaError_t allocate(const char *Api, void **Out, size_t Size, MemKind Kind,
                       int Device);
  cudaError_t checkFree(FreeApi Which, const void *Pointer, Allocation *&Alloc);
  void release(Allocation &A, const char *By, uint32_t StreamId);
  cudaError_t checkRange(const char *Api, const char *Role, uintptr_t Address,
                         const PtrInfo &Info, size_t Extent,
                         const std::string &Shape);
  cudaError_t checkRegisteredSpan(const char *Api, const char *Role,
                                  uintptr_t Address, const PtrInfo &Info,
                                  size_t Extent);
  cudaError_t checkCopy(const char *Api, Op &O);
  cudaError_t checkPeerCopy(const char *Api, Op &O);
  cudaError_t checkMemset(const char *Api, Op &O, const Stream *S);
  std::shared_ptr<const std::vector<char>> snapshotSource(const Op &O) const;
  CopyPath copyPath(const PtrInfo &Dst, const PtrInfo &Src) const;
  void countCopy(const Op &O);
  cudaError_t registerHostMemory(void *Pointer, size_t Size, unsigned Flags);
  cudaError_t unregisterHostMemory(void *Pointer);
  cudaError_t getAttributes(cudaPointerAttributes *Attributes,
                            const void *Pointer);
  cudaError_t getDevicePointer(void **Device, void *Host, unsigned Flags);

  // Memory pools (MemPools.cpp).
  MemPool &defaultPool(int Device);
  MemPool &currentPool(int Device);
  std::string poolName(const MemPool &P) const;
  std::string poolLabel(cudaMemPool_t Handle) const;
  MemPool *lookupPool(const char *Api, cudaMemPool_t Handle,
                      cudaError_t &Error);
  cudaError_t createPool(cudaMemPool_t *Out, const cudaMemPoolProps *Props);
  cudaError_t destroyPool(MemPool &P);
  cudaError_t setDevicePool(int Device, MemPool &P);
  cudaError_t setPoolAttribute(MemPool &P, int Attr, const void *Value);
  cudaError_t getPoolAttribute(const MemPool &P, int Attr, void *Value);
  cudaError_t allocateFromPool(const char *Api, void **Out, size_t Size,
                               MemPool &P);
  void notePoolFreeQueued(Allocation &A);
  void notePoolRelease(Allocation &A);
  void trimPool(MemPool &P, uint64_t Keep);
  void trimPoolsAtSync(int Device);
  void resetPools(int Device);

  // The timing model (TimingModel.cpp).
  double HostNs = 0;
  void spend(Latency Which) { HostNs += Cfg.Costs.latency(Which); }
  /// Pinning Bytes of host memory (cudaMallocHost, cudaHostAlloc,
  /// cudaHostRegister), besides the call's fixed latency.
  void spendPinning(size_t Bytes) {
    HostNs += double(Bytes) / Cfg.Costs.GBps[kHostPinBandwidth];
  }
  uint64_t freshHostBytes(uintptr_t Address, size_t Extent) const;
  void noteFreshHostBytes(Op &O);
  double firstTouchNs(const Op &O) const;
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

private:
  Simulator();
  // Memory.cpp.
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
  /// Every pool, default ones included, and the handles of those made by
  /// cudaMemPoolCreate (destroyed ones stay, like streams and events).
  std::vector<std::unique_ptr<MemPool>> AllPools;
  std::unordered_map<const void *, MemPool *> PoolHandles;
  uint32_t CreatedPools = 0;
  std::map<uintptr_t, Registration> Registrations;
  uintptr_t ArenaNext = 0;
  size_t PageSize = 4096;
  bool ExitChecksDone = false;
  /// Set by the exit handler after the exit checks: from then on every
  /// entry point fails with cudaErrorCudartUnloading, as libcudart's do
  /// once its own exit handler has torn it down.
  bool Unloading = false;
};

} // namespace etcopy::cudasim

#endif // ETCOPY_RUNTIME_CUDASIM_SIMULATOR_H
