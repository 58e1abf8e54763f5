//===- Export.cpp - What etcopy hands to host programs --------*- C++ -*-===//
//
// The passes at the end of the etcopy pipelines that concern what leaves the
// compiler: etcopy-export-signatures describes each method's arguments and
// results as C-readable constants for the host program that calls it, and
// etcopy-finalize-llvm readies the lowered module for mlir-translate. Also the constant-global builder both metadata exports
// (signatures here, arenas in the planner) use.
//
//===----------------------------------------------------------------------===//

#include "ExportUtils.h"

#include "etcopy/Dialect/EtCopy/EtCopyPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace mlir::etcopy {
#define GEN_PASS_DEF_ETCOPYEXPORTSIGNATURES
#define GEN_PASS_DEF_ETCOPYFINALIZELLVM
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;

LLVM::GlobalOp mlir::etcopy::createConstantGlobal(
    OpBuilder &builder, Location loc, Type type, StringRef name,
    LLVM::Linkage linkage,
    function_ref<Value(OpBuilder &, Value)> fillInitializer) {
  auto global =
      LLVM::GlobalOp::create(builder, loc, type, /*isConstant=*/true, linkage,
                             name, /*value=*/Attribute());
  OpBuilder::InsertionGuard guard(builder);
  builder.createBlock(&global.getInitializerRegion());
  Value zero = LLVM::ZeroOp::create(builder, loc, type);
  LLVM::ReturnOp::create(builder, loc, fillInitializer(builder, zero));
  return global;
}

//===----------------------------------------------------------------------===//
// etcopy-export-signatures
//===----------------------------------------------------------------------===//

namespace {
/// `etcopy_value_kind` of etcopy/Runtime/EtCopyRuntime.h.
enum class ValueKind : int32_t { Scalar = 0, MemRef = 1, UnrankedMemRef = 2 };

/// One entry of a signature: `etcopy_value_desc`.
struct ValueDescription {
  ValueKind kind;
  DeviceAttr device;
  int64_t rank;
  int64_t elementBytes;
};

struct ExportSignaturesPass
    : public etcopy::impl::EtCopyExportSignaturesBase<ExportSignaturesPass> {
  void runOnOperation() override;
};
} // namespace

static StringRef getKindName(ValueKind kind) {
  switch (kind) {
  case ValueKind::Scalar:
    return "scalar";
  case ValueKind::MemRef:
    return "memref";
  case ValueKind::UnrankedMemRef:
    return "unranked_memref";
  }
  llvm_unreachable("unknown value kind");
}

/// The size of a value of `type` in `layout`, for the types a lowered
/// signature can carry; failure for others.
static FailureOr<int64_t> getByteSize(Type type, const DataLayout &layout) {
  if (!isa<IntegerType, IndexType, FloatType, ComplexType, VectorType,
           LLVM::LLVMPointerType>(type))
    return failure();
  return static_cast<int64_t>(layout.getTypeSize(type).getFixedValue());
}

/// Describes a value of `type`; reports on `function` what it cannot
/// describe (`what` names the argument or result).
static FailureOr<ValueDescription>
describe(Type type, const DataLayout &layout, func::FuncOp function,
         const Twine &what) {
  MLIRContext *context = type.getContext();
  auto host = DeviceAttr::get(context, DeviceKind::CPU, 0);
  ValueDescription description{ValueKind::Scalar, host, 0, 0};
  Type measured = type;
  if (auto memref = dyn_cast<BaseMemRefType>(type)) {
    Placement placement = getPlacement(memref);
    if (!placement.isHost() && !placement.isDevice())
      return function.emitError("cannot describe ")
             << what << " of @" << function.getSymName() << ": memory space "
             << memref.getMemorySpace() << " of " << type
             << " is not an #etcopy.device";
    if (placement.isDevice())
      description.device = placement.device;
    description.kind = isa<MemRefType>(memref) ? ValueKind::MemRef
                                               : ValueKind::UnrankedMemRef;
    if (auto ranked = dyn_cast<MemRefType>(memref))
      description.rank = ranked.getRank();
    measured = memref.getElementType();
  }
  FailureOr<int64_t> bytes = getByteSize(measured, layout);
  if (failed(bytes) || *bytes <= 0)
    return function.emitError("cannot describe ")
           << what << " of @" << function.getSymName() << ": " << type
           << " has no size a host program could use";
  description.elementBytes = *bytes;
  return description;
}

