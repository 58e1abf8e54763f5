//===- Planning.cpp - Planning of the CUDA lowering -------------*- C++ -*-===//
//
// Validates the module and collects its runtime ops, then plans each
// function's runtime ops on func.func, before the conversion: the stream of
// each device got at entry and awaited before returns, the device switches,
// the runs of independent copies grouped into batches, the devices and
// streams of delegate calls, and the values the lowering needs, created as
// LLVM-dialect ops.
//
//===----------------------------------------------------------------------===//

#include "Planning.h"

#include "CopyClassification.h"
#include "KernelLowering.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

namespace mlir::etcopy::cuda_lowering {

//===----------------------------------------------------------------------===//
// Batches of copies
//===----------------------------------------------------------------------===//

/// The most copies of one cudaMemcpyBatchAsync: bounds the two arrays of
/// pointers that each function holds on its stack (2 x 4 KiB).
constexpr size_t kMaxBatchCopies = 512;

namespace {

/// The bytes of one buffer that one side of a copy touches.
struct BufferAccess {
  /// What may alias what: distinct allocations of the function are
  /// disjoint, from each other and from the function's arguments and
  /// globals (named memory), which may alias each other; anything else
  /// (results of calls, block arguments of loops) may alias anything.
  enum class Kind { Allocation, Named, Other };
  static constexpr unsigned kNumKinds = 3;

  Kind kind;
  /// The allocation, the argument, the global's symbol, or the value.
  const void *buffer;
  /// [begin, end) in bytes from the buffer's aligned pointer; the whole
  /// buffer when unknown.
  int64_t begin = std::numeric_limits<int64_t>::min();
  int64_t end = std::numeric_limits<int64_t>::max();
};

/// Where the contiguous, static-shape memref `memref` lies: views are
/// followed to the buffer they view, constant byte shifts and static
/// offsets give the range. The results of `freshAllocators` (calls to
/// delegates, which return fresh buffers) are allocations.
BufferAccess getBufferAccess(Value memref, unsigned indexBitwidth,
                             const DenseSet<Operation *> &freshAllocators) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  std::optional<int64_t> elementBytes =
      getStaticElementBytes(type.getElementType(), indexBitwidth);
  bool exact = elementBytes && type.hasStaticShape() &&
               succeeded(getStridesAndOffset(type, strides, offset)) &&
               !ShapedType::isDynamic(offset);
  int64_t shift = 0;
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>()) {
    // memref.view moves the aligned pointer; these views keep it (the
    // offset in the memref's type is from the same pointer).
    if (auto byteView = dyn_cast<memref::ViewOp>(*view)) {
      APInt byteShift;
      if (matchPattern(byteView.getByteShift(), m_ConstantInt(&byteShift)))
        shift += byteShift.getSExtValue();
      else
        exact = false;
    } else if (!isa<memref::SubViewOp, memref::ReinterpretCastOp,
                    memref::CastOp, memref::MemorySpaceCastOp,
                    memref::ExpandShapeOp, memref::CollapseShapeOp,
                    memref::ExtractStridedMetadataOp>(*view)) {
      exact = false;
    }
    memref = view.getViewSource();
  }
  BufferAccess access{BufferAccess::Kind::Other, memref.getAsOpaquePointer()};
  if (auto argument = dyn_cast<BlockArgument>(memref)) {
    if (argument.getOwner()->isEntryBlock() &&
        isa<FunctionOpInterface>(argument.getOwner()->getParentOp()))
      access.kind = BufferAccess::Kind::Named;
  } else if (auto global = memref.getDefiningOp<memref::GetGlobalOp>()) {
    access.kind = BufferAccess::Kind::Named;
    access.buffer = global.getNameAttr().getAsOpaquePointer();
  } else if (Operation *producer = memref.getDefiningOp();
             isa<memref::AllocOp, memref::AllocaOp, gpu::AllocOp>(producer) ||
             freshAllocators.contains(producer)) {
    access.kind = BufferAccess::Kind::Allocation;
  }
  if (exact) {
    access.begin = shift + offset * *elementBytes;
    access.end = access.begin + type.getNumElements() * *elementBytes;
  }
  return access;
}

/// Disjoint byte ranges, merged as they are added.
class ByteRanges {
public:
  bool overlaps(int64_t begin, int64_t end) const {
    if (begin >= end)
      return false;
    auto next = ranges.upper_bound(begin);
    return (next != ranges.end() && next->first < end) ||
           (next != ranges.begin() && std::prev(next)->second > begin);
  }

