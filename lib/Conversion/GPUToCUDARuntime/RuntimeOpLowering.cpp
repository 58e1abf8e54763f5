//===- RuntimeOpLowering.cpp - Planned runtime ops to calls -----*- C++ -*-===//
//
// RuntimeOpLowerer: replaces gpu.alloc, gpu.dealloc, gpu.memcpy (alone or
// as a batch), gpu.memset, gpu.wait and the alloc and dealloc of transfer
// buffers by calls of the runtime support, with a plain builder, after the
// dialect conversion has lowered the rest of the module.
//
//===----------------------------------------------------------------------===//

#include "RuntimeOpLowering.h"

#include "CopyClassification.h"
#include "KernelLowering.h"
#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::etcopy::cuda_lowering {

/// Fields of a ranked memref descriptor (MemRefBuilder.h's layout).
constexpr int64_t kAllocatedPtrPosInMemRefDescriptor = 0;
constexpr int64_t kAlignedPtrPosInMemRefDescriptor = 1;
constexpr int64_t kOffsetPosInMemRefDescriptor = 2;
constexpr int64_t kSizePosInMemRefDescriptor = 3;

namespace {

/// Lowers the runtime ops once the dialect conversion has lowered the rest of
/// the module around them, with a plain builder: one visit per op, in
/// program order, each op replaced by its calls in place.
///
/// The conversion leaves the planned ops legal, so their operands that it
/// converted reach them through its unrealized casts: `lookup` looks through
/// those. Their results that converted ops use reach those through new casts,
/// which `reconcileCasts` folds with the conversion's. Going through the
/// conversion driver instead cost about 5 us per op (it records every created
/// op and every replacement for rollback, legalizes what the pattern
/// created, and keeps the replaced ops to its end) for a rewrite that cannot
/// fail: the ops were validated and planned before. Linear in the ops and
/// their operands.
class RuntimeOpLowerer {
public:
  RuntimeOpLowerer(const LLVMTypeConverter &converter, RuntimeSupport &support,
                   PlanMap &plans,
                   const DenseSet<Operation *> &addressOnlyViews,
                   bool pinTransferBuffers, KernelLowering *kernels)
      : converter(converter), support(support), plans(plans),
        addressOnlyViews(addressOnlyViews), kernels(kernels),
        pinTransferBuffers(pinTransferBuffers),
        builder(&converter.getContext()),
        pointerType(LLVM::LLVMPointerType::get(&converter.getContext())) {}

  /// Lowers `ops`, the runtime ops of one function in program order, and
  /// erases them.
  void lowerFunction(ArrayRef<Operation *> ops) {
    planWaitsForOneOp(ops);
    for (Operation *op : ops) {
      if (!isa<gpu::MemcpyOp>(op))
        issueSequence();
      builder.setInsertionPoint(op);
      TypeSwitch<Operation *>(op)
          .Case<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp, gpu::MemsetOp,
                gpu::WaitOp, gpu::LaunchFuncOp, memref::AllocOp,
                memref::DeallocOp>([&](auto op) { lower(op, getAdaptor(op)); })
          .Default([](Operation *) {
            llvm_unreachable("collected as a runtime op but not lowered");
          });
      // After an op the host waits for alone: the stream's event.
      if (auto it = recorded.find(op); it != recorded.end()) {
        const OpPlan &plan = getPlan(op);
        it->second = callSupport(op->getLoc(), plan, "__etcopy_stream_record",
                                 {plan.stream, getStreamDevice(plan)});
      }
    }
    issueSequence();
    recorded.clear();
    waitsForOneOp.clear();
    // The ops only use each other's results now.
    for (Operation *op : ops) {
      plans.erase(op);
      op->dropAllReferences();
    }
    for (Operation *op : ops)
      op->erase();
    memrefs.clear();
  }

private:
  //===--------------------------------------------------------------------===//
  // Operands and results
  //===--------------------------------------------------------------------===//

