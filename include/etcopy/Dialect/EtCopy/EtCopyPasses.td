//===- EtCopyPasses.td - etcopy transformation passes ------*- tablegen -*-===//
//
// Passes that place copies at delegate boundaries (etcopy-propagate-device)
// and remove every copy that moves nothing new (etcopy-optimize-transfers).
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_TD
#define ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_TD

include "etcopy/Support/PassBase.td"

def EtCopyPropagateDevice : EtCopyPass<"etcopy-propagate-device", "::mlir::ModuleOp"> {
  let summary = "Insert copies at delegate boundaries and propagate devices "
                "into types";
  let description = [{
    The MLIR counterpart of ExecuTorch's `PropagateDevicePass`. A *delegate*
    is a `func.func` (declaration or definition) carrying
    `etcopy.device = #etcopy.device<cuda:N>`; every `func.call` to it runs on
    that device. Everything else is host code. A *method* is a public host
    function: an entry point a runtime calls.

    The pass gives every tensor of host code a placement and materialises
    each move with one functional `etcopy.h2d` or `etcopy.d2h`:

    * The device propagates into types: the delegate's signature (and, for a
      definition, every tensor of its body and of the functions it calls)
      and the results of the calls to it become
      `tensor<..., #etcopy.device<cuda:N>>`.
    * A value is copied once per device it must reach, whatever the number
      of its users there, at the latest point that dominates all of them
      (just before the first one), and in front of every loop the value is
      invariant in. A value produced on a device and consumed on the same
      device stays there; a move between devices goes through the host
      (`etcopy.d2h` then `etcopy.h2d`), sharing the host copy with host
      users.
    * Values that control flow forwards (`scf.for` and `scf.while`
      iteration arguments and results, `scf.if`/`scf.index_switch` results,
      block arguments of `cf` branches) and the signatures of private host
      functions called only directly get the placement that needs the
      fewest copies, loops weighing more than straight-line code: a state
      that a loop updates on a device stays on that device across
      iterations.
    * With `skip-h2d-for-method-inputs`, a method argument whose every user
      needs it on one device becomes a device-typed argument; an argument
      also used on the host or on another device keeps its copies and a
      missed remark (`ArgumentKeptOnHost`) says why. With `skip-d2h-for-method-outputs`, a method result
      produced on a device stays device-typed (host users inside the method
      still get their `etcopy.d2h`). A method's
      `etcopy.propagate = {skip_h2d_for_method_inputs = ...,
      skip_d2h_for_method_outputs = ...}` overrides both options for it.

    Inconsistent input is diagnosed, never guessed: a delegate signature
    naming another device, memrefs or unranked tensors, a call placed on
    another device than its callee, a function called both from host code
    and from device code (or from two devices), a delegate used other than
    by `func.call`, a value whose encoding is not an `#etcopy.device` that
    would have to move.

    Example (`cuda:0`, with the options at their defaults):

    ```mlir
    func.func private @encode(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        attributes {etcopy.device = #etcopy.device<cuda:0>}
    func.func private @decode(tensor<4xf32>) -> tensor<4xf32>
        attributes {etcopy.device = #etcopy.device<cuda:0>}
    func.func @method(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
      %e = func.call @encode(%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %d = func.call @decode(%e) : (tensor<4xf32>) -> tensor<4xf32>
      return %d : tensor<4xf32>
    }
    ```

    becomes

    ```mlir
    func.func private @encode(tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
        attributes {etcopy.device = #etcopy.device<cuda:0>}
    func.func private @decode(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
        attributes {etcopy.device = #etcopy.device<cuda:0>}
    func.func @method(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
      %0 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
      %1 = etcopy.h2d %w : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
      %e = func.call @encode(%0, %1) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
      %d = func.call @decode(%e) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
      %2 = etcopy.d2h %d : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
      return %2 : tensor<4xf32>
    }
    ```

    and with `skip-h2d-for-method-inputs skip-d2h-for-method-outputs`, the
    method keeps its data on the device and has no copy at all:

    ```mlir
    func.func private @encode(tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
        attributes {etcopy.device = #etcopy.device<cuda:0>}
    func.func private @decode(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
        attributes {etcopy.device = #etcopy.device<cuda:0>}
    func.func @method(%x: tensor<4xf32, #etcopy.device<cuda:0>>, %w: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
      %e = func.call @encode(%x, %w) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
      %d = func.call @decode(%e) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
      return %d : tensor<4xf32, #etcopy.device<cuda:0>>
    }
    ```

    Code in a block unreachable from its region's entry never runs: its
    uses weigh nothing in the choices above and get copies of their own in
    their block, just before the first of them, so that the copies of
    reachable code are placed as if it were absent.

    The pass is idempotent and leaves nothing for
    `etcopy-optimize-transfers` to do on the copies it inserts; copies
    already present in the input are kept (run `etcopy-optimize-transfers`
    for those). See docs/Placement.md for the rules with examples.

    Compile time: O((n + u) d + c log c) for n operations, u uses, region
    nesting depth d and c placement classes. The symbol uses of all
    functions are found in one walk; device code is retyped with one cached
    replacer per device; the placement of the classes settles in at most 8
    sweeps, each choosing again only for the classes whose inputs changed,
    with the needs of each value counted once; each copy is placed in
    O(users x d) (see docs/CompileTime.md).

    Remarks (category `etcopy`, subcategory `etcopy-propagate-device`, shown
    by `--remarks-filter=etcopy`): `Placement` (analysis) for each class of
    forwarded values whose placement the pass chose, `CopyInserted`
    (passed) for each copy, `ArgumentOnDevice` / `ResultOnDevice` (passed)
    under the skip options, `ArgumentKeptOnHost` (missed) with the reason,
    and a `Summary` (analysis) with the counts of the statistics. See
    docs/Placement.md.
  }];
  let dependentDialects = ["::mlir::etcopy::EtCopyDialect"];
  let options = [
    Option<"skipH2DForMethodInputs", "skip-h2d-for-method-inputs", "bool",
           /*default=*/"false",
           "Leave method arguments consumed only by delegates of one device "
           "on that device instead of copying them (default: false)">,
    Option<"skipD2HForMethodOutputs", "skip-d2h-for-method-outputs", "bool",
           /*default=*/"false",
           "Return method results produced on a device without copying "
           "them to the host (default: false)">,
  ];
  let statistics = [
    Statistic<"numH2DInserted", "h2d-inserted",
              "Host-to-device copies inserted">,
    Statistic<"numD2HInserted", "d2h-inserted",
              "Device-to-host copies inserted">,
    Statistic<"numCopiesAvoided", "copies-avoided",
              "Per-boundary copies (an h2d per delegate tensor operand, a "
              "d2h per used delegate result) that were not inserted">,
    Statistic<"numArgumentsOnDevice", "arguments-on-device",
              "Method arguments made device-typed instead of copied">,
    Statistic<"numResultsOnDevice", "results-on-device",
              "Method results left device-typed instead of copied">,
  ];
}