  void add(int64_t begin, int64_t end) {
    if (begin >= end)
      return;
    auto next = ranges.upper_bound(begin);
    if (next != ranges.begin() && std::prev(next)->second >= begin) {
      --next;
      begin = next->first;
      end = std::max(end, next->second);
      next = ranges.erase(next);
    }
    for (; next != ranges.end() && next->first <= end;
         next = ranges.erase(next))
      end = std::max(end, next->second);
    ranges.emplace(begin, end);
  }

private:
  std::map<int64_t, int64_t> ranges;
};

/// The memory that the copies of a run read and write, to tell whether one
/// more copy is independent of all of them (copies of a batch run in any
/// order): O(log n) per access.
class RunAccesses {
public:
  /// Whether an access to `access` conflicts with the run's: a write with
  /// any access to the same bytes, a read with a write.
  bool conflicts(const BufferAccess &access, bool write) const {
    auto found = buffers.find(access.buffer);
    const Buffer *self = found == buffers.end() ? nullptr : &found->second;
    if (self && (self->written.overlaps(access.begin, access.end) ||
                 (write && self->read.overlaps(access.begin, access.end))))
      return true;
    // Other buffers that may be this one.
    unsigned othersWritten = 0, othersAccessed = 0;
    for (unsigned kind = 0; kind < BufferAccess::kNumKinds; ++kind) {
      if (!mayAlias(access.kind, static_cast<BufferAccess::Kind>(kind)))
        continue;
      othersWritten += numWritten[kind];
      othersAccessed += numAccessed[kind];
    }
    if (self && mayAlias(access.kind, access.kind)) {
      othersWritten -= self->isWritten;
      othersAccessed -= 1;
    }
    return othersWritten != 0 || (write && othersAccessed != 0);
  }

  void add(const BufferAccess &access, bool write) {
    auto [found, inserted] = buffers.try_emplace(access.buffer);
    Buffer &buffer = found->second;
    unsigned kind = static_cast<unsigned>(access.kind);
    numAccessed[kind] += inserted;
    if (write) {
      numWritten[kind] += !buffer.isWritten;
      buffer.isWritten = true;
      buffer.written.add(access.begin, access.end);
    } else {
      buffer.read.add(access.begin, access.end);
    }
  }

  void clear() {
    buffers.clear();
    std::fill(std::begin(numWritten), std::end(numWritten), 0);
    std::fill(std::begin(numAccessed), std::end(numAccessed), 0);
  }

private:
  /// Whether two distinct buffers of these kinds may share memory.
  static bool mayAlias(BufferAccess::Kind a, BufferAccess::Kind b) {
    using K = BufferAccess::Kind;
    return a == K::Other || b == K::Other || (a == K::Named && b == K::Named);
  }

  struct Buffer {
    ByteRanges read, written;
    bool isWritten = false;
  };
  DenseMap<const void *, Buffer> buffers;
  /// Buffers of each kind the run writes, and accesses at all.
  unsigned numWritten[BufferAccess::kNumKinds] = {};
  unsigned numAccessed[BufferAccess::kNumKinds] = {};
};

} // namespace

