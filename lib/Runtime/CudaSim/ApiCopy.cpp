//===- ApiCopy.cpp - CUDA copy and memset entry points ----------*- C++ -*-===//
//
// The exported copies (cudaMemcpy, cudaMemcpyAsync, the 2D and peer
// variants, cudaMemcpyBatchAsync), cudaMemset and cudaMemsetAsync, and the
// driver memsets that cudaGetDriverEntryPointByVersion hands out. Asynchronous
// work is validated when it is queued and performed when its stream is
// synchronised; synchronous work runs at once on the legacy default
// stream.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#if defined(ETCOPY_CUDA_SIM_HAVE_CUDA_HEADERS)
// The driver function pointer types, to check the simulated driver
// functions against them.
#include <cudaTypedefs.h>
#endif

#include <cinttypes>
#include <type_traits>

using namespace etcopy::cudasim;

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
  if (Error == cudaSuccess && !Async)
    Error = Sim.checkCaptureSafe(Api);
  if (Error == cudaSuccess && !copyKindName(O.CopyKind))
    Error = Sim.fail(Api, cudaErrorInvalidMemcpyDirection,
                     "invalid copy kind %d", O.CopyKind);
  if (Error == cudaSuccess && O.IsPeer)
    Error = Sim.checkDeviceOrdinal(Api, "dstDevice", O.DstDevice);
  if (Error == cudaSuccess && O.IsPeer)
    Error = Sim.checkDeviceOrdinal(Api, "srcDevice", O.SrcDevice);
  // CUDA documents no copy of 0 bytes and rejects a batch holding one (seen
  // on an H200): the simulator rejects them all.
  if (Error == cudaSuccess && (O.Width == 0 || O.Height == 0))
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "empty copy: %s is 0; the simulator rejects copies of 0 "
                     "bytes (undocumented for %s; cudaMemcpyBatchAsync "
                     "rejects them)",
                     O.Width != 0 ? "height"
                     : O.Is2D     ? "width"
                                  : "count",
                     Api);
  if (Error == cudaSuccess && O.IsPeer)
    Error = Sim.checkPeerCopy(Api, O);
  if (Error == cudaSuccess)
    Error = Sim.checkCopy(Api, O);
  // A graph cannot replay what the call does with pageable memory at once
  // (it stages the source, or waits for the destination): the simulator
  // rejects pageable memory in a capture (docs/CudaSimulator.md).
  if (Error == cudaSuccess && S && S->Capture &&
      (O.Path == CopyPath::PageableToDevice ||
       O.Path == CopyPath::DeviceToPageable || O.Path == CopyPath::HostToHost))
    Error = Sim.failInCapture(Api, *S,
                              "copies pageable host memory on");
  if (Error == cudaSuccess) {
    Sim.noteFreshHostBytes(O);
    // A captured copy is counted when a launch runs it.
    if (!S || !S->Capture)
      Sim.countCopy(O);
    if (Async) {
      Sim.enqueue(*S, O);
      Sim.launch(*S, O, hostPerformsAsyncCopy(O.Path));
    } else {
      Error = Simulator::returnsBeforeDone(O)
                  ? Sim.queueOnLegacyStream(Api, O)
                  : Sim.runSynchronously(Api, O);
      Sim.runSynchronouslyInModel(O, touchesHostMemory(O.Path));
    }
  }
  std::string Path = Error == cudaSuccess
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
  // CUDA 13 cannot capture a batch; the call fails without invalidating
  // the capture (docs/CudaSimulator.md).
  if (S && S->Capture) {
    Error = Sim.fail(Api, cudaErrorStreamCaptureUnsupported,
                     "%s is capturing a graph: CUDA 13 cannot capture "
                     "cudaMemcpyBatchAsync (the capture goes on without the "
                     "copies)",
                     Sim.streamName(*S).c_str());
    S = nullptr;
  }
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
    std::string Where = format("%s: copy %zu", Api, I);
    // A 0-byte copy fails the whole batch: an H200 (CUDA 13.0) rejects a
    // batch holding one whose pointers are null (cudaMallocAsync of 0
    // bytes); with other pointers the driver's answer is unknown.
    if (sizes[I] == 0) {
      Error = Sim.fail(Where.c_str(), cudaErrorInvalidValue,
                       "empty copy: sizes[%zu] is 0 (dst %s, src %s); CUDA "
                       "rejects a batch that holds a copy of 0 bytes",
                       I, hex(dsts[I]).c_str(), hex(srcs[I]).c_str());
      break;
    }
    Op O = makeCopy(dsts[I], sizes[I], srcs[I], sizes[I], sizes[I], 1,
                    cudaMemcpyDefault, /*Is2D=*/false);
    O.Api = Api;
    O.InBatch = true;
    O.BatchIndex = I;
    Error = Sim.checkCopy(Where.c_str(), O);
    if (Error == cudaSuccess)
      Sim.noteFreshHostBytes(O);
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
  if (Error == cudaSuccess && !Async)
    Error = Sim.checkCaptureSafe(Api);
  if (Error == cudaSuccess && Count == 0)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "empty memset: count is 0; the simulator rejects memsets "
                     "of 0 bytes (undocumented for %s)",
                     Api);
  if (Error == cudaSuccess)
    Error = Sim.checkMemset(Api, O, S);
  if (Error == cudaSuccess) {
    if (!S || !S->Capture) // Counted when a launch runs it.
      ++Sim.Stats.Memsets;
    if (Async) {
      Sim.enqueue(*S, O);
      Sim.launch(*S, O, /*BlocksHost=*/false);
    } else {
      // Device memory only: cudaMemset does not wait for it either.
      Error = Simulator::returnsBeforeDone(O)
                  ? Sim.queueOnLegacyStream(Api, O)
                  : Sim.runSynchronously(Api, O);
      Sim.runSynchronouslyInModel(O, /*HostWaits=*/false);
    }
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
  if (S && N == 0)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "empty memset: N is 0; the simulator rejects memsets of "
                     "0 elements (undocumented for %s)",
                     Api);
  else if (S && __builtin_mul_overflow(N, size_t(ElementSize), &O.Width))
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid argument: %zu elements of %u bytes overflow the "
                     "address space",
                     N, ElementSize);
  else if (S && O.Dst % ElementSize != 0)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "misaligned pointer: dst %s is not %u-byte aligned",
                     hex(O.Dst).c_str(), ElementSize);
  if (S && Error == cudaSuccess)
    Error = Sim.checkMemset(Api, O, S);
  if (S && Error == cudaSuccess) {
    if (!S->Capture) // Counted when a launch runs it.
      ++Sim.Stats.Memsets;
    Sim.enqueue(*S, O);
    Sim.launch(*S, O, /*BlocksHost=*/false);
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