def EtCopyOptimizeTransfers
    : EtCopyPass<"etcopy-optimize-transfers", "::mlir::ModuleOp"> {
  let summary = "Remove needless host<->device copies";
  let description = [{
    Works on any IR with functional `etcopy.h2d`/`etcopy.d2h` copies,
    hand-written or produced by `etcopy-propagate-device`. Out-form copies
    (memref destinations) read and write memory; the pass changes one
    pattern of them only, first: a move between devices through a host
    temporary, `etcopy.d2h %src, %tmp` then `etcopy.h2d %tmp, %dst` later
    in the same block, where `%dst` is on another device than `%src` and
    `%tmp` is a `memref.alloc` that nothing else uses but its
    deallocations (none between the copies), becomes one
    `etcopy.d2d %src, %dst` at the h2d, and the temporary goes. It must be
    certain that nothing writes `%src` in between: any op there with a
    write or free that may alias `%src` (a buffer on its device that the
    local alias analysis cannot tell apart from it) or with unknown
    effects (a call) keeps the move as it is, as do sizes that the two
    copies would check at run time and one d2d would not (a static size of
    the temporary that is dynamic on both sides, a dynamic one not read
    from either side with `memref.dim`). This is what the canonicalizer
    does for the functional form (`etcopy.d2h`'s canonicalization), for
    code written, like ExecuTorch's out-form kernels, at the memref level.
    Then, until nothing changes, it:

    * elides same-device round trips: `h2d(d2h(y)) -> y` when `y` already
      has the type the `h2d` produces, and `d2h(h2d(x)) -> x` (the rule of
      the ops' folders);
    * merges copies of one value to one type (hence one device) into one,
      placed where it dominates all their users, also across sibling
      regions that CSE cannot merge (the two branches of an `scf.if`);
    * removes dead copies;
    * hoists copies out of loops: a copy of a loop-invariant value moves in
      front of the loop, and an `scf.for` iteration argument that the body
      only copies to one type, while the yielded value is a copy from that
      type, is carried in that type instead (one copy before the loop, one
      after it, none per iteration);
    * sinks every other copy, in particular each `etcopy.d2h`, to just
      before its first user, into a branch when only that branch uses it,
      never into a loop.

    With `upload-group-bytes=N` (the pipelines' default: 1 MiB), it then
    groups uploads: an `etcopy.h2d` of a statically shaped tensor moves up
    to just after the previous `etcopy.h2d` to the same device in its
    block when its source is already defined there, as long as the uploads
    moved into that group total at most N bytes. Sunk one per delegate,
    the uploads of a chain's host inputs are separated by the calls; grouped,
    they are one run of copies, which the CUDA lowering issues as one
    `cudaMemcpyBatchAsync`. Moving an upload up holds its device buffer
    longer, hence the bound. An upload that cannot join (its source is
    computed later, it is too large or of dynamic size) starts the next
    group of its device; an upload in a nested block never joins one of an
    enclosing block.

    Copies between different devices (`cuda:0 -> host -> cuda:1`) are
    transfers: they are never merged or elided. Copies in a block
    unreachable from its region's entry stay where they are (only unused
    ones are erased); a reachable copy's users there get a copy of their
    own in their block, so that dead code never holds a live copy in place.

    ```mlir
    func.func private @step(tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    func.func @loop(%s0: tensor<4xf32>, %w: tensor<4xf32>, %n: index) -> tensor<4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %s0) -> (tensor<4xf32>) {
        %ds = etcopy.h2d %s : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
        %dw = etcopy.h2d %w : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
        %y = func.call @step(%ds, %dw) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
        %h = etcopy.d2h %y : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
        scf.yield %h : tensor<4xf32>
      }
      return %r : tensor<4xf32>
    }
    ```

    becomes (three copies per iteration become three in all)

    ```mlir
    func.func private @step(tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    func.func @loop(%s0: tensor<4xf32>, %w: tensor<4xf32>, %n: index) -> tensor<4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %0 = etcopy.h2d %s0 : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
      %1 = etcopy.h2d %w : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %0) -> (tensor<4xf32, #etcopy.device<cuda:0>>) {
        %y = func.call @step(%s, %1) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
        scf.yield %y : tensor<4xf32, #etcopy.device<cuda:0>>
      }
      %2 = etcopy.d2h %r : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
      return %2 : tensor<4xf32>
    }
    ```

    The round-trip rule and dead-copy removal are also what
    `-canonicalize` does; the pass repeats them because its other rewrites
    create new round trips.

    Compile time: O(n + k u d) per round for n operations, k copies with u
    users each and region nesting depth d. Each round walks the IR once
    (twice when it merged or carried copies), and rounds repeat until
    nothing changes: two on typical input, at most 16. The cycles of a
    region's blocks are found once; moving a copy keeps the operation order
    of its block known; the dominator tree is walked only for users that the
    block of the first one does not dominate (see docs/CompileTime.md).
    Grouping uploads is one more walk and O(1) per copy. Moves through a
    host temporary are found in the first round's walk; each block that
    has one is swept from its first d2h until no move is in progress, each
    op compared with at most 64 moves in progress (beyond that, a later
    d2h is left as it is).

    Remarks (category `etcopy`, subcategory `etcopy-optimize-transfers`):
    `RoundTripElided`, `DuplicatesMerged`, `DeadCopyErased`,
    `CopyHoisted`, `LoopStateCarried`, `CopySunk`, `UploadGrouped` and
    `MovedBetweenDevices` (passed) for each rewrite, `CopyKept` (missed) for each copy left in the module with the
    reason, and a `Summary` (analysis) with the counts of the statistics.
  }];
  let dependentDialects = ["::mlir::etcopy::EtCopyDialect"];
  let options = [
    Option<"uploadGroupBytes", "upload-group-bytes", "uint64_t",
           /*default=*/"0",
           "Move small uploads up to the previous upload to the same device "
           "in their block, at most this many bytes per group, so that they "
           "are issued in one batch (default: 0, off)">,
  ];
  let statistics = [
    Statistic<"numRoundTripsElided", "round-trip-copies-elided",
              "Copies elided as part of a same-device round trip">,
    Statistic<"numDuplicatesElided", "duplicate-copies-elided",
              "Copies elided as duplicates of a copy of the same value to "
              "the same type">,
    Statistic<"numDeadElided", "dead-copies-elided",
              "Copies elided because nothing used them">,
    Statistic<"numHoisted", "copies-hoisted",
              "Copies moved out of a loop (loop-invariant, or carried "
              "across iterations in the copied type)">,
    Statistic<"numSunk", "copies-sunk",
              "Copies moved down to just before their first user">,
    Statistic<"numGrouped", "uploads-grouped",
              "Uploads moved up to the previous upload to their device, to "
              "be batched with it">,
    Statistic<"numMovedBetweenDevices", "moves-between-devices-direct",
              "Out-form moves between devices through a host temporary made "
              "one etcopy.d2d">,
  ];
}

def EtCopyCanonicalize : EtCopyPass<"etcopy-canonicalize"> {
  let summary = "Canonicalize, and preserve every analysis when nothing "
                "changed";
  let description = [{
    Upstream's `canonicalize`, with the same patterns (those of every loaded
    dialect and registered op), the same greedy driver and the same options
    but the pattern filters (`disable-patterns`, `enable-patterns`: use
    `canonicalize` for those), which also says when it changed nothing: then it marks every analysis
    preserved, so the pass manager neither invalidates the cached analyses
    nor verifies the operation again (it verifies after a pass only when the
    pass did not preserve everything). Upstream's pass changes nothing
    either on IR that is already canonical, but is followed by a
    verification of the whole module, which on a module of N ops costs
    about as much as the pass itself; the pipelines `--etcopy-to-cuda` and
    `--etcopy-to-host` run this pass where they canonicalize, since on
    memref-level input (and on tensor-level input without copy round trips)
    the canonicalizer finds nothing to do.

    "Changed" is the greedy driver's own report (`applyPatternsGreedily`'s
    `changed`: true if the IR was modified at all, folds, erased dead ops
    and region simplification included), so the pass never claims to
    preserve what it modified. Complexity: that of upstream's canonicalizer
    (a worklist over the ops, each visited a bounded number of times per
    iteration, at most `max-iterations` iterations).
  }];
  let options = [
    Option<"topDownProcessingEnabled", "top-down", "bool",
           /*default=*/"true",
           "Seed the worklist in general top-down order (default: true)">,
    Option<"regionSimplifyLevel", "region-simplify",
           "::mlir::GreedySimplifyRegionLevel",
           /*default=*/"::mlir::GreedySimplifyRegionLevel::Normal",
           "Perform control flow optimizations to the region tree "
           "(default: normal)",
             [{::llvm::cl::values(
               clEnumValN(::mlir::GreedySimplifyRegionLevel::Disabled,
                "disabled", "Don't run any control-flow simplification."),
               clEnumValN(::mlir::GreedySimplifyRegionLevel::Normal,
                "normal", "Perform simple control-flow simplifications "
                "(e.g. dead args elimination)."),
               clEnumValN(::mlir::GreedySimplifyRegionLevel::Aggressive,
                "aggressive", "Perform aggressive control-flow "
                "simplification (e.g. block merging).")
              )}]>,
    Option<"maxIterations", "max-iterations", "int64_t",
           /*default=*/"10",
           "Max. iterations between applying patterns / simplifying "
           "regions (default: 10)">,
    Option<"maxNumRewrites", "max-num-rewrites", "int64_t", /*default=*/"-1",
           "Max. number of pattern rewrites within an iteration "
           "(default: -1, no limit)">,
    Option<"testConvergence", "test-convergence", "bool", /*default=*/"false",
           "Test only: Fail pass on non-convergence to detect cyclic "
           "pattern (default: false)">,
  ];
  let statistics = [
    Statistic<"numUnchanged", "unchanged",
              "Runs that changed nothing and preserved every analysis">,
  ];
}

