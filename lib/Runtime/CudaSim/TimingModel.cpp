//===- TimingModel.cpp - Modelled time of calls and copies ------*- C++ -*-===//
//
// The timing model (docs/CudaSimulator.md, "Timing model"): a host clock,
// a clock per stream and, per device, the busy intervals of each link (PCIe
// in each direction, local memory, NVLink in each direction). Copies and
// memsets are booked on the links they use at the earliest time all of them
// are free, after the stream's earlier work and the legacy default stream's
// implicit waits. The host pays each call's latency and waits only where CUDA
// makes it wait. A copy of pageable memory that the program never touched
// also pays for the page faults it takes (found with mincore at the call).
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include <sys/mman.h>

namespace etcopy::cudasim {

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

/// Bytes of the pages spanned by [Address, Address + Extent) that are not
/// resident: host memory the program has never touched (fresh pages of
/// malloc or mmap), which a copy faults in as it reads or writes them.
/// mincore(2) answers for the pages of the calling process; a range it
/// cannot answer for (not mapped) counts as resident.
uint64_t Simulator::freshHostBytes(uintptr_t Address, size_t Extent) const {
  uintptr_t Last = 0;
  if (Extent == 0 || __builtin_add_overflow(Address, Extent - 1, &Last))
    return 0;
  uintptr_t Begin = Address / PageSize * PageSize;
  uintptr_t End = Last / PageSize * PageSize + PageSize;
  if (End <= Last)
    return 0;
  std::vector<unsigned char> Resident((End - Begin) / PageSize);
  if (mincore(reinterpret_cast<void *>(Begin), End - Begin, Resident.data()) !=
      0)
    return 0;
  uint64_t Fresh = 0;
  for (unsigned char Page : Resident)
    if (!(Page & 1))
      Fresh += PageSize;
  return Fresh;
}

/// Records, before the copy O executes, how much of the pageable host
/// memory it touches is fresh. Simulator allocations (pinned, device,
/// managed) are always resident.
void Simulator::noteFreshHostBytes(Op &O) {
  auto Side = [&](uintptr_t Address, size_t Pitch, const Allocation *A) {
    if (A)
      return uint64_t(0);
    size_t Extent = O.Width;
    if (O.Height > 1)
      Extent += (O.Height - 1) * Pitch;
    return freshHostBytes(Address, Extent);
  };
  uint64_t Fresh = 0;
  switch (O.Path) {
  case CopyPath::PageableToDevice:
    Fresh = Side(O.Src, O.SrcPitch, O.SrcAlloc);
    break;
  case CopyPath::DeviceToPageable:
    Fresh = Side(O.Dst, O.DstPitch, O.DstAlloc);
    break;
  case CopyPath::HostToHost:
    Fresh = Side(O.Src, O.SrcPitch, O.SrcAlloc) +
            Side(O.Dst, O.DstPitch, O.DstAlloc);
    break;
  default:
    return;
  }
  O.FreshHostBytes = Fresh;
  Stats.FreshPages += Fresh / kModelPageBytes;
}

/// The page faults of O's fresh host memory: PAGE_FAULT per 4 KiB.
double Simulator::firstTouchNs(const Op &O) const {
  return double(O.FreshHostBytes / kModelPageBytes) *
         Cfg.Costs.latency(Latency::PageFault);
}

/// A copy or memset that can start at ReadyNs: its fixed latency and the
/// faults of its fresh host pages, then its transfer. Returns when it ends.
double Simulator::modelOp(const Op &O, double ReadyNs) {
  return transfer(O,
                  ReadyNs + Cfg.Costs.latency(Latency::Copy) + firstTouchNs(O));
}

/// A batch that can start at ReadyNs: one copy latency for the batch, then
/// for each copy in order its own latency, the faults of its fresh host
/// pages and its transfer. Returns when it ends.
double Simulator::modelBatch(const std::vector<Op> &Copies, double ReadyNs) {
  double Ns = ReadyNs + Cfg.Costs.latency(Latency::Copy);
  for (const Op &O : Copies)
    Ns = transfer(O,
                  Ns + Cfg.Costs.latency(Latency::BatchCopy) + firstTouchNs(O));
  return Ns;
}

/// Models an asynchronous copy or memset queued on S: the host pays the
/// launch latency, then the work runs when S is ready. A call that must
/// stage pageable memory (or copy between host buffers) returns only when
/// its work has ended.
void Simulator::launch(Stream &S, const Op &O, bool BlocksHost) {
  spend(Latency::Launch);
  // Captured work runs when the graph is launched.
  if (S.Capture)
    return;
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

} // namespace etcopy::cudasim