bool isTransparentToCopies(Operation *op) {
  // The line constants planning puts before the ops touch no memory.
  if (isa<LLVM::ConstantOp>(op))
    return true;
  // Inline assembly may access memory through a pointer operand (an
  // indirect `*m` constraint) even where the LLVM dialect reports no effect
  // (without `has_side_effects`).
  if (op->getNumRegions() != 0 || op->hasTrait<OpTrait::IsTerminator>() ||
      isa<CallOpInterface, LLVM::InlineAsmOp>(op))
    return false;
  if (isa<gpu::AllocOp>(op) || isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.onlyHasEffect<MemoryEffects::Allocate>();
}

//===----------------------------------------------------------------------===//
// gpu.memset patterns
//===----------------------------------------------------------------------===//

FailureOr<MemsetPlan> planMemset(gpu::MemsetOp memset, unsigned indexBitwidth,
                                 std::string &why) {
  Type elementType = memset.getDst().getType().getElementType();
  unsigned bits;
  if (isa<IndexType>(elementType)) {
    bits = indexBitwidth;
  } else if (elementType.isIntOrFloat()) {
    bits = elementType.getIntOrFloatBitWidth();
  } else {
    why = "elements of a type other than integers, floats and index";
    return failure();
  }
  int64_t storageBytes = bits <= 8 ? 1 : bits / 8;
  if (bits > 8 && (bits % 8 != 0 || !llvm::isPowerOf2_32(bits) || bits > 64)) {
    why = "elements of " + std::to_string(bits) + " bits";
    return failure();
  }

  Attribute attr;
  if (!matchPattern(memset.getValue(), m_Constant(&attr))) {
    if (storageBytes > 4) {
      why = "a 64-bit value that is not a constant (the driver sets at most "
            "32-bit patterns)";
      return failure();
    }
    return MemsetPlan{storageBytes, 1, std::nullopt};
  }
  APInt value;
  if (auto intAttr = dyn_cast<IntegerAttr>(attr))
    value = intAttr.getValue();
  else if (auto floatAttr = dyn_cast<FloatAttr>(attr))
    value = floatAttr.getValue().bitcastToAPInt();
  else {
    why = "a constant that is not a scalar";
    return failure();
  }
  value = value.zextOrTrunc(storageBytes * 8);
  // One repeated byte: cudaMemsetAsync, no driver function needed.
  uint64_t byte = value.extractBitsAsZExtValue(8, 0);
  bool repeated = true;
  for (unsigned offset = 8; offset < value.getBitWidth(); offset += 8)
    repeated &= value.extractBitsAsZExtValue(8, offset) == byte;
  if (repeated)
    return MemsetPlan{1, storageBytes, static_cast<uint32_t>(byte)};
  if (storageBytes <= 4)
    return MemsetPlan{storageBytes, 1,
                      static_cast<uint32_t>(value.getZExtValue())};
  uint64_t low = value.extractBitsAsZExtValue(32, 0);
  if (value.extractBitsAsZExtValue(32, 32) != low) {
    why = "the 64-bit pattern 0x" + llvm::utohexstr(value.getZExtValue()) +
          ", whose 32-bit halves differ (the driver sets at most 32-bit "
          "patterns)";
    return failure();
  }
  return MemsetPlan{4, 2, static_cast<uint32_t>(low)};
}

//===----------------------------------------------------------------------===//
// Validation and collection
//===----------------------------------------------------------------------===//

LogicalResult validateAndCollect(ModuleOp module, SymbolTable &symbols,
                                 unsigned indexBitwidth, bool pinHostMemory,
                                 bool barePointerKernels, ModuleWork &work) {
  work.pinTransferBuffers = pinHostMemory;
  bool failed = false;
  auto checkMemRef = [&](Operation *op, Type type) {
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref)
      return;
    Attribute space = memref.getMemorySpace();
    if (space && !isa<DeviceAttr, gpu::AddressSpaceAttr, IntegerAttr>(space)) {
      op->emitError("cannot lower memory space ")
          << space << " of " << memref
          << "; supported: #etcopy.device<...>, #gpu.address_space<...> and "
             "integer memory spaces";
      failed = true;
    }
    SmallVector<int64_t> strides;
    int64_t offset;
    if (::mlir::failed(getStridesAndOffset(memref, strides, offset))) {
      op->emitError("cannot copy ") << memref << ": its layout is not strided";
      failed = true;
    }
  };

  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::GPUModuleOp, gpu::BinaryOp>(op))
      return WalkResult::skip();
    // The runtime support, the globals of locations and kernels and the
    // streams go in `module`: code in a module nested in it could not refer
    // to them.
    if (auto nested = dyn_cast<ModuleOp>(op); nested && nested != module) {
      if (!nested.getBody()->empty()) {
        nested.emitError("cannot lower a nested 'builtin.module': the runtime "
                         "support and its globals go in the top-level module; "
                         "run the pass on the nested module instead, e.g. "
                         "-p 'builtin.module(builtin.module("
                         "convert-gpu-to-cuda-runtime))'");
        failed = true;
      }
      return WalkResult::skip();
    }
    // A static size whose bytes overflow would wrap to a small allocation.
    if (isa<gpu::AllocOp, memref::AllocOp, memref::AllocaOp>(op)) {
      auto type = cast<MemRefType>(op->getResult(0).getType());
      if (!hasRepresentableSize(type, indexBitwidth)) {
        op->emitError("cannot allocate ")
            << type << ": its size in bytes does not fit in 64 bits";
        failed = true;
        return WalkResult::advance();
      }
    }
    // Upstream's LLVM lowering of unranked memrefs reads the memory space
    // as an integer (and crashes on any other): reject them up front.
    for (Type type :
         llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
      auto unranked = dyn_cast<UnrankedMemRefType>(type);
      if (unranked && unranked.getMemorySpace() &&
          !isa<IntegerAttr>(unranked.getMemorySpace())) {
        op->emitError("cannot lower the unranked memref ")
            << type << " of '" << op->getName()
            << "': its memory space is not an integer; cast it to a ranked "
               "memref first";
        failed = true;
        return WalkResult::advance();
      }
    }
    if (auto global = dyn_cast<memref::GlobalOp>(op)) {
      if (classify(global.getType()).kind == MemoryPlace::Kind::Device) {
        global.emitError("cannot lower 'memref.global' @")
            << global.getSymName() << " of " << global.getType()
            << ": device memory cannot be a global; allocate it and copy the "
               "data with etcopy.h2d";
        failed = true;
      }
      return WalkResult::advance();
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      DeviceAttr device = callee ? getDelegateDevice(callee) : DeviceAttr();
      if (device)
        work.delegateCalls.emplace_back(call, device);
      if (device && isStreamOrderedDelegate(callee)) {
        if (auto func = call->getParentOfType<func::FuncOp>()) {
          work.runtimeOps[func].push_back(call);
          work.streamOrderedCalls[call] = device.getOrdinal();
          work.streamOrderedDelegates.insert(callee);
        } else {
          call.emitError("cannot pass a stream to the stream-ordered "
                         "delegate @")
              << call.getCallee() << " on " << device
              << " from outside a func.func";
          failed = true;
        }
      }
    }
    if (isa<memref::AllocOp, memref::DeallocOp>(op)) {
      // The buffer's memref.alloc comes before its frees.
      auto alloc = dyn_cast<memref::AllocOp>(op);
      auto func = op->getParentOfType<func::FuncOp>();
      if (func && (alloc ? isTransferBuffer(alloc)
                         : work.transferBufferAllocs.contains(getAllocation(
                               cast<memref::DeallocOp>(op).getMemref())))) {
        if (alloc)
          work.transferBufferAllocs.insert(alloc);
        work.runtimeOps[func].push_back(op);
      }
    }
    if (!isa_and_present<gpu::GPUDialect>(op->getDialect())) {
      // Tokens may only flow between the ops lowered here.
      for (Value operand : op->getOperands())
        if (isa<gpu::AsyncTokenType>(operand.getType())) {
          op->emitError("cannot lower a !gpu.async.token passed to '")
              << op->getName()
              << "'; tokens may only be used by gpu.alloc, gpu.dealloc, "
                 "gpu.memcpy, gpu.memset, gpu.wait and gpu.launch_func in the "
                 "same function";
          failed = true;
          break;
        }
      return WalkResult::advance();
    }
    if (!isRuntimeOp(op)) {
      op->emitError("'")
          << op->getName()
          << "' is not supported by convert-gpu-to-cuda-runtime, which lowers "
             "gpu.alloc, gpu.dealloc, gpu.memcpy, gpu.memset, gpu.wait and "
             "gpu.launch_func";
      failed = true;
      return WalkResult::advance();
    }
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
      failed |= !validateLaunch(launch, symbols, barePointerKernels);
    auto func = op->getParentOfType<func::FuncOp>();
    if (!func) {
      op->emitError("'") << op->getName()
                         << "' must be inside a func.func to be lowered";
      failed = true;
      return WalkResult::advance();
    }
    work.runtimeOps[func].push_back(op);
    for (Type type :
         llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
      checkMemRef(op, type);
    // A token is lowered to the stream of the op that produced it, so it
    // must come from a runtime op of the same function.
    for (Value operand : op->getOperands()) {
      if (!isa<gpu::AsyncTokenType>(operand.getType()))
        continue;
      Operation *producer = operand.getDefiningOp();
      if (!producer || !isRuntimeOp(producer) ||
          producer->getParentOfType<func::FuncOp>() != func) {
        op->emitError("cannot lower a !gpu.async.token that does not come "
                      "from gpu.alloc, gpu.dealloc, gpu.memcpy, gpu.memset, "
                      "gpu.wait or gpu.launch_func in the same function");
        failed = true;
      }
    }

    if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
      MemRefType type = alloc.getType();
      if (!type.getLayout().isIdentity()) {
        alloc.emitError("cannot allocate ")
            << type << ": only identity layouts can be allocated";
        failed = true;
      }
      if (!alloc.getSymbolOperands().empty()) {
        alloc.emitError("cannot lower symbol operands of 'gpu.alloc'");
        failed = true;
      }
      if (classify(type).kind == MemoryPlace::Kind::Host) {
        alloc.emitError("'gpu.alloc' allocates device memory but its type ")
            << type << " is placed on the host";
        failed = true;
      }
    }
    if (auto memset = dyn_cast<gpu::MemsetOp>(op)) {
      MemRefType type = memset.getDst().getType();
      std::string why;
      if (::mlir::failed(planMemset(memset, indexBitwidth, why))) {
        memset.emitError("cannot lower 'gpu.memset' of ")
            << type << ": " << why
            << "; supported are patterns of 8, 16 and 32 bits, and constant "
               "64-bit patterns made of one repeated byte or of two equal "
               "32-bit halves";
        failed = true;
      }
      if (!isContiguous(type)) {
        memset.emitError("cannot lower 'gpu.memset' of non-contiguous ")
            << type;
        failed = true;
      }
    }
    return WalkResult::advance();
  });
  return ::mlir::failure(failed);
}