  /// The lowered form of `value`, an operand of a runtime op: the stream for
  /// a token of a runtime op, the descriptor for a memref result of one, the
  /// converted value for what the conversion converted.
  Value lookup(Value value) {
    Operation *def = value.getDefiningOp();
    if (def && isa<gpu::AsyncTokenType>(value.getType()))
      if (auto it = plans.find(def); it != plans.end())
        return it->second.stream;
    if (Value memref = memrefs.lookup(value))
      return memref;
    Type type = converter.convertType(value.getType());
    if (type == value.getType())
      return value;
    if (auto cast = dyn_cast_or_null<UnrealizedConversionCastOp>(def);
        cast && cast->getNumOperands() == 1 &&
        cast.getOperand(0).getType() == type)
      return cast.getOperand(0);
    // A result of a runtime op that comes later in the block order than
    // this use (which it dominates): its replacement will reach this cast.
    // Or a result of an op the conversion left alone (an unregistered op):
    // the final check reports it.
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointAfterValue(value);
    return UnrealizedConversionCastOp::create(builder, value.getLoc(), type,
                                              value)
        .getResult(0);
  }

  /// The op's adaptor on its lowered operands. The views that only give a
  /// copy its address get no descriptor: getFirstElement reads the view.
  template <typename OpTy> typename OpTy::Adaptor getAdaptor(OpTy op) {
    operands.clear();
    for (Value operand : op->getOperands()) {
      auto view = operand.getDefiningOp<memref::ViewOp>();
      operands.push_back(
          view && addressOnlyViews.contains(view) ? Value() : lookup(operand));
    }
    return typename OpTy::Adaptor(operands, op);
  }

  /// Replaces the results of `op` with `values`: for the runtime ops still
  /// to lower, through `lookup`; for the ops the conversion made, through a
  /// cast to the old type.
  void replace(Operation *op, ValueRange values) {
    for (auto [result, value] : llvm::zip_equal(op->getResults(), values)) {
      if (isa<MemRefType>(result.getType()))
        memrefs[result] = value;
      Value cast;
      for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
        if (plans.contains(use.getOwner()))
          continue;
        if (!cast)
          cast = UnrealizedConversionCastOp::create(builder, op->getLoc(),
                                                    result.getType(), value)
                     .getResult(0);
        use.set(cast);
      }
    }
  }

  //===--------------------------------------------------------------------===//
  // Host waits for one op
  //===--------------------------------------------------------------------===//

  /// Finds the host waits for one async op (`gpu.wait [%token]
  /// {etcopy.waits_for_one_op}`, which convert-etcopy-to-gpu emits where
  /// the host needs one copy done) that work queued after that op, before
  /// the wait, would make a stream synchronisation wait for too: a device
  /// op, a call (a stream-ordered delegate enqueues work), an op with
  /// regions. Those wait for an event recorded right after the op instead.
  /// The op must be in the wait's block and not in a batch (issued at the
  /// batch's last copy). Linear in the ops between each such wait and the op
  /// it waits for.
  void planWaitsForOneOp(ArrayRef<Operation *> ops) {
    for (Operation *op : ops) {
      auto wait = dyn_cast<gpu::WaitOp>(op);
      if (!wait || wait.getAsyncToken() ||
          wait.getAsyncDependencies().size() != 1 ||
          !wait->hasAttr(EtCopyDialect::getWaitsForOneOpAttrName()))
        continue;
      Operation *producer = wait.getAsyncDependencies()[0].getDefiningOp();
      if (!producer || producer->getBlock() != wait->getBlock() ||
          !plans.contains(producer) || getPlan(producer).batch)
        continue;
      for (Operation *between = wait->getPrevNode(); between && between != producer;
           between = between->getPrevNode()) {
        auto async = dyn_cast<gpu::AsyncOpInterface>(between);
        if ((async && async.getAsyncToken()) ||
            isa<CallOpInterface>(between) || between->getNumRegions() != 0) {
          recorded.try_emplace(producer, Value());
          waitsForOneOp[wait] = producer;
          break;
        }
      }
    }
  }

  /// The device of `plan`'s stream for the support calls: -1 (the current
  /// device) in a single-stream function.
  Value getStreamDevice(const OpPlan &plan) {
    if (Value device = plan.function->streamDevices.lookup(plan.stream))
      return device;
    return getValues(plan).getI32(builder, -1);
  }

  //===--------------------------------------------------------------------===//
  // Shared steps
  //===--------------------------------------------------------------------===//

  const OpPlan &getPlan(Operation *op) const { return plans.find(op)->second; }

  static FunctionValues &getValues(const OpPlan &plan) {
    return plan.function->values;
  }

  unsigned getIndexBitwidth() const { return converter.getIndexTypeBitwidth(); }

