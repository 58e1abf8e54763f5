//===- ApiGraph.cpp - CUDA stream capture and graph entry points -*- C++ -*-===//
//
// Stream capture and the graphs it makes: cudaStreamBeginCapture,
// cudaStreamEndCapture, cudaStreamIsCapturing, cudaGraphInstantiate,
// cudaGraphLaunch, cudaGraphExecDestroy and cudaGraphDestroy, and the checks
// of the calls that capture forbids. While a stream captures, the work
// queued on it is recorded in a GraphBody instead of being queued
// (Simulator::enqueue); a launch of an instance queues the recorded ops
// again, each validated as the direct call validates it, and the timing
// model charges one GRAPH_LAUNCH on the host instead of one launch per op.
// docs/CudaSimulator.md ("Stream capture and graphs") gives the rules and
// their CUDA 13 sources.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include <algorithm>

using namespace etcopy::cudasim;

//===----------------------------------------------------------------------===//
// Checks of the calls that capture forbids
//===----------------------------------------------------------------------===//

static void invalidate(Stream &S) { S.CaptureInvalidated = true; }

cudaError_t Simulator::failInCapture(const char *Api, Stream &S,
                                     const char *What) {
  invalidate(S);
  return fail(Api, cudaErrorStreamCaptureUnsupported,
              "%s %s, which is capturing a graph; the capture is "
              "invalidated",
              What, streamName(S).c_str());
}

// cudaMallocAsync and cudaMallocFromPoolAsync, cuda_runtime_api.h: "During
// stream capture, this function results in the creation of an allocation
// node. In this case, the allocation is owned by the graph instead of the
// memory pool." The simulator keeps the memory at the same address in
// every launch.
void Simulator::recordAllocationNode(Stream &S, void *Pointer) {
  Allocation *A = classify(reinterpret_cast<uintptr_t>(Pointer)).Alloc;
  if (!A)
    return;
  A->GraphAllocation = true;
  S.Capture->Allocations.push_back(A);
  ++S.Capture->UnfreedAllocations;
}

cudaError_t Simulator::checkCaptureSafe(const char *Api) {
  std::thread::id Self = std::this_thread::get_id();
  Stream *Culprit = nullptr;
  for (Stream *S : CapturingStreams) {
    bool Forbids =
        S->CaptureMode == cudaStreamCaptureModeGlobal ||
        (S->CaptureMode == cudaStreamCaptureModeThreadLocal &&
         S->CaptureThread == Self);
    if (!Forbids)
      continue;
    invalidate(*S);
    Culprit = S;
  }
  if (!Culprit)
    return cudaSuccess;
  return fail(Api, cudaErrorStreamCaptureUnsupported,
              "a potentially unsafe call (it may synchronise implicitly) "
              "while %s captures a graph in %s mode; the capture is "
              "invalidated",
              streamName(*Culprit).c_str(),
              Culprit->CaptureMode == cudaStreamCaptureModeGlobal
                  ? "cudaStreamCaptureModeGlobal"
                  : "cudaStreamCaptureModeThreadLocal");
}

cudaError_t Simulator::checkDeviceNotCapturing(const char *Api, int Device) {
  for (Stream *S : CapturingStreams)
    if (S->Device == Device)
      return failInCapture(Api, *S, "synchronises the device of");
  return cudaSuccess;
}

// The CUDA Programming Guide, "Graph Memory Nodes": a graph allocation's
// lifetime "begins when GPU execution reaches the allocating graph node and
// ends when" a free node, cudaFreeAsync or cudaFree frees it, and "Graph
// destruction does not automatically free any live graph-allocated memory,
// even though it ends the lifetime of the allocation node. The allocation
// must subsequently be freed in another graph, or using
// cudaFreeAsync()/cudaFree()." So an allocation that a launch made and no
// free node of the graph frees stays: the program must free it, and the
// leak check at exit reports it otherwise. The others go with the graph.
void Simulator::releaseGraphBody(GraphBody &Body, const char *By) {
  for (Allocation *A : Body.Allocations) {
    bool FreedByNode =
        std::any_of(Body.Nodes.begin(), Body.Nodes.end(), [&](const Op &N) {
          return N.Kind == OpKind::Free && N.DstAlloc == A;
        });
    if (!Body.Launched || FreedByNode)
      release(*A, By, 0);
  }
  Body.Allocations.clear();
}

//===----------------------------------------------------------------------===//
// Capture
//===----------------------------------------------------------------------===//

static std::string graphName(uint32_t Id) { return format("G%u", Id); }
static std::string execName(uint32_t Id) { return format("GE%u", Id); }