def EtCopyPlanDeviceMemory
    : EtCopyPass<"etcopy-plan-device-memory", "::mlir::ModuleOp"> {
  let summary = "Pack the buffers of each function into one arena per device";
  let description = [{
    The memory planner of ExecuTorch's device support, at the memref level
    (after bufferization, before `convert-etcopy-to-gpu`). For every
    `func.func` with a body, each buffer that

    * is a `memref.alloc` with a static shape, the identity layout and an
      alignment of at most 256, in a device memory space
      (`#etcopy.device<cuda:N>`; also host memory with `plan-host`),
    * is freed by exactly one `memref.dealloc` in the block that allocates
      it, which is the function's entry block or the body of `scf.for`,
      `scf.while`, `scf.if`, `scf.index_switch` or `scf.execute_region`
      nested in it, and
    * does not escape: every use (through view-like ops) reads or writes it
      (copies, loads, stores, `linalg`, calls to a delegate), or is
      `memref.dim`; it is not returned, yielded, passed to another call,
      stored as a value or turned into a pointer (uses in blocks unreachable
      from their region's entry never run and do not count; a deallocation
      there is erased with the buffer's)

    becomes a `memref.view` at a constant offset into its device's arena: one
    `memref<Nxi8, #etcopy.device<...>>` per (device kind, ordinal), never
    shared between devices. Its `memref.dealloc` disappears. The views are
    made at the function's entry, after the arenas and the offsets, one per
    arena, offset and type: buffers that share a slot and a type share a
    view. Dynamically sized buffers and buffers that do not qualify stay as
    they are.

    A call to a *delegate* (a `func.func` carrying
    `etcopy.device = #etcopy.device<cuda:N>`) follows the delegate calling
    contract: the delegate reads its memref arguments while it runs (and
    writes those whose argument carries `etcopy.writes`), keeps none of
    them after it returns, and returns fresh buffers that alias none of
    them. Passing a buffer to it is therefore an access for the duration of
    the call, like a copy; a call to any other function may keep what it
    is passed, so that buffer keeps its allocation.

    A buffer lives from its allocation to its last use (in program order,
    through views; a use nested in an op of the allocating block, a loop
    say, keeps it alive until that op ends), not to its deallocation, which
    ownership-based deallocation places at the end of the block for every
    buffer. Two buffers whose lifetimes do not overlap may share bytes. A
    buffer allocated in a loop body gets one slot that every iteration
    reuses. Offsets are multiples of 256 bytes (what
    `cudaMalloc` guarantees and the runtime's CUDA allocator accepts as
    alignment). The planner is greedy: it places buffers one at a time, each
    in the smallest gap between the already placed buffers it overlaps in
    time that is large enough (best fit), else at the end; it does so once
    in order of decreasing size and once in program order and keeps the
    smaller arena (see docs/MemoryPlanning.md).

    With `arena-ownership=function` (the default) the function allocates
    each arena at entry (`memref.alloc` with `alignment = 256`, one
    `cudaMallocAsync` per call after lowering) and frees it before every
    return. With `arena-ownership=caller` the arenas become leading
    `memref<Nxi8, #etcopy.device<...>>` arguments, in the order of the
    metadata, which the caller allocates (as ExecuTorch's planned buffers,
    allocated once at method load time). Calls inside the module are
    updated: the caller allocates the callee's arenas around the call,
    and these allocations are then planned like its other buffers (callees
    are planned first). A function whose symbol is used other than by
    `func.call` keeps owning its arenas, with a warning.

    Each function with an arena gets the `etcopy.arenas` attribute and two
    `llvm.mlir.global` constants that survive the lowering to LLVM:
    `@<function>_etcopy_arenas`, the C struct `etcopy_function_arenas`
    (`{i64 num_arenas, ptr arenas}`), and `@<function>_etcopy_arena_descs`,
    the array of `etcopy_arena_desc` (`{i32 device_kind, i32 ordinal,
    i64 size, i64 alignment}`) it points to (see
    `etcopy/Runtime/EtCopyRuntime.h`). They are `external` for public
    functions. Functions that already carry `etcopy.arenas` are skipped, so
    the pass is idempotent.

    ```mlir
    func.func @step(%x: memref<256xf32>, %y: memref<256xf32>) {
      %a = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
      etcopy.h2d %x, %a : memref<256xf32> -> memref<256xf32, #etcopy.device<cuda:0>>
      %b = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
      memref.copy %a, %b : memref<256xf32, #etcopy.device<cuda:0>> to memref<256xf32, #etcopy.device<cuda:0>>
      memref.dealloc %a : memref<256xf32, #etcopy.device<cuda:0>>
      %c = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
      memref.copy %b, %c : memref<256xf32, #etcopy.device<cuda:0>> to memref<256xf32, #etcopy.device<cuda:0>>
      memref.dealloc %b : memref<256xf32, #etcopy.device<cuda:0>>
      etcopy.d2h %c, %y : memref<256xf32, #etcopy.device<cuda:0>> -> memref<256xf32>
      memref.dealloc %c : memref<256xf32, #etcopy.device<cuda:0>>
      return
    }
    ```

    becomes (`%a` and `%c` share offset 0 and a view, `%ac`: 2048 arena
    bytes for 3072 requested, one allocation per call instead of three)

    ```mlir
    llvm.mlir.global internal constant @step_etcopy_arena_descs() {addr_space = 0 : i32} : !llvm.array<1 x struct<(i32, i32, i64, i64)>> {
      %0 = llvm.mlir.zero : !llvm.array<1 x struct<(i32, i32, i64, i64)>>
      %1 = llvm.mlir.constant(1 : i32) : i32
      %2 = llvm.insertvalue %1, %0[0, 0] : !llvm.array<1 x struct<(i32, i32, i64, i64)>>
      %3 = llvm.mlir.constant(0 : i32) : i32
      %4 = llvm.insertvalue %3, %2[0, 1] : !llvm.array<1 x struct<(i32, i32, i64, i64)>>
      %5 = llvm.mlir.constant(2048 : i64) : i64
      %6 = llvm.insertvalue %5, %4[0, 2] : !llvm.array<1 x struct<(i32, i32, i64, i64)>>
      %7 = llvm.mlir.constant(256 : i64) : i64
      %8 = llvm.insertvalue %7, %6[0, 3] : !llvm.array<1 x struct<(i32, i32, i64, i64)>>
      llvm.return %8 : !llvm.array<1 x struct<(i32, i32, i64, i64)>>
    }
    llvm.mlir.global external constant @step_etcopy_arenas() {addr_space = 0 : i32} : !llvm.struct<(i64, ptr)> {
      %0 = llvm.mlir.zero : !llvm.struct<(i64, ptr)>
      %1 = llvm.mlir.constant(1 : i64) : i64
      %2 = llvm.insertvalue %1, %0[0] : !llvm.struct<(i64, ptr)>
      %3 = llvm.mlir.addressof @step_etcopy_arena_descs : !llvm.ptr
      %4 = llvm.insertvalue %3, %2[1] : !llvm.struct<(i64, ptr)>
      llvm.return %4 : !llvm.struct<(i64, ptr)>
    }
    func.func @step(%x: memref<256xf32>, %y: memref<256xf32>) attributes {etcopy.arenas = [{alignment = 256 : i64, device = #etcopy.device<cuda:0>, size = 2048 : i64} ]} {
      %arena = memref.alloc() {alignment = 256 : i64} : memref<2048xi8, #etcopy.device<cuda:0>>
      %c0 = arith.constant 0 : index
      %c1024 = arith.constant 1024 : index
      %ac = memref.view %arena[%c0][] : memref<2048xi8, #etcopy.device<cuda:0>> to memref<256xf32, #etcopy.device<cuda:0>>
      %b = memref.view %arena[%c1024][] : memref<2048xi8, #etcopy.device<cuda:0>> to memref<256xf32, #etcopy.device<cuda:0>>
      etcopy.h2d %x, %ac : memref<256xf32> -> memref<256xf32, #etcopy.device<cuda:0>>
      memref.copy %ac, %b : memref<256xf32, #etcopy.device<cuda:0>> to memref<256xf32, #etcopy.device<cuda:0>>
      memref.copy %b, %ac : memref<256xf32, #etcopy.device<cuda:0>> to memref<256xf32, #etcopy.device<cuda:0>>
      etcopy.d2h %ac, %y : memref<256xf32, #etcopy.device<cuda:0>> -> memref<256xf32>
      memref.dealloc %arena : memref<2048xi8, #etcopy.device<cuda:0>>
      return
    }
    ```

    With `arena-ownership=caller` the function is instead
    `func.func @step(%arena: memref<2048xi8, #etcopy.device<cuda:0>>,
    %x: memref<256xf32>, %y: memref<256xf32>)`, without the arena's
    allocation and deallocation.

    Compile time: O(n + u + b log b) per function for n operations, u uses
    of its buffers and b planned buffers. Program-order packing is one sweep
    (live buffers by offset, free gaps by size); size-order packing adds
    O(p log p) for the p pairs of buffers that overlap in time, and is
    skipped, leaving program order alone, when p exceeds max(2^20, 32 b).
    Call order and, with `arena-ownership=caller`, the uses of every
    function come from one walk of the module (see docs/CompileTime.md).

    Remarks (category `etcopy`, subcategory `etcopy-plan-device-memory`):
    `BufferPlanned` (passed) for each planned buffer with its arena,
    offset and size, `BufferNotPlanned` (missed) for each buffer left
    alone with the reason, `ArenasPlanned` (passed) per planned function
    (buffers, bytes requested, arena size, peak live bytes per arena), and
    a `Summary` (analysis) with the counts of the statistics. See
    docs/MemoryPlanning.md.
  }];
  let dependentDialects = [
    "::mlir::etcopy::EtCopyDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::LLVM::LLVMDialect",
  ];
  let options = [
    Option<"arenaOwnership", "arena-ownership",
           "::mlir::etcopy::ArenaOwnership",
           /*default=*/"::mlir::etcopy::ArenaOwnership::Function",
           "Who allocates the arenas (default: function)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::etcopy::ArenaOwnership::Function, "function",
                        "the function itself, at entry, freeing them before "
                        "each return"),
             clEnumValN(::mlir::etcopy::ArenaOwnership::Caller, "caller",
                        "the caller: leading memref<Nxi8> arguments of the "
                        "function"))}]>,
    Option<"planHost", "plan-host", "bool", /*default=*/"false",
           "Also plan host buffers (no memory space or #etcopy.device<cpu>) "
           "into a cpu arena (default: false)">,
  ];
  let statistics = [
    Statistic<"numBuffersPlanned", "buffers-planned",
              "Buffers turned into views of an arena">,
    Statistic<"numBuffersDynamic", "buffers-left-dynamic",
              "Dynamically sized buffers left as individual allocations">,
    Statistic<"numBuffersNotPlanned", "buffers-not-planned",
              "Statically sized buffers left as individual allocations "
              "(escaping, not freed in their block, unsupported region, "
              "layout or alignment)">,
    Statistic<"numArenas", "arenas", "Arenas created">,
    Statistic<"numBytesRequested", "bytes-requested",
              "Sum of the sizes of the planned buffers">,
    Statistic<"numArenaBytes", "arena-bytes", "Sum of the arena sizes">,
    Statistic<"numPeakLiveBytes", "peak-live-bytes",
              "Lower bound of arena-bytes: the most bytes (in 256-byte "
              "slots) live at one point, per arena">,
    Statistic<"numCallSitesUpdated", "call-sites-updated",
              "Calls given the arenas of a caller-owned callee">,
  ];
}

