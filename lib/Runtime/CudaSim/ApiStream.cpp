//===- ApiStream.cpp - CUDA stream and event entry points -------*- C++ -*-===//
//
// The exported stream and event functions (create, destroy, synchronize,
// query, record, wait) and the two functions of the timing model's interface
// (CudaSimModel.h). A query of pending work answers cudaErrorNotReady once
// without running it, so a program that reads results after one query sees
// stale data.
//
//===----------------------------------------------------------------------===//

#include "CudaSimModel.h"
#include "Simulator.h"

#include <cmath>

using namespace etcopy::cudasim;

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
    if (Stream *S = Sim.lookupStream("cudaStreamDestroy", stream, Error)) {
      if (S->Capture)
        Error = Sim.failInCapture("cudaStreamDestroy", *S, "destroys");
      else
        Sim.destroyStream(*S);
    }
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
  if (S && S->Capture) {
    Error = Sim.failInCapture("cudaStreamSynchronize", *S, "synchronises");
    S = nullptr;
  }
  if (S) {
    DrainContext Ctx("cudaStreamSynchronize");
    Sim.drain(*S, S->EnqueuedSeq, Ctx);
    Sim.waitUntil(S->ClockNs);
    Sim.trimPoolsAtSync(S->Device);
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
  if (S && S->Capture) {
    Error = Sim.failInCapture("cudaStreamQuery", *S, "queries");
    S = nullptr;
  }
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
  // The simulator captures one stream alone: no fork or join by events.
  if (E && S->Capture) {
    Error = Sim.failInCapture(Api, *S, "makes a wait on an event (not "
                                       "simulated in a capture) on");
    E = nullptr;
  }
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
  else if (S && S->Capture)
    Error = Sim.failInCapture(Api, *S, "records an event (not simulated in "
                                       "a capture) on");
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
    Sim.trimPoolsAtSync(E->Device);
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
