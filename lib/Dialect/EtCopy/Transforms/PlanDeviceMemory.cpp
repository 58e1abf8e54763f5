//===- PlanDeviceMemory.cpp - Per-device arena memory planning --*- C++ -*-===//
//
// The etcopy-plan-device-memory pass: packs the statically sized buffers that
// a function allocates and frees on each device into one arena per (device
// kind, ordinal), reusing bytes between buffers whose lifetimes do not
// overlap, and rewrites the buffers as memref.view's into the arena. The
// arenas are allocated by the function or passed in by the caller, and are
// described by the etcopy.arenas attribute and by an etcopy_function_arenas
// constant that compiled code exports.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Dialect/EtCopy/BufferEscape.h"
#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h"
#include "etcopy/Dialect/EtCopy/RemarkUtils.h"

#include "mlir/Analysis/DataLayoutAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <map>
#include <queue>
#include <set>

namespace mlir::etcopy {
#define GEN_PASS_DEF_ETCOPYPLANDEVICEMEMORY
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;

/// The largest buffer planned (1 TiB): larger ones stay separate
/// allocations, so that arena sizes never overflow.
constexpr uint64_t kMaxPlannedBufferBytes = uint64_t(1) << 40;

/// Alignment of every arena and of every offset in it: what cudaMalloc
/// guarantees, and the largest alignment the runtime's CUDA allocator
/// accepts, so that an arena described by the metadata can be allocated.
static constexpr uint64_t kArenaAlignment = 256;

//===----------------------------------------------------------------------===//
// Offset assignment
//===----------------------------------------------------------------------===//

namespace {
/// One buffer to place: its lifetime [start, end] (inclusive, in program
/// points) and its size, a multiple of kArenaAlignment.
struct Interval {
  uint64_t start;
  uint64_t end;
  uint64_t size;
};
} // namespace

/// Both packings below place buffers one at a time: each goes into the
/// smallest gap, between the already placed buffers it overlaps in time,
/// that fits it (best fit; the lowest such gap on a tie), else above all of
/// them.

/// Best fit in program order, as one sweep: the placed buffers that overlap
/// the next one are those still live at its start, which overlap each other
/// too and so never share bytes. They are kept by offset, the gaps between
/// them by size, and those that end by end: O(n log n). Returns the arena
/// size and writes the offsets.
static uint64_t packByStart(ArrayRef<Interval> items,
                            ArrayRef<unsigned> byStart,
                            SmallVectorImpl<uint64_t> &offsets) {
  offsets.assign(items.size(), 0);
  std::map<uint64_t, unsigned> live;            // offset -> item
  std::set<std::pair<uint64_t, uint64_t>> gaps; // (size, offset)
  using End = std::pair<uint64_t, unsigned>;    // (end, item)
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends;
  auto endOf = [&](unsigned item) { return offsets[item] + items[item].size; };
  auto addGap = [&](uint64_t from, uint64_t to) {
    if (from < to)
      gaps.insert({to - from, from});
  };
  auto removeGap = [&](uint64_t from, uint64_t to) {
    if (from < to)
      gaps.erase({to - from, from});
  };

  uint64_t arenaSize = 0;
  for (unsigned index : byStart) {
    const Interval &item = items[index];
    // Buffers dead before this one starts free their bytes: the gaps on
    // both sides merge.
    while (!ends.empty() && ends.top().first < item.start) {
      unsigned dead = ends.top().second;
      ends.pop();
      auto it = live.find(offsets[dead]);
      uint64_t below = it == live.begin() ? 0 : endOf(std::prev(it)->second);
      removeGap(below, offsets[dead]);
      if (auto above = std::next(it); above != live.end()) {
        removeGap(endOf(dead), above->first);
        addGap(below, above->first);
      }
      live.erase(it);
    }
    uint64_t offset;
    if (auto gap = gaps.lower_bound({item.size, 0}); gap != gaps.end()) {
      auto [gapSize, gapOffset] = *gap;
      gaps.erase(gap);
      offset = gapOffset;
      addGap(offset + item.size, offset + gapSize);
    } else {
      offset = live.empty() ? 0 : endOf(std::prev(live.end())->second);
    }
    offsets[index] = offset;
    live.emplace(offset, index);
    ends.push({item.end, index});
    arenaSize = std::max(arenaSize, offset + item.size);
  }
  return arenaSize;
}

/// For every item, the items that overlap it in time and come before it in
/// `order`, found by one sweep in program order: O(n log n + pairs). Fails
/// once there are more than `maxPairs` overlapping pairs.
static FailureOr<SmallVector<SmallVector<unsigned, 4>>>
findEarlierOverlaps(ArrayRef<Interval> items, ArrayRef<unsigned> byStart,
                    ArrayRef<unsigned> order, uint64_t maxPairs) {
  SmallVector<unsigned> rank(items.size());
  for (auto [position, item] : llvm::enumerate(order))
    rank[item] = position;
  // Sweeps in program order, calling `visit` with each item and the items
  // live at its start, which are those it overlaps among the earlier ones.
  auto sweep = [&](function_ref<void(unsigned, ArrayRef<unsigned>)> visit) {
    SmallVector<unsigned> live, slot(items.size());
    using End = std::pair<uint64_t, unsigned>;
    std::priority_queue<End, std::vector<End>, std::greater<End>> ends;
    for (unsigned index : byStart) {
      while (!ends.empty() && ends.top().first < items[index].start) {
        unsigned dead = ends.top().second;
        ends.pop();
        live[slot[dead]] = live.back();
        slot[live.back()] = slot[dead];
        live.pop_back();
      }
      visit(index, live);
      slot[index] = live.size();
      live.push_back(index);
      ends.push({items[index].end, index});
    }
  };
  // Count first: the pairs are only stored when there are few enough.
  uint64_t pairs = 0;
  sweep([&](unsigned, ArrayRef<unsigned> live) { pairs += live.size(); });
  if (pairs > maxPairs)
    return failure();
  SmallVector<SmallVector<unsigned, 4>> earlier(items.size());
  sweep([&](unsigned index, ArrayRef<unsigned> live) {
    for (unsigned other : live) {
      if (rank[other] < rank[index])
        earlier[index].push_back(other);
      else
        earlier[other].push_back(index);
    }
  });
  return earlier;
}

/// Best fit in `order`, given for each item the items it overlaps that come
/// before it: O(pairs log pairs). Returns the arena size and writes the
/// offsets.
static uint64_t packInOrder(ArrayRef<Interval> items, ArrayRef<unsigned> order,
                            ArrayRef<SmallVector<unsigned, 4>> earlier,
                            SmallVectorImpl<uint64_t> &offsets) {
  offsets.assign(items.size(), 0);
  uint64_t arenaSize = 0;
  for (unsigned index : order) {
    const Interval &item = items[index];
    SmallVector<unsigned> live(earlier[index].begin(), earlier[index].end());
    llvm::sort(live,
               [&](unsigned a, unsigned b) { return offsets[a] < offsets[b]; });
    std::optional<uint64_t> best;
    uint64_t bestGap = 0;
    uint64_t top = 0;
    for (unsigned other : live) {
      if (offsets[other] >= top) {
        uint64_t gap = offsets[other] - top;
        if (gap >= item.size && (!best || gap < bestGap)) {
          best = top;
          bestGap = gap;
        }
      }
      top = std::max(top, offsets[other] + items[other].size);
    }
    offsets[index] = best.value_or(top);
    arenaSize = std::max(arenaSize, offsets[index] + item.size);
  }
  return arenaSize;
}

/// The most overlapping pairs of buffers the size-ordered packing compares:
/// 32 per buffer, and at least 2^20, so that a function keeps O(n log n)
/// planning however many of its buffers live at once.
static uint64_t getMaxOverlapPairs(size_t numItems) {
  return std::max<uint64_t>(uint64_t(1) << 20, uint64_t(32) * numItems);
}

/// Assigns offsets to `items` and returns the arena size: the better of two
/// greedy orders, by decreasing size (large buffers first leave gaps that
/// small ones fill) and by program order (best when sizes are alike and
/// lifetimes form a chain). The size order compares each buffer with the
/// larger ones it overlaps; when they are too many (getMaxOverlapPairs),
/// only program order is tried.
static uint64_t assignOffsets(ArrayRef<Interval> items,
                              SmallVectorImpl<uint64_t> &offsets) {
  auto byStart = llvm::to_vector(llvm::seq<unsigned>(0, items.size()));
  llvm::sort(byStart, [&](unsigned a, unsigned b) {
    return std::make_pair(items[a].start, a) <
           std::make_pair(items[b].start, b);
  });
  uint64_t startFirst = packByStart(items, byStart, offsets);

  auto bySize = llvm::to_vector(llvm::seq<unsigned>(0, items.size()));
  llvm::sort(bySize, [&](unsigned a, unsigned b) {
    if (items[a].size != items[b].size)
      return items[a].size > items[b].size;
    return std::make_pair(items[a].start, a) <
           std::make_pair(items[b].start, b);
  });
  FailureOr<SmallVector<SmallVector<unsigned, 4>>> earlier =
      findEarlierOverlaps(items, byStart, bySize,
                          getMaxOverlapPairs(items.size()));
  if (failed(earlier))
    return startFirst;
  SmallVector<uint64_t> sizeOffsets;
  uint64_t sizeFirst = packInOrder(items, bySize, *earlier, sizeOffsets);
  if (sizeFirst <= startFirst) {
    offsets = std::move(sizeOffsets);
    return sizeFirst;
  }
  return startFirst;
}

/// The most bytes live at one program point: no placement can do better.
static uint64_t getPeakLiveBytes(ArrayRef<Interval> items) {
  // +size at start, -size after end; ends sort before starts at one point
  // since an interval ending at p and one starting at p+1 do not overlap.
  SmallVector<std::pair<uint64_t, int64_t>> events;
  for (const Interval &item : items) {
    events.push_back({item.start, static_cast<int64_t>(item.size)});
    events.push_back({item.end + 1, -static_cast<int64_t>(item.size)});
  }
  llvm::sort(events);
  int64_t live = 0, peak = 0;
  for (auto [point, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return static_cast<uint64_t>(peak);
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

namespace {
/// A buffer that will become a view of its device's arena.
struct PlannedBuffer {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  /// Deallocations in unreachable code, erased with `dealloc`.
  SmallVector<Operation *> unreachableDeallocs;
  /// Bytes the buffer needs.
  uint64_t size;
  Interval lifetime;
  uint64_t offset = 0;
};

/// The arena of one device in one function.
struct Arena {
  DeviceAttr device;
  SmallVector<PlannedBuffer> buffers;
  uint64_t size = 0;
  /// The arena memref: an allocation or a function argument.
  Value value;

  /// memref<size x i8> in the device's memory space (none for the host).
  MemRefType getType() const {
    MLIRContext *context = device.getContext();
    return MemRefType::get({static_cast<int64_t>(size)},
                           IntegerType::get(context, 8), AffineMap(),
                           device.isHost() ? Attribute() : Attribute(device));
  }
};

/// What becomes of an allocation.
enum class Verdict {
  /// A view of its device's arena.
  Planned,
  /// Left alone: its size is dynamic.
  Dynamic,
  /// Left alone for another reason (escapes, layout, region, ...).
  NotPlanned,
  /// Not in planned memory (host memory without plan-host, or a memory
  /// space etcopy does not interpret).
  Ignored,
};
} // namespace

/// True when the buffer is created inside regions whose ops run their blocks
/// one after another, each block once per execution, up to the function's
/// entry block: there, a buffer freed in the block that allocates it is dead
/// when the block ends, and program order of the (pre-order numbered) ops is
/// execution order within one run of the block.
static bool isInPlannableBlock(Operation *op, func::FuncOp function) {
  Block *block = op->getBlock();
  while (true) {
    Region *region = block->getParent();
    Operation *parent = region->getParentOp();
    if (parent == function)
      return block == &region->front();
    if (!isa<scf::ForOp, scf::WhileOp, scf::IfOp, scf::IndexSwitchOp,
             scf::ExecuteRegionOp>(parent) ||
        !region->hasOneBlock())
      return false;
    block = parent->getBlock();
  }
}

/// Bytes taken by one element of a memref of `type` (its ABI stride), or
/// nothing for element types whose size the data layout does not know.
static std::optional<uint64_t> getElementStride(Type type,
                                                const DataLayout &layout) {
  Type scalar = type;
  if (auto complex = dyn_cast<ComplexType>(type))
    scalar = complex.getElementType();
  if (auto vector = dyn_cast<VectorType>(type))
    scalar = vector.isScalable() ? Type() : vector.getElementType();
  if (!scalar || !isa<IntegerType, FloatType, IndexType>(scalar))
    return std::nullopt;
  return llvm::alignTo(layout.getTypeSize(type),
                       layout.getTypeABIAlignment(type));
}

bool mlir::etcopy::isNonEscapingAccess(Operation *user, Value value) {
  if (isa<memref::ExtractAlignedPointerAsIndexOp>(user))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(user);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  bool accesses = false;
  for (const MemoryEffects::EffectInstance &instance : instances) {
    if (instance.getValue() != value)
      continue;
    if (!isa<MemoryEffects::Read, MemoryEffects::Write>(instance.getEffect()))
      return false;
    accesses = true;
  }
  // An effect on other values only: the buffer is an operand the op does not
  // access, such as the value a memref.store stores. Without any effect the
  // op may only inspect the descriptor.
  if (!accesses)
    return instances.empty() && isa<memref::DimOp, memref::RankOp>(user);
  // Results that are pointers or memrefs must be fresh allocations.
  for (Value result : user->getResults()) {
    if (!isa<BaseMemRefType, LLVM::LLVMPointerType>(result.getType()))
      continue;
    if (!effects.getEffectOnValue<MemoryEffects::Allocate>(result))
      return false;
  }
  return true;
}

namespace {
/// Where a planned buffer stops being used.
struct LifetimeEnd {
  /// Its deallocation, in the block of its allocation.
  memref::DeallocOp dealloc;
  /// The last operation of that block that uses it, directly, through a
  /// view or in a nested region; null when only the deallocation does.
  Operation *lastUser = nullptr;
  /// Its deallocations in unreachable code, erased with `dealloc`.
  SmallVector<Operation *> unreachableDeallocs;
};
} // namespace

/// True when `callee` is a delegate: a function placed on a device. Under
/// the delegate calling contract a call to it reads (and, for arguments
/// marked `etcopy.writes`, writes) its memref operands while it runs and
/// keeps none of them, so passing a buffer is an access, not an escape.
static bool isDelegate(func::FuncOp callee) {
  auto device = callee->getAttrOfType<DeviceAttr>(
      EtCopyDialect::getDeviceAttrName());
  return device && !device.isHost();
}

/// Checks that `alloc` is freed once, in its block, and that nothing uses it
/// (or views of it) other than to access it before that: then the buffer can
/// live in an arena from its allocation to its last use. Uses in code
/// unreachable from the allocation never run and are not looked at.
/// Returns where the lifetime ends, or writes why the buffer cannot be
/// planned to `reason`. `callArenas` are allocations this pass made for a
/// caller-owned callee's arenas: the call may use them.
static std::optional<LifetimeEnd>
findLifetimeEnd(memref::AllocOp alloc, const DenseSet<Operation *> &callArenas,
                const SymbolTable &symbols, DominanceInfo &domInfo,
                const DenseMap<Operation *, uint64_t> &points,
                std::string &reason) {
  llvm::raw_string_ostream os(reason);
  Block *block = alloc->getBlock();
  LifetimeEnd end;
  memref::DeallocOp &dealloc = end.dealloc;
  SmallVector<Operation *> users;
  SmallVector<Value> worklist = {alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (getUnreachableBlock(user, block->getParent(), domInfo)) {
        if (isa<memref::DeallocOp>(user) && value == alloc.getResult())
          end.unreachableDeallocs.push_back(user);
        continue;
      }
      users.push_back(user);
      if (auto free = dyn_cast<memref::DeallocOp>(user)) {
        if (value != alloc.getResult()) {
          os << "a view of it is freed";
          return std::nullopt;
        }
        if (dealloc) {
          os << "it is freed more than once";
          return std::nullopt;
        }
        if (free->getBlock() != block) {
          os << "it is freed in another block";
          return std::nullopt;
        }
        dealloc = free;
        continue;
      }
      if (auto call = dyn_cast<func::CallOp>(user)) {
        if (value == alloc.getResult() && callArenas.contains(alloc))
          continue;
        if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
          if (isDelegate(callee))
            continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            worklist.push_back(result);
        continue;
      }
      if (!isNonEscapingAccess(user, value)) {
        os << "it escapes through '" << user->getName() << "'";
        return std::nullopt;
      }
    }
  }
  if (!dealloc) {
    os << "it is not freed in the function";
    return std::nullopt;
  }
  // Every use lies between the allocation and the deallocation; the last
  // one, or the op of this block it is nested in, ends the lifetime.
  for (Operation *user : users) {
    if (user == dealloc)
      continue;
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (!ancestor || points.lookup(ancestor) > points.lookup(dealloc)) {
      os << "'" << user->getName() << "' uses it after its deallocation";
      return std::nullopt;
    }
    if (!end.lastUser || points.lookup(ancestor) > points.lookup(end.lastUser))
      end.lastUser = ancestor;
  }
  return end;
}

//===----------------------------------------------------------------------===//
// Metadata
//===----------------------------------------------------------------------===//

/// The etcopy.arenas attribute: [{device, size, alignment}, ...].
static ArrayAttr getArenasAttr(MLIRContext *context, ArrayRef<Arena> arenas) {
  Builder builder(context);
  SmallVector<Attribute> entries;
  for (const Arena &arena : arenas)
    entries.push_back(builder.getDictionaryAttr({
        builder.getNamedAttr("device", arena.device),
        builder.getNamedAttr("size", builder.getI64IntegerAttr(arena.size)),
        builder.getNamedAttr("alignment",
                             builder.getI64IntegerAttr(kArenaAlignment)),
    }));
  return builder.getArrayAttr(entries);
}

/// Emits, before `function`, `@<function>_etcopy_arena_descs` (the array of
/// etcopy_arena_desc) and `@<function>_etcopy_arenas` (the
/// etcopy_function_arenas pointing to it), in the layout of
/// etcopy/Runtime/EtCopyRuntime.h.
static LogicalResult emitArenaGlobals(func::FuncOp function,
                                      SymbolTable &symbols,
                                      ArrayRef<Arena> arenas) {
  MLIRContext *context = function.getContext();
  std::string tableName = (function.getSymName() + "_etcopy_arenas").str();
  std::string descsName = (function.getSymName() + "_etcopy_arena_descs").str();
  for (StringRef name : {tableName, descsName})
    if (Operation *existing = symbols.lookup(name)) {
      InFlightDiagnostic diag = function.emitError()
                                << "cannot emit the arena metadata of @"
                                << function.getSymName() << ": symbol @" << name
                                << " already exists";
      diag.attachNote(existing->getLoc()) << "defined here";
      return diag;
    }

  Location loc = function.getLoc();
  OpBuilder builder(function);
  Type i32 = builder.getI32Type();
  Type i64 = builder.getI64Type();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto descType =
      LLVM::LLVMStructType::getLiteral(context, {i32, i32, i64, i64});
  auto descsType = LLVM::LLVMArrayType::get(descType, arenas.size());
  auto tableType = LLVM::LLVMStructType::getLiteral(context, {i64, ptr});

  // Builds a constant global whose initializer inserts `fields` into zero.
  auto createGlobal = [&](Type type, StringRef name, LLVM::Linkage linkage,
                          function_ref<Value(OpBuilder &, Value)> fill) {
    auto global = LLVM::GlobalOp::create(builder, loc, type,
                                         /*isConstant=*/true, linkage, name,
                                         /*value=*/Attribute());
    OpBuilder::InsertionGuard guard(builder);
    builder.createBlock(&global.getInitializerRegion());
    Value value = LLVM::ZeroOp::create(builder, loc, type);
    LLVM::ReturnOp::create(builder, loc, fill(builder, value));
    symbols.insert(global);
    return global;
  };
  auto insert = [&](OpBuilder &b, Value aggregate, Value field,
                    ArrayRef<int64_t> position) -> Value {
    return LLVM::InsertValueOp::create(b, loc, aggregate, field, position);
  };

  createGlobal(
      descsType, descsName, LLVM::Linkage::Internal,
      [&](OpBuilder &b, Value value) {
        for (auto [index, arena] : llvm::enumerate(arenas)) {
          int64_t i = index;
          int64_t fields[] = {static_cast<int64_t>(arena.device.getKind()),
                              arena.device.getOrdinal(),
                              static_cast<int64_t>(arena.size),
                              static_cast<int64_t>(kArenaAlignment)};
          for (auto [field, fieldValue] : llvm::enumerate(fields)) {
            Type fieldType = field < 2 ? i32 : i64;
            Value constant =
                LLVM::ConstantOp::create(b, loc, fieldType, fieldValue);
            value =
                insert(b, value, constant, {i, static_cast<int64_t>(field)});
          }
        }
        return value;
      });
  createGlobal(
      tableType, tableName,
      function.isPublic() ? LLVM::Linkage::External : LLVM::Linkage::Internal,
      [&](OpBuilder &b, Value value) {
        Value count = LLVM::ConstantOp::create(
            b, loc, i64, static_cast<int64_t>(arenas.size()));
        value = insert(b, value, count, {0});
        Value descs = LLVM::AddressOfOp::create(b, loc, ptr, descsName);
        return insert(b, value, descs, {1});
      });
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct PlanDeviceMemoryPass
    : public etcopy::impl::EtCopyPlanDeviceMemoryBase<PlanDeviceMemoryPass> {
  using EtCopyPlanDeviceMemoryBase::EtCopyPlanDeviceMemoryBase;

  void runOnOperation() override;

private:
  /// Classifies one allocation of `function` and, when it is planned, adds
  /// it to the arena of its device.
  Verdict collect(memref::AllocOp alloc, func::FuncOp function,
                  DominanceInfo &domInfo,
                  const DenseMap<Operation *, uint64_t> &points,
                  std::map<std::pair<unsigned, unsigned>, Arena> &arenas);
  /// Plans `function`: returns its arenas (empty when nothing was planned),
  /// with their buffers rewritten as views. With `callerOwned` the arenas
  /// are new leading arguments.
  FailureOr<SmallVector<Arena>> planFunction(func::FuncOp function,
                                             bool callerOwned);
  /// Makes `call`, to a function planned with caller-owned arenas of
  /// `arenaTypes`, pass fresh arenas (allocated just before the call, freed
  /// just after it) and returns their allocations.
  SmallVector<Operation *> addCallArenas(func::CallOp call,
                                         ArrayRef<MemRefType> arenaTypes);

  /// Allocations made by addCallArenas: the call is their only allowed
  /// non-access use.
  DenseSet<Operation *> callArenas;
  /// The data layout in scope of each operation, computed once.
  const DataLayoutAnalysis *dataLayouts = nullptr;
  /// The module's symbols, to recognise calls to delegates.
  const SymbolTable *moduleSymbols = nullptr;
  /// Whether the run changed the module.
  bool changedIR = false;

  /// What one run did, for the statistics and the summary remark.
  struct Counters {
    uint64_t buffersPlanned = 0;
    uint64_t buffersDynamic = 0;
    uint64_t buffersNotPlanned = 0;
    uint64_t arenas = 0;
    uint64_t bytesRequested = 0;
    uint64_t arenaBytes = 0;
    uint64_t peakLiveBytes = 0;
    uint64_t callSitesUpdated = 0;
  } counters;
};
} // namespace

Verdict PlanDeviceMemoryPass::collect(
    memref::AllocOp alloc, func::FuncOp function, DominanceInfo &domInfo,
    const DenseMap<Operation *, uint64_t> &points,
    std::map<std::pair<unsigned, unsigned>, Arena> &arenas) {
  MemRefType type = alloc.getType();
  Placement placement = getPlacement(type);
  DeviceAttr device = placement.device;
  if (placement.isHost() && planHost)
    device = DeviceAttr::get(alloc.getContext(), DeviceKind::CPU, 0);
  if (!device)
    return Verdict::Ignored;

  std::string reason;
  llvm::raw_string_ostream os(reason);
  auto notPlanned = [&](Verdict verdict) {
    if (InFlightRemark remark =
            remarkMissed(alloc, "BufferNotPlanned", getArgument()))
      remark << "not planned" << RemarkArg("Reason", reason);
    return verdict;
  };
  if (!type.hasStaticShape()) {
    os << "its size is dynamic";
    return notPlanned(Verdict::Dynamic);
  }
  std::optional<uint64_t> stride =
      getElementStride(type.getElementType(), dataLayouts->getAbove(alloc));
  if (!stride)
    os << "the size of " << type.getElementType() << " is unknown";
  else if (!type.getLayout().isIdentity())
    os << "its layout is not the identity";
  else if (!alloc.getSymbolOperands().empty())
    os << "it has symbol operands";
  else if (alloc.getAlignment().value_or(1) > kArenaAlignment)
    os << "it asks for alignment " << *alloc.getAlignment() << " > "
       << kArenaAlignment;
  else if (type.getNumElements() == 0)
    os << "it has no elements";
  else if (llvm::SaturatingMultiply(*stride,
                                    static_cast<uint64_t>(
                                        type.getNumElements())) >
           kMaxPlannedBufferBytes)
    // No device has that much memory, and sums of such sizes would
    // overflow the arena's 64-bit size.
    os << "it is larger than " << kMaxPlannedBufferBytes << " bytes";
  else if (getUnreachableBlock(alloc, &function.getBody(), domInfo))
    os << "it is allocated in a block unreachable from the entry";
  else if (!isInPlannableBlock(alloc, function))
    os << "it is allocated in a region of '" << alloc->getParentOp()->getName()
       << "' (only the entry block and single-block scf.for/while/if/"
          "index_switch/execute_region bodies are planned)";
  if (!reason.empty())
    return notPlanned(Verdict::NotPlanned);
  std::optional<LifetimeEnd> end = findLifetimeEnd(
      alloc, callArenas, *moduleSymbols, domInfo, points, reason);
  if (!end)
    return notPlanned(Verdict::NotPlanned);

  // The buffer lives from its allocation to its last use, nested regions
  // included: up to just before the op that follows the last user in the
  // block (ops are numbered in pre-order, so that op comes right after the
  // last op nested in the user). Not up to the deallocation, which
  // ownership-based deallocation places at the end of the block for all.
  uint64_t start = points.lookup(alloc);
  uint64_t last =
      end->lastUser ? points.lookup(end->lastUser->getNextNode()) - 1 : start;
  uint64_t size = *stride * type.getNumElements();
  Arena &arena =
      arenas[{static_cast<unsigned>(device.getKind()), device.getOrdinal()}];
  arena.device = device;
  Interval lifetime{start, last, llvm::alignTo(size, kArenaAlignment)};
  arena.buffers.push_back({alloc, end->dealloc,
                           std::move(end->unreachableDeallocs), size,
                           lifetime});
  return Verdict::Planned;
}

FailureOr<SmallVector<Arena>>
PlanDeviceMemoryPass::planFunction(func::FuncOp function, bool callerOwned) {
  // Program points: ops numbered in pre-order, so that an op with regions
  // comes before everything nested in it.
  DenseMap<Operation *, uint64_t> points;
  SmallVector<memref::AllocOp> allocs;
  function.walk<WalkOrder::PreOrder>([&](Operation *op) {
    points.try_emplace(op, points.size());
    if (auto alloc = dyn_cast<memref::AllocOp>(op))
      allocs.push_back(alloc);
  });

  std::map<std::pair<unsigned, unsigned>, Arena> byDevice;
  DominanceInfo domInfo(function);
  for (memref::AllocOp alloc : allocs) {
    switch (collect(alloc, function, domInfo, points, byDevice)) {
    case Verdict::Planned:
      ++counters.buffersPlanned;
      break;
    case Verdict::Dynamic:
      ++counters.buffersDynamic;
      break;
    case Verdict::NotPlanned:
      ++counters.buffersNotPlanned;
      break;
    case Verdict::Ignored:
      break;
    }
  }
  SmallVector<Arena> arenas;
  for (auto &entry : byDevice)
    arenas.push_back(std::move(entry.second));
  if (arenas.empty())
    return arenas;

  // Offsets.
  std::string summary;
  llvm::raw_string_ostream os(summary);
  for (Arena &arena : arenas) {
    SmallVector<Interval> items;
    uint64_t requested = 0;
    for (const PlannedBuffer &buffer : arena.buffers) {
      items.push_back(buffer.lifetime);
      requested += buffer.size;
    }
    SmallVector<uint64_t> offsets;
    arena.size = assignOffsets(items, offsets);
    for (auto [buffer, offset] : llvm::zip_equal(arena.buffers, offsets)) {
      buffer.offset = offset;
      if (InFlightRemark remark =
              remarkPassed(buffer.alloc, "BufferPlanned", getArgument()))
        remark << RemarkArg("Value",
                            getRemarkValueName(buffer.alloc->getResult(0)))
               << RemarkArg("Arena", arena.device.str())
               << RemarkArg("Offset", offset)
               << RemarkArg("Size", buffer.size);
    }
    uint64_t peakLive = getPeakLiveBytes(items);
    counters.bytesRequested += requested;
    counters.arenaBytes += arena.size;
    counters.peakLiveBytes += peakLive;
    ++counters.arenas;
    os << (summary.empty() ? "" : "; ") << arena.device.str()
       << " arena: " << arena.buffers.size() << " buffer(s), " << requested
       << " bytes requested, " << arena.size << " bytes (peak live " << peakLive
       << ")";
  }
  if (InFlightRemark remark =
          remarkPassed(function, "ArenasPlanned", getArgument()))
    remark << ("planned " + summary);

  // The arenas: leading arguments, or allocated at entry and freed before
  // each return.
  Block &entry = function.getBody().front();
  if (callerOwned) {
    SmallVector<unsigned> indices(arenas.size(), 0);
    SmallVector<Type> types;
    SmallVector<DictionaryAttr> attrs(arenas.size(), DictionaryAttr());
    SmallVector<Location> locs(arenas.size(), function.getLoc());
    for (const Arena &arena : arenas)
      types.push_back(arena.getType());
    if (failed(function.insertArguments(indices, types, attrs, locs)))
      return function.emitError("cannot add the arena arguments");
    for (auto [index, arena] : llvm::enumerate(arenas))
      arena.value = entry.getArgument(index);
  } else {
    OpBuilder builder = OpBuilder::atBlockBegin(&entry);
    for (Arena &arena : arenas)
      arena.value =
          memref::AllocOp::create(builder, function.getLoc(), arena.getType(),
                                  builder.getI64IntegerAttr(kArenaAlignment));
    for (Block &block : function.getBody()) {
      Operation *terminator = block.getTerminator();
      if (!terminator->hasTrait<OpTrait::ReturnLike>())
        continue;
      builder.setInsertionPoint(terminator);
      for (Arena &arena : arenas)
        memref::DeallocOp::create(builder, terminator->getLoc(), arena.value);
    }
  }

  // The buffers become views. A view (and the cast of a
  // #etcopy.device<cpu> buffer) is made once per arena, offset and type, at
  // entry after the arenas and the offsets, rather than once per buffer at
  // its allocation: buffers whose lifetimes do not overlap share a slot,
  // and those of one type then share its view, as CSE would have it. Each
  // takes the location of the first buffer it stands for.
  // (All are made before any op is erased: the builder's insertion point is
  // an op that may be a planned allocation.)
  DenseMap<int64_t, Value> offsets;
  OpBuilder entryBuilder = OpBuilder::atBlockBegin(&entry);
  if (!callerOwned && !arenas.empty())
    entryBuilder.setInsertionPointAfterValue(arenas.back().value);
  for (Arena &arena : arenas)
    for (PlannedBuffer &buffer : arena.buffers)
      if (Value &offset = offsets[buffer.offset]; !offset)
        offset = arith::ConstantIndexOp::create(
            entryBuilder, function.getLoc(), buffer.offset);
  SmallVector<Value> views;
  for (Arena &arena : arenas) {
    // The host arena has no memory space; a #etcopy.device<cpu> buffer is
    // a cast of its view.
    auto arenaType = cast<MemRefType>(arena.value.getType());
    DenseMap<std::pair<uint64_t, Type>, Value> arenaViews;
    for (PlannedBuffer &buffer : arena.buffers) {
      memref::AllocOp alloc = buffer.alloc;
      Location loc = alloc.getLoc();
      MemRefType type = alloc.getType();
      MemRefType viewType = MemRefType::Builder(type).setMemorySpace(
          arenaType.getMemorySpace());
      // Held by value: inserting the cast below may grow the map.
      Value view = arenaViews.lookup({buffer.offset, viewType});
      if (!view) {
        view = memref::ViewOp::create(entryBuilder, loc, viewType, arena.value,
                                      offsets.lookup(buffer.offset),
                                      /*sizes=*/ValueRange());
        arenaViews[{buffer.offset, viewType}] = view;
      }
      if (viewType == type) {
        views.push_back(view);
        continue;
      }
      Value &cast = arenaViews[{buffer.offset, type}];
      if (!cast)
        cast = memref::MemorySpaceCastOp::create(entryBuilder, loc, type, view);
      views.push_back(cast);
    }
  }
  auto view = views.begin();
  for (Arena &arena : arenas) {
    for (PlannedBuffer &buffer : arena.buffers) {
      buffer.dealloc.erase();
      for (Operation *dealloc : buffer.unreachableDeallocs)
        dealloc->erase();
      buffer.alloc.replaceAllUsesWith(*view++);
      callArenas.erase(buffer.alloc);
      buffer.alloc.erase();
    }
  }
  function->setAttr(EtCopyDialect::getArenasAttrName(),
                    getArenasAttr(function.getContext(), arenas));
  return arenas;
}

SmallVector<Operation *>
PlanDeviceMemoryPass::addCallArenas(func::CallOp call,
                                    ArrayRef<MemRefType> arenaTypes) {
  OpBuilder builder(call);
  SmallVector<Value> values;
  SmallVector<Operation *> allocs;
  for (MemRefType type : arenaTypes) {
    auto alloc =
        memref::AllocOp::create(builder, call.getLoc(), type,
                                builder.getI64IntegerAttr(kArenaAlignment));
    values.push_back(alloc);
    allocs.push_back(alloc);
  }
  call->insertOperands(0, values);
  builder.setInsertionPointAfter(call);
  for (Value value : values)
    memref::DeallocOp::create(builder, call.getLoc(), value);
  ++counters.callSitesUpdated;
  changedIR = true;
  return allocs;
}

void PlanDeviceMemoryPass::runOnOperation() {
  ModuleOp module = getOperation();
  bool callerOwnership = arenaOwnership == ArenaOwnership::Caller;
  changedIR = false;
  counters = Counters();
  SymbolTable symbols(module);
  moduleSymbols = &symbols;
  dataLayouts = &getAnalysis<DataLayoutAnalysis>();

  // Callees before callers (post-order over direct calls; a cycle is cut
  // where the walk meets it), so that a caller can plan the arenas of its
  // caller-owned callees like its own buffers. Iterative: call chains may be
  // deeper than the stack.
  SmallVector<func::FuncOp> order;
  DenseSet<Operation *> visited;
  // The direct calls of each function (to functions of the module), found
  // once.
  DenseMap<Operation *, SmallVector<std::pair<func::CallOp, func::FuncOp>>>
      callsOf;
  struct Frame {
    func::FuncOp function;
    unsigned next = 0;
  };
  SmallVector<Frame> stack;
  auto push = [&](func::FuncOp function) {
    stack.push_back({function});
    auto &calls = callsOf[function];
    function.walk([&](func::CallOp call) {
      if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
        calls.push_back({call, callee});
    });
  };
  for (func::FuncOp root : module.getOps<func::FuncOp>()) {
    if (!visited.insert(root).second)
      continue;
    push(root);
    while (!stack.empty()) {
      Frame &frame = stack.back();
      auto &calls = callsOf[frame.function];
      if (frame.next < calls.size()) {
        func::FuncOp callee = calls[frame.next++].second;
        if (visited.insert(callee).second)
          push(callee);
        continue;
      }
      order.push_back(frame.function);
      stack.pop_back();
    }
  }

  // With caller ownership, the users of every function's symbol, in one
  // walk of the module (asking per function would walk it once per
  // function); none known when some operation may hide uses.
  DenseMap<Operation *, SmallVector<Operation *>> symbolUsers;
  std::optional<SymbolTable::UseRange> uses;
  if (callerOwnership)
    uses = SymbolTable::getSymbolUses(&module.getBodyRegion());
  if (uses)
    for (const SymbolTable::SymbolUse &use : *uses)
      if (Operation *symbol =
              symbols.lookup(use.getSymbolRef().getRootReference()))
        symbolUsers[symbol].push_back(use.getUser());
  auto getUsers = [&](Operation *symbol) -> ArrayRef<Operation *> {
    auto it = symbolUsers.find(symbol);
    return it == symbolUsers.end() ? ArrayRef<Operation *>() : it->second;
  };

  // Arena types of the caller-owned functions planned so far.
  DenseMap<Operation *, SmallVector<MemRefType>> arenaArguments;
  DenseSet<Operation *> done;
  for (func::FuncOp function : order) {
    done.insert(function);
    // Calls to caller-owned callees planned before: this function provides
    // their arenas.
    for (auto [call, callee] : callsOf[function]) {
      auto it = arenaArguments.find(callee);
      if (it == arenaArguments.end())
        continue;
      for (Operation *alloc : addCallArenas(call, it->second))
        callArenas.insert(alloc);
    }
    if (function.isExternal() ||
        function->hasAttr(EtCopyDialect::getArenasAttrName()))
      continue;

    // Caller ownership changes the signature: every use must be a call we
    // can update.
    Operation *otherUse = nullptr;
    if (callerOwnership) {
      if (!uses)
        otherUse = module;
      for (Operation *user : getUsers(function))
        if (!otherUse && !isa<func::CallOp>(user))
          otherUse = user;
    }
    bool callerOwned = callerOwnership && !otherUse;

    FailureOr<SmallVector<Arena>> arenas = planFunction(function, callerOwned);
    if (failed(arenas))
      return signalPassFailure();
    if (arenas->empty())
      continue;
    changedIR = true;
    if (failed(emitArenaGlobals(function, symbols, *arenas)))
      return signalPassFailure();
    if (callerOwnership && !callerOwned) {
      // Not silent: an embedder reading the metadata must not pass arenas
      // to this function.
      InFlightDiagnostic diag =
          function.emitWarning()
          << "@" << function.getSymName()
          << " keeps owning its arenas (arena-ownership=function): its "
             "symbol is used by '"
          << otherUse->getName() << "', not only by func.call";
      diag.attachNote(otherUse->getLoc()) << "used here";
    }
    if (!callerOwned)
      continue;

    SmallVector<MemRefType> types;
    for (const Arena &arena : *arenas)
      types.push_back(arena.getType());
    arenaArguments[function] = types;
    // Calls in functions already planned (recursion): fresh arenas around
    // each call, not planned.
    for (Operation *user : getUsers(function))
      if (done.contains(user->getParentOfType<func::FuncOp>()))
        addCallArenas(cast<func::CallOp>(user), types);
  }
  callArenas.clear();
  numBuffersPlanned += counters.buffersPlanned;
  numBuffersDynamic += counters.buffersDynamic;
  numBuffersNotPlanned += counters.buffersNotPlanned;
  numArenas += counters.arenas;
  numBytesRequested += counters.bytesRequested;
  numArenaBytes += counters.arenaBytes;
  numPeakLiveBytes += counters.peakLiveBytes;
  numCallSitesUpdated += counters.callSitesUpdated;
  remarkSummary(module, getArgument(),
                {{"buffers-planned", counters.buffersPlanned},
                 {"buffers-left-dynamic", counters.buffersDynamic},
                 {"buffers-not-planned", counters.buffersNotPlanned},
                 {"arenas", counters.arenas},
                 {"bytes-requested", counters.bytesRequested},
                 {"arena-bytes", counters.arenaBytes},
                 {"peak-live-bytes", counters.peakLiveBytes},
                 {"call-sites-updated", counters.callSitesUpdated}});
  // Nothing to verify again when nothing changed.
  if (!changedIR)
    markAllAnalysesPreserved();
}