  /// Calls the support function `name` with `arguments` and the op's
  /// location.
  Value callSupport(Location loc, const OpPlan &plan, StringRef name,
                    ValueRange arguments) {
    SmallVector<Value> all(arguments);
    llvm::append_range(all, plan.location);
    return support.call(builder, loc, name, all);
  }

  /// Emits what must precede the op's own calls: the device switch of
  /// multi-device functions and, for tokens that may come from another
  /// stream, an event join.
  void prepare(Operation *op, const OpPlan &plan, ValueRange dependencies) {
    Location loc = op->getLoc();
    FunctionValues &values = getValues(plan);
    if (plan.switchToDevice)
      callSupport(loc, plan, "__etcopy_set_device",
                  *plan.switchToDevice >= 0
                      ? values.getI32(builder, *plan.switchToDevice)
                      : plan.function->entryDevice);
    const DenseMap<Value, Value> &devices = plan.function->streamDevices;
    if (devices.empty())
      return; // Single stream: tokens carry no extra ordering.
    for (Value dependency :
         llvm::SetVector<Value>(dependencies.begin(), dependencies.end())) {
      if (dependency == plan.stream)
        continue;
      // Tokens are streams of this function (validated), so their devices
      // are known.
      callSupport(loc, plan, "__etcopy_stream_join",
                  {dependency, devices.lookup(dependency), plan.stream,
                   devices.lookup(plan.stream)});
    }
  }

  /// Replaces `op`: its async token becomes the stream (the work is ordered
  /// on it); a sync-form op waits for the stream first, unless its calls
  /// were synchronous already (`enqueued` false).
  template <typename OpTy>
  void finish(OpTy op, const OpPlan &plan, ValueRange results,
              bool enqueued = true) {
    SmallVector<Value> replacements(results);
    if (op.getAsyncToken())
      replacements.push_back(plan.stream);
    else if (enqueued)
      callSupport(op.getLoc(), plan, "__etcopy_stream_synchronize",
                  plan.stream);
    replace(op, replacements);
  }

  /// The address of the first element of the memref `memref`, whose
  /// lowered descriptor is `descriptor` (null: looked up when needed).
  Value getFirstElement(Location loc, Value memref, Value descriptor,
                        FunctionValues &values) {
    // A view of an arena: the arena's address plus the view's byte shift.
    if (auto view = memref.getDefiningOp<memref::ViewOp>();
        view && addressOnlyViews.contains(view)) {
      Value base =
          values.getField(builder, loc, lookup(view.getSource()),
                          ArrayRef<int64_t>{kAlignedPtrPosInMemRefDescriptor});
      Value shift = lookup(view.getByteShift());
      if (matchPattern(shift, m_Zero()))
        return base;
      return LLVM::GEPOp::create(builder, loc, pointerType, builder.getI8Type(),
                                 base, shift);
    }
    auto type = cast<MemRefType>(memref.getType());
    if (!descriptor)
      descriptor = lookup(memref);
    Value aligned =
        values.getField(builder, loc, descriptor,
                        ArrayRef<int64_t>{kAlignedPtrPosInMemRefDescriptor});
    if (hasIdentityLayout(type))
      return aligned;
    SmallVector<int64_t> strides;
    int64_t offset;
    (void)getStridesAndOffset(type, strides, offset);
    if (offset == 0)
      return aligned;
    Value elementOffset =
        ShapedType::isDynamic(offset)
            ? values.getField(builder, loc, descriptor,
                              ArrayRef<int64_t>{kOffsetPosInMemRefDescriptor})
            : values.getI64(builder, offset);
    return LLVM::GEPOp::create(builder, loc, pointerType,
                               converter.convertType(type.getElementType()),
                               aligned, elementOffset);
  }

  /// The number of elements of `descriptor` (of `type`): a shared constant
  /// for static shapes.
  Value getElementCount(Location loc, Value descriptor, MemRefType type,
                        FunctionValues &values) {
    if (type.hasStaticShape())
      return values.getI64(builder, type.getNumElements());
    Value count;
    for (int64_t dim = 0, rank = type.getRank(); dim < rank; ++dim) {
      Value size =
          type.isDynamicDim(dim)
              ? values.getField(
                    builder, loc, descriptor,
                    ArrayRef<int64_t>{kSizePosInMemRefDescriptor, dim})
              : values.getI64(builder, type.getDimSize(dim));
      count = count ? LLVM::MulOp::create(builder, loc, count, size) : size;
    }
    return count;
  }

