//===- Passes.td - etcopy conversion passes ----------------*- tablegen -*-===//
//
// Every etcopy conversion pass: etcopy to the gpu dialect, the gpu dialect's
// runtime ops to CUDA Runtime API calls, and etcopy to host-only code.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_CONVERSION_PASSES_TD
#define ETCOPY_CONVERSION_PASSES_TD

include "etcopy/Support/PassBase.td"

def ConvertEtCopyToGPU : EtCopyPass<"convert-etcopy-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower out-form etcopy copies and device allocations to the "
                "gpu dialect";
  let description = [{
    Rewrites memref-level IR so that every operation on device memory is an
    upstream gpu-dialect op:

    * out-form `etcopy.h2d` / `etcopy.d2h`, and `memref.copy` with a device
      side, become `gpu.memcpy`;
    * `memref.alloc` / `memref.dealloc` in an `#etcopy.device` memory space
      become `gpu.alloc` / `gpu.dealloc`; `memref.alloca` of device memory
      is rejected (device memory cannot live on the host stack).

    By default the ops are emitted in their async form, chained by
    `!gpu.async.token`s within each block; a `gpu.wait` is placed only where
    the host must observe the copies: before a host op that reads or writes
    host memory a pending copy may touch (by local alias analysis), before an
    op with unknown effects (e.g. a call, except to an
    `etcopy.stream_ordered` delegate, whose work joins the chain), before
    region-holding ops and before the block's terminator (data leaving the
    block). `async=false`
    emits the sync forms instead. An access is compared only with the copies
    in flight whose host memory it may alias (grouped by the allocation or
    argument they are views of), and with at most 64 of them: beyond that
    the host waits, which keeps the pass linear in the size of a block.

    A free of host memory that a copy in flight may use makes no wait: it
    moves to just after the next host wait (`FreeDeferred`). When more than
    8 such frees are pending at a host `memref.alloc` (a host running ahead
    of the device, uploading temporaries between `etcopy.stream_ordered`
    delegate calls), the host first waits for the last of their copies that
    has device work queued after it, alone: `gpu.wait [%copy]
    {etcopy.waits_for_one_op}`, which `convert-gpu-to-cuda-runtime` lowers
    to an event recorded after the copy and `cudaEventSynchronize`, so the
    work after it runs on; the frees follow the wait (`FreeAfterCopy`).
    Without the attribute a `gpu.wait` waits for the whole stream of its
    dependency.

    Host ops that read or write device memory (`memref.load` of a
    `#etcopy.device` memref, say) are compile-time errors, as are functional
    (tensor) copies, which must be bufferized first.

    With `memory-space=gpu`, `#etcopy.device<cuda:0>` memory spaces are
    replaced by `#gpu.address_space<global>` (and `#etcopy.device<cpu>` by
    no memory space) in every type of the module, function signatures
    included, and the `etcopy.*` discardable attributes and argument
    attributes are dropped, so that memref-level output needs no etcopy
    dialect at all; a non-zero ordinal
    cannot be expressed that way and is an error.

    ```mlir
    // An out-form copy into a device allocation, read back on the host.
    func.func @read_back(%h: memref<4xf32>, %i: index) -> f32 {
      %d = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
      etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
      etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
      memref.dealloc %d : memref<4xf32, #etcopy.device<cuda:0>>
      %v = memref.load %h[%i] : memref<4xf32>
      return %v : f32
    }
    ```

    becomes

    ```mlir
    // One chain of tokens; the host waits once, before the load.
    func.func @read_back(%h: memref<4xf32>, %i: index) -> f32 {
      %t0 = gpu.wait async
      %d, %t1 = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
      %t2 = gpu.memcpy async [%t1] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
      %t3 = gpu.memcpy async [%t2] %h, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
      %t4 = gpu.dealloc async [%t3] %d : memref<4xf32, #etcopy.device<cuda:0>>
      gpu.wait [%t4]
      %v = memref.load %h[%i] : memref<4xf32>
      return %v : f32
    }
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"async", "async", "bool", /*default=*/"true",
           "Emit async gpu ops chained by tokens (false: sync forms) "
           "(default: true)">,
    Option<"memorySpace", "memory-space", "::mlir::etcopy::OutputMemorySpace",
           /*default=*/"::mlir::etcopy::OutputMemorySpace::EtCopy",
           "Memory space of device memrefs in the output (default: etcopy)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::etcopy::OutputMemorySpace::EtCopy, "etcopy",
                        "keep #etcopy.device<...>"),
             clEnumValN(::mlir::etcopy::OutputMemorySpace::GPU, "gpu",
                        "#gpu.address_space<global> (cuda:0 only)"))}]>,
  ];
  let statistics = [
    Statistic<"numCopies", "copies", "Number of gpu.memcpy ops created">,
    Statistic<"numAllocs", "allocs", "Number of gpu.alloc ops created">,
    Statistic<"numWaits", "waits", "Number of host waits (gpu.wait) inserted">,
  ];
}

def ConvertGPUToCUDARuntime
    : EtCopyPass<"convert-gpu-to-cuda-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower gpu runtime ops to checked CUDA Runtime API calls, and "
                "the rest of the module to the LLVM dialect";
  let description = [{
    Lowers `gpu.alloc` (including `host_shared`), `gpu.dealloc`,
    `gpu.memcpy`, `gpu.memset` and `gpu.wait`, in both their sync and async
    forms, to calls of the CUDA Runtime API (`cudaMallocAsync`,
    `cudaFreeAsync`, `cudaMemcpyAsync`, `cudaMemcpy2DAsync`,
    `cudaMemsetAsync`, streams and events; 16- and 32-bit memsets call the
    driver's `cuMemsetD16Async`/`cuMemsetD32Async`, found at run time with
    `cudaGetDriverEntryPointByVersion`), and everything else in the module
    to the LLVM dialect with the dialects' own conversion patterns, as
    `gpu-to-llvm` does. Memory spaces (`#etcopy.device<...>`,
    `#gpu.address_space<...>`, integers) are converted in the type converter:
    host code sees device memory through generic pointers.

    Each op becomes one call of a checked wrapper of the runtime support
    (`__etcopy_memcpy`, `__etcopy_malloc`, ...), C code compiled to LLVM IR
    when etcopy is built and copied into the module on demand; the calls'
    last arguments are the op's file, line and column (consecutive copies
    share a call, below, which takes each copy's line and column). The output needs only
    libcudart (or the CUDA simulator) and libc. The runtime support and the
    globals go in the module the pass runs on, so a `builtin.module` nested
    in it that holds any op is an error: run the pass on that module
    instead (`-p 'builtin.module(builtin.module(convert-gpu-to-cuda-runtime))'`).

    Streams: each function that performs device work gets the stream of
    each device it touches at entry from the stream provider
    `etcopy_get_stream` (weak: by default one non-blocking stream per
    device, created on first use and kept across calls), and synchronises
    them at each return (skipped when the host has just waited for the
    stream). All of the function's device work is ordered on that stream,
    so tokens become the stream itself and a `gpu.wait async` costs
    nothing; work on two devices is joined with events. The host
    synchronises only at a sync-form op, at a sync `gpu.wait` and at
    returns. A call to an `etcopy.stream_ordered` delegate gets the stream
    of the delegate's device as an extra last argument (`!llvm.ptr`, also
    appended to the delegate's signature).

    Kernels: each `gpu.binary` (as `gpu-module-to-binary` makes it, PTX,
    cubin or fatbin) becomes its image and a library handle that the first
    launch loads with `cudaLibraryLoadData` (once per process, thread-safe;
    unloaded at exit); each `gpu.launch_func`, sync or async, becomes a
    look-up of its kernel (`cudaLibraryGetKernel`, cached) and a
    `cudaLaunchKernel` on the function's stream, ordered with the copies
    like a copy, its memrefs passed as `convert-gpu-to-nvvm` expands them
    (full descriptors). The host versions of the kernels
    (`etcopy-outline-host-kernels`) are appended to the image, where the CUDA
    simulator finds them; CUDA ignores them.

    Every `cudaError_t` is checked. On failure the generated code calls
    `etcopy_cuda_error(err, location, call, what, bytes)`, defined weak in the
    module: it prints the op's source location, the CUDA call, the direction
    and byte count and CUDA's error name and string, then exits with status 1.
    An embedding program replaces the policy by defining that symbol.

    Copies of non-contiguous memrefs (subviews, strided layouts) go through a
    function of the runtime support that reads both descriptors and copies
    with `memref.copy`'s semantics, whatever the strides (zero, negative,
    overlapping) and even between views of one buffer: contiguous runs with
    `cudaMemcpyAsync`, pitched rows with `cudaMemcpy2DAsync` where the
    pitches are valid and the spans apart, element by element where the
    destination overlaps itself, through a temporary buffer where source
    and destination overlap; never as if contiguous. Where either side of a
    copy has a dynamic size, the sizes are compared at run time and a
    mismatch is reported (location, dimension, both sizes) before any byte
    moves.

    With `batch-copies` (the default), a run of independent copies of one
    stream (consecutive `gpu.memcpy` ops of a block with nothing between
    them that touches memory or waits, holds a block or is inline assembly,
    none writing what another reads or writes) is one
    `cudaMemcpyBatchAsync`; a failure of the batch is
    reported at the first copy of the run. Consecutive copies of one stream
    that no batch holds share one call of the runtime support, up to four
    (`__etcopy_memcpy_x2` to `_x4`), which makes their `cudaMemcpyAsync`
    calls in order and reports each at its own location: fewer calls to
    build, verify and print. A copy between the memory of two
    explicit devices is a `cudaMemcpyPeerAsync`, after peer access has been
    enabled once per pair of devices where the devices allow it. Host
    buffers that the function allocates, copies to or from a device and
    frees itself (transfer buffers) come from a cache of host blocks that
    their frees return to and later allocations of the same size reuse
    (one per program, released at exit): pageable blocks (`aligned_alloc`;
    `ETCOPY_PAGEABLE_HOST_CACHE_BYTES` bounds the idle bytes, 1 GiB by
    default), or with `pinned-host-memory` pinned ones (`cudaMallocHost`;
    `ETCOPY_PINNED_HOST_CACHE_BYTES`). Like `free()`, a free does not wait
    for the device: the program has waited for the copies using the
    buffer, as `convert-etcopy-to-gpu` makes it. At the first stream
    request for a device, the release threshold of the device's memory
    pool is raised so that freed device memory stays for reuse (the pool
    policy, `ETCOPY_POOL_RELEASE_THRESHOLD`).

    With `cuda-graphs`, a function whose device work is stream-ordered from
    its first device op to its last (copies of device memory or of pinned
    transfer buffers, memsets, kernels, stream-ordered delegates and
    allocations, in one block, on one device, with no host wait, no plain
    delegate and no host work between them, and nothing it makes used after
    it) records that work into a CUDA graph at its first call (stream
    capture on a private stream of the function) and replays it with one
    `cudaGraphLaunch` while the work's inputs stay the same: the addresses
    and dynamic layouts of the memrefs it reads, its scalars and the
    function's stream; other inputs capture again. Its copies are not
    batched (CUDA 13 cannot capture `cudaMemcpyBatchAsync`). Every other
    function is lowered as above, with a `GraphNotCaptured` remark that says
    why. Linear in the size of the functions.

    The pass is linear in the size of the module, and the code it emits
    small: per op one call (consecutive copies share one) and its line
    number; constants, file names and
    scratch slots are shared per function (one op per constant value),
    messages per module; other host buffers come from `aligned_alloc`. It
    folds the unrealized casts its patterns leave that cancel out, as
    `reconcile-unrealized-casts` would, so that a pipeline needs no further
    pass over the lowered module.

    Anything the pass cannot lower is a compile-time error.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
  let options = [
    Option<"batchCopies", "batch-copies", "bool", /*default=*/"true",
           "Lower each run of independent copies on one stream to one "
           "cudaMemcpyBatchAsync (default: true)">,
    Option<"pinnedHostMemory", "pinned-host-memory", "bool",
           /*default=*/"false",
           "Allocate the host buffers that the function copies to or from a "
           "device and frees itself with cudaMallocHost (freed with "
           "cudaFreeHost; default: false)">,
    Option<"cudaGraphs", "cuda-graphs", "bool", /*default=*/"false",
           "Capture the stream work of each function whose work is "
           "stream-ordered into a CUDA graph at its first call and replay it "
           "with one cudaGraphLaunch while its inputs stay the same "
           "(default: false)">,
    Option<"useBarePointersForKernels", "use-bare-pointers-for-kernels",
           "bool", /*default=*/"false",
           "Pass each memref kernel argument as its aligned pointer alone, "
           "for kernels compiled with convert-gpu-to-nvvm's "
           "use-bare-ptr-memref-call-conv; such kernels take only memrefs "
           "with a static shape and the identity layout (default: false)">,
  ];
  let statistics = [
    Statistic<"numStreams", "streams", "Number of functions given streams">,
    Statistic<"numRuntimeCalls", "runtime-calls",
              "Number of CUDA Runtime API call sites emitted">,
    Statistic<"numBatches", "batches",
              "Number of runs of copies lowered to one cudaMemcpyBatchAsync">,
    Statistic<"numBatchedCopies", "batched-copies",
              "Number of copies lowered as part of a batch">,
    Statistic<"numPinnedBuffers", "pinned-buffers",
              "Number of host buffers allocated with cudaMallocHost">,
  ];
}