ETCOPY_CUDA_SIM_API cudaError_t
cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaStreamBeginCapture";
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaStreamBeginCapture);
  Stream *S = Error == cudaSuccess ? Sim.lookupStream(Api, stream, Error)
                                   : nullptr;
  if (S && (S->isDefault() || S->PerThread))
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "capture may not be initiated on the default stream "
                     "(cudaStreamLegacy; the simulator also rejects "
                     "cudaStreamPerThread)");
  else if (S && mode != cudaStreamCaptureModeGlobal &&
           mode != cudaStreamCaptureModeThreadLocal &&
           mode != cudaStreamCaptureModeRelaxed)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid capture mode %d", int(mode));
  else if (S && S->Capture)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "%s is already capturing a graph",
                     Sim.streamName(*S).c_str());
  if (S && Error == cudaSuccess) {
    S->Capture = std::make_shared<GraphBody>();
    S->Capture->Device = S->Device;
    S->CaptureMode = int(mode);
    S->CaptureThread = std::this_thread::get_id();
    S->CaptureInvalidated = false;
    Sim.CapturingStreams.push_back(S);
  }
  Sim.trace("cudaStreamBeginCapture(%s, mode=%d)%s",
            Sim.streamLabel(stream).c_str(), int(mode),
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaStreamBeginCapture, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaStreamEndCapture(cudaStream_t stream,
                                                     cudaGraph_t *pGraph) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaStreamEndCapture";
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaStreamEndCapture);
  Stream *S = Error == cudaSuccess ? Sim.lookupStream(Api, stream, Error)
                                   : nullptr;
  if (S && !pGraph)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid argument: pGraph is null");
  else if (S && !S->Capture)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "%s is not capturing a graph",
                     Sim.streamName(*S).c_str());
  else if (S && S->CaptureMode != cudaStreamCaptureModeRelaxed &&
           S->CaptureThread != std::this_thread::get_id())
    Error = Sim.fail(Api, cudaErrorStreamCaptureWrongThread,
                     "the capture of %s began on another thread, not in "
                     "cudaStreamCaptureModeRelaxed",
                     Sim.streamName(*S).c_str());
  std::string Name;
  if (S && Error == cudaSuccess) {
    std::shared_ptr<GraphBody> Body = std::move(S->Capture);
    S->Capture.reset();
    Sim.CapturingStreams.erase(std::find(Sim.CapturingStreams.begin(),
                                         Sim.CapturingStreams.end(), S));
    if (S->CaptureInvalidated) {
      *pGraph = nullptr;
      Sim.releaseGraphBody(*Body, "cudaStreamEndCapture");
      Error = Sim.fail(Api, cudaErrorStreamCaptureInvalidated,
                       "the capture of %s was invalidated by an earlier "
                       "call; no graph is returned",
                       Sim.streamName(*S).c_str());
    } else {
      auto G = std::make_unique<Graph>();
      G->Id = uint32_t(Sim.AllGraphs.size() + 1);
      G->Body = std::move(Body);
      *pGraph = reinterpret_cast<cudaGraph_t>(G.get());
      Sim.GraphHandles[G.get()] = G.get();
      Name = format("%s, %zu nodes", graphName(G->Id).c_str(),
                    G->Body->Nodes.size() + G->Body->Allocations.size());
      Sim.AllGraphs.push_back(std::move(G));
    }
    S->CaptureInvalidated = false;
  }
  Sim.trace("cudaStreamEndCapture(%s)%s", Sim.streamLabel(stream).c_str(),
            Sim.result(Error, Name).c_str());
  return Sim.finish(EntryPoint::cudaStreamEndCapture, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t
cudaStreamIsCapturing(cudaStream_t stream,
                      enum cudaStreamCaptureStatus *pCaptureStatus) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaStreamIsCapturing";
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaStreamIsCapturing);
  Stream *S = Error == cudaSuccess ? Sim.lookupStream(Api, stream, Error)
                                   : nullptr;
  if (S && !pCaptureStatus)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid argument: pCaptureStatus is null");
  if (S && Error == cudaSuccess)
    *pCaptureStatus = !S->Capture ? cudaStreamCaptureStatusNone
                      : S->CaptureInvalidated
                          ? cudaStreamCaptureStatusInvalidated
                          : cudaStreamCaptureStatusActive;
  Sim.trace("cudaStreamIsCapturing(%s)%s", Sim.streamLabel(stream).c_str(),
            Sim.result(Error, Error == cudaSuccess
                                  ? format("status %d", int(*pCaptureStatus))
                                  : std::string())
                .c_str());
  return Sim.finish(EntryPoint::cudaStreamIsCapturing, Error);
}

//===----------------------------------------------------------------------===//
// Graphs and their instances
//===----------------------------------------------------------------------===//