  /// The bytes of one element of `type`: a constant where the pass knows
  /// the size without the data layout, else `ptrtoint(getelementptr
  /// null[1])`.
  Value getElementBytes(Location loc, MemRefType type, FunctionValues &values) {
    if (std::optional<int64_t> bytes =
            getStaticElementBytes(type.getElementType(), getIndexBitwidth()))
      return values.getI64(builder, *bytes);
    Value null = LLVM::ZeroOp::create(builder, loc, pointerType);
    Value end = LLVM::GEPOp::create(
        builder, loc, pointerType, converter.convertType(type.getElementType()),
        null, ArrayRef<LLVM::GEPArg>{1});
    return LLVM::PtrToIntOp::create(builder, loc, converter.getIndexType(),
                                    end);
  }

  /// A new buffer of `type` (identity layout) and `dynamicSizes`, allocated
  /// by `allocate` from its size in bytes: its descriptor. Static shapes
  /// have a shared constant for the size; dynamic ones compute it as
  /// MemRefToLLVM does.
  Value createDescriptor(Location loc, MemRefType type, ValueRange dynamicSizes,
                         FunctionValues &values,
                         llvm::function_ref<Value(Value)> allocate) {
    Type indexType = converter.getIndexType();
    auto getIndex = [&](int64_t value) -> Value {
      return LLVM::ConstantOp::create(builder, loc, indexType,
                                      builder.getIndexAttr(value));
    };
    int64_t rank = type.getRank();
    SmallVector<Value> sizes(rank), strides(rank);
    Value bytes;
    if (type.hasStaticShape()) {
      int64_t stride = 1;
      for (int64_t dim = rank - 1; dim >= 0; --dim) {
        sizes[dim] = getIndex(type.getDimSize(dim));
        strides[dim] = getIndex(stride);
        stride *= type.getDimSize(dim);
      }
      if (std::optional<int64_t> elementBytes =
              getStaticElementBytes(type.getElementType(), getIndexBitwidth()))
        bytes = values.getI64(builder, type.getNumElements() * *elementBytes);
      else
        bytes = LLVM::MulOp::create(
            builder, loc, values.getI64(builder, type.getNumElements()),
            getElementBytes(loc, type, values));
    } else {
      // Strides from the innermost dimension out: products of the sizes,
      // constants while they are static; the last product is the number of
      // elements.
      unsigned dynamicIndex = 0;
      for (int64_t dim = 0; dim < rank; ++dim)
        sizes[dim] = type.isDynamicDim(dim) ? dynamicSizes[dynamicIndex++]
                                            : getIndex(type.getDimSize(dim));
      int64_t staticStride = 1;
      Value stride = getIndex(1);
      for (int64_t dim = rank - 1; dim >= 0; --dim) {
        strides[dim] = stride;
        bool sizeIsStride = staticStride == 1;
        if (type.isDynamicDim(dim))
          staticStride = ShapedType::kDynamic;
        if (!ShapedType::isDynamic(staticStride))
          staticStride *= type.getDimSize(dim);
        if (sizeIsStride)
          stride = sizes[dim];
        else if (ShapedType::isDynamic(staticStride))
          stride = LLVM::MulOp::create(builder, loc, stride, sizes[dim]);
        else
          stride = getIndex(staticStride);
      }
      Value null = LLVM::ZeroOp::create(builder, loc, pointerType);
      Value end = LLVM::GEPOp::create(
          builder, loc, pointerType,
          converter.convertType(type.getElementType()), null, stride);
      bytes = LLVM::PtrToIntOp::create(builder, loc, indexType, end);
    }
    Value pointer = allocate(bytes);
    auto descriptor =
        MemRefDescriptor::poison(builder, loc, converter.convertType(type));
    descriptor.setAllocatedPtr(builder, loc, pointer);
    descriptor.setAlignedPtr(builder, loc, pointer);
    descriptor.setOffset(builder, loc, getIndex(0));
    for (auto [dim, size] : llvm::enumerate(sizes))
      descriptor.setSize(builder, loc, dim, size);
    for (auto [dim, stride] : llvm::enumerate(strides))
      descriptor.setStride(builder, loc, dim, stride);
    return descriptor;
  }

