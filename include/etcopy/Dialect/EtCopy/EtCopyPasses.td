//===- EtCopyPasses.td - etcopy transformation passes ------*- tablegen -*-===//
//
// Passes that place copies at delegate boundaries (etcopy-propagate-device)
// and remove every copy that moves nothing new (etcopy-optimize-transfers).
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_TD
#define ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_TD

include "mlir/Pass/PassBase.td"

def EtCopyPropagateDevice : Pass<"etcopy-propagate-device", "::mlir::ModuleOp"> {
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
      remark says why. With `skip-d2h-for-method-outputs`, a method result
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
    func.func @method(%x: tensor<4xf32, #etcopy.device<cuda:0>>, %w: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
      %e = func.call @encode(%x, %w) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
      %d = func.call @decode(%e) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
      return %d : tensor<4xf32, #etcopy.device<cuda:0>>
    }
    ```

    The pass is idempotent and leaves nothing for
    `etcopy-optimize-transfers` to do on the copies it inserts; copies
    already present in the input are kept (run `etcopy-optimize-transfers`
    for those). See docs/Placement.md for the rules with examples.
  }];
  let dependentDialects = ["::mlir::etcopy::EtCopyDialect"];
  let options = [
    Option<"skipH2DForMethodInputs", "skip-h2d-for-method-inputs", "bool",
           /*default=*/"false",
           "Leave method arguments consumed only by delegates of one device "
           "on that device instead of copying them">,
    Option<"skipD2HForMethodOutputs", "skip-d2h-for-method-outputs", "bool",
           /*default=*/"false",
           "Return method results produced on a device without copying "
           "them to the host">,
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
    : Pass<"etcopy-optimize-transfers", "::mlir::ModuleOp"> {
  let summary = "Remove needless host<->device copies";
  let description = [{
    Works on any IR with functional `etcopy.h2d`/`etcopy.d2h` copies,
    hand-written or produced by `etcopy-propagate-device`; out-form copies
    (memref destinations) read and write memory and are left alone. Until
    nothing changes, it:

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

    Copies between different devices (`cuda:0 -> host -> cuda:1`) are
    transfers: they are never merged or elided.

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
  }];
  let dependentDialects = ["::mlir::etcopy::EtCopyDialect"];
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
  ];
}

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_TD
