//===- EtCopyDialect.cpp - etcopy dialect and attributes ------*- C++ -*-===//
//
// The etcopy dialect: registration, the #etcopy.device attribute (parser,
// printer, verifier), placement helpers for memref and tensor types, and
// verification of the dialect's discardable attributes.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "etcopy/Dialect/EtCopy/EtCopyOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::etcopy;

#include "etcopy/Dialect/EtCopy/EtCopyDialect.cpp.inc"
#include "etcopy/Dialect/EtCopy/EtCopyEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "etcopy/Dialect/EtCopy/EtCopyAttributes.cpp.inc"

void EtCopyDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "etcopy/Dialect/EtCopy/EtCopyAttributes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "etcopy/Dialect/EtCopy/EtCopyOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// DeviceAttr
//===----------------------------------------------------------------------===//

/// "cpu, cuda": every kind of the DeviceKind enum, for diagnostics.
static std::string listDeviceKinds() {
  std::string list;
  for (uint32_t i = 0; i <= getMaxEnumValForDeviceKind(); ++i) {
    if (std::optional<DeviceKind> kind = symbolizeDeviceKind(i)) {
      if (!list.empty())
        list += ", ";
      list += stringifyDeviceKind(*kind);
    }
  }
  return list;
}

std::string DeviceAttr::str() const {
  if (isHost())
    return stringifyDeviceKind(getKind()).str();
  return (stringifyDeviceKind(getKind()) + ":" + Twine(getOrdinal())).str();
}

LogicalResult
DeviceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                   DeviceKind kind, unsigned ordinal) {
  if (ordinal > static_cast<unsigned>(std::numeric_limits<int32_t>::max()))
    return emitError() << "device ordinal " << ordinal << " is out of range";
  if (kind == DeviceKind::CPU && ordinal != 0)
    return emitError() << "the host device 'cpu' has only ordinal 0, got "
                       << ordinal;
  return success();
}