  //===--------------------------------------------------------------------===//
  // The ops
  //===--------------------------------------------------------------------===//

  /// gpu.alloc -> cudaMallocAsync (cudaMallocManaged for host_shared).
  void lower(gpu::AllocOp op, gpu::AllocOp::Adaptor adaptor) {
    const OpPlan &plan = getPlan(op);
    FunctionValues &values = getValues(plan);
    Location loc = op.getLoc();
    prepare(op, plan, adaptor.getAsyncDependencies());
    Value descriptor = createDescriptor(
        loc, op.getType(), adaptor.getDynamicSizes(), values, [&](Value bytes) {
          return op.getHostShared()
                     ? callSupport(loc, plan, "__etcopy_malloc_managed", bytes)
                     : callSupport(loc, plan, "__etcopy_malloc",
                                   {bytes, plan.stream});
        });
    // cudaMallocManaged is synchronous.
    finish(op, plan, descriptor, /*enqueued=*/!op.getHostShared());
  }

  /// gpu.dealloc -> cudaFreeAsync, stream-ordered (cudaFree for memory of a
  /// host_shared gpu.alloc in the same function).
  void lower(gpu::DeallocOp op, gpu::DeallocOp::Adaptor adaptor) {
    const OpPlan &plan = getPlan(op);
    Location loc = op.getLoc();
    prepare(op, plan, adaptor.getAsyncDependencies());
    Value pointer = getValues(plan).getField(
        builder, loc, adaptor.getMemref(),
        ArrayRef<int64_t>{kAllocatedPtrPosInMemRefDescriptor});
    auto alloc = op.getMemref().getDefiningOp<gpu::AllocOp>();
    bool managed = alloc && alloc.getHostShared();
    callSupport(loc, plan, managed ? "__etcopy_free_managed" : "__etcopy_free",
                {pointer, plan.stream});
    // Freeing managed memory waits for the stream and is synchronous.
    finish(op, plan, {}, /*enqueued=*/!managed);
  }

  /// gpu.memcpy -> cudaMemcpyAsync for contiguous data of static size (one
  /// cudaMemcpyBatchAsync for a batch, at its last copy; cudaMemcpyPeerAsync
  /// between two devices), the strided copy (which also checks dynamic
  /// sizes) otherwise.
  void lower(gpu::MemcpyOp op, gpu::MemcpyOp::Adaptor adaptor) {
    const OpPlan &plan = getPlan(op);
    FunctionValues &values = getValues(plan);
    Location loc = op.getLoc();
    MemRefType srcType = op.getSrc().getType();
    if (!continuesSequence(op, plan, adaptor.getAsyncDependencies()))
      issueSequence();
    prepare(op, plan, adaptor.getAsyncDependencies());

    if (plan.batch) {
      issueSequence();
      // The copies before the last are made by the batch, at the last.
      if (op == plan.batch->copies.back())
        emitBatch(*plan.batch, op, adaptor);
      finish(op, plan, {});
      return;
    }

    auto [srcPlace, dstPlace] = classifyCopy(op);
    Value kind = values.getI32(
        builder, static_cast<int32_t>(getCopyKind(srcPlace, dstPlace)));
    if (isSimpleCopy(op, getIndexBitwidth())) {
      // Static sizes agree (gpu.memcpy's verifier): one copy.
      Value src = getFirstElement(loc, op.getSrc(), adaptor.getSrc(), values);
      Value dst = getFirstElement(loc, op.getDst(), adaptor.getDst(), values);
      Value bytes = values.getI64(builder, getStaticBytes(op));
      if (isPeerCopy(srcPlace, dstPlace)) {
        issueSequence();
        callSupport(loc, plan, "__etcopy_memcpy_peer",
                    {dst, values.getI32(builder, dstPlace.ordinal), src,
                     values.getI32(builder, srcPlace.ordinal), bytes,
                     plan.stream});
      } else {
        sequence.push_back({dst, src, bytes, kind, loc, plan.location});
        sequenceEnd = op;
        sequenceStream = plan.stream;
        // The call waits for the stream's next copy unless the host waits
        // for this one (a sync copy, or an event recorded after it) or the
        // sequence is full.
        if (!op.getAsyncToken() || recorded.contains(op) ||
            sequence.size() == kMaxCopiesPerCall)
          issueSequence();
      }
    } else {
      // The helper reads sizes and strides from the descriptors, compares
      // dynamic sizes and picks the copies.
      issueSequence();
      Value dstSlot =
          values.getSlot(builder, adaptor.getDst().getType(), /*index=*/0);
      Value srcSlot =
          values.getSlot(builder, adaptor.getSrc().getType(), /*index=*/1);
      LLVM::StoreOp::create(builder, loc, adaptor.getDst(), dstSlot);
      LLVM::StoreOp::create(builder, loc, adaptor.getSrc(), srcSlot);
      callSupport(loc, plan, "__etcopy_memcpy_strided",
                  {dstSlot, srcSlot, values.getI64(builder, srcType.getRank()),
                   getElementBytes(loc, srcType, values), kind, plan.stream});
    }
    finish(op, plan, {});
  }

