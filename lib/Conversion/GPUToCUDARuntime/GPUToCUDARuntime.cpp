//===- GPUToCUDARuntime.cpp - gpu runtime ops to CUDA calls ---*- C++ -*-===//
//
// Lowers gpu.alloc / gpu.dealloc / gpu.memcpy / gpu.memset / gpu.wait, sync
// and async, to calls of the checked CUDA wrappers of CudaSupport.c, and the
// rest of the module to the LLVM dialect. The pass works in four steps:
//
//  1. one walk validates the module (everything the pass cannot lower is
//     reported up front) and collects the runtime ops and delegate calls;
//  2. planning, still on func.func, of the runtime ops folded in place (a
//     memref.cast operand folds into the op): the stream of each device a
//     function uses is got at entry from the stream provider (streams
//     persist across calls; the host waits for them before returning), runs
//     of independent copies are grouped into batches, stream-ordered
//     delegate calls get their device's stream as an extra argument, and the
//     values the lowering needs (streams, locations, shared constants) are
//     materialised as LLVM-dialect ops;
//  3. a dialect conversion with the LLVM patterns of every loaded dialect
//     lowers everything but the planned ops, which it leaves in place; one
//     visit of each planned op then replaces it with its calls, without the
//     conversion driver (RuntimeOpLowerer);
//  4. the functions of the runtime support that the calls use are copied
//     into the module, and one pass over each function and back folds what
//     the conversion left behind (descriptor fields read back from
//     descriptors just built), erases dead ops and, on the ops that stay,
//     checks that no etcopy- or token-typed value was left unlowered.
//
// Every step is linear in the size of the module: symbols are created per
// distinct file and helper, never per op.
//
// etcopy-host-to-llvm is steps 3 and 4 alone, for modules without device
// work.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Conversion/Passes.h"

#include "etcopy/Dialect/EtCopy/BufferEscape.h"
#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <deque>
#include <map>

namespace mlir::etcopy {
#define GEN_PASS_DEF_CONVERTGPUTOCUDARUNTIME
#define GEN_PASS_DEF_ETCOPYHOSTTOLLVM
#include "etcopy/Conversion/Passes.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;

namespace {

//===----------------------------------------------------------------------===//
// The runtime support library
//===----------------------------------------------------------------------===//

/// CudaSupport.c in the LLVM dialect, as mlir-translate imported it, in
/// MLIR bytecode. The reader expects the padding of aligned sections to be
/// relative to an aligned buffer.
alignas(16) const unsigned char kCudaSupportBytecode[] = {
#include "CudaSupport.mlirbc.inc"
};

/// `cudaMemcpyKind`.
enum class CopyKind : int32_t {
  HostToHost = 0,
  HostToDevice = 1,
  DeviceToHost = 2,
  DeviceToDevice = 3,
  Default = 4,
};

/// Drops what clang and the importer attach to functions, calls and globals
/// that carries no meaning for the lowered module (target CPU, argument
/// hints, linkage details) and would only make it harder to read.
void stripImportedAttributes(Operation *op) {
  if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op)) {
    func.removePassthroughAttr();
    func.removeTargetCpuAttr();
    func.removeTuneCpuAttr();
    func.removeTargetFeaturesAttr();
    func.removeDsoLocalAttr();
    func.removeNoUnwindAttr();
    func.removeWillReturnAttr();
    func.removeMemoryEffectsAttr();
    func.removeArgAttrsAttr();
    func.removeResAttrsAttr();
    func.removeUnnamedAddrAttr();
    func.removeFramePointerAttr();
    func.removeUwtableKindAttr();
  } else if (auto call = dyn_cast<LLVM::CallOp>(op)) {
    call.removeArgAttrsAttr();
    call.removeResAttrsAttr();
    call.removeNoUnwindAttr();
    call.removeWillReturnAttr();
    call.removeMemoryEffectsAttr();
    call.setTailCallKind(LLVM::tailcallkind::TailCallKind::None);
  } else if (auto global = dyn_cast<LLVM::GlobalOp>(op)) {
    global.removeDsoLocalAttr();
    global.removeUnnamedAddrAttr();
    global.removeAlignmentAttr();
  }
}

/// The functions of CudaSupport.c that a module uses, copied into it with
/// everything they reference. The library is read lazily: its top-level ops
/// (the functions' signatures, the globals) when the first function is
/// asked for, and the body of a function or global only when the module
/// uses it, so that a module pays for what it uses (reading all of the
/// library took about as long as the rest of the pass on a small module).
class RuntimeSupport {
public:
  RuntimeSupport(ModuleOp module, SymbolTable &symbols)
      : module(module), symbols(symbols) {}
  RuntimeSupport(const RuntimeSupport &) = delete;
  RuntimeSupport &operator=(const RuntimeSupport &) = delete;
  ~RuntimeSupport() {
    // The reader must settle every op it has not read before it goes (MLIR
    // built with assertions checks it): the bodies the module did not use
    // are dropped unread, with the rest of the library.
    if (reader)
      (void)reader->finalize([](Operation *) { return false; });
  }

  MLIRContext *getContext() { return module.getContext(); }

  /// The support function `name`, marked as used. The library is read on
  /// first use.
  LLVM::LLVMFuncOp use(StringRef name) {
    if (!library)
      load();
    LLVM::LLVMFuncOp function = functions.lookup(name);
    assert(function && "not a function of CudaSupport.c");
    used.insert(function);
    return function;
  }

  /// Calls the support function `name`. The calls of one function share
  /// the properties of the first (building them anew uniques half a dozen
  /// attributes per call).
  Value call(OpBuilder &builder, Location loc, StringRef name,
             ValueRange arguments) {
    auto [entry, first] = prototypes.try_emplace(name);
    CallPrototype &prototype = entry->second;
    Operation *callOp;
    if (first) {
      auto created = LLVM::CallOp::create(builder, loc, use(name), arguments);
      prototype.properties = created.getProperties();
      prototype.resultTypes = llvm::to_vector(created->getResultTypes());
      callOp = created;
    } else {
      OperationState state(loc, LLVM::CallOp::getOperationName());
      state.addOperands(arguments);
      state.addTypes(prototype.resultTypes);
      state.useProperties(prototype.properties);
      callOp = builder.create(state);
    }
    return callOp->getNumResults() ? callOp->getResult(0) : Value();
  }

  /// Reports the symbols of the module that have the name of a function of
  /// the library but another type or kind: the lowered module could not
  /// call the library's.
  LogicalResult checkModuleSymbols();

  /// Copies the used functions, and the symbols they reference, into the
  /// module; the module's own definition of a function wins.
  void emit();

  /// Whether `name` is a function of the library that `emit` put in the
  /// module (or found there).
  bool isSupportFunction(StringRef name) const {
    return emitted.contains(name);
  }

private:
  void load();
  /// Reads the body of `op`, a top-level op of the library, if it has not
  /// been read, and gives it the library's renamed symbols.
  void materialize(Operation *op);

  struct CallPrototype {
    LLVM::CallOp::Properties properties;
    SmallVector<Type, 1> resultTypes;
  };