def EtCopyHostToLLVM : EtCopyPass<"etcopy-host-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Lower a module without device work to the LLVM dialect in "
                "one conversion";
  let description = [{
    The last stage of `--etcopy-to-host`: every op of the module becomes
    the LLVM dialect in one dialect conversion, with `func`'s patterns
    (calls resolved through a symbol table, so a method calling thousands
    of functions costs one lookup per call) and each loaded dialect's
    `ConvertToLLVMPatternInterface` patterns, as `convert-func-to-llvm`
    followed by `convert-to-llvm` would. What the conversion leaves is then
    cleaned up as in `convert-gpu-to-cuda-runtime`: one op per constant
    value, sizes of scalar elements and their padding folded, a descriptor
    field read once per block, dead ops erased, the casts that cancel out
    folded (no `reconcile-unrealized-casts` needed). Host buffers come from
    `aligned_alloc` and are freed with `free`.

    Linear in the size of the module. An op no pattern lowers is left for
    `etcopy-finalize-llvm` to report; an op or function that uses memory on
    a device (a memref on `#etcopy.device` other than `cpu`) is an error
    naming it and the type, since device work is
    `convert-gpu-to-cuda-runtime`'s. The pass shares its conversion set-up
    and clean-up with `convert-gpu-to-cuda-runtime`, and its source file
    (`lib/Conversion/GPUToCUDARuntime/GPUToCUDARuntime.cpp`).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def EtCopyLowerHostCode
    : EtCopyPass<"etcopy-lower-host-code", "::mlir::ModuleOp"> {
  let summary = "Lower the host code's linalg, views, affine, scf and math "
                "to what the LLVM conversion takes, running only the stages "
                "the module needs";
  let description = [{
    The host-side lowering of `--etcopy-to-cuda` and `--etcopy-to-host`:
    upstream's passes, in this order, each run only when the module holds
    an op it rewrites:

    | stage | runs when the module holds |
    |---|---|
    | `convert-linalg-to-loops` | an op of the `linalg` dialect |
    | `expand-strided-metadata` | an op one of its patterns is rooted at (`memref.subview`, `memref.expand_shape`, `memref.extract_strided_metadata`, ...) |
    | `lower-affine` | an op of the `affine` dialect |
    | `convert-scf-to-cf` | an op of the `scf` dialect that the backward sweep (below) leaves: only `scf.parallel` and `scf.forall` |
    | `convert-math-to-llvm`, `convert-math-to-libm` | an op of the `math` dialect |

    Affine is lowered after the views are expanded (which makes
    `affine.apply`) and before `scf` (which lowering affine makes). A stage
    that runs behaves exactly as the upstream pass (it appears nested in
    `--mlir-timing`); a skipped stage would have found nothing to rewrite.
    (Skipping `expand-strided-metadata` also skips the folding and dead-op
    removal its greedy driver does along the way, which the LLVM conversion
    does not need.) On memref-level input, where most stages have nothing to
    do, this saves a walk, a dialect conversion and a verification of the
    whole module per stage.

    Before `convert-scf-to-cf`, the ops it turns straight into branches
    (`scf.for`, `scf.if`, `scf.while`, `scf.execute_region`,
    `scf.index_switch`) are lowered by its own patterns, applied in one
    sweep that visits each block's ops last to first, an op before the
    ops nested in it. Each pattern splits the op's block and moves the
    ops after the op to the new block: in that order those are only the
    ops up to the next op already lowered, so each op moves once.
    Upstream's conversion visits them in program order, moving every
    later op of the block each time and recording each move for rollback:
    quadratic time and memory in a block of many loops or conditionals,
    such as a method alternating delegate calls with elementwise host
    code (each glue op a loop: `--etcopy-to-cuda` on 1 500 such calls took
    4.9 s and 1.07 GiB, on 3 000 calls 61 s and 3.9 GB; now 0.8 to 0.9 s
    of CPU time and 140 MiB, and 1.4 to 2.0 s and 164 to 168 MiB, see
    docs/CompileTime.md) or the conditional frees that lowering a large
    `bufferization.dealloc` makes (3 000 groups of delegate calls: 76 s
    and 23 GB; now 0.3 s). The output is the pass's, byte for byte; what
    the sweep leaves (`scf.parallel` and `scf.forall`, which become other
    `scf` ops, and the ops inside them) is left to the pass itself.

    Cost: one walk of the module to find what it holds, again after each
    stage that ran, plus the stages that run; the sweep is linear in the
    number of ops. Its statistics count the ops it lowered and the ops its
    rewrites moved: about the ops of the blocks it split, each moved once,
    where program order moves each op once per lowered op before it. A
    `Summary` remark (analysis; category `etcopy`, subcategory
    `etcopy-lower-host-code`, shown by `--remarks-filter=etcopy`) reports
    them in builds whose statistics are compiled out.
  }];
  let statistics = [
    Statistic<"numSweptOps", "swept-ops",
              "Number of scf ops the backward sweep lowered to branches">,
    Statistic<"numMovedOps", "moved-ops",
              "Number of ops the sweep's rewrites moved to another block">,
  ];
}

def ConvertEtCopyToHost : EtCopyPass<"convert-etcopy-to-host", "::mlir::ModuleOp"> {
  let summary = "Lower etcopy to host-only code: the CPU reference semantics";
  let description = [{
    The reference semantics of every copy, as ExecuTorch's tracing
    implementation has it (a copy is a clone on the CPU): out-form
    `etcopy.h2d` / `etcopy.d2h` become `memref.copy`; a functional copy is
    replaced by its source (a `tensor.cast` where the static shapes differ).
    Then every `#etcopy.device` memory space and tensor encoding is erased
    from the module's types (function signatures included) and the
    `etcopy.*` discardable attributes and argument attributes are dropped
    (a delegate is a host function now; the buffers its calls write, as
    `etcopy.writes` said, were chosen by bufferization before), so that the
    module runs with no CUDA at all and lowers with the standard host
    pipeline.

    Linear in the size of the module: one replacement of the module's types
    and attributes (each distinct type rewritten once), one walk dropping
    the attributes, and one visit of each op by the copy patterns, which
    neither fold nor simplify regions.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

def EtCopyOutlineHostKernels
    : EtCopyPass<"etcopy-outline-host-kernels", "::mlir::ModuleOp"> {
  let summary = "Compile each gpu.module kernel for the host too, and "
                "prepare the gpu.modules for the NVVM lowering";
  let description = [{
    The first kernel stage of `--etcopy-to-cuda` and `--etcopy-to-host`.
    Each kernel (`gpu.func ... kernel`) of each `gpu.module` gets a host
    version: a `func.func @__etcopy_host_kernel.<module>.<kernel>` taking
    the block id, thread id, block size and grid size (x, y, z each, as
    `index`) before the kernel's arguments, with the kernel's body, in
    which `gpu.block_id`, `gpu.thread_id`, `gpu.block_dim`, `gpu.grid_dim`
    and `gpu.global_id` read those arguments. It carries
    `etcopy.host_kernel = [module, kernel]`, by which
    `convert-gpu-to-cuda-runtime` appends it to the binary's image for the
    CUDA simulator (docs/CUDALowering.md, "Kernels").

    Host versions run one thread after another. A kernel whose threads must
    run together (it uses `gpu.barrier`, shared memory: workgroup
    attributions or `#gpu.address_space<workgroup>` memrefs, or any other
    `gpu` op, such as warp shuffles and subgroup operations) or that calls a
    function gets an empty host version marked
    `etcopy.host_kernel_unsupported = "<why>"`: the simulator rejects its
    launches with that reason.

    Then the `gpu.module`s are made ready for `convert-gpu-to-nvvm`: the
    `#etcopy.device` memory space is erased from every type in them, and
    each `gpu.launch_func` operand of such a type is cast to it
    (`memref.memory_space_cast`), so that launches still match their
    kernels.

    With `launch-on-host` (the reference build, `--etcopy-to-host`), each
    sync-form `gpu.launch_func` is instead replaced by loops over the grid
    and the block (z, y, x; blocks outermost) calling the host version, and
    the `gpu.module`s are erased; a kernel without host version, or an
    async launch, is an error.

    Linear in the size of the module.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"launchOnHost", "launch-on-host", "bool", /*default=*/"false",
           "Replace each gpu.launch_func by loops calling the kernel's host "
           "version and erase the gpu.modules (default: false)">,
  ];
}

def EtCopyCompileKernels
    : EtCopyPass<"etcopy-compile-kernels", "::mlir::ModuleOp"> {
  let summary = "Compile the module's gpu.modules with upstream's NVPTX "
                "path, if it has any";
  let description = [{
    The second kernel stage of `--etcopy-to-cuda`, after
    `etcopy-outline-host-kernels`. When the module holds a `gpu.module`, it
    runs upstream's NVPTX path on it, as a pipeline of upstream passes that
    behave exactly as they do on their own:

    1. `nvvm-attach-target{chip=<chip>}`;
    2. in each `gpu.module`: `convert-scf-to-cf`, `expand-strided-metadata`,
       `lower-affine`,
       `convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=<use-bare-pointers-for-kernels>}`,
       `reconcile-unrealized-casts` (the kernels' structured control flow,
       views and affine maps first, as upstream's `gpu-lower-to-nvvm-pipeline`
       lowers them);
    3. `gpu-module-to-binary{format=<format>}`: each `gpu.module` becomes a
       `gpu.binary`.

    A module without `gpu.module` is left as it is and every analysis is
    preserved, so that the pass manager does not verify it again. Those
    upstream passes leave such a module unchanged too, but the pass manager
    cannot know it and verified the whole module after each: 6 % of the
    work of `--etcopy-to-cuda` on a module of 20 000 copies
    (docs/CompileTime.md).

    Linear in the size of the module when it has no `gpu.module` (one look
    at its top-level ops); otherwise what the upstream passes cost.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The GPU architecture the kernels are compiled for "
           "(nvvm-attach-target's chip; default: sm_90)">,
    Option<"format", "format", "std::string", /*default=*/"\"isa\"",
           "What each gpu.module becomes (gpu-module-to-binary's format): "
           "isa (PTX), bin (a cubin) or fatbin (default: isa)">,
    Option<"useBarePointersForKernels", "use-bare-pointers-for-kernels",
           "bool", /*default=*/"false",
           "Compile the kernels with convert-gpu-to-nvvm's "
           "use-bare-ptr-memref-call-conv: each memref parameter is its "
           "aligned pointer alone (default: false)">,
  ];
}

#endif // ETCOPY_CONVERSION_PASSES_TD