  //===--------------------------------------------------------------------===//
  // Sequences of copies
  //===--------------------------------------------------------------------===//

  /// Whether `op` may join the sequence of copies not issued yet: on the
  /// sequence's stream, in its block and file, with nothing to emit before
  /// the op (no device switch, no join of another stream) and only ops
  /// transparent to copies between the sequence's last copy and `op` (as
  /// between the copies of a batch), so that issuing the earlier copies at
  /// `op` is not observable. Whether `op` is a copy a sequence holds (of
  /// static shape, not between devices, not batched) is known later; one
  /// that is not issues the sequence before its own calls. Linear in the
  /// ops between the two copies.
  bool continuesSequence(gpu::MemcpyOp op, const OpPlan &plan,
                         ValueRange dependencies) const {
    if (sequence.empty() || plan.batch || plan.stream != sequenceStream ||
        plan.location[0] != sequence.front().location[0] ||
        plan.switchToDevice || op->getBlock() != sequenceEnd->getBlock())
      return false;
    if (!plan.function->streamDevices.empty() &&
        llvm::any_of(dependencies,
                     [&](Value token) { return token != plan.stream; }))
      return false;
    for (Operation *between = sequenceEnd->getNextNode(); between != op;
         between = between->getNextNode())
      if (!isTransparentToCopies(between))
        return false;
    return true;
  }

  /// Issues the sequence of copies not issued yet, at its last copy: one
  /// `__etcopy_memcpy` for a single copy, else one call of the support
  /// function that makes the sequence's cudaMemcpyAsync calls in order, each
  /// copy with its own location. A lowered module with fewer calls costs
  /// less to build, verify, print and compile.
  void issueSequence() {
    if (sequence.empty())
      return;
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(sequenceEnd);
    if (sequence.size() == 1) {
      const SequencedCopy &copy = sequence.front();
      SmallVector<Value, 8> arguments{copy.dst, copy.src, copy.bytes, copy.kind,
                                      sequenceStream};
      llvm::append_range(arguments, copy.location);
      support.call(builder, copy.loc, "__etcopy_memcpy", arguments);
    } else {
      static constexpr StringLiteral names[] = {
          "__etcopy_memcpy_x2", "__etcopy_memcpy_x3", "__etcopy_memcpy_x4"};
      static_assert(std::size(names) == kMaxCopiesPerCall - 1);
      SmallVector<Value, 2 + 6 * kMaxCopiesPerCall> arguments{
          sequenceStream, sequence.front().location[0]};
      SmallVector<Location, kMaxCopiesPerCall> locations;
      for (const SequencedCopy &copy : sequence) {
        arguments.append({copy.dst, copy.src, copy.bytes, copy.kind,
                          copy.location[1], copy.location[2]});
        locations.push_back(copy.loc);
      }
      support.call(builder, FusedLoc::get(builder.getContext(), locations),
                   names[sequence.size() - 2], arguments);
    }
    sequence.clear();
  }

  /// The bytes of a copy of static shape.
  int64_t getStaticBytes(gpu::MemcpyOp op) const {
    MemRefType type = op.getSrc().getType();
    return type.getNumElements() *
           *getStaticElementBytes(type.getElementType(), getIndexBitwidth());
  }