  ModuleOp module;
  SymbolTable &symbols;
  // The reader reads bodies from the embedded bytes on demand; it refers to
  // its configuration and to the library's ops, so it is declared after
  // them and destroyed before them.
  std::optional<ParserConfig> config;
  OwningOpRef<ModuleOp> library;
  std::unique_ptr<BytecodeReader> reader;
  /// The library's local symbols, renamed.
  DenseMap<StringAttr, StringAttr> renamed;
  AttrTypeReplacer replacer;
  llvm::StringMap<CallPrototype> prototypes;
  llvm::StringMap<LLVM::LLVMFuncOp> functions;
  llvm::SetVector<Operation *> used;
  llvm::StringSet<> emitted;
};

void RuntimeSupport::load() {
  MLIRContext *ctx = module.getContext();
  // The bytecode was written from the library's text by the MLIR the pass
  // is built against, and verified then.
  config.emplace(ctx, /*verifyAfterParse=*/false);
  llvm::MemoryBufferRef buffer(
      StringRef(reinterpret_cast<const char *>(kCudaSupportBytecode),
                sizeof(kCudaSupportBytecode)),
      "CudaSupport");
  reader = std::make_unique<BytecodeReader>(buffer, *config,
                                            /*lazyLoad=*/true);
  Block top;
  // The module's body is read now; the isolated ops in it (functions,
  // globals with an initializer region) are read when materialized.
  if (failed(reader->readTopLevel(
          &top, [](Operation *op) { return isa<ModuleOp>(op); })) ||
      !llvm::hasSingleElement(top) || !isa<ModuleOp>(top.front()))
    llvm::report_fatal_error("the embedded CUDA runtime support does not "
                             "read: the build is broken");
  Operation *libraryOp = &top.front();
  libraryOp->remove();
  library = cast<ModuleOp>(libraryOp);

  // Local symbols of the C code (string constants, static functions) get
  // the __etcopy prefix, and a number if the module has the name already.
  for (Operation &op : *library->getBody()) {
    stripImportedAttributes(&op);
    auto symbol = dyn_cast<SymbolOpInterface>(op);
    if (!symbol)
      continue;
    StringRef name = symbol.getName();
    auto function = dyn_cast<LLVM::LLVMFuncOp>(op);
    bool isLocal =
        isa<LLVM::GlobalOp>(op)
            ? cast<LLVM::GlobalOp>(op).getLinkage() == LLVM::Linkage::Private ||
                  cast<LLVM::GlobalOp>(op).getLinkage() ==
                      LLVM::Linkage::Internal
            : function && function.getLinkage() == LLVM::Linkage::Internal;
    if (!isLocal) {
      if (function)
        functions[name] = function;
      continue;
    }
    std::string base =
        ("__etcopy" + Twine(name.starts_with(".") ? "" : ".") + name).str();
    std::string newName = base;
    for (unsigned counter = 0; symbols.lookup(newName); ++counter)
      newName = base + "." + std::to_string(counter);
    renamed[symbol.getNameAttr()] = StringAttr::get(ctx, newName);
    symbol.setName(newName);
  }
  replacer.addReplacement(
      [&](FlatSymbolRefAttr ref) -> std::optional<Attribute> {
        if (StringAttr name = renamed.lookup(ref.getAttr()))
          return FlatSymbolRefAttr::get(name);
        return std::nullopt;
      });
  // References in the top-level ops (the destructor table); those in the
  // bodies are renamed as the bodies are read.
  for (Operation &op : *library->getBody())
    replacer.replaceElementsIn(&op, /*replaceAttrs=*/true,
                               /*replaceLocs=*/false, /*replaceTypes=*/false);
}

void RuntimeSupport::materialize(Operation *op) {
  if (!reader->isMaterializable(op))
    return;
  if (failed(reader->materialize(op)))
    llvm::report_fatal_error("the embedded CUDA runtime support does not "
                             "read: the build is broken");
  op->walk([&](Operation *nested) {
    if (nested == op)
      return;
    stripImportedAttributes(nested);
    replacer.replaceElementsIn(nested, /*replaceAttrs=*/true,
                               /*replaceLocs=*/false, /*replaceTypes=*/false);
  });
}

LogicalResult RuntimeSupport::checkModuleSymbols() {
  if (!library)
    return success();
  bool failed = false;
  for (auto &[name, function] : functions) {
    Operation *existing = symbols.lookup(name);
    if (!existing)
      continue;
    auto existingFunction = dyn_cast<LLVM::LLVMFuncOp>(existing);
    if (!existingFunction) {
      existing->emitError("'")
          << name << "' is defined by '" << existing->getName()
          << "', but the CUDA lowering needs it to be '" << function->getName()
          << "'";
      failed = true;
    } else if (existingFunction.getFunctionType() !=
               function.getFunctionType()) {
      existing->emitError("'")
          << name << "' is declared with a type that differs "
          << (name.starts_with("cu")
                  ? "from the CUDA Runtime API's"
                  : "from the one the CUDA lowering's runtime support uses")
          << ": expected " << function.getFunctionType() << ", got "
          << existingFunction.getFunctionType();
      failed = true;
    }
  }
  return failure(failed);
}

void RuntimeSupport::emit() {
  if (!library)
    return;
  SymbolTable librarySymbols(*library);
  auto forEachReference = [&](Operation *root,
                              function_ref<void(Operation *)> fn) {
    materialize(root);
    root->walk([&](Operation *op) {
      for (NamedAttribute attr : op->getAttrs())
        attr.getValue().walk([&](FlatSymbolRefAttr ref) {
          if (Operation *target = librarySymbols.lookup(ref.getAttr()))
            fn(target);
        });
    });
  };
  // The used functions and, transitively, what they reference.
  auto close = [&](size_t from) {
    for (size_t i = from; i < used.size(); ++i)
      forEachReference(used[i],
                       [&](Operation *target) { used.insert(target); });
  };
  close(0);
  // A destructor of the library (the release of the default streams) comes
  // with the state it releases: when a used function references a global
  // the destructor references.
  SmallVector<Attribute> destructors, priorities, data;
  for (auto dtors : library->getOps<LLVM::GlobalDtorsOp>()) {
    for (auto [dtor, priority, datum] : llvm::zip(
             dtors.getDtors(), dtors.getPriorities(), dtors.getData())) {
      Operation *function =
          librarySymbols.lookup(cast<FlatSymbolRefAttr>(dtor).getAttr());
      bool releasesUsedState = false;
      forEachReference(function, [&](Operation *target) {
        releasesUsedState |=
            isa<LLVM::GlobalOp>(target) && used.contains(target);
      });
      if (!releasesUsedState)
        continue;
      size_t from = used.size();
      if (used.insert(function))
        close(from);
      destructors.push_back(dtor);
      priorities.push_back(priority);
      data.push_back(datum);
    }
  }

  for (Operation *op : used) {
    StringAttr name = cast<SymbolOpInterface>(op).getNameAttr();
    emitted.insert(name);
    // checkModuleSymbols made sure that a function the module has (a
    // declaration, or a replacement of the error policy) is compatible.
    if (symbols.lookup(name))
      continue;
    // Functions the program calls are emitted once per program: the linker
    // keeps one copy. So are global variables (the table of default
    // streams), so that the program has one. The error policy and the
    // stream provider stay weak, so that a program replaces them by
    // defining the symbols.
    auto function = dyn_cast<LLVM::LLVMFuncOp>(op);
    if (function && !function.isExternal() &&
        function.getLinkage() == LLVM::Linkage::External)
      function.setLinkage(LLVM::Linkage::LinkonceODR);
    auto global = dyn_cast<LLVM::GlobalOp>(op);
    if (global && global.getLinkage() == LLVM::Linkage::External &&
        (global.getValueOrNull() || !global.getInitializerRegion().empty()))
      global.setLinkage(LLVM::Linkage::LinkonceODR);
    op->remove();
    symbols.insert(op);
  }
  if (destructors.empty())
    return;
  // One llvm.mlir.global_dtors per module: extend the module's own.
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  for (auto existing :
       llvm::make_early_inc_range(module.getOps<LLVM::GlobalDtorsOp>())) {
    destructors.append(existing.getDtors().begin(), existing.getDtors().end());
    priorities.append(existing.getPriorities().begin(),
                      existing.getPriorities().end());
    data.append(existing.getData().begin(), existing.getData().end());
    existing.erase();
  }
  LLVM::GlobalDtorsOp::create(builder, module.getLoc(),
                              builder.getArrayAttr(destructors),
                              builder.getArrayAttr(priorities),
                              builder.getArrayAttr(data));
}

