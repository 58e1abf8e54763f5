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

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

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
  return op->emitError() << "unknown etcopy attribute '" << name
                         << "'; known: " << getDeviceAttrName() << ", "
                         << getPropagateAttrName() << ", "
                         << getArenasAttrName();
}