  /// One cudaMemcpyBatchAsync of the copies of `batch`, at its last copy
  /// `op`: the destinations and sources are stored to two stack arrays of
  /// the function, the byte counts are a constant global. Failures are
  /// reported at the batch's first copy.
  void emitBatch(const CopyBatch &batch, gpu::MemcpyOp op,
                 gpu::MemcpyOp::Adaptor adaptor) {
    const OpPlan &plan = getPlan(op);
    FunctionValues &values = getValues(plan);
    Location loc = op.getLoc();
    auto arrayType = LLVM::LLVMArrayType::get(pointerType, batch.copies.size());
    Value dsts = LLVM::PoisonOp::create(builder, loc, arrayType);
    Value srcs = dsts;
    SmallVector<int64_t> sizes;
    for (auto [index, member] : llvm::enumerate(batch.copies)) {
      gpu::MemcpyOp copy = member;
      bool last = copy == op;
      dsts = LLVM::InsertValueOp::create(
          builder, loc, dsts,
          getFirstElement(loc, copy.getDst(), last ? adaptor.getDst() : Value(),
                          values),
          index);
      srcs = LLVM::InsertValueOp::create(
          builder, loc, srcs,
          getFirstElement(loc, copy.getSrc(), last ? adaptor.getSrc() : Value(),
                          values),
          index);
      sizes.push_back(getStaticBytes(copy));
    }
    // Slots of the function's largest batch, shared by its batches.
    auto slotType =
        LLVM::LLVMArrayType::get(pointerType, plan.function->maxBatchCopies);
    Value dstSlot = values.getSlot(builder, slotType, /*index=*/0);
    Value srcSlot = values.getSlot(builder, slotType, /*index=*/1);
    LLVM::StoreOp::create(builder, loc, dsts, dstSlot);
    LLVM::StoreOp::create(builder, loc, srcs, srcSlot);
    gpu::MemcpyOp first = batch.copies.front();
    callSupport(first.getLoc(), getPlan(first), "__etcopy_memcpy_batch",
                {dstSlot, srcSlot, values.getI64Table(builder, sizes),
                 values.getI64(builder, sizes.size()), plan.stream});
  }

  /// gpu.memset -> cudaMemsetAsync for a repeated byte, else the driver's
  /// cuMemsetD16Async / cuMemsetD32Async.
  void lower(gpu::MemsetOp op, gpu::MemsetOp::Adaptor adaptor) {
    std::string why;
    // Validated before planning.
    MemsetPlan memsetPlan = *planMemset(op, getIndexBitwidth(), why);
    const OpPlan &plan = getPlan(op);
    FunctionValues &values = getValues(plan);
    Location loc = op.getLoc();
    MemRefType type = op.getDst().getType();
    prepare(op, plan, adaptor.getAsyncDependencies());

    Value pointer = getFirstElement(loc, op.getDst(), adaptor.getDst(), values);
    Value count;
    if (type.hasStaticShape()) {
      count = values.getI64(builder,
                            type.getNumElements() * memsetPlan.unitsPerElement);
    } else {
      count = getElementCount(loc, adaptor.getDst(), type, values);
      if (memsetPlan.unitsPerElement != 1)
        count = LLVM::MulOp::create(
            builder, loc, count,
            values.getI64(builder, memsetPlan.unitsPerElement));
    }
    Value value;
    if (memsetPlan.constant) {
      value =
          values.getI32(builder, static_cast<int32_t>(*memsetPlan.constant));
    } else {
      // The value's bits, zero-extended to 32.
      Type i32 = builder.getI32Type();
      value = adaptor.getValue();
      unsigned bits = value.getType().getIntOrFloatBitWidth();
      if (!isa<IntegerType>(value.getType()))
        value = LLVM::BitcastOp::create(builder, loc,
                                        builder.getIntegerType(bits), value);
      if (bits < 32)
        value = LLVM::ZExtOp::create(builder, loc, i32, value);
    }
    callSupport(loc, plan, "__etcopy_memset",
                {pointer, value, count,
                 values.getI32(builder, memsetPlan.unitBytes), plan.stream});
    finish(op, plan, {});
  }

  /// memref.alloc of a transfer buffer -> a block of the cache of pinned
  /// (cudaMallocHost) or pageable (aligned_alloc) host blocks.
  void lower(memref::AllocOp op, memref::AllocOp::Adaptor adaptor) {
    const OpPlan &plan = getPlan(op);
    Location loc = op.getLoc();
    Value descriptor = createDescriptor(
        loc, op.getType(), adaptor.getDynamicSizes(), getValues(plan),
        [&](Value bytes) {
          return callSupport(loc, plan,
                             pinTransferBuffers ? "__etcopy_malloc_host"
                                                : "__etcopy_malloc_pageable",
                             bytes);
        });
    replace(op, descriptor);
  }

