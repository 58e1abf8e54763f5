//===- EtCopyOps.td - etcopy operations --------------------*- tablegen -*-===//
//
// `etcopy.h2d`, `etcopy.d2h` and `etcopy.d2d`: host-to-device,
// device-to-host and device-to-device copies, each in a functional (tensor)
// form and an out (memref destination) form.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_ETCOPYOPS_TD
#define ETCOPY_DIALECT_ETCOPY_ETCOPYOPS_TD

include "etcopy/Dialect/EtCopy/EtCopyAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class EtCopy_Op<string mnemonic, list<Trait> traits = []>
    : Op<EtCopy_Dialect, mnemonic, traits>;

// The verifier constraints shared by both copy directions. `from`/`to` name
// the side that must be on the host and on a device respectively.
class EtCopy_CopyConstraints<string from, string to> {
  string text = [{

    Constraints (checked by the verifier, cited as `(C1)`… in its messages'
    source and in the tests of `invalid.mlir`):

    * (C1) Form: either the functional form (a ranked tensor source, a ranked
      tensor result, no destination) or the out form (a memref source, a
      memref destination, no result).
    * (C2) Direction: the }] # from # [{ must be host data (no memory space or
      encoding, or `#etcopy.device<cpu>`) and the }] # to # [{ must be on a
      non-host `#etcopy.device`. Other memory spaces are rejected.
    * (C3) Source and target have the same element type.
    * (C4) Source and target have the same rank.
    * (C5) Where a dimension is static on both sides, the sizes are equal.
      Dynamic dimensions may meet static ones; rank 0 and zero-sized shapes
      are valid.
  }];
}

// What canonicalisation does to copies that move no element, shared by the
// three ops' descriptions.
class EtCopy_EmptyCopyDoc {
  string text = [{
    An out-form copy whose source and destination types are both static and
    hold no element moves nothing: canonicalisation erases it. (CUDA rejects
    a batch that holds a copy of 0 bytes, so no empty copy may reach the
    lowering's batches; empty copies whose sizes are only known at run time
    are skipped by the runtime support.)
  }];
}

class EtCopy_CopyOp<string mnemonic>
    : EtCopy_Op<mnemonic, [
        DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
        DeclareOpInterfaceMethods<ConditionallySpeculatable>]> {
  let arguments = (ins
    AnyTypeOf<[AnyRankedTensor, AnyMemRef]>:$source,
    Optional<AnyMemRef>:$dest);
  let results = (outs Optional<AnyRankedTensor>:$result);

  // The target type follows `->`: it is the destination's type in the out
  // form and the result's type in the functional form.
  let assemblyFormat = [{
    $source (`,` $dest^)? attr-dict `:` type($source) `->`
    custom<CopyTargetType>(type($dest), type($result))
  }];

  let builders = [
    // Functional form: copies `source` into a new value of `resultType`.
    OpBuilder<(ins "::mlir::Type":$resultType, "::mlir::Value":$source), [{
      build($_builder, $_state, resultType, source, ::mlir::Value());
    }]>,
    // Out form: copies `source` into the buffer `dest`.
    OpBuilder<(ins "::mlir::Value":$source, "::mlir::Value":$dest), [{
      build($_builder, $_state, ::mlir::Type(), source, dest);
    }]>,
  ];

  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;

  let extraClassDeclaration = [{
    /// True for the functional (tensor) form.
    bool hasPureTensorSemantics() { return getResult() != nullptr; }
    /// The type copied to: the result's in the functional form, the
    /// destination's in the out form.
    ::mlir::ShapedType getTargetType() {
      ::mlir::Value target = getResult();
      if (!target)
        target = getDest();
      return ::llvm::cast<::mlir::ShapedType>(target.getType());
    }
    ::mlir::ShapedType getSourceType() {
      return ::llvm::cast<::mlir::ShapedType>(getSource().getType());
    }
  }];
}