// Syntax: `<` kind (`:` ordinal)? `>`, kind matched case-insensitively.
Attribute DeviceAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  SMLoc kindLoc = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseOptionalKeyword(&kindName)) {
    parser.emitError(kindLoc, "expected a device kind, one of: ")
        << listDeviceKinds();
    return {};
  }
  std::optional<DeviceKind> kind = symbolizeDeviceKind(kindName.lower());
  if (!kind) {
    parser.emitError(kindLoc, "unknown device kind '")
        << kindName << "'; valid kinds are: " << listDeviceKinds();
    return {};
  }

  int64_t ordinal = 0;
  if (succeeded(parser.parseOptionalColon())) {
    SMLoc ordinalLoc = parser.getCurrentLocation();
    OptionalParseResult parsed = parser.parseOptionalInteger(ordinal);
    if (!parsed.has_value()) {
      parser.emitError(ordinalLoc, "expected a device ordinal after '")
          << kindName << ":'; a device is kind[:ordinal], kind one of: "
          << listDeviceKinds();
      return {};
    }
    if (failed(*parsed))
      return {};
    if (ordinal < 0 || ordinal > std::numeric_limits<int32_t>::max()) {
      parser.emitError(ordinalLoc, "device ordinal must be in [0, ")
          << std::numeric_limits<int32_t>::max() << "], got " << ordinal
          << "; a device is kind[:ordinal], kind one of: "
          << listDeviceKinds();
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<DeviceAttr>(parser.getContext(), *kind,
                                       static_cast<unsigned>(ordinal));
}

void DeviceAttr::print(AsmPrinter &printer) const {
  printer << "<" << str() << ">";
}

//===----------------------------------------------------------------------===//
// Placement helpers
//===----------------------------------------------------------------------===//

Attribute mlir::etcopy::getPlacementAttr(Type type) {
  return TypeSwitch<Type, Attribute>(type)
      .Case([](BaseMemRefType t) { return t.getMemorySpace(); })
      .Case([](RankedTensorType t) { return t.getEncoding(); })
      .Default([](Type) { return Attribute(); });
}

Placement mlir::etcopy::getPlacement(Type type) {
  Attribute attr = getPlacementAttr(type);
  if (!attr)
    return {Placement::Kind::Host, nullptr};
  auto device = dyn_cast<DeviceAttr>(attr);
  if (!device)
    return {Placement::Kind::Unknown, nullptr};
  if (device.isHost())
    return {Placement::Kind::Host, nullptr};
  return {Placement::Kind::Device, device};
}

Type mlir::etcopy::withPlacement(Type type, DeviceAttr device) {
  Attribute attr = device && !device.isHost() ? device : Attribute();
  return TypeSwitch<Type, Type>(type)
      .Case([&](MemRefType t) {
        return MemRefType::Builder(t).setMemorySpace(attr);
      })
      .Case([&](RankedTensorType t) {
        return RankedTensorType::get(t.getShape(), t.getElementType(), attr);
      })
      .Default([](Type t) { return t; });
}

DeviceAttr mlir::etcopy::getDelegateDevice(Operation *op) {
  auto device =
      op->getAttrOfType<DeviceAttr>(EtCopyDialect::getDeviceAttrName());
  return device && !device.isHost() ? device : DeviceAttr();
}

bool mlir::etcopy::isStreamOrderedDelegate(Operation *op) {
  return getDelegateDevice(op) &&
         op->hasAttr(EtCopyDialect::getStreamOrderedAttrName());
}

void mlir::etcopy::removeEtCopyAttributes(Operation *op) {
  auto isEtCopy = [](NamedAttribute attr) {
    return attr.getName().getValue().starts_with("etcopy.");
  };
  for (NamedAttribute attr : llvm::to_vector(op->getDiscardableAttrs()))
    if (isEtCopy(attr))
      op->removeDiscardableAttr(attr.getName());
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return;
  // Wrappers that the LLVM lowering derives from a function (the
  // `_mlir_ciface_` one of `llvm.emit_c_interface`) copy its argument
  // attributes: these must go too.
  if (function.getAllArgAttrs())
    for (unsigned index = 0, e = function.getNumArguments(); index < e;
         ++index)
      for (NamedAttribute attr :
           llvm::to_vector(function.getArgAttrs(index)))
        if (isEtCopy(attr))
          function.removeArgAttr(index, attr.getName());
  if (function.getAllResultAttrs())
    for (unsigned index = 0, e = function.getNumResults(); index < e; ++index)
      for (NamedAttribute attr :
           llvm::to_vector(function.getResultAttrs(index)))
        if (isEtCopy(attr))
          function.removeResultAttr(index, attr.getName());
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

/// Verifies one entry of `etcopy.signature`: {kind, device, rank,
/// element_bytes}, describing a value of `type`.
static LogicalResult verifySignatureEntry(Operation *op, StringRef list,
                                          size_t index, Attribute entry) {
  StringRef name = EtCopyDialect::getSignatureAttrName();
  auto dict = dyn_cast<DictionaryAttr>(entry);
  auto getI64 = [&](StringRef key) {
    auto value = dict ? dict.getAs<IntegerAttr>(key) : IntegerAttr();
    return value && value.getType().isSignlessInteger(64) ? value
                                                          : IntegerAttr();
  };
  auto kind = dict ? dict.getAs<StringAttr>("kind") : StringAttr();
  auto device = dict ? dict.getAs<DeviceAttr>("device") : DeviceAttr();
  IntegerAttr rank = getI64("rank"), elementBytes = getI64("element_bytes");
  if (!dict || dict.size() != 4 || !kind || !device || !rank ||
      !elementBytes)
    return op->emitError() << "'" << name << "' " << list << " #" << index
                           << " must be {kind = \"memref\" | "
                              "\"unranked_memref\" | \"scalar\", device = "
                              "#etcopy.device<...>, rank = N : i64, "
                              "element_bytes = N : i64}, got "
                           << entry;
  if (!llvm::is_contained({"memref", "unranked_memref", "scalar"},
                          kind.getValue()))
    return op->emitError() << "'" << name << "' " << list << " #" << index
                           << " has unknown kind '" << kind.getValue()
                           << "'; valid kinds are: memref, unranked_memref, "
                              "scalar";
  if (rank.getInt() < 0 || (kind.getValue() != "memref" && rank.getInt()))
    return op->emitError() << "'" << name << "' " << list << " #" << index
                           << " has rank " << rank.getInt()
                           << "; a memref's rank is >= 0, other kinds have 0";
  if (elementBytes.getInt() <= 0)
    return op->emitError() << "'" << name << "' " << list << " #" << index
                           << " has element_bytes " << elementBytes.getInt()
                           << ", which is not positive";
  return success();
}

/// Verifies `etcopy.signature` on `op`: one entry per argument and result of
/// the function.
static LogicalResult verifySignatureAttr(Operation *op, Attribute value) {
  StringRef name = EtCopyDialect::getSignatureAttrName();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return op->emitError() << "'" << name
                           << "' may only be attached to a function";
  auto dict = dyn_cast<DictionaryAttr>(value);
  auto arguments = dict ? dict.getAs<ArrayAttr>("arguments") : ArrayAttr();
  auto results = dict ? dict.getAs<ArrayAttr>("results") : ArrayAttr();
  if (!dict || dict.size() != 2 || !arguments || !results)
    return op->emitError() << "'" << name
                           << "' must be {arguments = [...], results = "
                              "[...]}, got "
                           << value;
  // Once lowered to the LLVM dialect, the function's signature is the
  // calling convention's (a memref is several arguments): the attribute
  // keeps describing the source-level one.
  bool lowered = op->getName().getDialectNamespace() == "llvm";
  for (auto [list, entries, expected] :
       {std::tuple(StringRef("argument"), arguments,
                   function.getNumArguments()),
        std::tuple(StringRef("result"), results, function.getNumResults())}) {
    if (!lowered && entries.size() != expected)
      return op->emitError() << "'" << name << "' describes "
                             << entries.size() << " " << list
                             << "(s), but the function has " << expected;
    for (auto [index, entry] : llvm::enumerate(entries))
      if (failed(verifySignatureEntry(op, list, index, entry)))
        return failure();
  }
  return success();
}

LogicalResult EtCopyDialect::verifyRegionArgAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned argIndex,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != getWritesAttrName())
    return op->emitError() << "unknown etcopy argument attribute '" << name
                           << "'; known: " << getWritesAttrName();
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "'" << name
                           << "' is a unit attribute, got " << attr.getValue();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function || regionIndex != 0 || !getDelegateDevice(op))
    return op->emitError()
           << "'" << name
           << "' marks an argument of a delegate (a function whose "
           << getDeviceAttrName() << " names a device) that it writes";
  Type type = function.getArgumentTypes()[argIndex];
  if (!isa<RankedTensorType, MemRefType>(type))
    return op->emitError() << "'" << name << "' on argument #" << argIndex
                           << " of type " << type
                           << ": only ranked tensors and memrefs are written";
  return success();
}