  /// memref.dealloc of a transfer buffer -> back to its cache.
  void lower(memref::DeallocOp op, memref::DeallocOp::Adaptor adaptor) {
    const OpPlan &plan = getPlan(op);
    Value pointer = getValues(plan).getField(
        builder, op.getLoc(), adaptor.getMemref(),
        ArrayRef<int64_t>{kAllocatedPtrPosInMemRefDescriptor});
    callSupport(op.getLoc(), plan,
                pinTransferBuffers ? "__etcopy_free_host"
                                   : "__etcopy_free_pageable",
                pointer);
  }

  /// gpu.wait async -> the stream (after joining its dependencies); gpu.wait
  /// (sync) -> cudaStreamSynchronize of each dependency, or of every stream
  /// of the function when it has none.
  /// A launch: its kernel on the stream, after its dependencies.
  void lower(gpu::LaunchFuncOp op, gpu::LaunchFuncOp::Adaptor adaptor) {
    const OpPlan &plan = getPlan(op);
    prepare(op, plan, adaptor.getAsyncDependencies());
    kernels->lowerLaunch(builder, op, operands, plan, support);
    finish(op, plan, {});
  }

  void lower(gpu::WaitOp op, gpu::WaitOp::Adaptor adaptor) {
    const OpPlan &plan = getPlan(op);
    if (op.getAsyncToken()) {
      prepare(op, plan, adaptor.getAsyncDependencies());
      replace(op, plan.stream);
      return;
    }
    ValueRange dependencies = adaptor.getAsyncDependencies();
    if (Operation *producer = waitsForOneOp.lookup(op)) {
      callSupport(op.getLoc(), plan, "__etcopy_stream_wait_record",
                  {dependencies.front(), getStreamDevice(getPlan(producer)),
                   recorded.lookup(producer)});
      return;
    }
    llvm::SetVector<Value> streams(dependencies.begin(), dependencies.end());
    if (streams.empty())
      for (Value stream : llvm::make_second_range(plan.function->streams))
        streams.insert(stream);
    for (Value stream : streams)
      callSupport(op.getLoc(), plan, "__etcopy_stream_synchronize", stream);
  }

  const LLVMTypeConverter &converter;
  RuntimeSupport &support;
  /// The plans of the ops still to lower.
  PlanMap &plans;
  const DenseSet<Operation *> &addressOnlyViews;
  /// The module's kernels (KernelLowering.cpp), if it launches any.
  KernelLowering *kernels;
  /// Whether transfer buffers are pinned (pinned-host-memory).
  bool pinTransferBuffers;
  OpBuilder builder;
  Type pointerType;
  /// The descriptors of the memref results lowered so far in the function.
  DenseMap<Value, Value> memrefs;
  /// The ops after which the stream's event is recorded, with the result of
  /// the record once lowered; the waits for one of them.
  DenseMap<Operation *, Value> recorded;
  DenseMap<Operation *, Operation *> waitsForOneOp;
  /// The operands of the op being lowered.
  SmallVector<Value> operands;

  /// The most copies one support call makes (`__etcopy_memcpy_x4`).
  static constexpr size_t kMaxCopiesPerCall = 4;
  /// A copy of a sequence: its `__etcopy_memcpy` arguments but the stream.
  struct SequencedCopy {
    Value dst, src, bytes, kind;
    Location loc;
    std::array<Value, 3> location;
  };
  /// The copies of one stream whose calls wait for the next copy of the
  /// stream, in program order: consecutive copies share one call. The last
  /// of them, and their stream.
  SmallVector<SequencedCopy, kMaxCopiesPerCall> sequence;
  Operation *sequenceEnd = nullptr;
  Value sequenceStream;
};

} // namespace

void lowerRuntimeOps(const ModuleWork &work, const LLVMTypeConverter &converter,
                     RuntimeSupport &support, PlanMap &plans,
                     const DenseSet<Operation *> &addressOnlyViews,
                     KernelLowering *kernels) {
  RuntimeOpLowerer lowerer(converter, support, plans, addressOnlyViews,
                           work.pinTransferBuffers, kernels);
  for (auto &[func, ops] : work.runtimeOps)
    lowerer.lowerFunction(ops);
}

} // namespace mlir::etcopy::cuda_lowering