def EtCopy_H2DOp : EtCopy_CopyOp<"h2d"> {
  let summary = "Copy data from the host to a device";
  let description = [{
    Copies host data to a device, the MLIR form of ExecuTorch's
    `et_copy._h2d_copy` (functional form) and `_h2d_copy.out` (out form).
    Like ExecuTorch's kernel, the device is taken from the **destination**:
    the result's encoding in the functional form, the destination's memory
    space in the out form.

    The functional form is pure: it produces a new tensor and has no side
    effects, so it can be CSE'd, hoisted out of loops and folded with a
    matching `etcopy.d2h` (`h2d(d2h(y)) -> y` when `y` already lives on the
    same device with the same type). The out form reads its source and
    writes its destination; bufferization turns the functional form into it.

    ```mlir
    func.func @upload(%h: tensor<2x?xf32>, %src: memref<2x3xf32>,
                      %dst: memref<2x3xf32, #etcopy.device<cuda:0>>)
        -> tensor<2x?xf32, #etcopy.device<cuda:0>> {
      // Functional form.
      %d = etcopy.h2d %h : tensor<2x?xf32> -> tensor<2x?xf32, #etcopy.device<cuda:0>>
      // Out form: writes %dst.
      etcopy.h2d %src, %dst : memref<2x3xf32> -> memref<2x3xf32, #etcopy.device<cuda:0>>
      return %d : tensor<2x?xf32, #etcopy.device<cuda:0>>
    }
    ```
  }] # EtCopy_CopyConstraints<"source", "target (result or destination)">.text
     # EtCopy_EmptyCopyDoc<>.text;
}

def EtCopy_D2HOp : EtCopy_CopyOp<"d2h"> {
  let summary = "Copy data from a device to the host";
  let description = [{
    Copies device data back to the host, the MLIR form of ExecuTorch's
    `et_copy._d2h_copy` and `_d2h_copy.out`. The device is taken from the
    **source**: its encoding or memory space.

    The functional form is pure and folds with a producing `etcopy.h2d`
    (`d2h(h2d(x)) -> x` when the types match). When every user of its result
    is an `etcopy.h2d` to another device, canonicalisation replaces each of
    them with one `etcopy.d2d` and drops the host copy. The out form reads
    its source and writes its destination.

    ```mlir
    func.func @download(%d: tensor<2x?xf32, #etcopy.device<cuda:0>>,
                        %src: memref<2x3xf32, #etcopy.device<cuda:0>>,
                        %dst: memref<2x3xf32>) -> tensor<2x?xf32> {
      // Functional form.
      %b = etcopy.d2h %d : tensor<2x?xf32, #etcopy.device<cuda:0>> -> tensor<2x?xf32>
      // Out form: writes %dst.
      etcopy.d2h %src, %dst : memref<2x3xf32, #etcopy.device<cuda:0>> -> memref<2x3xf32>
      return %b : tensor<2x?xf32>
    }
    ```
  }] # EtCopy_CopyConstraints<"target (result or destination)", "source">.text
     # EtCopy_EmptyCopyDoc<>.text;
}

def EtCopy_D2DOp : EtCopy_CopyOp<"d2d"> {
  let summary = "Copy data from one device to another";
  let description = [{
    Moves data between two devices directly, without staging it on the host:
    a peer copy (`cudaMemcpyPeerAsync`), which the driver routes over
    NVLink or PCIe peer-to-peer where the devices allow it. ExecuTorch has no
    such op: a move from `cuda:0` to `cuda:1` there is a `_d2h_copy`
    followed by an `_h2d_copy`. Canonicalisation turns such a pair into one
    `etcopy.d2d` per device reached when nothing else uses the host copy.

    The functional form is pure and folds a round trip
    (`d2d(d2d(x)) -> x` when `x` already has the result's type); the out form
    reads its source and writes its destination.

    ```mlir
    func.func @move(%a: tensor<8xf16, #etcopy.device<cuda:0>>,
                    %src: memref<8xf16, #etcopy.device<cuda:1>>,
                    %dst: memref<8xf16, #etcopy.device<cuda:2>>)
        -> tensor<8xf16, #etcopy.device<cuda:1>> {
      // Functional form.
      %b = etcopy.d2d %a : tensor<8xf16, #etcopy.device<cuda:0>> -> tensor<8xf16, #etcopy.device<cuda:1>>
      // Out form: writes %dst.
      etcopy.d2d %src, %dst : memref<8xf16, #etcopy.device<cuda:1>> -> memref<8xf16, #etcopy.device<cuda:2>>
      return %b : tensor<8xf16, #etcopy.device<cuda:1>>
    }
    ```

    Constraints (checked by the verifier, cited as `(C1)`… in its messages'
    source and in the tests of `invalid.mlir`):

    * (C1) Form: either the functional form (a ranked tensor source, a ranked
      tensor result, no destination) or the out form (a memref source, a
      memref destination, no result).
    * (C2) Direction: the source and the target (result or destination) are
      each on a non-host `#etcopy.device`, and not on the same device (a
      copy within one device moves no data between devices: `memref.copy`).
      Other memory spaces are rejected.
    * (C3) Source and target have the same element type.
    * (C4) Source and target have the same rank.
    * (C5) Where a dimension is static on both sides, the sizes are equal.
      Dynamic dimensions may meet static ones; rank 0 and zero-sized shapes
      are valid.
  }] # EtCopy_EmptyCopyDoc<>.text;
}

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPYOPS_TD