//===----------------------------------------------------------------------===//
// Planning: streams per function, data per op.
//===----------------------------------------------------------------------===//

std::tuple<StringRef, unsigned, unsigned> getFileLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return {file.getFilename().getValue(), file.getLine(), file.getColumn()};
  std::tuple<StringRef, unsigned, unsigned> result{"<unknown location>", 0, 0};
  loc->walk([&](Location nested) {
    if (auto file = dyn_cast<FileLineColLoc>(nested)) {
      result = {file.getFilename().getValue(), file.getLine(),
                file.getColumn()};
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result;
}

Value extractField(OpBuilder &builder, Location loc, Value descriptor,
                   ArrayRef<int64_t> position) {
  for (auto insert = descriptor.getDefiningOp<LLVM::InsertValueOp>(); insert;
       insert = insert.getContainer().getDefiningOp<LLVM::InsertValueOp>()) {
    ArrayRef<int64_t> inserted = insert.getPosition();
    if (inserted == position)
      return insert.getValue();
    // The insertion overlaps the field without being it.
    size_t common = std::min(inserted.size(), position.size());
    if (inserted.take_front(common) == position.take_front(common))
      break;
  }
  return LLVM::ExtractValueOp::create(builder, loc, descriptor, position);
}

namespace {

/// True when nothing is pending on the stream of device `key` at `ret`: the
/// last op before it in its block that touches the stream is a host wait
/// for it. `keyOf` gives the device key of a runtime op; `streamOrderedCalls`
/// are the calls that enqueue work (on every stream of a multi-stream
/// function, which waits for the delegate's).
bool isIdleAtReturn(Operation *ret, int64_t key,
                    function_ref<int64_t(Operation *)> keyOf,
                    const StreamOrderedCalls &streamOrderedCalls) {
  for (Operation *op = ret->getPrevNode(); op; op = op->getPrevNode()) {
    // Nested blocks may hold runtime ops.
    if (op->getNumRegions() != 0 || streamOrderedCalls.contains(op))
      return false;
    if (!isRuntimeOp(op))
      continue;
    auto wait = dyn_cast<gpu::WaitOp>(op);
    if (wait && !wait.getAsyncToken()) {
      if (wait.getAsyncDependencies().empty() ||
          llvm::any_of(wait.getAsyncDependencies(), [&](Value token) {
            return keyOf(token.getDefiningOp()) == key;
          }))
        return true;
      continue;
    }
    if (keyOf(op) != key)
      continue;
    // An async op leaves work pending; a sync-form op waits for its stream,
    // except a host_shared gpu.alloc (cudaMallocManaged queues nothing).
    if (cast<gpu::AsyncOpInterface>(op).getAsyncToken())
      return false;
    auto alloc = dyn_cast<gpu::AllocOp>(op);
    return !alloc || !alloc.getHostShared();
  }
  return false;
}

/// The device each op of a function on several devices must select (ops
/// absent from the result select none): its own, unless the previous op of
/// its block selected it and nothing in between (a call, nested blocks) may
/// have selected another. At entry, the last stream created (`keys.back()`)
/// has selected its device. gpu.wait selects none: it only joins or
/// synchronises streams; after a stream-ordered delegate call the device is
/// unknown, like after any call.
DenseMap<Operation *, int64_t>
planDeviceSwitches(func::FuncOp func, ArrayRef<Operation *> runtimeOps,
                   ArrayRef<int64_t> keys,
                   function_ref<int64_t(Operation *)> keyOf) {
  constexpr int64_t kUnknown = -2;
  DenseMap<Operation *, int64_t> switches;
  Block *block = &func.getBody().front();
  Operation *previous = nullptr;
  int64_t selected = keys.back();
  for (Operation *op : runtimeOps) {
    if (isTransferBufferOp(op))
      continue; // Host memory: no device to select.
    if (op->getBlock() != block) {
      block = op->getBlock();
      previous = nullptr;
      selected = kUnknown;
    }
    for (Operation *between = previous ? previous->getNextNode()
                                       : &block->front();
         between != op; between = between->getNextNode())
      if (isa<CallOpInterface>(between) || between->getNumRegions() != 0)
        selected = kUnknown;
    previous = op;
    if (isa<CallOpInterface>(op)) {
      selected = kUnknown;
      continue;
    }
    int64_t key = keyOf(op);
    if (isa<gpu::WaitOp>(op) || key == selected)
      continue;
    switches[op] = key;
    selected = key;
  }
  return switches;
}

/// Groups the copies of `runtimeOps` into batches (`plans` and `batches`):
/// each run of consecutive copies of one block on one stream, of static
/// size, contiguous and not between devices, with only transparent ops
/// between them, none of which writes memory another reads or writes. A
/// sync-form copy ends its run: the host waits after it. Each copy left
/// alone is recorded with the reason (`unbatched`). Linear in the ops of the
/// function (each access is one lookup in the run's ranges).
void planBatches(ArrayRef<Operation *> runtimeOps,
                 function_ref<int64_t(Operation *)> keyOf, FunctionPlan &plan,
                 PlanMap &plans, BatchPlanning &batching) {
  unsigned indexBitwidth = batching.indexBitwidth;
  SmallVector<gpu::MemcpyOp> run;
  RunAccesses accesses;
  // Why the run's first copy did not join the run before it, if it tried.
  std::optional<UnbatchedCopy> runStart;
  // Copies often share a buffer (an upload and a download of it): each
  // memref's access is computed once.
  DenseMap<Value, BufferAccess> bufferAccesses;
  auto getAccess = [&](Value memref) {
    auto [it, inserted] = bufferAccesses.try_emplace(memref);
    if (inserted)
      it->second = getBufferAccess(memref, indexBitwidth,
                                   batching.freshAllocators);
    return it->second;
  };
  auto close = [&](StringRef reason, Operation *blocker = nullptr) {
    if (run.size() == 1)
      batching.unbatched.push_back(
          runStart.value_or(UnbatchedCopy{run.front(), reason, blocker}));
    if (run.size() > 1) {
      CopyBatch &batch = batching.batches.emplace_back(CopyBatch{run});
      for (gpu::MemcpyOp copy : run)
        plans[copy].batch = &batch;
      plan.maxBatchCopies =
          std::max<int64_t>(plan.maxBatchCopies, run.size());
    }
    run.clear();
    accesses.clear();
    runStart.reset();
  };
  for (Operation *op : runtimeOps) {
    auto copy = dyn_cast<gpu::MemcpyOp>(op);
    if (!copy) {
      if (!isTransparentToCopies(op))
        close("an op that touches memory, waits or has regions follows it",
              op);
      continue;
    }
    auto [srcPlace, dstPlace] = classifyCopy(copy);
    StringRef alone;
    if (isPeerCopy(srcPlace, dstPlace))
      alone = "a copy between two devices (cudaMemcpyPeerAsync)";
    else if (!isSimpleCopy(copy, indexBitwidth))
      alone = "not contiguous or not of static size (the strided copy)";
    if (!alone.empty()) {
      close("the copy after it cannot be batched", copy);
      batching.unbatched.push_back({copy, alone});
      continue;
    }
    BufferAccess src = getAccess(copy.getSrc());
    BufferAccess dst = getAccess(copy.getDst());
    // Why `copy` cannot join the run; none if it can.
    auto joinRun = [&]() -> std::optional<UnbatchedCopy> {
      gpu::MemcpyOp previous = run.back();
      if (run.size() == kMaxBatchCopies)
        return UnbatchedCopy{copy, "the batch before it is full"};
      if (keyOf(previous) != keyOf(op))
        return UnbatchedCopy{copy, "on another stream than the copy next "
                                   "to it"};
      if (previous->getBlock() != op->getBlock())
        return UnbatchedCopy{copy, "in another block than the copy next "
                                   "to it"};
      for (Operation *between = previous->getNextNode(); between != op;
           between = between->getNextNode())
        if (!isTransparentToCopies(between))
          return UnbatchedCopy{copy,
                               "an op that touches memory, waits or has "
                               "regions comes between it and the copy next "
                               "to it",
                               between};
      if (accesses.conflicts(src, /*write=*/false) ||
          accesses.conflicts(dst, /*write=*/true))
        return UnbatchedCopy{copy, "depends on a copy next to it: one "
                                   "writes memory the other reads or writes "
                                   "(or may)"};
      return std::nullopt;
    };
    if (!run.empty()) {
      if (std::optional<UnbatchedCopy> why = joinRun()) {
        close(why->reason, why->blocker);
        runStart = why;
      }
    }
    run.push_back(copy);
    accesses.add(src, /*write=*/false);
    accesses.add(dst, /*write=*/true);
    if (!copy.getAsyncToken())
      close("a synchronous copy: the host waits after it");
  }
  close("no other copy follows it");
}

} // namespace

int64_t planFunction(func::FuncOp func, ArrayRef<Operation *> runtimeOps,
                     const StreamOrderedCalls &streamOrderedCalls,
                     FunctionPlan &plan, PlanMap &plans,
                     BatchPlanning *batching) {
  FunctionValues &values = plan.values;
  RuntimeSupport &support = values.getSupport();

  // The device key of each op, computed once: planning asks for it
  // several times.
  DenseMap<Operation *, int64_t> opKeys;
  opKeys.reserve(runtimeOps.size());
  auto getKey = [&](Operation *op) {
    auto [it, inserted] = opKeys.try_emplace(op);
    if (inserted) {
      auto call = streamOrderedCalls.find(op);
      it->second =
          call != streamOrderedCalls.end() ? call->second : getDeviceKey(op);
    }
    return it->second;
  };
  // Devices used, "current device" (-1) first so that its stream is got
  // before any cudaSetDevice. gpu.wait names no memory: it runs on the
  // function's first stream. Transfer buffers need no stream.
  auto memoryOps = llvm::make_filter_range(runtimeOps, [](Operation *op) {
    return !isa<gpu::WaitOp>(op) && !isTransferBufferOp(op);
  });
  llvm::SetVector<int64_t> keys;
  for (Operation *op : memoryOps)
    if (getKey(op) == -1)
      keys.insert(-1);
  for (Operation *op : memoryOps)
    keys.insert(getKey(op));
  if (keys.empty())
    keys.insert(-1);
  unsigned numExplicit = llvm::count_if(keys, [](int64_t k) { return k >= 0; });

  auto keyOf = [&](Operation *op) {
    return isa<gpu::WaitOp>(op) ? keys.front() : getKey(op);
  };
  plan.switchesDevices = numExplicit > 1;
  DenseMap<Operation *, int64_t> switches =
      plan.switchesDevices
          ? planDeviceSwitches(func, runtimeOps, keys.getArrayRef(), keyOf)
          : DenseMap<Operation *, int64_t>();

  OpBuilder builder(func.getContext());
  values.setInsertionPointAfterValues(builder);
  Location loc = func.getLoc();
  SmallVector<Value, 3> at = values.getLocation(builder, loc);
  Value previousDevice;
  if (numExplicit)
    previousDevice = support.call(builder, loc, "__etcopy_get_device", at);
  plan.entryDevice = previousDevice;
  for (int64_t key : keys) {
    SmallVector<Value> arguments{values.getI32(builder, key)};
    llvm::append_range(arguments, at);
    Value stream =
        support.call(builder, loc, "__etcopy_get_stream", arguments);
    plan.streams[key] = stream;
    if (keys.size() > 1)
      plan.streamDevices[stream] =
          key >= 0 ? values.getI32(builder, key) : previousDevice;
  }
  plan.switchesDevices = numExplicit > 1;

  for (Operation *op : runtimeOps) {
    OpPlan &opPlan = plans[op];
    int64_t key = keyOf(op);
    opPlan.function = &plan;
    opPlan.stream = plan.streams.lookup(key);
    if (auto it = switches.find(op); it != switches.end())
      opPlan.switchToDevice = it->second;
    builder.setInsertionPoint(op);
    llvm::copy(values.getLocation(builder, op->getLoc()),
               opPlan.location.begin());
  }
  if (batching)
    planBatches(runtimeOps, keyOf, plan, plans, *batching);
  // The streams outlive the call: the host only waits for the function's
  // work before data leaves it, unless it just did.
  for (Block &block : func.getBody()) {
    auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
    if (!ret)
      continue;
    builder.setInsertionPoint(ret);
    SmallVector<Value, 3> atReturn = values.getLocation(builder, ret.getLoc());
    for (auto [key, stream] : plan.streams) {
      if (isIdleAtReturn(ret, key, keyOf, streamOrderedCalls))
        continue;
      SmallVector<Value> arguments{stream};
      llvm::append_range(arguments, atReturn);
      support.call(builder, ret.getLoc(), "__etcopy_stream_synchronize",
                   arguments);
    }
    if (previousDevice) {
      SmallVector<Value> arguments{previousDevice};
      llvm::append_range(arguments, atReturn);
      support.call(builder, ret.getLoc(), "__etcopy_restore_device", arguments);
    }
  }

  if (numExplicit != 1)
    return -1;
  return *llvm::find_if(keys, [](int64_t key) { return key >= 0; });
}

void switchDevicesForDelegates(
    ArrayRef<std::pair<func::CallOp, DeviceAttr>> delegateCalls,
    const DenseMap<Operation *, int64_t> &homeDevices,
    function_ref<FunctionValues &(func::FuncOp)> getValues,
    RuntimeSupport &support) {
  for (auto [call, device] : delegateCalls) {
    auto caller = call->getParentOfType<func::FuncOp>();
    int64_t ordinal = device.getOrdinal();
    auto home = homeDevices.find(caller);
    if (home != homeDevices.end() && home->second == ordinal)
      continue;
    FunctionValues *values = &getValues(caller);
    OpBuilder builder(call);
    Location loc = call.getLoc();
    SmallVector<Value, 3> at = values->getLocation(builder, loc);
    Value deviceValue = values->getI32(builder, ordinal);
    SmallVector<Value> enterArguments{deviceValue};
    llvm::append_range(enterArguments, at);
    Value previous =
        support.call(builder, loc, "__etcopy_enter_device", enterArguments);
    builder.setInsertionPointAfter(call);
    SmallVector<Value> leaveArguments{previous, deviceValue};
    llvm::append_range(leaveArguments, at);
    support.call(builder, loc, "__etcopy_leave_device", leaveArguments);
  }
}

void passStreamsToDelegates(const ModuleWork &work, const PlanMap &plans,
                            RuntimeSupport &support) {
  Type pointerType = LLVM::LLVMPointerType::get(support.getContext());
  for (func::FuncOp delegate : work.streamOrderedDelegates)
    (void)delegate.insertArgument(delegate.getNumArguments(), pointerType,
                                  DictionaryAttr(), delegate.getLoc());
  for (Operation *call : llvm::make_first_range(work.streamOrderedCalls)) {
    const OpPlan &plan = plans.find(call)->second;
    const DenseMap<Value, Value> &devices = plan.function->streamDevices;
    Location loc = call->getLoc();
    auto join = [&](OpBuilder &builder, Value dependency, Value stream) {
      SmallVector<Value> arguments{dependency, devices.lookup(dependency),
                                   stream, devices.lookup(stream)};
      llvm::append_range(arguments, plan.location);
      support.call(builder, loc, "__etcopy_stream_join", arguments);
    };
    OpBuilder builder(call);
    SmallVector<Value> others;
    for (Value stream : llvm::make_second_range(plan.function->streams))
      if (stream != plan.stream)
        others.push_back(stream);
    for (Value other : others)
      join(builder, other, plan.stream);
    call->insertOperands(call->getNumOperands(), plan.stream);
    if (others.empty())
      continue;
    builder.setInsertionPointAfter(call);
    for (Value other : others)
      join(builder, plan.stream, other);
    SmallVector<Value> arguments{devices.lookup(plan.stream)};
    llvm::append_range(arguments, plan.location);
    support.call(builder, loc, "__etcopy_set_device", arguments);
  }
}

} // namespace mlir::etcopy::cuda_lowering
