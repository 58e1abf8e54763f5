//===- EtCopyDialect.td - etcopy dialect definition --------*- tablegen -*-===//
//
// The `etcopy` dialect: explicit, optimisable host<->device data movement.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_ETCOPYDIALECT_TD
#define ETCOPY_DIALECT_ETCOPY_ETCOPYDIALECT_TD

include "mlir/IR/DialectBase.td"

def EtCopy_Dialect : Dialect {
  let name = "etcopy";
  let cppNamespace = "::mlir::etcopy";
  let summary = "Explicit host<->device copies and device placement";
  let description = [{
    The `etcopy` dialect models where data lives and when it moves between
    the host and an accelerator, in the way ExecuTorch's device support does
    with its `et_copy._h2d_copy` / `_d2h_copy` ops.

    Placement is carried by one attribute, `#etcopy.device<kind:ordinal>`,
    used in three roles:

    * as the memory space of a memref: `memref<4xf32, #etcopy.device<cuda:0>>`;
    * as the encoding of a ranked tensor: `tensor<4xf32, #etcopy.device<cuda:0>>`;
    * as the discardable attribute `etcopy.device` on functions and other
      operations, naming the device they run on (a *delegate*).

    A memref without memory space, a tensor without encoding and anything
    placed on `#etcopy.device<cpu>` is host data.

    Data moves only through `etcopy.h2d` and `etcopy.d2h`. Each has a
    functional form on tensors (pure, so CSE, folding and loop-invariant code
    motion apply) and an out form on memrefs that writes a destination buffer,
    which is what bufferization produces and what the lowering to the GPU
    dialect and the CUDA Runtime API consumes.

    Discardable attributes verified by the dialect:

    * `etcopy.device = #etcopy.device<...>`: placement of a function or op;
    * `etcopy.propagate = {skip_h2d_for_method_inputs = true,
      skip_d2h_for_method_outputs = false}`: per-method configuration of
      `etcopy-propagate-device` (both keys optional, boolean values);
    * `etcopy.arenas = [{device = #etcopy.device<cuda:0>, size = 1024 : i64,
      alignment = 256 : i64}, ...]`: the memory arenas a function needs, as
      planned by `etcopy-plan-device-memory` (size >= 0, alignment a power
      of two);
    * `etcopy.signature = {arguments = [...], results = [...]}`: the
      signature of a method as the compiled code sees it, exported by
      `etcopy-export-signatures` for host programs (one
      `{kind = "memref", device = #etcopy.device<cuda:0>, rank = 2 : i64,
      element_bytes = 4 : i64}` per argument and result; `kind` is
      `"memref"`, `"unranked_memref"` or `"scalar"`, the rank of the last
      two is 0).

    * `etcopy.stream_ordered` (unit): on a delegate, says that it takes the
      stream of its device as an extra last argument (a `cudaStream_t`),
      orders all its work on that stream and returns without waiting for
      it; the host then neither waits before calling it nor after (see
      docs/Delegates.md).

    Argument attributes verified by the dialect:

    * `etcopy.writes` (unit): on a tensor or memref argument of a delegate,
      says that the delegate writes that argument. A delegate reads its
      other arguments and never writes them: bufferization relies on it to
      pass buffers without defensive copies (see `etcopy-bufferize`).
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the discardable placement attribute.
    static constexpr ::llvm::StringLiteral getDeviceAttrName() {
      return ::llvm::StringLiteral("etcopy.device");
    }
    /// Name of the discardable per-method propagation configuration.
    static constexpr ::llvm::StringLiteral getPropagateAttrName() {
      return ::llvm::StringLiteral("etcopy.propagate");
    }
    /// Name of the discardable planned-arena metadata of a function.
    static constexpr ::llvm::StringLiteral getArenasAttrName() {
      return ::llvm::StringLiteral("etcopy.arenas");
    }
    /// Name of the discardable exported-signature metadata of a method.
    static constexpr ::llvm::StringLiteral getSignatureAttrName() {
      return ::llvm::StringLiteral("etcopy.signature");
    }
    /// Name of the unit attribute marking a delegate that orders its work on
    /// the stream it is given.
    static constexpr ::llvm::StringLiteral getStreamOrderedAttrName() {
      return ::llvm::StringLiteral("etcopy.stream_ordered");
    }
    /// Name of the attribute marking the host version of a kernel
    /// (etcopy-outline-host-kernels): `[gpu.module name, kernel name]`.
    static constexpr ::llvm::StringLiteral getHostKernelAttrName() {
      return ::llvm::StringLiteral("etcopy.host_kernel");
    }
    /// How many ids a host version of a kernel takes before the kernel's
    /// arguments: the block id, thread id, block size and grid size, x, y
    /// and z each (the attribute's verifier checks them).
    static constexpr unsigned getNumHostKernelIds() { return 12; }
    /// Name of the attribute saying why a kernel has no host version.
    static constexpr ::llvm::StringLiteral getHostKernelUnsupportedAttrName() {
      return ::llvm::StringLiteral("etcopy.host_kernel_unsupported");
    }
    /// Name of the unit argument attribute marking a delegate argument that
    /// the delegate writes.
    static constexpr ::llvm::StringLiteral getWritesAttrName() {
      return ::llvm::StringLiteral("etcopy.writes");
    }
    /// Name of the unit attribute of a host `gpu.wait` with one dependency
    /// (convert-etcopy-to-gpu's wait for one copy) saying that the host
    /// needs only that op done, not the work queued after it on its stream
    /// (a plain `gpu.wait` waits for the whole stream of its dependencies).
    static constexpr ::llvm::StringLiteral getWaitsForOneOpAttrName() {
      return ::llvm::StringLiteral("etcopy.waits_for_one_op");
    }
  }];
}

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPYDIALECT_TD