//===----------------------------------------------------------------------===//
// Placement of gpu-op operands.
//===----------------------------------------------------------------------===//

/// Where a memref lives, for the kind of a copy and the choice of stream.
struct MemoryPlace {
  enum class Kind { Host, Device, Unknown } kind;
  /// The device ordinal, for #etcopy.device memory; -1 means "the device
  /// current when the function was entered" (other device memory spaces).
  int64_t ordinal = -1;
};

/// Classifies a memref type by its memory space alone: no memory space is
/// `Unknown`; #gpu.address_space<...> and integer spaces are device memory of
/// the current device.
MemoryPlace classify(Type type) {
  Attribute space = cast<BaseMemRefType>(type).getMemorySpace();
  if (!space)
    return {MemoryPlace::Kind::Unknown};
  if (auto device = dyn_cast<DeviceAttr>(space)) {
    if (device.isHost())
      return {MemoryPlace::Kind::Host};
    return {MemoryPlace::Kind::Device, device.getOrdinal()};
  }
  return {MemoryPlace::Kind::Device};
}

/// The two sides of a copy. A memref without memory space is ambiguous in
/// upstream gpu IR (gpu.alloc returns such memrefs), so it is resolved here:
/// the result of a gpu.alloc is device memory; facing an #etcopy.device side
/// it is host memory, by the etcopy dialect's rule; otherwise it stays
/// `Unknown` and the copy uses cudaMemcpyDefault (unified addressing).
std::pair<MemoryPlace, MemoryPlace> classifyCopy(gpu::MemcpyOp copy) {
  auto resolve = [](Value value, MemoryPlace place, Type other) {
    if (place.kind != MemoryPlace::Kind::Unknown)
      return place;
    if (value.getDefiningOp<gpu::AllocOp>())
      return MemoryPlace{MemoryPlace::Kind::Device};
    if (isa_and_present<DeviceAttr>(cast<MemRefType>(other).getMemorySpace()))
      return MemoryPlace{MemoryPlace::Kind::Host};
    return place;
  };
  Value src = copy.getSrc(), dst = copy.getDst();
  return {resolve(src, classify(src.getType()), dst.getType()),
          resolve(dst, classify(dst.getType()), src.getType())};
}

/// The cudaMemcpyKind for a copy from `src` to `dst`.
CopyKind getCopyKind(MemoryPlace src, MemoryPlace dst) {
  using K = MemoryPlace::Kind;
  if (src.kind == K::Unknown || dst.kind == K::Unknown)
    return CopyKind::Default;
  if (src.kind == K::Host)
    return dst.kind == K::Host ? CopyKind::HostToHost : CopyKind::HostToDevice;
  return dst.kind == K::Host ? CopyKind::DeviceToHost
                             : CopyKind::DeviceToDevice;
}

/// True for a copy between the memory of two distinct explicit devices: a
/// cudaMemcpyPeerAsync.
bool isPeerCopy(MemoryPlace src, MemoryPlace dst) {
  using K = MemoryPlace::Kind;
  return src.kind == K::Device && dst.kind == K::Device && src.ordinal >= 0 &&
         dst.ordinal >= 0 && src.ordinal != dst.ordinal;
}

/// The device whose stream runs `op`: the device side of a copy (the source
/// for device-to-host), the allocation's or buffer's device otherwise.
int64_t getDeviceKey(Operation *op) {
  return TypeSwitch<Operation *, int64_t>(op)
      .Case([](gpu::MemcpyOp copy) {
        auto [src, dst] = classifyCopy(copy);
        return dst.kind == MemoryPlace::Kind::Device ? dst.ordinal
                                                     : src.ordinal;
      })
      .Case(
          [](gpu::AllocOp alloc) { return classify(alloc.getType()).ordinal; })
      .Case([](gpu::DeallocOp dealloc) {
        return classify(dealloc.getMemref().getType()).ordinal;
      })
      .Case([](gpu::MemsetOp memset) {
        return classify(memset.getDst().getType()).ordinal;
      })
      .Default([](Operation *) { return int64_t(-1); });
}

/// The strides and offset of `type`, read from its layout attribute when it
/// is the identity or strided (the layouts of nearly every memref), without
/// the affine-map analysis of MemRefType::getStridesAndOffset.
LogicalResult getStridesAndOffset(MemRefType type,
                                  SmallVectorImpl<int64_t> &strides,
                                  int64_t &offset) {
  if (auto strided = dyn_cast<StridedLayoutAttr>(type.getLayout())) {
    llvm::append_range(strides, strided.getStrides());
    offset = strided.getOffset();
    return success();
  }
  if (type.getLayout().isIdentity()) {
    strides.resize(type.getRank());
    int64_t stride = 1;
    for (int64_t dim = type.getRank() - 1; dim >= 0; --dim) {
      strides[dim] = stride;
      int64_t size = type.getDimSize(dim);
      stride = ShapedType::isDynamic(size) || ShapedType::isDynamic(stride)
                   ? ShapedType::kDynamic
                   : stride * size;
    }
    offset = 0;
    return success();
  }
  return type.getStridesAndOffset(strides, offset);
}

/// True when `type` is laid out row-major contiguously whatever its dynamic
/// sizes (identity layout, or strides that are the suffix products of a
/// static shape); the offset may be anything.
bool isContiguous(MemRefType type) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return false;
  int64_t expected = 1;
  for (int64_t dim = type.getRank() - 1; dim >= 0; --dim) {
    int64_t size = type.getDimSize(dim);
    if (size == 1)
      continue;
    if (ShapedType::isDynamic(strides[dim]) || strides[dim] != expected)
      return false;
    if (ShapedType::isDynamic(size))
      return dim == 0;
    expected *= size;
  }
  return true;
}

/// The bytes of one element of a memref of `elementType` in memory, when
/// known without a data layout query (the types memrefs usually hold).
std::optional<int64_t> getStaticElementBytes(Type elementType,
                                             unsigned indexBitwidth) {
  unsigned bits;
  if (isa<IndexType>(elementType))
    bits = indexBitwidth;
  else if (elementType.isIntOrFloat())
    bits = elementType.getIntOrFloatBitWidth();
  else
    return std::nullopt;
  if (bits == 1)
    return 1;
  if (bits < 8 || !llvm::isPowerOf2_32(bits))
    return std::nullopt;
  return bits / 8;
}

