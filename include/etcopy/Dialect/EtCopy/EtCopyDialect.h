//===- EtCopyDialect.h - etcopy dialect and attributes ------*- C++ -*-===//
//
// Declares the etcopy dialect, the DeviceKind enum and the DeviceAttr
// placement attribute, with helpers to read the placement of a memref or
// tensor type.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_ETCOPYDIALECT_H
#define ETCOPY_DIALECT_ETCOPY_ETCOPYDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h.inc"
#include "etcopy/Dialect/EtCopy/EtCopyEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "etcopy/Dialect/EtCopy/EtCopyAttributes.h.inc"

namespace mlir::etcopy {

/// The placement attribute carried by a shaped type: a memref's memory space
/// or a ranked tensor's encoding. Null when there is none.
Attribute getPlacementAttr(Type type);

/// Where a memref or tensor type lives, as understood by etcopy.
struct Placement {
  enum class Kind {
    /// No memory space or encoding, or `#etcopy.device<cpu>`.
    Host,
    /// An `#etcopy.device` of a non-host kind.
    Device,
    /// Some other memory space or encoding etcopy does not interpret.
    Unknown,
  };
  Kind kind;
  /// The device for Kind::Device, null otherwise.
  DeviceAttr device;

  bool isHost() const { return kind == Kind::Host; }
  bool isDevice() const { return kind == Kind::Device; }
};

/// Classifies the placement of `type` (a memref or ranked tensor type).
Placement getPlacement(Type type);

/// Returns `type` (memref or ranked tensor) placed on `device`: the memory
/// space or encoding is replaced; a host device yields no space/encoding.
Type withPlacement(Type type, DeviceAttr device);

/// The device a delegate runs on: the `etcopy.device` of `op` when it names a
/// device (not the host). Null for host code, including ops placed on
/// `#etcopy.device<cpu>`.
DeviceAttr getDelegateDevice(Operation *op);

/// True for a delegate marked `etcopy.stream_ordered`: it takes the stream of
/// its device as an extra last argument and the host does not wait around
/// calls to it (see docs/Delegates.md).
bool isStreamOrderedDelegate(Operation *op);

/// Removes what etcopy says about `op`, for code that no longer has
/// placements (the host reference lowering) or is lowered to LLVM: its
/// `etcopy.*` discardable attributes and, on a function, the `etcopy.*`
/// attributes of its arguments and results (`etcopy.writes`, which the
/// verifier accepts on delegates only). Other attributes stay.
void removeEtCopyAttributes(Operation *op);

} // namespace mlir::etcopy

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPYDIALECT_H