def EtCopyElementwiseToLinalg
    : EtCopyPass<"etcopy-elementwise-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Turn host computation on tensors into linalg; reject "
                "computation on device tensors";
  let description = [{
    The glue code of a model method (between its delegates) computes on host
    tensors with elementwise `arith` and `math` ops. Bufferization needs them
    as `linalg` ops, which this pass makes of them, as upstream's
    `convert-elementwise-to-linalg` does, but only where every tensor
    involved lives on the host:

    * an elementwise op on host tensors becomes a `linalg.generic` (and then
      loops on the host, after bufferization);
    * `arith.select` with a scalar condition between tensors of one device
      only chooses a buffer: it is left alone and bufferizes to a select of
      buffers (this is what a branch between two device values becomes);
    * any other elementwise or `linalg` op on a device tensor is computation
      on the device, which etcopy does not generate: it is an error that
      names the op, the type and the device, and says where the computation
      belongs (a delegate, or the host after an `etcopy.d2h`).

    One walk of the module plus upstream's conversion of the host ops:
    linear in the number of ops.

    ```mlir
    func.func @glue(%x: tensor<4xf32>, %a: tensor<4xf32, #etcopy.device<cuda:0>>,
                    %b: tensor<4xf32, #etcopy.device<cuda:0>>, %c: i1)
        -> (tensor<4xf32>, tensor<4xf32, #etcopy.device<cuda:0>>) {
      %n = arith.negf %x : tensor<4xf32>
      %s = arith.select %c, %a, %b : tensor<4xf32, #etcopy.device<cuda:0>>
      return %n, %s : tensor<4xf32>, tensor<4xf32, #etcopy.device<cuda:0>>
    }
    ```

    becomes

    ```mlir
    #map = affine_map<(d0) -> (d0)>
    func.func @glue(%x: tensor<4xf32>, %a: tensor<4xf32, #etcopy.device<cuda:0>>,
                    %b: tensor<4xf32, #etcopy.device<cuda:0>>, %c: i1)
        -> (tensor<4xf32>, tensor<4xf32, #etcopy.device<cuda:0>>) {
      %n = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
          ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        %0 = arith.negf %in : f32
        linalg.yield %0 : f32
      } -> tensor<4xf32>
      %s = arith.select %c, %a, %b : tensor<4xf32, #etcopy.device<cuda:0>>
      return %n, %s : tensor<4xf32>, tensor<4xf32, #etcopy.device<cuda:0>>
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def EtCopyBufferize : EtCopyPass<"etcopy-bufferize", "::mlir::ModuleOp"> {
  let summary = "Bufferize under the delegate calling contract and free what "
                "bufferization allocates";
  let description = [{
    Bufferizes a module of tensor-level methods and delegates, the stage of
    `--etcopy-to-cuda` and `--etcopy-to-host` between placement and
    lowering.

    **The delegate calling contract.** A delegate (a `func.func` whose
    `etcopy.device` names a device) called with `func.call`:

    * reads its tensor arguments during the call and never writes them,
      except those whose argument carries the unit attribute
      `etcopy.writes`;
    * keeps no reference to its arguments after it returns;
    * returns fresh buffers, allocated on its device with the CUDA runtime,
      that alias neither its arguments, nor each other, nor any other buffer
      of the caller. The caller owns them: the generated code frees them
      (`cudaFreeAsync`) once nothing uses them.

    The pass states the contract to upstream bufferization: each tensor
    argument of a delegate declaration gets `bufferization.access = "read"`
    (`"read-write"` with `etcopy.writes`), and each of a delegate
    definition `bufferization.writable = false` unless it carries
    `etcopy.writes` (a body that writes such an argument copies it first).
    A delegate declaration with tensor results gets, for the analysis only,
    a body returning fresh tensors: without one, upstream must assume that
    every result aliases every tensor argument, so that writing a
    delegate's result would count as writing its operands. Calls to
    delegates thus bufferize without defensive copies of their operands.
    Each tensor argument of a method (a public function with a body that is
    not a delegate) gets `bufferization.writable = false`: the caller's
    values are not written in place. An explicit `bufferization.access` or
    `bufferization.writable` is kept.

    **Bufferization**: `one-shot-bufferize` with
    `bufferize-function-boundaries`, `use-encoding-for-memory-space` (the
    encoding `#etcopy.device<cuda:0>` of a tensor becomes the memory space of
    its buffer), identity-layout function boundaries and
    `allow-return-allocs-from-loops`. Tensor constants in nested regions
    are moved to their function's entry block first, as the canonicalizer
    would: upstream's `scf.for` and `scf.while` models take a value created
    in the loop for a new, writable buffer that the loop may yield without
    a copy, so a constant created in a loop and yielded by it became the
    loop's result, a read-only global, which a later write in place wrote
    (a crash at run time). Defined outside of the loop, it is copied before
    it is yielded, like any buffer from outside of the loop.

    **Deallocation**, when the module had tensors, decided per function.
    In a function whose buffers all have static owners the pass frees them
    itself, each right after its last use in the block that owns it. Such a
    function's body is one block; buffers are made only in it and in the blocks of
    `scf.for`, `scf.while` and `scf.if` ops nested in it; every op that
    takes a buffer
    states its memory effects and frees none. A block owns the allocations
    and call results it makes (a delegate's results are fresh by the
    contract, any other function's by upstream's function boundary ABI,
    with one buffer result per non-delegate call), the buffer results of
    the `scf.for`, `scf.while` and `scf.if` ops in it, a loop body its
    buffer iteration arguments (an `scf.while`'s condition region its
    arguments, its body the buffers `scf.condition` forwards: the
    condition gives each once, to the body when the loop goes on and to the
    loop's results when it ends), and a branch the buffers of the enclosing block that a
    branch of its `scf.if` yields. Views, arguments, stack buffers and
    globals belong to no block. A block gives away what its terminator
    returns or yields (each a buffer it owns, given once) and the initial
    buffers of the loops in it (which it must not use after the loop); it
    frees the rest right after the op of the block that uses them last,
    directly, through a view or in a nested region. So a buffer made before
    a loop and last used in it is freed after the loop; one made and last
    used in a loop body is freed in the body, each iteration; a loop frees
    the state it was given once it made the next; an `scf.if` that takes a
    buffer over frees it in the branch that does not yield it; an
    `scf.while` frees what its condition made and does not forward in the
    condition, each iteration. A loop's
    initial buffer that its block cannot give (an argument, a global, a
    buffer used after the loop) is copied into a new buffer first
    (`LoopStateCopied`), as the ABI copies a returned argument. The memory
    a method holds is then its largest live set, not the sum of its
    intermediates. `etcopy-plan-device-memory` plans a buffer freed in the
    block that allocates it from its allocation to its last use, the same
    lifetime; one given away stays an allocation.

    Any other function (a buffer of unknown origin: which of two an
    `arith.select` chooses, or an `scf.if` that yields an argument or a
    buffer used after it; an `scf.condition` that forwards a buffer it does
    not own, or one buffer twice; buffers made in other regions;
    unstructured control flow), and any `func.func` nested in another op,
    is left to upstream: a missed remark, `BuffersFreedByUpstream`, names
    the function, the op and the reason. Only the functions left to it go
    through upstream's `ownership-based-buffer-deallocation`, the
    canonicalizer and `buffer-deallocation-simplification`, one function at
    a time, so that one such function costs no other function its early
    frees (until this was decided per module, it did: in
    `test/Execution/mixed-deallocation.mlir`, a method of eight delegate
    steps that calls such a function held all its steps' buffers until it
    returned; the program's peak on the simulator fell from 336 to 80
    bytes of device memory and from 1904 to 272 bytes of pinned host
    memory without memory planning, from 944 to 816 bytes of device memory
    with it, whose arena slots the buffers already shared). Mixing the two kinds is sound because both follow upstream's
    function boundary ABI: a function frees none of its arguments and
    returns buffers it owns, which its caller then owns and frees. The
    pass's own frees never touch an argument, a view or a global and
    return each buffer the body owns once; upstream's pass imposes the ABI
    on each function it processes (clones what it returns without owning
    it) and assumes it of every callee (its
    `private-function-dynamic-ownership`, which would change the
    signatures of private functions, stays off). Upstream may return one
    buffer twice, so a call with several buffer results (a delegate's
    apart) is left to upstream's run-time checks. Before simplification,
    the contract's aliasing facts: a buffer that comes from an allocation or a call is distinct
    from every other allocation, call result and function argument, so its
    `bufferization.dealloc` becomes a plain free without the run-time alias
    checks upstream emits when it cannot tell. A delegate's result is fresh
    by the delegate contract; any other function's by upstream's function
    boundary ABI, which the deallocation pass imposes on the functions it
    processes and assumes of declarations (a function returns buffers it
    owns, never one of its arguments, and never owns its caller's buffers);
    the ABI does not keep one call's results apart, so those of a
    non-delegate call keep the check between them. Buffers of unknown
    origin keep upstream's checks. Then `lower-deallocations`, on the
    module (its generic lowering adds a helper function there; it converts
    `bufferization.dealloc` ops alone), and CSE, the canonicalizer and
    `convert-bufferization-to-memref` on the same functions and the helper.
    Upstream frees at the end of each block. Memref-level input that frees its buffers itself keeps doing so;
    a module that mixes tensors with `memref.dealloc` is an error
    (upstream's deallocation cannot handle both).

    The static deallocation is one walk of each function, one visit of
    each block, and per owned buffer one walk of its uses and of its views'
    uses (the last user, and for a loop's initial buffer whether the loop is
    its last user): O(ops + uses), with the block order queries amortised
    constant. A function left to upstream costs the static analysis at
    most one walk of it, then upstream's passes on it alone (linear in its
    size, apart from the simplification's pairwise alias queries within
    one `bufferization.dealloc`, which the contract's facts keep small);
    the lowering walks and converts the module once (only when a function
    was left to upstream), and the functions it adds are found by two
    walks that skip function bodies. Each step is linear in the size of the module apart from
    upstream's
    One-Shot analysis, which the contract keeps from growing with the
    length of a chain of delegate calls: read-only operands create no
    read-after-write conflicts to check. One-Shot Bufferize remains
    exponential in the nesting depth of `scf.for` loops that carry a tensor
    (`iter_args`) from one loop to the next, about 2x per level (20 levels:
    about 3 s), in this pass as in upstream's own pass: the buffer type of
    a loop's `iter_args` is computed again for every query, through the
    enclosing and the nested loops (see docs/CompileTime.md, "Nesting
    depth").

    ```mlir
    func.func private @scale(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
        attributes {etcopy.device = #etcopy.device<cuda:0>}
    func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> {
      %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
      %a = func.call @scale(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
      %b = func.call @scale(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
      %h = etcopy.d2h %b : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
      return %h : tensor<4xf32>
    }
    ```

    becomes (one device buffer for `%d`, passed to both calls as is; the
    delegate results and `%d` freed unconditionally right after their last
    use, without run-time alias checks)

    ```mlir
    func.func private @scale(memref<4xf32, #etcopy.device<cuda:0>> {bufferization.access = "read"}) -> memref<4xf32, #etcopy.device<cuda:0>>
        attributes {etcopy.device = #etcopy.device<cuda:0>}
    func.func @method(%x: memref<4xf32>) -> memref<4xf32> {
      %d = memref.alloc() {alignment = 64 : i64} : memref<4xf32, #etcopy.device<cuda:0>>
      etcopy.h2d %x, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
      %a = call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>>
      memref.dealloc %a : memref<4xf32, #etcopy.device<cuda:0>>
      %b = call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>>
      memref.dealloc %d : memref<4xf32, #etcopy.device<cuda:0>>
      %h = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
      etcopy.d2h %b, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
      memref.dealloc %b : memref<4xf32, #etcopy.device<cuda:0>>
      return %h : memref<4xf32>
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::etcopy::EtCopyDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def EtCopyExportSignatures
    : EtCopyPass<"etcopy-export-signatures", "::mlir::ModuleOp"> {
  let summary = "Describe each method's arguments and results for host "
                "programs";
  let description = [{
    A host program calling compiled code must know which arguments are
    device buffers: with `skip-h2d-for-method-inputs` a method takes some
    inputs on a device, with `skip-d2h-for-method-outputs` it returns some
    results there, and with `arena-ownership=caller` its leading arguments
    are device arenas. This pass, run on memref-level IR after bufferization
    and planning, describes every public `func.func` with a body:

    * the `etcopy.signature` attribute: one entry per argument and result,
      `{kind, device, rank, element_bytes}`, where `kind` is `"memref"`,
      `"unranked_memref"` or `"scalar"`, `device` the memref's placement
      (`#etcopy.device<cpu>` for host memory and scalars), `rank` the
      memref's rank (0 otherwise) and `element_bytes` the size of an element
      (or of the scalar) in the module's data layout;
    * two `llvm.mlir.global` constants that survive the lowering to LLVM:
      `@<function>_etcopy_signature`, the C struct
      `etcopy_method_signature` (`{i64 num_arguments, ptr arguments, i64
      num_results, ptr results}`, external), and
      `@<function>_etcopy_signature_values`, the array of `etcopy_value_desc`
      (`{i32 kind, i32 device_kind, i32 ordinal, i32 rank, i64
      element_bytes}`) it points to, arguments first (see
      `etcopy/Runtime/EtCopyRuntime.h`, which also has the C and C++ API to
      read them).

    A function that already has `etcopy.signature` is described again (the
    attribute follows its current type); the pass is idempotent. It is
    linear in the number of functions and their arguments.

    ```mlir
    func.func @method(%x: memref<8x4xf16, #etcopy.device<cuda:0>>, %n: index) -> memref<8xf32> {
      %r = memref.alloc() : memref<8xf32>
      return %r : memref<8xf32>
    }
    ```

    gets

    ```mlir
    func.func @method(%x: memref<8x4xf16, #etcopy.device<cuda:0>>, %n: index) -> memref<8xf32>
        attributes {etcopy.signature = {
          arguments = [{device = #etcopy.device<cuda:0>, element_bytes = 2 : i64, kind = "memref", rank = 2 : i64},
                       {device = #etcopy.device<cpu>, element_bytes = 8 : i64, kind = "scalar", rank = 0 : i64} ],
          results = [{device = #etcopy.device<cpu>, element_bytes = 4 : i64, kind = "memref", rank = 1 : i64} ]}} {
      %r = memref.alloc() : memref<8xf32>
      return %r : memref<8xf32>
    }
    ```

    and the globals `@method_etcopy_signature` and
    `@method_etcopy_signature_values`.
  }];
  let dependentDialects = [
    "::mlir::etcopy::EtCopyDialect",
    "::mlir::LLVM::LLVMDialect",
  ];
}

def EtCopyCheckPipelineInput
    : EtCopyPass<"etcopy-check-pipeline-input", "::mlir::ModuleOp"> {
  let summary = "Reject a module the etcopy pipelines would lower only in "
                "part";
  let description = [{
    The first stage of `--etcopy-to-cuda` and `--etcopy-to-host`. Both
    pipelines lower one module: the code of its functions, with the runtime
    support and the globals that code refers to placed in that module. A
    `builtin.module` nested in it is not theirs: bufferization skips it, so
    its tensor code would stop at a later stage with an error about
    bufferizing first, and `convert-gpu-to-cuda-runtime` refuses its memref
    code (it could not put the globals that code refers to where the code
    sees them), naming itself rather than the pipeline. The pass reports
    each nested `builtin.module` that holds any op, before any stage has
    run, and names the pipeline to run on it instead:

    ```mlir
    module {
      module {  // error: the pipeline lowers one module at a time
        func.func @method(%x: tensor<8xf32>) -> tensor<8xf32, #etcopy.device<cuda:0>> {
          %d = etcopy.h2d %x : tensor<8xf32> -> tensor<8xf32, #etcopy.device<cuda:0>>
          return %d : tensor<8xf32, #etcopy.device<cuda:0>>
        }
      }
    }
    ```

    with `-p 'builtin.module(builtin.module(etcopy-to-cuda))'` lowering the
    nested module in place. An empty nested module is left alone. The pass
    changes nothing and preserves every analysis, so no verification
    follows it. It visits the top-level module's ops only: linear in their
    number.
  }];
  let options = [
    Option<"pipeline", "pipeline", "std::string",
           /*default=*/"\"etcopy-to-cuda\"",
           "The pipeline the module is input to, named in the diagnostic "
           "(default: etcopy-to-cuda)">,
  ];
}

def EtCopyFinalizeLLVM : EtCopyPass<"etcopy-finalize-llvm", "::mlir::ModuleOp"> {
  let summary = "Ready a lowered module for mlir-translate: drop etcopy "
                "attributes, check that only the LLVM dialect is left";
  let description = [{
    The last stage of `--etcopy-to-cuda` and `--etcopy-to-host`. It drops
    the `etcopy.*` discardable attributes and function argument attributes
    (`etcopy.writes`), whose information the pipelines
    export as LLVM globals where a host program needs it (arenas,
    signatures) and which LLVM IR cannot carry. Then it fails, naming the
    first op outside the LLVM dialect (in pre-order: an op with a region
    rather than the ops of its body; a function only when nothing else is
    left), if anything survived the lowering: a
    pipeline that "succeeds" with leftovers would hand `mlir-translate` IR it
    cannot translate, far from the cause. A `builtin.unrealized_conversion_cast`
    is named only when nothing else is left, since it is the symptom of
    another op's failed conversion. One walk of the module.
  }];
}

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_TD
