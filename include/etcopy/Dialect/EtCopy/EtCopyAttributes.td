//===- EtCopyAttributes.td - etcopy attributes -------------*- tablegen -*-===//
//
// The device-placement attribute `#etcopy.device<kind:ordinal>` and the enum
// of device kinds it is built from.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_ETCOPYATTRIBUTES_TD
#define ETCOPY_DIALECT_ETCOPY_ETCOPYATTRIBUTES_TD

include "etcopy/Dialect/EtCopy/EtCopyDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

// Adding a device kind is one line here: the parser, the printer, the list of
// valid kinds in diagnostics and the runtime ABI value all derive from it.
def EtCopy_DeviceKind : I32EnumAttr<"DeviceKind", "kind of a device", [
    I32EnumAttrCase<"CPU", 0, "cpu">,
    I32EnumAttrCase<"CUDA", 1, "cuda">,
  ]> {
  let cppNamespace = "::mlir::etcopy";
  let genSpecializedAttr = 0;
}

def EtCopy_DeviceAttr : AttrDef<EtCopy_Dialect, "Device"> {
  let mnemonic = "device";
  let summary = "Placement of data or computation on a device";
  let description = [{
    Names one device: a kind (`cpu`, `cuda`) and an ordinal (default 0).
    Kinds are matched case-insensitively, like ExecuTorch's device strings;
    the canonical spelling is lower case, with the ordinal always printed for
    accelerators (`cuda:0`) and never for the host (`cpu`).

    ```mlir
    // As a memref memory space and a tensor encoding.
    func.func private @placed(memref<4xf32, #etcopy.device<cuda:1>>,
                              tensor<4xf32, #etcopy.device<cuda>>)
        attributes {etcopy.device = #etcopy.device<cuda:0>}
    ```

    The same attribute is the memory space of memrefs, the encoding of
    tensors and the value of the discardable `etcopy.device` attribute. The
    host has a single device, `cpu` (ordinal 0).
  }];
  let parameters = (ins "::mlir::etcopy::DeviceKind":$kind,
                        "unsigned":$ordinal);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True for the host device (`cpu`).
    bool isHost() const { return getKind() == DeviceKind::CPU; }
    /// Spelling used in diagnostics and runtime messages: `cuda:0`, `cpu`.
    std::string str() const;
  }];
}

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPYATTRIBUTES_TD