/// True when a buffer of `type` has a size in bytes that fits in int64_t,
/// as its lowering computes it (its elements, times their size when that
/// is known statically). Dynamic sizes are the program's to keep in range.
bool hasRepresentableSize(MemRefType type, unsigned indexBitwidth) {
  if (!type.hasStaticShape())
    return true;
  int64_t size = getStaticElementBytes(type.getElementType(), indexBitwidth)
                     .value_or(1);
  for (int64_t dim : type.getShape())
    if (llvm::MulOverflow(size, dim, size))
      return false;
  return true;
}

/// The first file location in `loc`: its file, line and column.
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

bool isRuntimeOp(Operation *op) {
  return isa<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp, gpu::MemsetOp,
             gpu::WaitOp>(op);
}

/// True for the memref.alloc and memref.dealloc of a pinned host buffer,
/// which the pass lowers to cudaMallocHost and cudaFreeHost: they use no
/// stream and select no device.
bool isPinnedHostBufferOp(Operation *op) {
  return isa<memref::AllocOp, memref::DeallocOp>(op);
}

/// True when `copy` is one cudaMemcpyAsync of a static number of bytes from
/// the first element of one side to the first element of the other: both
/// sides are contiguous and of static shape. Other copies go through the
/// strided copy, which reads their descriptors.
bool isSimpleCopy(gpu::MemcpyOp copy, unsigned indexBitwidth) {
  MemRefType srcType = copy.getSrc().getType();
  return getStaticElementBytes(srcType.getElementType(), indexBitwidth) &&
         srcType.hasStaticShape() && isContiguous(srcType) &&
         isContiguous(copy.getDst().getType());
}

/// True for a memref.view of static shape that only simple copies and
/// memsets use (the views of a planned arena): they address the arena
/// directly, so the view needs no descriptor and is left to die after the
/// conversion. Decided before the conversion, which adds users.
bool isAddressOnlyView(memref::ViewOp view, unsigned indexBitwidth) {
  return view.getType().hasStaticShape() &&
         llvm::all_of(view->getUsers(), [&](Operation *user) {
           auto copy = dyn_cast<gpu::MemcpyOp>(user);
           return isa<gpu::MemsetOp>(user) ||
                  (copy && isSimpleCopy(copy, indexBitwidth));
         });
}

//===----------------------------------------------------------------------===//
// Pinned host buffers
//===----------------------------------------------------------------------===//

/// The memref.alloc whose buffer `memref` views, if any.
memref::AllocOp getAllocation(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref.getDefiningOp<memref::AllocOp>();
}

/// True when `alloc` allocates a host buffer that is the source or the
/// destination of a copy to or from a device, that the function frees, and
/// that never leaves the function: every use, through views, reads or
/// writes it, copies it or frees it (a return, a call, a branch or a store
/// of the memref would hand it to code that might free it with free()).
bool isPinnableTransferBuffer(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  // cudaMallocHost aligns to at least 256 bytes.
  if (classify(type).kind == MemoryPlace::Kind::Device ||
      !type.getLayout().isIdentity() || alloc.getAlignment().value_or(0) > 256)
    return false;
  bool transfers = false, freed = false;
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            worklist.push_back(result);
        continue;
      }
      if (isa<memref::DeallocOp>(user)) {
        freed = true;
        continue;
      }
      if (auto copy = dyn_cast<gpu::MemcpyOp>(user)) {
        auto [src, dst] = classifyCopy(copy);
        MemoryPlace other = value == copy.getSrc() ? dst : src;
        transfers |= other.kind == MemoryPlace::Kind::Device;
        continue;
      }
      // Anything else must access the buffer's memory (a load, a store, a
      // compute op), not take the memref itself (a return, a call, a store
      // of the memref).
      if (!isNonEscapingAccess(user, value))
        return false;
    }
  }
  return transfers && freed;
}

//===----------------------------------------------------------------------===//
// Batches of copies
//===----------------------------------------------------------------------===//

/// The most copies of one cudaMemcpyBatchAsync: bounds the two arrays of
/// pointers that each function holds on its stack (2 x 4 KiB).
constexpr size_t kMaxBatchCopies = 512;

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

/// A run of copies lowered to one cudaMemcpyBatchAsync, at the last one.
struct CopyBatch {
  SmallVector<gpu::MemcpyOp> copies;
};

/// What grouping copies into batches needs, and the batches it makes.
struct BatchPlanning {
  unsigned indexBitwidth;
  /// Ops whose memref results are fresh buffers (delegate calls).
  const DenseSet<Operation *> &freshAllocators;
  /// Op plans point at their batch.
  std::deque<CopyBatch> batches;
};

