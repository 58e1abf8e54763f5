//===- Planning.h - Planning of the CUDA lowering ---------------*- C++ -*-===//
//
// Steps 1 and 2 of convert-gpu-to-cuda-runtime (see GPUToCUDARuntime.cpp):
// the validation of the module and the collection of its runtime ops
// (ModuleWork), and the plans that the lowering of the runtime ops follows:
// each function's streams, device switches and batches of copies
// (FunctionPlan, OpPlan), the values its ops share (FunctionValues) and how
// each gpu.memset is done (MemsetPlan).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_GPUTOCUDARUNTIME_PLANNING_H
#define LIB_CONVERSION_GPUTOCUDARUNTIME_PLANNING_H

#include "RuntimeSupport.h"

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <tuple>

namespace mlir::etcopy::cuda_lowering {

//===----------------------------------------------------------------------===//
// gpu.memset patterns
//===----------------------------------------------------------------------===//

/// How a gpu.memset is done: `unitBytes`-sized units (1: cudaMemsetAsync,
/// 2 and 4: the driver's cuMemsetD16Async/cuMemsetD32Async), `unitsPerElement`
/// of them per element, set to `constant` or to the (bitcast) value.
struct MemsetPlan {
  int64_t unitBytes;
  int64_t unitsPerElement = 1;
  std::optional<uint32_t> constant;
};

/// The plan of `memset`, or why it cannot be lowered.
FailureOr<MemsetPlan> planMemset(gpu::MemsetOp memset, unsigned indexBitwidth,
                                 std::string &why);

//===----------------------------------------------------------------------===//
// Validation and collection
//===----------------------------------------------------------------------===//

/// Calls to stream-ordered delegates, in program order, with the ordinal of
/// the delegate's device.
using StreamOrderedCalls = llvm::MapVector<Operation *, int64_t>;

/// What the pass works on, found by one walk of the module.
struct ModuleWork {
  /// The runtime ops of each function, in order, with the memref.alloc and
  /// memref.dealloc of its transfer buffers.
  llvm::MapVector<func::FuncOp, SmallVector<Operation *>> runtimeOps;
  /// The host buffers that the function copies to or from a device and
  /// frees itself: they come from the cache of pinned blocks with
  /// `pinTransferBuffers` (pinned-host-memory), else from the cache of
  /// pageable blocks.
  DenseSet<Operation *> transferBufferAllocs;
  bool pinTransferBuffers = false;
  /// Calls to delegates, which must run on their device.
  SmallVector<std::pair<func::CallOp, DeviceAttr>> delegateCalls;
  /// The calls to stream-ordered delegates, with their device's ordinal:
  /// they are also in `runtimeOps`, since they enqueue work on the stream.
  StreamOrderedCalls streamOrderedCalls;
  /// The stream-ordered delegates called, whose signatures gain the stream.
  llvm::SetVector<func::FuncOp> streamOrderedDelegates;
};

/// Reports every construct the pass cannot lower, with the op, the types and
/// the reason, and collects the work (the transfer buffers included, to be
/// pinned with `pinHostMemory`). Returns failure if anything cannot be lowered.
LogicalResult validateAndCollect(ModuleOp module, SymbolTable &symbols,
                                 unsigned indexBitwidth, bool pinHostMemory,
                                 bool barePointerKernels, ModuleWork &work);

//===----------------------------------------------------------------------===//
// Batches of copies
//===----------------------------------------------------------------------===//

/// A run of copies lowered to one cudaMemcpyBatchAsync, at the last one.
struct CopyBatch {
  SmallVector<gpu::MemcpyOp> copies;
};

/// A copy that no batch holds, and why: the decision of the planner that
/// kept it apart from the copies before it, or else the one that ended its
/// run before a second copy joined.
struct UnbatchedCopy {
  gpu::MemcpyOp copy;
  /// A constant sentence.
  StringRef reason;
  /// The op between two copies that the copies cannot move past, if that
  /// was the reason.
  Operation *blocker = nullptr;
};

/// What grouping copies into batches needs, and the batches it makes.
struct BatchPlanning {
  unsigned indexBitwidth;
  /// Ops whose memref results are fresh buffers (delegate calls).
  const DenseSet<Operation *> &freshAllocators;
  /// Op plans point at their batch.
  std::deque<CopyBatch> batches;
  /// The other copies, for remarks.
  SmallVector<UnbatchedCopy> unbatched;
};

//===----------------------------------------------------------------------===//
// Planning: streams per function, data per op.
//===----------------------------------------------------------------------===//

/// The first file location in `loc`: its file, line and column.
std::tuple<StringRef, unsigned, unsigned> getFileLocation(Location loc);

/// Reads field `position` of a descriptor. A descriptor that was just built
/// from its parts (a chain of llvm.insertvalue, as the conversion's patterns
/// build descriptors) is looked through: the part is used, no read is
/// emitted.
Value extractField(OpBuilder &builder, Location loc, Value descriptor,
                   ArrayRef<int64_t> position);

/// Constant globals of the module that the lowered code refers to, one per
/// distinct content.
struct ModuleGlobals {
  /// The file names of locations.
  llvm::StringMap<LLVM::GlobalOp> files;
  /// The byte counts of batches, by their DenseElementsAttr.
  DenseMap<Attribute, LLVM::GlobalOp> sizeTables;
  /// The i32 attributes of the line constants, by line: a program has a few
  /// thousand lines and one constant per call, and uniquing an attribute
  /// in the context costs as much as creating the op.
  DenseMap<unsigned, IntegerAttr> lines;
};

/// Values of a function shared by its ops (constants, file names, scratch
/// slots), created once at its entry. Planning creates the first; the
/// lowering of the runtime ops adds more after the last one, which the
/// conversion moved into the llvm.func with the rest of the body.
class FunctionValues {
public:
  FunctionValues(func::FuncOp func, RuntimeSupport &support,
                 SymbolTable &symbols, ModuleGlobals &globals)
      : entry(&func.getBody().front()), loc(func.getLoc()), support(support),
        symbols(symbols), globals(globals) {}