/// The `etcopy.signature` entry of `description`.
static DictionaryAttr getEntryAttr(Builder &builder,
                                   const ValueDescription &description) {
  return builder.getDictionaryAttr({
      builder.getNamedAttr("kind",
                           builder.getStringAttr(getKindName(description.kind))),
      builder.getNamedAttr("device", description.device),
      builder.getNamedAttr("rank", builder.getI64IntegerAttr(description.rank)),
      builder.getNamedAttr("element_bytes",
                           builder.getI64IntegerAttr(description.elementBytes)),
  });
}

/// Replaces the global `name` made by an earlier run; fails if the symbol is
/// something else.
static LogicalResult freeSymbol(SymbolTable &symbols, func::FuncOp function,
                                StringRef name) {
  Operation *existing = symbols.lookup(name);
  if (!existing)
    return success();
  if (isa<LLVM::GlobalOp>(existing)) {
    symbols.erase(existing);
    return success();
  }
  InFlightDiagnostic diag = function.emitError()
                            << "cannot export the signature of @"
                            << function.getSymName() << ": symbol @" << name
                            << " already exists";
  diag.attachNote(existing->getLoc()) << "defined here";
  return diag;
}

/// Emits `@<function>_etcopy_signature_values` (the etcopy_value_desc of
/// the arguments, then the results) and `@<function>_etcopy_signature` (the
/// etcopy_method_signature pointing into it), before `function`.
static LogicalResult emitSignatureGlobals(func::FuncOp function,
                                          SymbolTable &symbols,
                                          ArrayRef<ValueDescription> values,
                                          int64_t numArguments) {
  std::string tableName =
      (function.getSymName() + "_etcopy_signature").str();
  std::string valuesName = tableName + "_values";
  if (failed(freeSymbol(symbols, function, tableName)) ||
      failed(freeSymbol(symbols, function, valuesName)))
    return failure();

  MLIRContext *context = function.getContext();
  Location loc = function.getLoc();
  OpBuilder builder(function);
  Type i32 = builder.getI32Type(), i64 = builder.getI64Type();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto valueType =
      LLVM::LLVMStructType::getLiteral(context, {i32, i32, i32, i32, i64});
  // An empty array cannot be addressed usefully: a method without
  // arguments and results points at one unused entry.
  auto valuesType = LLVM::LLVMArrayType::get(
      valueType, std::max<size_t>(values.size(), 1));
  auto tableType =
      LLVM::LLVMStructType::getLiteral(context, {i64, ptr, i64, ptr});

  symbols.insert(createConstantGlobal(
      builder, loc, valuesType, valuesName, LLVM::Linkage::Internal,
      [&](OpBuilder &b, Value aggregate) {
        for (auto [index, value] : llvm::enumerate(values)) {
          int64_t fields[] = {static_cast<int64_t>(value.kind),
                              static_cast<int64_t>(value.device.getKind()),
                              value.device.getOrdinal(), value.rank,
                              value.elementBytes};
          for (auto [field, fieldValue] : llvm::enumerate(fields)) {
            Value constant = LLVM::ConstantOp::create(
                b, loc, field < 4 ? i32 : i64, fieldValue);
            aggregate = LLVM::InsertValueOp::create(
                b, loc, aggregate, constant,
                ArrayRef<int64_t>{static_cast<int64_t>(index),
                                  static_cast<int64_t>(field)});
          }
        }
        return aggregate;
      }));
  symbols.insert(createConstantGlobal(
      builder, loc, tableType, tableName, LLVM::Linkage::External,
      [&](OpBuilder &b, Value aggregate) {
        Value base = LLVM::AddressOfOp::create(b, loc, ptr, valuesName);
        Value results = LLVM::GEPOp::create(
            b, loc, ptr, valueType, base,
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(numArguments)});
        Value fields[] = {
            LLVM::ConstantOp::create(b, loc, i64, numArguments), base,
            LLVM::ConstantOp::create(
                b, loc, i64,
                static_cast<int64_t>(values.size()) - numArguments),
            results};
        for (auto [index, field] : llvm::enumerate(fields))
          aggregate = LLVM::InsertValueOp::create(
              b, loc, aggregate, field,
              ArrayRef<int64_t>{static_cast<int64_t>(index)});
        return aggregate;
      }));
  return success();
}

void ExportSignaturesPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  DataLayout layout(module);
  Builder builder(&getContext());
  bool failed = false;
  for (auto function :
       llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (!function.isPublic() || function.isExternal())
      continue;
    SmallVector<ValueDescription> values;
    SmallVector<Attribute> arguments, results;
    auto add = [&](Type type, const Twine &what,
                   SmallVectorImpl<Attribute> &entries) {
      FailureOr<ValueDescription> value =
          describe(type, layout, function, what);
      if (::mlir::failed(value))
        return false;
      values.push_back(*value);
      entries.push_back(getEntryAttr(builder, *value));
      return true;
    };
    bool described = true;
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes()))
      described &= add(type, "argument #" + Twine(index), arguments);
    for (auto [index, type] : llvm::enumerate(function.getResultTypes()))
      described &= add(type, "result #" + Twine(index), results);
    if (!described ||
        ::mlir::failed(emitSignatureGlobals(function, symbols, values,
                                            arguments.size()))) {
      failed = true;
      continue;
    }
    function->setAttr(
        EtCopyDialect::getSignatureAttrName(),
        builder.getDictionaryAttr(
            {builder.getNamedAttr("arguments", builder.getArrayAttr(arguments)),
             builder.getNamedAttr("results", builder.getArrayAttr(results))}));
  }
  if (failed)
    signalPassFailure();
}

//===----------------------------------------------------------------------===//
// etcopy-finalize-llvm
//===----------------------------------------------------------------------===//

namespace {
struct FinalizeLLVMPass
    : public etcopy::impl::EtCopyFinalizeLLVMBase<FinalizeLLVMPass> {
  void runOnOperation() override {
    // Report the op whose conversion failed: the outermost first, so that
    // an unlowered op with a region is named rather than its terminator.
    // A function left unconverted because of its body, and a cast left by a
    // dialect conversion (often for the failed op's user), are symptoms:
    // named only when nothing else is left, the function first (its
    // signature may be what failed).
    Operation *leftover = nullptr, *leftoverFunction = nullptr,
              *leftoverCast = nullptr;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      removeEtCopyAttributes(op);
      if (isa<ModuleOp>(op) || isa<LLVM::LLVMDialect>(op->getDialect()))
        return;
      Operation *&first = isa<UnrealizedConversionCastOp>(op) ? leftoverCast
                          : isa<FunctionOpInterface>(op)      ? leftoverFunction
                                                              : leftover;
      if (!first)
        first = op;
    });
    if (!leftover)
      leftover = leftoverFunction ? leftoverFunction : leftoverCast;
    // Dropping every etcopy attribute (those of arguments with their
    // function's) invalidates no analysis and cannot make valid IR invalid:
    // no need to verify the (large) module again.
    markAllAnalysesPreserved();
    if (!leftover)
      return;
    leftover->emitError("'") << leftover->getName()
                             << "' was left unconverted by the pipeline";
    signalPassFailure();
  }
};
} // namespace
