//===- Memory.cpp - Simulated memory and pointer checks ---------*- C++ -*-===//
//
// The memory of the simulator: the reserved address space and the
// append-only allocation table, allocating (device memory behind a PROT_NONE
// mapping, managed and pinned memory host-accessible, all poisoned and
// followed by a guard page) and releasing (quarantined, never reused), what
// the simulator knows about any address, the checks of frees, copies and
// memsets against the kind, bounds and lifetime of the memory they touch, the
// path a copy takes, host memory registration, and pointer attributes.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include <cerrno>
#include <cinttypes>
#include <algorithm>
#include <cstdio>
#include <new>
#include <sys/mman.h>
#include <unistd.h>

namespace etcopy::cudasim {

namespace {

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

} // namespace

//===----------------------------------------------------------------------===//
// Allocations
//===----------------------------------------------------------------------===//

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

std::atomic<uintptr_t> ArenaBegin{0};
std::atomic<uintptr_t> ArenaEnd{0};
std::atomic<Allocation *> AllocationTable{nullptr};
std::atomic<size_t> AllocationCount{0};

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
  if (Size == 0) {
    // Documented for cudaMallocManaged only.
    if (Kind == MemKind::Managed)
      return fail(Api, cudaErrorInvalidValue,
                  "invalid argument: size is 0; cudaMallocManaged rejects "
                  "requests of 0 bytes");
    // The others succeed (cudaMallocAsync on an H200; cudaMalloc and
    // cudaMallocHost as reported publicly), but whether they write the
    // result is undocumented, and some CUDA versions leave it unchanged:
    // so does the simulator.
    return cudaSuccess;
  }
  *Out = nullptr;

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

  if (Kind != MemKind::PinnedHost) {
    DeviceState &D = Devices[size_t(Device)];
    D.LiveBytes += Size;
    D.PeakBytes = std::max(D.PeakBytes, D.LiveBytes);
  } else {
    Stats.HostLiveBytes += Size;
    Stats.HostPeakBytes = std::max(Stats.HostPeakBytes, Stats.HostLiveBytes);
  }
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
  notePoolRelease(A);
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
  else
    Stats.HostLiveBytes -= A.Size;
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

/// Checks that a host range [Address, Address + Extent) is either wholly
/// inside one cudaHostRegister range or outside all of them: CUDA's copy
/// functions reject memory regions that span registered and unregistered
/// memory with cudaErrorInvalidValue. A range over two adjacent
/// registrations is rejected too (stricter: CUDA tracks them separately).
cudaError_t Simulator::checkRegisteredSpan(const char *Api, const char *Role,
                                           uintptr_t Address,
                                           const PtrInfo &Info,
                                           size_t Extent) {
  uintptr_t End = 0;
  if (__builtin_add_overflow(Address, Extent, &End))
    End = UINTPTR_MAX;
  if (Info.Class == PtrClass::Registered) {
    if (Extent <= Info.RangeSize - Info.Offset)
      return cudaSuccess;
    return fail(Api, cudaErrorInvalidValue,
                "invalid pointer: %s %s + %zu bytes runs past the end of the "
                "registered range %s + %zu bytes; CUDA rejects copies of "
                "memory that is partly registered",
                Role, hex(Address).c_str(), Extent,
                hex(Address - Info.Offset).c_str(), Info.RangeSize);
  }
  if (Info.Class != PtrClass::Pageable)
    return cudaSuccess;
  auto Next = Registrations.upper_bound(Address);
  if (Next == Registrations.end() || Next->first >= End)
    return cudaSuccess;
  return fail(Api, cudaErrorInvalidValue,
              "invalid pointer: %s %s + %zu bytes (pageable host memory) runs "
              "into the registered range %s + %zu bytes; CUDA rejects copies "
              "of memory that is partly registered",
              Role, hex(Address).c_str(), Extent, hex(Next->first).c_str(),
              Next->second.Size);
}

namespace {

/// Returns the bytes spanned by Height rows of Width bytes Pitch apart, or
/// false on overflow.
bool pitchedExtent(size_t Width, size_t Height, size_t Pitch, size_t &Extent) {
  size_t Rows = 0;
  if (__builtin_mul_overflow(Height - 1, Pitch, &Rows))
    return false;
  return !__builtin_add_overflow(Rows, Width, &Extent);
}

} // namespace

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
  if (cudaError_t Error =
          checkRegisteredSpan(Api, "dst", O.Dst, DstInfo, DstExtent))
    return Error;
  if (cudaError_t Error =
          checkRegisteredSpan(Api, "src", O.Src, SrcInfo, SrcExtent))
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
  O.Path = copyPath(DstInfo, SrcInfo);
  return cudaSuccess;
}

namespace {

/// The side of a copy: pinned or pageable host memory, or device memory
/// (device or managed) on Device.
enum class CopySide : uint8_t { Pageable, Pinned, Device };

CopySide copySide(const PtrInfo &Info, int &Device) {
  switch (Info.Class) {
  case PtrClass::Owned:
    if (Info.Alloc->Kind == MemKind::PinnedHost)
      return CopySide::Pinned;
    Device = Info.Alloc->Device;
    return CopySide::Device;
  case PtrClass::Registered:
    // checkRegisteredSpan made sure the copy lies wholly inside the range.
    return CopySide::Pinned;
  case PtrClass::Null:
  case PtrClass::Pageable:
    break;
  }
  return CopySide::Pageable;
}

} // namespace

/// The path of a checked copy; the allocations of both sides are known to
/// be live and to contain the extents, and registered ranges to contain
/// them.
CopyPath Simulator::copyPath(const PtrInfo &Dst, const PtrInfo &Src) const {
  int DstDevice = 0, SrcDevice = 0;
  CopySide To = copySide(Dst, DstDevice);
  CopySide From = copySide(Src, SrcDevice);
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
  // Every row, at the source's pitch (execute reads the snapshot so).
  size_t Extent = (O.Height - 1) * O.SrcPitch + O.Width;
  return std::make_shared<const std::vector<char>>(Src, Src + Extent);
}

/// Validates a memset at enqueue time, queued on S (null for cudaMemset,
/// which runs on the current device). O must have a non-zero Width.
cudaError_t Simulator::checkMemset(const char *Api, Op &O, const Stream *S) {
  // CUDA promises that copies work on a stream of another device and that
  // kernel launches fail there; it says nothing of memsets, so the
  // simulator requires the current device's streams, and that device's
  // memory (or managed memory).
  int Device = S ? S->Device : CurrentDevice;
  if (Device != CurrentDevice)
    return fail(Api, cudaErrorInvalidResourceHandle,
                "stream %s belongs to cuda:%d but cuda:%d is current; the "
                "simulator runs memsets only on the current device's streams",
                streamName(*S).c_str(), Device, CurrentDevice);
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
  if (Info.Alloc->Kind == MemKind::Device && Info.Alloc->Device != Device)
    return fail(Api, cudaErrorInvalidValue,
                "invalid pointer: dst %s is %s but the memset runs on "
                "cuda:%d; the simulator sets only the memory of the device "
                "the memset runs on",
                hex(O.Dst).c_str(), describe(Info).c_str(), Device);
  O.DstAlloc = Info.Alloc;
  return cudaSuccess;
}

//===----------------------------------------------------------------------===//
// Host memory registration and pointer attributes
//===----------------------------------------------------------------------===//

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

} // namespace etcopy::cudasim