static Graph *lookupGraph(Simulator &Sim, const char *Api, cudaGraph_t Handle,
                          cudaError_t &Error) {
  auto It = Sim.GraphHandles.find(Handle);
  if (It == Sim.GraphHandles.end()) {
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid graph handle %s (not made by "
                     "cudaStreamEndCapture)",
                     hex(Handle).c_str());
    return nullptr;
  }
  if (It->second->Destroyed) {
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid graph handle %s (%s was destroyed by "
                     "cudaGraphDestroy)",
                     hex(Handle).c_str(), graphName(It->second->Id).c_str());
    return nullptr;
  }
  return It->second;
}

static GraphExec *lookupExec(Simulator &Sim, const char *Api,
                             cudaGraphExec_t Handle, cudaError_t &Error) {
  auto It = Sim.GraphExecHandles.find(Handle);
  if (It == Sim.GraphExecHandles.end()) {
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid executable graph handle %s (not made by "
                     "cudaGraphInstantiate)",
                     hex(Handle).c_str());
    return nullptr;
  }
  if (It->second->Destroyed) {
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid executable graph handle %s (%s was destroyed "
                     "by cudaGraphExecDestroy)",
                     hex(Handle).c_str(), execName(It->second->Id).c_str());
    return nullptr;
  }
  return It->second;
}

/// Whether Body holds an allocation node or a free node.
static bool hasMemoryNodes(const GraphBody &Body) {
  return !Body.Allocations.empty() ||
         std::any_of(Body.Nodes.begin(), Body.Nodes.end(),
                     [](const Op &N) { return N.Kind == OpKind::Free; });
}

/// Drops one reference to Body; the last one releases its allocations,
/// once the launches still queued on its device have run (CUDA frees an
/// executable graph that is in flight "asynchronously on completion").
static void dropBody(Simulator &Sim, std::shared_ptr<GraphBody> &Body,
                     const char *By) {
  if (Body.use_count() == 1 && !Body->Allocations.empty()) {
    DrainContext Ctx(By);
    Sim.drainDevice(Body->Device, /*BlockingOnly=*/false, Ctx);
    Sim.releaseGraphBody(*Body, By);
  }
  Body.reset();
}

ETCOPY_CUDA_SIM_API cudaError_t cudaGraphInstantiate(
    cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaGraphInstantiate";
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaGraphInstantiate);
  Graph *G = nullptr;
  if (Error == cudaSuccess && !pGraphExec)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "invalid argument: pGraphExec is null");
  if (Error == cudaSuccess)
    G = lookupGraph(Sim, Api, graph, Error);
  if (G && flags != 0)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "flags 0x%llx: the simulator implements flags 0 only",
                     flags);
  // cudaGraphInstantiate, cuda_runtime_api.h: "If graph contains any
  // allocation or free nodes, there can be at most one executable graph in
  // existence for that graph at a time. An attempt to instantiate a second
  // executable graph before destroying the first with cudaGraphExecDestroy
  // will result in an error." (The error is not named.)
  if (G && Error == cudaSuccess && hasMemoryNodes(*G->Body))
    for (const std::unique_ptr<GraphExec> &Other : Sim.AllGraphExecs)
      if (!Other->Destroyed && Other->Body == G->Body) {
        Error = Sim.fail(Api, cudaErrorInvalidValue,
                         "%s has allocation or free nodes and %s, an "
                         "instance of it, is not destroyed: such a graph has "
                         "at most one instance at a time",
                         graphName(G->Id).c_str(),
                         execName(Other->Id).c_str());
        break;
      }
  std::string Name;
  if (G && Error == cudaSuccess) {
    auto E = std::make_unique<GraphExec>();
    E->Id = uint32_t(Sim.AllGraphExecs.size() + 1);
    E->Body = G->Body;
    *pGraphExec = reinterpret_cast<cudaGraphExec_t>(E.get());
    Sim.GraphExecHandles[E.get()] = E.get();
    Name = execName(E->Id);
    Sim.AllGraphExecs.push_back(std::move(E));
  }
  Sim.trace("cudaGraphInstantiate(%s, flags=%llu)%s",
            G ? graphName(G->Id).c_str() : hex(graph).c_str(), flags,
            Sim.result(Error, Name).c_str());
  return Sim.finish(EntryPoint::cudaGraphInstantiate, Error);
}