/// True for an op that may come between two copies of a batch: the copies
/// before it move past it, so it must neither touch memory nor wait. New
/// buffers are fine: no copy before them can use them.
bool isTransparentToCopies(Operation *op) {
  if (op->getNumRegions() != 0 || op->hasTrait<OpTrait::IsTerminator>() ||
      isa<CallOpInterface>(op))
    return false;
  if (isa<gpu::AllocOp>(op) || isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.onlyHasEffect<MemoryEffects::Allocate>();
}

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

/// Calls to stream-ordered delegates, in program order, with the ordinal of
/// the delegate's device.
using StreamOrderedCalls = llvm::MapVector<Operation *, int64_t>;

/// What the pass works on, found by one walk of the module.
struct ModuleWork {
  /// The runtime ops of each function, in order, with the memref.alloc and
  /// memref.dealloc of its pinned buffers.
  llvm::MapVector<func::FuncOp, SmallVector<Operation *>> runtimeOps;
  /// The host buffers allocated with cudaMallocHost (pinned-host-memory).
  DenseSet<Operation *> pinnedAllocs;
  /// Calls to delegates, which must run on their device.
  SmallVector<std::pair<func::CallOp, DeviceAttr>> delegateCalls;
  /// The calls to stream-ordered delegates, with their device's ordinal:
  /// they are also in `runtimeOps`, since they enqueue work on the stream.
  StreamOrderedCalls streamOrderedCalls;
  /// The stream-ordered delegates called, whose signatures gain the stream.
  llvm::SetVector<func::FuncOp> streamOrderedDelegates;
};

/// Reports every construct the pass cannot lower, with the op, the types and
/// the reason, and collects the work (with `pinHostMemory`, the transfer
/// buffers to pin). Returns failure if anything cannot be lowered.
LogicalResult validateAndCollect(ModuleOp module, SymbolTable &symbols,
                                 unsigned indexBitwidth, bool pinHostMemory,
                                 ModuleWork &work) {
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
    if (isa<gpu::GPUModuleOp>(op))
      return WalkResult::skip();
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
    if (pinHostMemory && isa<memref::AllocOp, memref::DeallocOp>(op)) {
      // The buffer's memref.alloc comes before its frees.
      auto alloc = dyn_cast<memref::AllocOp>(op);
      auto func = op->getParentOfType<func::FuncOp>();
      if (func && (alloc ? isPinnableTransferBuffer(alloc)
                         : work.pinnedAllocs.contains(getAllocation(
                               cast<memref::DeallocOp>(op).getMemref())))) {
        if (alloc)
          work.pinnedAllocs.insert(alloc);
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
                 "gpu.memcpy, gpu.memset and gpu.wait in the same function";
          failed = true;
          break;
        }
      return WalkResult::advance();
    }
    if (!isRuntimeOp(op)) {
      op->emitError("'")
          << op->getName()
          << "' is not supported by convert-gpu-to-cuda-runtime, which lowers "
             "gpu.alloc, gpu.dealloc, gpu.memcpy, gpu.memset and gpu.wait";
      failed = true;
      return WalkResult::advance();
    }
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
                      "from gpu.alloc, gpu.dealloc, gpu.memcpy, gpu.memset "
                      "or gpu.wait in the same function");
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

/// Reads field `position` of a descriptor. A descriptor that was just built
/// from its parts (a chain of llvm.insertvalue, as the conversion's patterns
/// build descriptors) is looked through: the part is used, no read is
/// emitted.
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
    if (isPinnedHostBufferOp(op))
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
/// sync-form copy ends its run: the host waits after it. Linear in the ops
/// of the function (each access is one lookup in the run's ranges).
void planBatches(ArrayRef<Operation *> runtimeOps,
                 function_ref<int64_t(Operation *)> keyOf, FunctionPlan &plan,
                 PlanMap &plans, BatchPlanning &batching) {
  unsigned indexBitwidth = batching.indexBitwidth;
  SmallVector<gpu::MemcpyOp> run;
  RunAccesses accesses;
  auto close = [&] {
    if (run.size() > 1) {
      CopyBatch &batch = batching.batches.emplace_back(CopyBatch{run});
      for (gpu::MemcpyOp copy : run)
        plans[copy].batch = &batch;
      plan.maxBatchCopies =
          std::max<int64_t>(plan.maxBatchCopies, run.size());
    }
    run.clear();
    accesses.clear();
  };
  for (Operation *op : runtimeOps) {
    auto copy = dyn_cast<gpu::MemcpyOp>(op);
    if (!copy) {
      if (!isTransparentToCopies(op))
        close();
      continue;
    }
    auto [srcPlace, dstPlace] = classifyCopy(copy);
    if (!isSimpleCopy(copy, indexBitwidth) || isPeerCopy(srcPlace, dstPlace)) {
      close();
      continue;
    }
    BufferAccess src = getBufferAccess(copy.getSrc(), indexBitwidth,
                                       batching.freshAllocators);
    BufferAccess dst = getBufferAccess(copy.getDst(), indexBitwidth,
                                       batching.freshAllocators);
    auto extendsRun = [&] {
      gpu::MemcpyOp previous = run.back();
      if (run.size() == kMaxBatchCopies || keyOf(previous) != keyOf(op) ||
          previous->getBlock() != op->getBlock())
        return false;
      for (Operation *between = previous->getNextNode(); between != op;
           between = between->getNextNode())
        if (!isTransparentToCopies(between))
          return false;
      return !accesses.conflicts(src, /*write=*/false) &&
             !accesses.conflicts(dst, /*write=*/true);
    };
    if (!run.empty() && !extendsRun())
      close();
    run.push_back(copy);
    accesses.add(src, /*write=*/false);
    accesses.add(dst, /*write=*/true);
    if (!copy.getAsyncToken())
      close();
  }
  close();
}

/// Gets the streams of `func` at its entry, makes the host wait for them
/// before each return, and plans each runtime op (and stream-ordered
/// delegate call) in it, and its batches unless `batching` is null. Returns
/// the device the function makes current at entry and keeps current between
/// its ops (when it uses exactly one explicit device), else -1.
int64_t planFunction(func::FuncOp func, ArrayRef<Operation *> runtimeOps,
                     const StreamOrderedCalls &streamOrderedCalls,
                     FunctionPlan &plan, PlanMap &plans,
                     BatchPlanning *batching) {
  FunctionValues &values = plan.values;
  RuntimeSupport &support = values.getSupport();

  // Devices used, "current device" (-1) first so that its stream is got
  // before any cudaSetDevice. gpu.wait names no memory: it runs on the
  // function's first stream. Pinned host buffers need no stream.
  auto getKey = [&](Operation *op) {
    auto call = streamOrderedCalls.find(op);
    return call != streamOrderedCalls.end() ? call->second : getDeviceKey(op);
  };
  auto memoryOps = llvm::make_filter_range(runtimeOps, [](Operation *op) {
    return !isa<gpu::WaitOp>(op) && !isPinnedHostBufferOp(op);
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

/// Makes each delegate's device current around the calls to it, and
/// restores the previous device after; nothing where the calling function
/// keeps that device current anyway (`homeDevices`).
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

/// Gives each stream-ordered delegate its device's stream as an extra last
/// argument, `!llvm.ptr`, in its signature and at every call. In a function
/// with several streams, the delegate's stream first waits for the others
/// (its inputs may come from any of them), and they wait for it after the
/// call (later work may use its results), with the delegate's device
/// current throughout. Runs after `switchDevicesForDelegates`, so that this
/// lies between entering the delegate's device and leaving it.
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

//===----------------------------------------------------------------------===//
// Lowering of the runtime ops
//===----------------------------------------------------------------------===//

/// Fields of a ranked memref descriptor (MemRefBuilder.h's layout).
constexpr int64_t kAllocatedPtrPosInMemRefDescriptor = 0;
constexpr int64_t kAlignedPtrPosInMemRefDescriptor = 1;
constexpr int64_t kOffsetPosInMemRefDescriptor = 2;
constexpr int64_t kSizePosInMemRefDescriptor = 3;

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
                   const DenseSet<Operation *> &addressOnlyViews)
      : converter(converter), support(support), plans(plans),
        addressOnlyViews(addressOnlyViews), builder(&converter.getContext()),
        pointerType(LLVM::LLVMPointerType::get(&converter.getContext())) {}

  /// Lowers `ops`, the runtime ops of one function in program order, and
  /// erases them.
  void lowerFunction(ArrayRef<Operation *> ops) {
    for (Operation *op : ops) {
      builder.setInsertionPoint(op);
      TypeSwitch<Operation *>(op)
          .Case<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp, gpu::MemsetOp,
                gpu::WaitOp, memref::AllocOp, memref::DeallocOp>(
              [&](auto op) { lower(op, getAdaptor(op)); })
          .Default([](Operation *) {
            llvm_unreachable("collected as a runtime op but not lowered");
          });
    }
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
    prepare(op, plan, adaptor.getAsyncDependencies());

    if (plan.batch) {
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
      if (isPeerCopy(srcPlace, dstPlace))
        callSupport(loc, plan, "__etcopy_memcpy_peer",
                    {dst, values.getI32(builder, dstPlace.ordinal), src,
                     values.getI32(builder, srcPlace.ordinal), bytes,
                     plan.stream});
      else
        callSupport(loc, plan, "__etcopy_memcpy",
                    {dst, src, bytes, kind, plan.stream});
    } else {
      // The helper reads sizes and strides from the descriptors, compares
      // dynamic sizes and picks the copies.
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

  /// memref.alloc of a pinned transfer buffer -> cudaMallocHost.
  void lower(memref::AllocOp op, memref::AllocOp::Adaptor adaptor) {
    const OpPlan &plan = getPlan(op);
    Location loc = op.getLoc();
    Value descriptor = createDescriptor(
        loc, op.getType(), adaptor.getDynamicSizes(), getValues(plan),
        [&](Value bytes) {
          return callSupport(loc, plan, "__etcopy_malloc_host", bytes);
        });
    replace(op, descriptor);
  }

  /// memref.dealloc of a pinned transfer buffer -> cudaFreeHost.
  void lower(memref::DeallocOp op, memref::DeallocOp::Adaptor adaptor) {
    const OpPlan &plan = getPlan(op);
    Value pointer = getValues(plan).getField(
        builder, op.getLoc(), adaptor.getMemref(),
        ArrayRef<int64_t>{kAllocatedPtrPosInMemRefDescriptor});
    callSupport(op.getLoc(), plan, "__etcopy_free_host", pointer);
  }

  /// gpu.wait async -> the stream (after joining its dependencies); gpu.wait
  /// (sync) -> cudaStreamSynchronize of each dependency, or of every stream
  /// of the function when it has none.
  void lower(gpu::WaitOp op, gpu::WaitOp::Adaptor adaptor) {
    const OpPlan &plan = getPlan(op);
    if (op.getAsyncToken()) {
      prepare(op, plan, adaptor.getAsyncDependencies());
      replace(op, plan.stream);
      return;
    }
    ValueRange dependencies = adaptor.getAsyncDependencies();
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
  OpBuilder builder;
  Type pointerType;
  /// The descriptors of the memref results lowered so far in the function.
  DenseMap<Value, Value> memrefs;
  /// The operands of the op being lowered.
  SmallVector<Value> operands;
};

//===----------------------------------------------------------------------===//
// Clean-up
//===----------------------------------------------------------------------===//

/// The byte size `ptrtoint(getelementptr null[N])` computes, the
/// conversion's idiom for sizeof(element) * N, if `op` is that idiom with a
/// constant N, an element whose size getStaticElementBytes knows without
/// the data layout, and a product that fits in the result type.
static std::optional<APInt> getConstantByteOffset(LLVM::PtrToIntOp op,
                                                  unsigned indexBitwidth) {
  auto gep = op.getArg().getDefiningOp<LLVM::GEPOp>();
  auto resultType = dyn_cast<IntegerType>(op.getType());
  if (!gep || !resultType || !gep.getBase().getDefiningOp<LLVM::ZeroOp>() ||
      !gep.getDynamicIndices().empty() ||
      gep.getRawConstantIndices().size() != 1)
    return std::nullopt;
  int64_t count = gep.getRawConstantIndices().front();
  std::optional<int64_t> elementBytes =
      getStaticElementBytes(gep.getElemType(), indexBitwidth);
  if (count < 0 || !elementBytes)
    return std::nullopt;
  APInt bytes = APInt(128, static_cast<uint64_t>(count)) *
                static_cast<uint64_t>(*elementBytes);
  if (bytes.getActiveBits() >= resultType.getWidth())
    return std::nullopt;
  return bytes.trunc(resultType.getWidth());
}

/// The value of `op`, an integer add, sub, mul or urem without overflow
/// flags, if its operands are constants (and a divisor is not zero): the
/// LLVM dialect does not fold these, and the conversion's patterns compute
/// padded allocation sizes with them.
static std::optional<APInt> foldIntegerArithmetic(Operation &op) {
  if (!isa<LLVM::AddOp, LLVM::SubOp, LLVM::MulOp, LLVM::URemOp>(op) ||
      !isa<IntegerType>(op.getResult(0).getType()))
    return std::nullopt;
  if (auto flags = dyn_cast<LLVM::IntegerOverflowFlagsInterface>(op);
      flags && flags.getOverflowFlags() != LLVM::IntegerOverflowFlags::none)
    return std::nullopt;
  APInt lhs, rhs;
  if (!matchPattern(op.getOperand(0), m_ConstantInt(&lhs)) ||
      !matchPattern(op.getOperand(1), m_ConstantInt(&rhs)))
    return std::nullopt;
  return TypeSwitch<Operation *, std::optional<APInt>>(&op)
      .Case([&](LLVM::AddOp) { return lhs + rhs; })
      .Case([&](LLVM::SubOp) { return lhs - rhs; })
      .Case([&](LLVM::MulOp) { return lhs * rhs; })
      .Case([&](LLVM::URemOp) -> std::optional<APInt> {
        if (rhs.isZero())
          return std::nullopt;
        return lhs.urem(rhs);
      })
      .Default(std::nullopt);
}

/// Cleans up what the conversion and the lowering of the runtime ops leave
/// behind in `func`, in one pass over its ops and one back, linear in its
/// size:
///  * reads of descriptor fields and constant address arithmetic fold, and
///    a field read again in its block is not read twice;
///  * the size idiom `ptrtoint(getelementptr null[N])` of an element of a
///    known size,
///    and integer arithmetic on constants (the padding of a size to its
///    alignment), become constants;
///  * constants are made unique, as the canonicalizer does (though without
///    moving those of the entry block, so that a call's location stays next
///    to it): each lowering materialises the constants it needs where it
///    needs them, so that one value would otherwise be printed, verified
///    and translated once per use site;
///  * dead pure ops are erased.
/// `visitKept`, if given, is called on each op of the body that stays, last
/// to first, so that a caller's own checks of the result need no walk of
/// their own.
void cleanUpFunction(LLVM::LLVMFuncOp func, unsigned indexBitwidth,
                     function_ref<void(Operation *)> visitKept = nullptr) {
  if (func.getBody().empty())
    return;
  Block &entry = func.getBody().front();
  OpBuilder builder(func.getContext());
  // Unique constants by op name, folded value and type; an integer value is
  // keyed by its bits, so `16 : index` and `16 : i64` of type i64 are one.
  using ConstantKey = std::tuple<OperationName, Attribute, Type>;
  DenseMap<ConstantKey, Operation *> constants;
  auto uniqueConstant = [&](Operation &op) {
    Attribute value;
    if (op.getNumOperands() != 0 || op.getNumResults() != 1 ||
        op.getNumRegions() != 0 || !matchPattern(&op, m_Constant(&value)))
      return;
    Type type = op.getResult(0).getType();
    if (auto integer = dyn_cast<IntegerAttr>(value);
        integer && integer.getType() != type && isa<IntegerType>(type))
      value = IntegerAttr::get(type, integer.getValue());
    auto [it, inserted] =
        constants.try_emplace(ConstantKey{op.getName(), value, type}, &op);
    if (!inserted) {
      op.getResult(0).replaceAllUsesWith(it->second->getResult(0));
      op.erase();
      return;
    }
    // The first of its value dominates the rest where it is if it is in the
    // entry block (which is visited first); from another block it moves to
    // the end of the entry block, which dominates every block.
    if (op.getBlock() != &entry)
      op.moveBefore(entry.getTerminator());
  };

  // The reads of descriptor fields so far in the block, by container and
  // position: the first dominates the rest of its block.
  DenseMap<std::pair<Value, Attribute>, LLVM::ExtractValueOp>
      fieldReads;
  for (Block &block : func.getBody()) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (op.hasTrait<OpTrait::ConstantLike>()) {
        uniqueConstant(op);
        continue;
      }
      std::optional<APInt> folded;
      if (auto toInt = dyn_cast<LLVM::PtrToIntOp>(op))
        folded = getConstantByteOffset(toInt, indexBitwidth);
      else
        folded = foldIntegerArithmetic(op);
      if (folded) {
        Type type = op.getResult(0).getType();
        builder.setInsertionPoint(&op);
        auto constant = LLVM::ConstantOp::create(
            builder, op.getLoc(), type, IntegerAttr::get(type, *folded));
        op.getResult(0).replaceAllUsesWith(constant.getResult());
        op.erase();
        uniqueConstant(*constant);
        continue;
      }
      if (!isa<LLVM::ExtractValueOp, LLVM::GEPOp>(op))
        continue;
      // A GEP first folds its constant operands in place, then may fold
      // away.
      bool erased = false;
      for (int attempt = 0; attempt < 2; ++attempt) {
        SmallVector<OpFoldResult, 1> results;
        if (failed(op.fold(results)))
          break;
        if (results.empty())
          continue;
        if (auto value = dyn_cast<Value>(results.front())) {
          op.getResult(0).replaceAllUsesWith(value);
          op.erase();
          erased = true;
        }
        break;
      }
      // A field read twice in a block (a descriptor's pointer by a copy and
      // by the free) is read once.
      if (erased)
        continue;
      if (auto extract = dyn_cast<LLVM::ExtractValueOp>(op)) {
        auto [it, inserted] = fieldReads.try_emplace(
            {extract.getContainer(), Attribute(extract.getPositionAttr())},
            extract);
        if (!inserted) {
          extract.replaceAllUsesWith(it->second.getResult());
          extract.erase();
        }
      }
    }
    fieldReads.clear();
  }
  for (Block &block : llvm::reverse(func.getBody()))
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isOpTriviallyDead(&op))
        op.erase();
      else if (visitKept)
        visitKept(&op);
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

/// Folds the ops the pass lowers itself (runtime ops, pinned buffers' alloc
/// and dealloc) in place, as the conversion driver would before lowering
/// them: their folders take the static type behind a `memref.cast` operand,
/// which makes a copy of a casted buffer one cudaMemcpyAsync rather than a
/// strided copy. Before planning, so that batches and address-only views
/// see the folded ops; casts left unused are erased.
void foldRuntimeOps(ModuleWork &work) {
  llvm::SetVector<Operation *> casts;
  SmallVector<OpFoldResult> results;
  for (auto &[func, ops] : work.runtimeOps)
    for (Operation *op : ops) {
      // Delegate calls are lowered by the conversion.
      if (isa<func::CallOp>(op))
        continue;
      for (Value operand : op->getOperands())
        if (auto cast = operand.getDefiningOp<memref::CastOp>())
          casts.insert(cast);
      // Their folds are in place; one to values would leave the op as it
      // is, and it is lowered as it is.
      results.clear();
      (void)op->fold(results);
    }
  for (Operation *cast : casts)
    if (cast->use_empty())
      cast->erase();
}

/// Folds the unrealized casts of `module` that cancel out, as
/// reconcile-unrealized-casts would (once every op is converted, the casts
/// between the patterns' types do), so that a pipeline needs no pass over
/// (and verification of) the whole lowered module for it. Before the
/// clean-up, which then sees the descriptors the casts hid. Casts that do
/// not cancel are left.
void reconcileCasts(ModuleOp module) {
  SmallVector<UnrealizedConversionCastOp> casts;
  module.walk([&](UnrealizedConversionCastOp cast) { casts.push_back(cast); });
  reconcileUnrealizedCasts(casts);
}

/// The patterns that lower everything but the gpu dialect to LLVM: func's
/// with a symbol table (through the dialect interface, each call's lowering
/// would look its callee up by a scan of the module, O(calls x functions)
/// on a method calling thousands of delegates), and every other loaded
/// dialect's ConvertToLLVMPatternInterface patterns (the gpu dialect's
/// target the mgpu* wrappers, not the CUDA Runtime).
void populateModuleToLLVMPatterns(ConversionTarget &target,
                                  LLVMTypeConverter &converter,
                                  SymbolTableCollection &symbolTables,
                                  RewritePatternSet &patterns) {
  populateFuncToLLVMConversionPatterns(converter, patterns, &symbolTables);
  for (Dialect *dialect : converter.getContext().getLoadedDialects()) {
    if (isa<func::FuncDialect, gpu::GPUDialect>(dialect))
      continue;
    if (auto *iface = dyn_cast<ConvertToLLVMPatternInterface>(dialect))
      iface->populateConvertToLLVMConversionPatterns(target, converter,
                                                     patterns);
  }
}

/// The options of both passes' conversions: host buffers from
/// aligned_alloc, which aligns them itself.
LowerToLLVMOptions getLoweringOptions(ModuleOp module) {
  LowerToLLVMOptions options(module.getContext(), DataLayout(module));
  options.allocLowering = LowerToLLVMOptions::AllocLowering::AlignedAlloc;
  return options;
}

struct EtCopyHostToLLVMPass
    : public etcopy::impl::EtCopyHostToLLVMBase<EtCopyHostToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    LLVMTypeConverter converter(ctx, getLoweringOptions(module));
    LLVMConversionTarget target(*ctx);
    RewritePatternSet patterns(ctx);
    SymbolTableCollection symbolTables;
    populateModuleToLLVMPatterns(target, converter, symbolTables, patterns);
    // With pattern rollback, as convert-gpu-to-cuda-runtime (which says why).
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    reconcileCasts(module);
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      cleanUpFunction(func, converter.getIndexTypeBitwidth());
  }
};

struct ConvertGPUToCUDARuntimePass
    : public etcopy::impl::ConvertGPUToCUDARuntimeBase<
          ConvertGPUToCUDARuntimePass> {
  using ConvertGPUToCUDARuntimeBase::ConvertGPUToCUDARuntimeBase;

  void runOnOperation() override;
};
} // namespace