LogicalResult EtCopyDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == getDeviceAttrName()) {
    if (!isa<DeviceAttr>(attr.getValue()))
      return op->emitError() << "'" << name
                             << "' must be an #etcopy.device attribute, got "
                             << attr.getValue();
    return success();
  }
  if (name == getPropagateAttrName()) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!dict)
      return op->emitError() << "'" << name
                             << "' must be a dictionary, got "
                             << attr.getValue();
    for (NamedAttribute entry : dict) {
      StringRef key = entry.getName().getValue();
      if (key != "skip_h2d_for_method_inputs" &&
          key != "skip_d2h_for_method_outputs")
        return op->emitError()
               << "unknown key '" << key << "' in '" << name
               << "'; valid keys are: skip_h2d_for_method_inputs, "
                  "skip_d2h_for_method_outputs";
      if (!isa<BoolAttr>(entry.getValue()))
        return op->emitError() << "'" << name << "' key '" << key
                               << "' must be a boolean, got "
                               << entry.getValue();
    }
    return success();
  }
  if (name == getArenasAttrName()) {
    auto arenas = dyn_cast<ArrayAttr>(attr.getValue());
    if (!arenas)
      return op->emitError() << "'" << name << "' must be an array, got "
                             << attr.getValue();
    for (auto [index, arena] : llvm::enumerate(arenas)) {
      auto dict = dyn_cast<DictionaryAttr>(arena);
      auto device = dict ? dict.getAs<DeviceAttr>("device") : DeviceAttr();
      // Sizes and alignments are signless i64, the runtime ABI's width.
      auto getI64 = [&](StringRef key) {
        auto value = dict ? dict.getAs<IntegerAttr>(key) : IntegerAttr();
        return value && value.getType().isSignlessInteger(64) ? value
                                                              : IntegerAttr();
      };
      IntegerAttr size = getI64("size");
      IntegerAttr alignment = getI64("alignment");
      if (!dict || dict.size() != 3 || !device || !size || !alignment)
        return op->emitError()
               << "'" << name << "' entry #" << index
               << " must be {device = #etcopy.device<...>, size = N : i64, "
                  "alignment = N : i64}, got "
               << arena;
      if (size.getValue().isNegative())
        return op->emitError() << "'" << name << "' entry #" << index
                               << " has a negative size " << size.getInt();
      if (alignment.getInt() <= 0 || !alignment.getValue().isPowerOf2())
        return op->emitError()
               << "'" << name << "' entry #" << index
               << " has alignment " << alignment.getInt()
               << ", which is not a power of two";
    }
    return success();
  }
  if (name == getSignatureAttrName())
    return verifySignatureAttr(op, attr.getValue());
  if (name == getStreamOrderedAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' is a unit attribute, got "
                             << attr.getValue();
    if (!isa<FunctionOpInterface>(op) || !getDelegateDevice(op))
      return op->emitError()
             << "'" << name << "' marks a delegate (a function whose "
             << getDeviceAttrName() << " names a device) that orders its "
             << "work on the stream it is given";
    return success();
  }
  if (name == getHostKernelAttrName()) {
    auto names = dyn_cast<ArrayAttr>(attr.getValue());
    if (!names || names.size() != 2 ||
        !llvm::all_of(names, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError() << "'" << name
                             << "' must be [\"<gpu.module>\", \"<kernel>\"], "
                                "got "
                             << attr.getValue();
    auto function = dyn_cast<FunctionOpInterface>(op);
    if (!function)
      return op->emitError() << "'" << name << "' marks a function";
    // The host version of a kernel takes the block id, thread id, block size
    // and grid size (x, y, z each) first, as `index` (integers of the index
    // width once lowered), then the kernel's own arguments, and returns
    // nothing: the lowering of launches passes them so.
    constexpr unsigned kNumIds = getNumHostKernelIds();
    ArrayRef<Type> inputs = function.getArgumentTypes();
    Type idType = inputs.empty() ? Type() : inputs.front();
    if (inputs.size() < kNumIds ||
        !(isa<IndexType>(idType) || idType.isSignlessInteger()) ||
        !llvm::all_equal(inputs.take_front(kNumIds)) ||
        !function.getResultTypes().empty())
      return op->emitError()
             << "'" << name << "' marks the host version of a kernel, which "
             << "takes " << kNumIds
             << " ids of one index or signless integer type (block id, "
                "thread id, block size, grid size: x, y, z each) before the "
                "kernel's arguments and returns nothing; got "
             << function.getFunctionType();
    return success();
  }
  if (name == getHostKernelUnsupportedAttrName()) {
    if (!isa<StringAttr>(attr.getValue()) ||
        !op->hasAttr(getHostKernelAttrName()))
      return op->emitError()
             << "'" << name << "' is a string on a function marked "
             << getHostKernelAttrName();
    return success();
  }
  if (name == getWaitsForOneOpAttrName()) {
    // The sync form of gpu.wait (this dialect does not depend on gpu's).
    if (!isa<UnitAttr>(attr.getValue()) ||
        op->getName().getStringRef() != "gpu.wait" ||
        op->getNumOperands() != 1 || op->getNumResults() != 0)
      return op->emitError()
             << "'" << name << "' is a unit attribute of a host gpu.wait "
             << "with one dependency";
    return success();
  }
  return op->emitError() << "unknown etcopy attribute '" << name
                         << "'; known: " << getDeviceAttrName() << ", "
                         << getPropagateAttrName() << ", "
                         << getArenasAttrName() << ", "
                         << getSignatureAttrName() << ", "
                         << getStreamOrderedAttrName() << ", "
                         << getHostKernelAttrName() << ", "
                         << getHostKernelUnsupportedAttrName() << ", "
                         << getWaitsForOneOpAttrName();
}