/// Queues one node of a launch on S, validated as the direct call that
/// captured it validates its operands (the memory it names may have been
/// freed since the capture).
static cudaError_t replayNode(Simulator &Sim, const GraphBody &Body,
                              Stream &S, Op N) {
  const char *Api = "cudaGraphLaunch";
  switch (N.Kind) {
  case OpKind::Copy: {
    cudaError_t Error =
        N.IsPeer ? Sim.checkPeerCopy(Api, N) : cudaSuccess;
    if (Error == cudaSuccess)
      Error = Sim.checkCopy(Api, N);
    if (Error != cudaSuccess)
      return Error;
    Sim.countCopy(N);
    break;
  }
  case OpKind::Memset: {
    cudaError_t Error = Sim.checkMemset(Api, N, &S);
    if (Error != cudaSuccess)
      return Error;
    ++Sim.Stats.Memsets;
    break;
  }
  case OpKind::Free: {
    // A free of the graph's own allocation leaves it to the graph; a free
    // of other memory frees it, once.
    if (std::find(Body.Allocations.begin(), Body.Allocations.end(),
                  N.DstAlloc) != Body.Allocations.end())
      return cudaSuccess;
    Allocation *A = nullptr;
    cudaError_t Error = Sim.checkFree(
        FreeApi::FreeAsync, reinterpret_cast<void *>(N.Dst), A);
    if (Error != cudaSuccess)
      return Error;
    Sim.notePoolFreeQueued(*A);
    A->FreePending = true;
    A->FreeStream = S.Id;
    N.DstAlloc = A;
    ++Sim.Stats.Frees;
    break;
  }
  case OpKind::Kernel:
  case OpKind::Wait:
    break;
  }
  Sim.enqueue(S, N);
  // The device runs the node as it runs the op; the host paid one
  // GRAPH_LAUNCH for the whole graph.
  Sim.endOn(S, Sim.modelOp(N, Sim.streamReady(S)));
  return cudaSuccess;
}

ETCOPY_CUDA_SIM_API cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec,
                                                cudaStream_t stream) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaGraphLaunch";
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaGraphLaunch);
  GraphExec *E =
      Error == cudaSuccess ? lookupExec(Sim, Api, graphExec, Error) : nullptr;
  Stream *S = E ? Sim.lookupStream(Api, stream, Error) : nullptr;
  if (S && S->Capture)
    Error = Sim.failInCapture(Api, *S, "launches a graph into");
  else if (S && S->Device != E->Body->Device)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "%s was captured on cuda:%d and cannot run on %s "
                     "(cuda:%d)",
                     execName(E->Id).c_str(), E->Body->Device,
                     Sim.streamName(*S).c_str(), S->Device);
  else if (S && E->Launched && E->Body->UnfreedAllocations)
    Error = Sim.fail(Api, cudaErrorInvalidValue,
                     "%zu allocations of the previous launch of %s remain "
                     "unfreed (the graph allocates memory it does not free, "
                     "and was not instantiated with "
                     "cudaGraphInstantiateFlagAutoFreeOnLaunch)",
                     E->Body->UnfreedAllocations, execName(E->Id).c_str());
  if (S && Error == cudaSuccess) {
    E->Launched = true;
    for (const Op &N : E->Body->Nodes)
      if ((Error = replayNode(Sim, *E->Body, *S, N)) != cudaSuccess)
        break;
    // Only a launch that runs makes the graph's allocations live.
    if (Error == cudaSuccess)
      E->Body->Launched = true;
  }
  Sim.trace("cudaGraphLaunch(%s, stream=%s)%s",
            E ? execName(E->Id).c_str() : hex(graphExec).c_str(),
            Sim.streamLabel(stream).c_str(),
            Sim.result(Error, E && Error == cudaSuccess
                                  ? format("%zu nodes queued",
                                           E->Body->Nodes.size())
                                  : std::string())
                .c_str());
  return Sim.finish(EntryPoint::cudaGraphLaunch, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaGraphExecDestroy";
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaGraphExecDestroy);
  GraphExec *E =
      Error == cudaSuccess ? lookupExec(Sim, Api, graphExec, Error) : nullptr;
  if (E) {
    // Launched work already queued keeps its ops (copies of the nodes).
    E->Destroyed = true;
    dropBody(Sim, E->Body, Api);
  }
  Sim.trace("cudaGraphExecDestroy(%s)%s",
            E ? execName(E->Id).c_str() : hex(graphExec).c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaGraphExecDestroy, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  const char *Api = "cudaGraphDestroy";
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaGraphDestroy);
  Graph *G = Error == cudaSuccess ? lookupGraph(Sim, Api, graph, Error)
                                  : nullptr;
  if (G) {
    G->Destroyed = true;
    dropBody(Sim, G->Body, Api);
  }
  Sim.trace("cudaGraphDestroy(%s)%s",
            G ? graphName(G->Id).c_str() : hex(graph).c_str(),
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaGraphDestroy, Error);
}