  /// An integer constant of `type`.
  Value getConstant(OpBuilder &builder, Type type, int64_t value) {
    Value &constant = constants[{type, value}];
    if (!constant)
      constant = create<LLVM::ConstantOp>(builder, type, value);
    return constant;
  }
  Value getI32(OpBuilder &builder, int64_t value) {
    return getConstant(builder, builder.getI32Type(), value);
  }
  Value getI64(OpBuilder &builder, int64_t value) {
    return getConstant(builder, builder.getI64Type(), value);
  }

  /// Field `position` of `descriptor`, read at most once per block. Only
  /// for the lowering of the runtime ops: it visits a block's ops in order
  /// and inserts before each op (or, for a batch, before its last copy), so
  /// the first read of a field in a block dominates the later ones.
  Value getField(OpBuilder &builder, Location loc, Value descriptor,
                 ArrayRef<int64_t> position) {
    assert(!position.empty() && position.size() <= 2 &&
           "a descriptor field is at depth 1 or 2");
    Value &field = fields[{builder.getInsertionBlock(), descriptor,
                           position.front(),
                           position.size() == 2 ? position.back() : -1}];
    if (!field)
      field = extractField(builder, loc, descriptor, position);
    return field;
  }

  /// A pointer to a global holding the file name `file`.
  Value getFile(OpBuilder &builder, StringRef file) {
    LLVM::GlobalOp &global = globals.files[file];
    if (!global) {
      std::string bytes = (file + Twine('\0')).str();
      global = createGlobal(
          builder, LLVM::LLVMArrayType::get(builder.getI8Type(), bytes.size()),
          "__etcopy_file", builder.getStringAttr(bytes));
    }
    return getAddress(builder, global);
  }

  /// A pointer to a global array holding the 64-bit integers `values`.
  Value getI64Table(OpBuilder &builder, ArrayRef<int64_t> values) {
    auto content = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(values.size())},
                              builder.getI64Type()),
        values);
    LLVM::GlobalOp &global = globals.sizeTables[content];
    if (!global)
      global = createGlobal(
          builder,
          LLVM::LLVMArrayType::get(builder.getI64Type(), values.size()),
          "__etcopy_batch_sizes", content);
    return getAddress(builder, global);
  }

  /// The file, line and column of `loc`: the last arguments of every
  /// support function. The line is a new constant at `builder`'s insertion
  /// point, so that in the entry block it stays next to the call in the
  /// output; the clean-up keeps the first of each value (and moves one of
  /// another block to the entry block). (Locations are asked for out of
  /// program order, e.g. for a delegate call after the copies that follow
  /// it, so a line constant made for one op cannot be reused for the next op
  /// on the same line.) The file and column are shared values.
  SmallVector<Value, 3> getLocation(OpBuilder &builder, Location loc) {
    auto [file, line, column] = getFileLocation(loc);
    IntegerAttr &lineAttr = globals.lines[line];
    if (!lineAttr)
      lineAttr = builder.getI32IntegerAttr(static_cast<int32_t>(line));
    Value lineValue = LLVM::ConstantOp::create(builder, loc, lineAttr);
    return {getFile(builder, file), lineValue, getI32(builder, column)};
  }

  /// A stack slot for a value of `type` (`index` tells apart slots needed at
  /// the same time).
  Value getSlot(OpBuilder &builder, Type type, unsigned index) {
    Value &slot = slots[{type, index}];
    if (!slot) {
      Value one = getI64(builder, 1);
      slot = create<LLVM::AllocaOp>(
          builder, LLVM::LLVMPointerType::get(type.getContext()), type, one);
    }
    return slot;
  }

  /// Sets `builder` after the shared values created so far.
  void setInsertionPointAfterValues(OpBuilder &builder) {
    if (last)
      builder.setInsertionPointAfter(last);
    else
      builder.setInsertionPointToStart(entry);
  }

  RuntimeSupport &getSupport() { return support; }