void mlir::etcopy::populateCUDARuntimeTypeConversions(
    LLVMTypeConverter &converter) {
  MLIRContext *ctx = &converter.getContext();
  auto genericSpace = IntegerAttr::get(IntegerType::get(ctx, 64), 0);
  converter.addTypeAttributeConversion(
      [=](BaseMemRefType, DeviceAttr) { return genericSpace; });
  converter.addTypeAttributeConversion(
      [=](BaseMemRefType, gpu::AddressSpaceAttr) { return genericSpace; });
  converter.addTypeAttributeConversion(
      [=](BaseMemRefType, IntegerAttr) { return genericSpace; });
  converter.addConversion([ctx](gpu::AsyncTokenType) -> Type {
    return LLVM::LLVMPointerType::get(ctx);
  });
}

/// True if `type` still mentions a device placement or an async token.
static bool mentionsUnloweredType(Type type) {
  return type.walk([](Attribute attr) {
               return isa<DeviceAttr>(attr) ? WalkResult::interrupt()
                                            : WalkResult::advance();
             })
             .wasInterrupted() ||
         type.walk([](Type nested) {
               return isa<gpu::AsyncTokenType>(nested) ? WalkResult::interrupt()
                                                       : WalkResult::advance();
             })
             .wasInterrupted();
}

void ConvertGPUToCUDARuntimePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  LLVMTypeConverter converter(ctx, getLoweringOptions(module));
  populateCUDARuntimeTypeConversions(converter);

  SymbolTable symbols(module);
  ModuleWork work;
  unsigned indexBitwidth = converter.getIndexTypeBitwidth();
  if (failed(validateAndCollect(module, symbols, indexBitwidth,
                                pinnedHostMemory, work)))
    return signalPassFailure();
  foldRuntimeOps(work);

  RuntimeSupport support(module, symbols);
  ModuleGlobals globals;
  DenseMap<Operation *, std::unique_ptr<FunctionValues>> functionValues;
  auto getValues = [&](func::FuncOp func) -> FunctionValues & {
    std::unique_ptr<FunctionValues> &values = functionValues[func];
    if (!values)
      values =
          std::make_unique<FunctionValues>(func, support, symbols, globals);
    return *values;
  };
  PlanMap plans;
  size_t numRuntimeOps = 0;
  for (auto &[func, ops] : work.runtimeOps)
    numRuntimeOps += ops.size();
  plans.reserve(numRuntimeOps);
  // Deque: op plans point at their function's plan.
  std::deque<FunctionPlan> functionPlans;
  DenseSet<Operation *> delegateCalls;
  for (auto [call, device] : work.delegateCalls)
    delegateCalls.insert(call);
  BatchPlanning batching{indexBitwidth, delegateCalls, {}};
  DenseMap<Operation *, int64_t> homeDevices;
  for (auto &[func, ops] : work.runtimeOps) {
    FunctionPlan &plan = functionPlans.emplace_back(getValues(func));
    homeDevices[func] =
        planFunction(func, ops, work.streamOrderedCalls, plan, plans,
                     batchCopies ? &batching : nullptr);
  }
  numStreams = work.runtimeOps.size();
  numBatches = batching.batches.size();
  for (const CopyBatch &batch : batching.batches)
    numBatchedCopies += batch.copies.size();
  numPinnedBuffers = work.pinnedAllocs.size();
  switchDevicesForDelegates(work.delegateCalls, homeDevices, getValues,
                            support);
  passStreamsToDelegates(work, plans, support);
  if (failed(support.checkModuleSymbols()))
    return signalPassFailure();

  DenseSet<Operation *> addressOnlyViews;
  for (auto &[func, ops] : work.runtimeOps)
    for (Operation *op : ops)
      for (Value operand : op->getOperands())
        if (auto view = operand.getDefiningOp<memref::ViewOp>();
            view && isAddressOnlyView(view, indexBitwidth))
          addressOnlyViews.insert(view);
  // The delegate calls are planned and lowered by the conversion from here.
  for (Operation *call : llvm::make_first_range(work.streamOrderedCalls))
    plans.erase(call);
  for (auto &[func, ops] : work.runtimeOps)
    llvm::erase_if(ops, [](Operation *op) { return isa<func::CallOp>(op); });

  // Lower everything but the planned ops with the dialects' own patterns,
  // then the planned ops in place.
  LLVMConversionTarget target(*ctx);
  target.addIllegalDialect<gpu::GPUDialect>();
  target.addDynamicallyLegalOp<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp,
                               gpu::MemsetOp, gpu::WaitOp>(
      [&](Operation *op) { return plans.contains(op); });
  // Pinned buffers are planned; other host buffers are the conversion's (no
  // callback without pinned buffers: it would look up every alloc and free).
  if (!work.pinnedAllocs.empty())
    target.addDynamicallyLegalOp<memref::AllocOp, memref::DeallocOp>(
        [&](Operation *op) -> std::optional<bool> {
          if (plans.contains(op))
            return true;
          return std::nullopt;
        });
  target.addDynamicallyLegalOp<memref::ViewOp>(
      [&](memref::ViewOp view) { return addressOnlyViews.contains(view); });
  target.addLegalOp<gpu::GPUModuleOp>();
  target.markOpRecursivelyLegal<gpu::GPUModuleOp>();

  RewritePatternSet patterns(ctx);
  SymbolTableCollection symbolTables;
  populateModuleToLLVMPatterns(target, converter, symbolTables, patterns);
  // The driver keeps its pattern rollback (the default). Without it
  // (`allowPatternRollback = false`) the conversion is about a fifth faster
  // on tensor-level input, but the driver aborts the process wherever it
  // would have undone a change, e.g. a fold of host tensor math into a
  // constant that no pattern lowers (test/Conversion/HostToLLVM/
  // unlowerable-fold.mlir): input the pass must leave or report instead.
  if (failed(applyPartialConversion(module, target, std::move(patterns))))
    return signalPassFailure();
  RuntimeOpLowerer lowerer(converter, support, plans, addressOnlyViews);
  for (auto &[func, ops] : work.runtimeOps)
    lowerer.lowerFunction(ops);
  support.emit();

  // Fold the casts and what the patterns left, check that nothing etcopy-
  // or token-typed survived, drop the etcopy attributes of ops and function
  // arguments (they have no meaning in LLVM IR) and count the call sites of the runtime
  // support.
  reconcileCasts(module);
  bool leftovers = false;
  DenseMap<Type, bool> unlowered;
  auto isUnlowered = [&](Type type) {
    auto [it, inserted] = unlowered.try_emplace(type);
    if (inserted)
      it->second = mentionsUnloweredType(type);
    return it->second;
  };
  auto check = [&](Operation *nested) {
    if (isa<gpu::GPUModuleOp>(nested))
      return WalkResult::skip();
    // With those of function arguments: the `_mlir_ciface_` wrapper of a
    // delegate keeps its `etcopy.writes` otherwise, which the verifier
    // rejects on a function that is no delegate.
    removeEtCopyAttributes(nested);
    if (auto call = dyn_cast<LLVM::CallOp>(nested)) {
      std::optional<StringRef> callee = call.getCallee();
      if (callee && support.isSupportFunction(*callee))
        ++numRuntimeCalls;
      return WalkResult::advance();
    }
    // The LLVM dialect's ops only take LLVM types (their verifiers check
    // it).
    if (isa<UnrealizedConversionCastOp>(nested) ||
        isa_and_present<LLVM::LLVMDialect>(nested->getDialect()))
      return WalkResult::advance();
    for (Type type : llvm::concat<Type>(nested->getOperandTypes(),
                                        nested->getResultTypes()))
      if (isUnlowered(type)) {
        nested->emitError("'")
            << nested->getName() << "' was left with type " << type
            << " that convert-gpu-to-cuda-runtime could not lower";
        leftovers = true;
        break;
      }
    return WalkResult::advance();
  };
  // The body of a function is checked as it is cleaned up (a walk of the
  // lowered module costs about a tenth of the pass on large input).
  auto checkNested = [&](Operation *op) {
    if (op->getNumRegions() == 0)
      (void)check(op);
    else
      op->walk<WalkOrder::PreOrder>(check);
  };
  for (Operation &op : *module.getBody()) {
    auto func = dyn_cast<LLVM::LLVMFuncOp>(op);
    if (!func) {
      checkNested(&op);
      continue;
    }
    if (support.isSupportFunction(func.getName()))
      continue;
    (void)check(func);
    cleanUpFunction(func, indexBitwidth, checkNested);
  }
  if (leftovers)
    signalPassFailure();
}
