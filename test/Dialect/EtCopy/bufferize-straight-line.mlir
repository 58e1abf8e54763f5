// RUN: etcopy-opt %s -split-input-file --etcopy-bufferize | FileCheck %s
// RUN: etcopy-opt %s -split-input-file --etcopy-bufferize \
// RUN:   --remarks-filter=etcopy-bufferize -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK

// etcopy-bufferize frees the buffers of straight-line code (and of
// scf.for and scf.if, see bufferize-structured.mlir) with static owners
// itself, and leaves every other function to upstream's ownership-based
// deallocation pipeline (whose traces here are the extract_strided_metadata
// of a call result, a run-time alias check, or a clone), with a remark
// naming the function, the op and the reason (one function of each kind in
// one module: bufferize-per-function.mlir).

// Owned: allocations, a delegate's results (two of one call), a host
// call's result; each freed right after its last use, direct or through a
// view (the subview of %a, cast, is used by @use). Not owned, not freed:
// the argument, a view, a stack buffer. The returned buffer is the
// caller's.
// CHECK-LABEL: func.func @owners(
// REMARK-NOT: BuffersFreedByUpstream | Category:etcopy-bufferize | Function=owners
// CHECK-SAME:    %[[X:.*]]: memref<4xf32>)
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK:         %[[P:.*]]:2 = call @pair(%[[D]])
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    %[[V:.*]] = memref.subview %[[P]]#0
// CHECK:         %[[S:.*]] = memref.alloca() : memref<2xf32>
// CHECK:         %[[H:.*]] = call @host() : () -> memref<4xf32>
// CHECK:         %[[R:.*]] = memref.alloc() {{.*}}: memref<4xf32>
// CHECK:         call @use(
// CHECK-NEXT:    memref.dealloc %[[R]]
// CHECK-NEXT:    memref.dealloc %[[H]]
// CHECK-NEXT:    memref.dealloc %[[P]]#0
// CHECK-NEXT:    %[[KEPT:.*]] = memref.alloc() {{.*}}: memref<4xf32>
// CHECK-NEXT:    etcopy.d2h %[[P]]#1, %[[KEPT]]
// CHECK-NEXT:    memref.dealloc %[[P]]#1
// CHECK-NEXT:    return %[[KEPT]]
// CHECK-NOT:     memref.extract_strided_metadata
// CHECK-NOT:     bufferization.
func.func private @pair(tensor<4xf32, #etcopy.device<cuda:0>>) -> (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @host() -> tensor<4xf32>
func.func private @use(tensor<2xf32, #etcopy.device<cuda:0>>, memref<2xf32>, tensor<4xf32>, tensor<4xf32>)
func.func @owners(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %a, %b = func.call @pair(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>)
  %v = tensor.extract_slice %a[0] [2] [1] : tensor<4xf32, #etcopy.device<cuda:0>> to tensor<2xf32, #etcopy.device<cuda:0>>
  %s = memref.alloca() : memref<2xf32>
  %h = func.call @host() : () -> tensor<4xf32>
  %r = etcopy.d2h %a : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  func.call @use(%v, %s, %h, %r) : (tensor<2xf32, #etcopy.device<cuda:0>>, memref<2xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  %kept = etcopy.d2h %b : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %kept : tensor<4xf32>
}

// -----

// Upstream's pipeline: a host function may return one buffer twice (the
// function boundary ABI does not say otherwise), so the two results of
// @two keep a run-time alias check.
// CHECK-LABEL: func.func @two_host_results(
// REMARK: remark: [Missed] BuffersFreedByUpstream | Category:etcopy-bufferize | Function=two_host_results | Op=func.call, Reason="a call of a function other than a delegate returns several buffers, which the function boundary ABI lets be one buffer"
// CHECK:         memref.extract_strided_metadata
// CHECK:         memref.extract_aligned_pointer_as_index
// CHECK:         arith.cmpi
func.func private @two() -> (tensor<4xf32>, tensor<4xf32>)
func.func private @consume(tensor<4xf32>, tensor<4xf32>)
func.func @two_host_results() {
  %a, %b = func.call @two() : () -> (tensor<4xf32>, tensor<4xf32>)
  func.call @consume(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// Upstream's pipeline: the function returns its argument, which it does not
// own, so upstream hands its caller a copy.
// CHECK-LABEL: func.func @returns_argument(
// REMARK: remark: [Missed] BuffersFreedByUpstream | Category:etcopy-bufferize | Function=returns_argument | Op=func.return, Reason="it hands on a buffer its block does not own (an argument, a view, a global) or one buffer twice"
// CHECK-SAME:    %[[X:.*]]: memref<4xf32>
// CHECK:         %[[COPY:.*]] = memref.alloc()
// CHECK:         memref.copy %[[X]], %[[COPY]]
// CHECK:         return %[[COPY]]
func.func @returns_argument(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Upstream's pipeline for @branches alone, which has two blocks; the
// straight-line @simple in the same module frees its call result itself,
// right after its last use (before the fallback was per function, upstream
// freed it too, through the extract_strided_metadata of its base buffer).
// CHECK-LABEL: func.func @simple(
// CHECK:         %[[R:.*]] = call @produce()
// CHECK-NEXT:    call @consume(%[[R]])
// CHECK-NEXT:    memref.dealloc %[[R]]
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @branches(
// CHECK:         %[[R:.*]] = call @produce()
// CHECK:         %[[BASE:[a-z_0-9]+]], {{.*}} = memref.extract_strided_metadata %[[R]]
// REMARK-NOT: BuffersFreedByUpstream | Category:etcopy-bufferize | Function=simple
// REMARK: remark: [Missed] BuffersFreedByUpstream | Category:etcopy-bufferize | Function=branches | Op=func.func, Reason="its body has several blocks (unstructured control flow)"
func.func private @produce() -> tensor<4xf32>
func.func private @consume(tensor<4xf32>)
func.func @simple() {
  %r = func.call @produce() : () -> tensor<4xf32>
  func.call @consume(%r) : (tensor<4xf32>) -> ()
  return
}
func.func @branches(%c: i1) {
  %r = func.call @produce() : () -> tensor<4xf32>
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  func.call @consume(%r) : (tensor<4xf32>) -> ()
  return
^bb2:
  return
}

// -----

// Upstream's pipeline: a buffer made in a region of an op other than
// scf.for and scf.if (here scf.execute_region, which upstream's
// canonicalizer then inlines) has no static owner.
// CHECK-LABEL: func.func @nested(
// REMARK: remark: [Missed] BuffersFreedByUpstream | Category:etcopy-bufferize | Function=nested | Op=func.call, Reason="a buffer is made in a region of an op other than scf.for, scf.while and scf.if"
// CHECK:         %[[R:.*]] = call @produce()
// CHECK:         memref.extract_strided_metadata %[[R]]
func.func private @produce() -> tensor<4xf32>
func.func private @consume(tensor<4xf32>)
func.func @nested(%c: i1) {
  %r = scf.execute_region -> tensor<4xf32> {
    %a = func.call @produce() : () -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  }
  func.call @consume(%r) : (tensor<4xf32>) -> ()
  return
}

// -----

// Upstream's pipeline: a branch yields the function's argument, which no
// block owns, so which buffer the scf.if's result is, and who frees it, is
// known only at run time (the returned buffer is then copied).
// CHECK-LABEL: func.func @branch_yields_argument(
// REMARK: remark: [Missed] BuffersFreedByUpstream | Category:etcopy-bufferize | Function=branch_yields_argument | Op=scf.if, Reason="a branch yields a buffer of the enclosing block that is used after the 'scf.if' or that the block does not own"
// CHECK:         scf.if
// CHECK:         memref.extract_strided_metadata
// CHECK:         call @dealloc_helper
func.func private @produce() -> tensor<4xf32>
func.func private @consume(tensor<4xf32>)
func.func @branch_yields_argument(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %r = scf.if %c -> tensor<4xf32> {
    %a = func.call @produce() : () -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  func.call @consume(%r) : (tensor<4xf32>) -> ()
  return %r : tensor<4xf32>
}

// -----

// Upstream's pipeline: a branch yields %a, which is used after the scf.if,
// so the scf.if cannot take it over (the other branch would free it too
// early), and its result may or may not be %a.
// CHECK-LABEL: func.func @yielded_and_used_after(
// REMARK: remark: [Missed] BuffersFreedByUpstream | Category:etcopy-bufferize | Function=yielded_and_used_after | Op=scf.if
// CHECK:         %[[A:.*]] = call @produce()
// CHECK:         scf.if
// CHECK:         scf.yield %[[A]]
// CHECK:         call @consume(%[[A]])
// CHECK:         memref.extract_strided_metadata %[[A]]
// CHECK:         call @dealloc_helper
func.func private @produce() -> tensor<4xf32>
func.func private @consume(tensor<4xf32>)
func.func @yielded_and_used_after(%c: i1) {
  %a = func.call @produce() : () -> tensor<4xf32>
  %r = scf.if %c -> tensor<4xf32> {
    %b = func.call @produce() : () -> tensor<4xf32>
    scf.yield %b : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  func.call @consume(%r) : (tensor<4xf32>) -> ()
  func.call @consume(%a) : (tensor<4xf32>) -> ()
  return
}

// -----

// Upstream's pipeline: a buffer of buffers could hand a buffer out of the
// function where no use shows it, so ownership is not taken as static.
// CHECK-LABEL: func.func @boxed(
// REMARK: remark: [Missed] BuffersFreedByUpstream | Category:etcopy-bufferize | Function=boxed | Op=memref.alloca, Reason="a buffer of buffers could hand a buffer out unseen"
// CHECK:         %[[R:.*]] = call @produce()
// CHECK:         %[[BASE:[a-z_0-9]+]], {{.*}} = memref.extract_strided_metadata %[[R]]
// CHECK:         memref.dealloc %[[BASE]]
func.func private @produce() -> tensor<4xf32>
func.func @boxed() {
  %r = func.call @produce() : () -> tensor<4xf32>
  %box = memref.alloca() : memref<1xmemref<4xf32>>
  %c0 = arith.constant 0 : index
  %m = bufferization.to_buffer %r : tensor<4xf32> to memref<4xf32>
  memref.store %m, %box[%c0] : memref<1xmemref<4xf32>>
  return
}

// -----

// Upstream's pipeline: an scf.while's body yields the function's argument,
// which no block owns (the loop's initial buffer too), so the loop's state
// has no static owner; upstream's canonicalizer then drops the state, and
// the call result gets upstream's free.
// CHECK-LABEL: func.func @while_yields_argument(
// REMARK: remark: [Missed] BuffersFreedByUpstream | Category:etcopy-bufferize | Function=while_yields_argument | Op=scf.yield, Reason="it hands on a buffer its block does not own
// CHECK:         %[[R:.*]] = call @produce()
// CHECK:         scf.while
// CHECK:         %[[BASE:[a-z_0-9]+]], {{.*}} = memref.extract_strided_metadata %[[R]]
// CHECK:         memref.dealloc %[[BASE]]
func.func private @produce() -> tensor<4xf32>
func.func private @consume(tensor<4xf32>)
func.func @while_yields_argument(%m: memref<4xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %r = func.call @produce() : () -> tensor<4xf32>
  func.call @consume(%r) : (tensor<4xf32>) -> ()
  %w = scf.while (%s = %m) : (memref<4xf32>) -> memref<4xf32> {
    %e = memref.load %s[%c0] : memref<4xf32>
    %go = arith.cmpf olt, %e, %v : f32
    scf.condition(%go) %s : memref<4xf32>
  } do {
  ^bb0(%t: memref<4xf32>):
    %e = memref.load %t[%c0] : memref<4xf32>
    %a = arith.addf %e, %e : f32
    memref.store %a, %t[%c0] : memref<4xf32>
    scf.yield %m : memref<4xf32>
  }
  return
}

// -----

// A function nested in another op than the module (here a nested module)
// is left to upstream, which frees its allocation at the end of its block;
// the module's own functions are decided each on its own (@top frees its
// call result itself).
// CHECK-LABEL: func.func @top(
// CHECK:         %[[R:.*]] = call @produce()
// CHECK-NEXT:    call @consume(%[[R]])
// CHECK-NEXT:    memref.dealloc %[[R]]
// CHECK-NEXT:    return
// CHECK-LABEL: module @inner
// CHECK-LABEL: func.func @scratch(
// CHECK:         %[[M:.*]] = memref.alloc()
// CHECK-NEXT:    call @use(%[[M]])
// CHECK-NEXT:    memref.dealloc %[[M]]
// CHECK-NEXT:    return
// REMARK-NOT: BuffersFreedByUpstream | Category:etcopy-bufferize | Function=top
// REMARK: remark: [Missed] BuffersFreedByUpstream | Category:etcopy-bufferize | Function=scratch | Op=func.func, Reason="the function is nested in an op other than the module"
func.func private @produce() -> tensor<4xf32>
func.func private @consume(tensor<4xf32>)
func.func @top() {
  %r = func.call @produce() : () -> tensor<4xf32>
  func.call @consume(%r) : (tensor<4xf32>) -> ()
  return
}
module @inner {
  func.func private @use(memref<4xf32>)
  func.func @scratch() {
    %m = memref.alloc() : memref<4xf32>
    func.call @use(%m) : (memref<4xf32>) -> ()
    return
  }
}