private:
  /// A private constant global of the module, named `name` or, if taken,
  /// with a number after it.
  LLVM::GlobalOp createGlobal(OpBuilder &builder, Type type, StringRef name,
                              Attribute value) {
    OpBuilder moduleBuilder(builder.getContext());
    auto global = LLVM::GlobalOp::create(
        moduleBuilder, symbols.getOp()->getLoc(), type, /*isConstant=*/true,
        LLVM::Linkage::Private, name, value);
    symbols.insert(global); // Renames to a unique symbol.
    return global;
  }

  /// The address of `global`, taken once at the function's entry.
  Value getAddress(OpBuilder &builder, LLVM::GlobalOp global) {
    Value &address = addresses[global];
    if (!address)
      address = create<LLVM::AddressOfOp>(builder, global);
    return address;
  }

  /// Creates a shared value after the previous ones.
  template <typename OpTy, typename... Args>
  Value create(OpBuilder &builder, Args &&...args) {
    OpBuilder::InsertionGuard guard(builder);
    setInsertionPointAfterValues(builder);
    auto op = OpTy::create(builder, loc, std::forward<Args>(args)...);
    last = op;
    return op;
  }

  /// The entry block before the conversion; afterwards, `last` is the anchor.
  Block *entry;
  Location loc;
  RuntimeSupport &support;
  SymbolTable &symbols;
  ModuleGlobals &globals;
  Operation *last = nullptr;
  DenseMap<std::pair<Type, int64_t>, Value> constants;
  DenseMap<std::pair<Type, unsigned>, Value> slots;
  DenseMap<Operation *, Value> addresses;
  DenseMap<std::tuple<Block *, Value, int64_t, int64_t>, Value> fields;
};

/// The streams of a function.
struct FunctionPlan {
  explicit FunctionPlan(FunctionValues &values) : values(values) {}

  FunctionValues &values;
  /// One stream per device key (-1: the current device), in creation order.
  llvm::MapVector<int64_t, Value> streams;
  /// The device (an i32 value) of each stream, in multi-stream functions.
  DenseMap<Value, Value> streamDevices;
  /// Whether ops select their device (more than one explicit device).
  bool switchesDevices = false;
  /// The device current at entry (an i32 value), when the function selects
  /// explicit devices.
  Value entryDevice;
  /// The copies of the function's largest batch (0: none).
  int64_t maxBatchCopies = 0;
};

/// What lowering one runtime op needs, all defined before the op before the
/// conversion starts.
struct OpPlan {
  FunctionPlan *function;
  /// The stream of the op's device.
  Value stream;
  /// Device to select before the op's calls, if any; -1 is the device that
  /// was current at the function's entry.
  std::optional<int64_t> switchToDevice;
  /// The location arguments of the op's calls: file, line, column.
  std::array<Value, 3> location;
  /// For a copy of a batch, the batch.
  const CopyBatch *batch = nullptr;
};

using PlanMap = DenseMap<Operation *, OpPlan>;

/// True for an op that may come between two copies that one call issues at
/// the later copy (a batch, a sequence): the earlier copies move past it, so
/// it must neither touch memory nor wait, nor hold a block of code. New
/// buffers are fine: no copy before them can use them.
bool isTransparentToCopies(Operation *op);

/// Gets the streams of `func` at its entry, makes the host wait for them
/// before each return, and plans each runtime op (and stream-ordered
/// delegate call) in it, and its batches unless `batching` is null. Returns
/// the device the function makes current at entry and keeps current between
/// its ops (when it uses exactly one explicit device), else -1.
int64_t planFunction(func::FuncOp func, ArrayRef<Operation *> runtimeOps,
                     const StreamOrderedCalls &streamOrderedCalls,
                     FunctionPlan &plan, PlanMap &plans,
                     BatchPlanning *batching);

/// Makes each delegate's device current around the calls to it, and
/// restores the previous device after; nothing where the calling function
/// keeps that device current anyway (`homeDevices`).
void switchDevicesForDelegates(
    ArrayRef<std::pair<func::CallOp, DeviceAttr>> delegateCalls,
    const DenseMap<Operation *, int64_t> &homeDevices,
    function_ref<FunctionValues &(func::FuncOp)> getValues,
    RuntimeSupport &support);

/// Gives each stream-ordered delegate its device's stream as an extra last
/// argument, `!llvm.ptr`, in its signature and at every call. In a function
/// with several streams, the delegate's stream first waits for the others
/// (its inputs may come from any of them), and they wait for it after the
/// call (later work may use its results), with the delegate's device
/// current throughout. Runs after `switchDevicesForDelegates`, so that this
/// lies between entering the delegate's device and leaving it.
void passStreamsToDelegates(const ModuleWork &work, const PlanMap &plans,
                            RuntimeSupport &support);

} // namespace mlir::etcopy::cuda_lowering

#endif // LIB_CONVERSION_GPUTOCUDARUNTIME_PLANNING_H
