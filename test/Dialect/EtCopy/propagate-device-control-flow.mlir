// RUN: etcopy-opt %s -split-input-file -etcopy-propagate-device | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h
// RUN: etcopy-opt %s -split-input-file -etcopy-propagate-device | etcopy-opt -split-input-file -etcopy-optimize-transfers | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h

// Placement through scf.for, scf.if, scf.while, cf branches and calls
// between host functions: copies of loop-invariant values outside loops,
// loop-carried values in one placement across iterations, no copy executed
// on a path that does not need it.

// A loop-invariant host value used on the device: one h2d, before the loop.
// A state the loop updates on the device is carried on the device: one h2d
// of the initial value before the loop, one d2h of the result after it.
// CHECK-LABEL: func.func @for_invariant_and_carried
// CHECK-SAME: (%[[S0:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>, %[[N:.*]]: index) -> tensor<4xf32>
// CHECK: %[[DS0:.*]] = etcopy.h2d %[[S0]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[DW:.*]] = etcopy.h2d %[[W]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[S:.*]] = %[[DS0]]) -> (tensor<4xf32, #etcopy.device<cuda:0>>) {
// CHECK:   %[[Y:.*]] = func.call @step(%[[S]], %[[DW]])
// CHECK:   scf.yield %[[Y]] : tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: }
// CHECK: %[[H:.*]] = etcopy.d2h %[[R]] : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
// CHECK: return %[[H]]
func.func private @step(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @for_invariant_and_carried(%s0: tensor<4xf32>, %w: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %s0) -> (tensor<4xf32>) {
    %y = func.call @step(%s, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// The host post-processes the state every iteration: the state is carried
// on the host and the two copies per iteration are needed; the invariant
// weight is still copied once, outside.
// CHECK-LABEL: func.func @for_host_step
// CHECK-SAME: (%[[S0:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>, %[[N:.*]]: index)
// CHECK: %[[DW:.*]] = etcopy.h2d %[[W]]
// CHECK: scf.for {{.*}} iter_args(%[[S:.*]] = %[[S0]]) -> (tensor<4xf32>) {
// CHECK:   %[[DS:.*]] = etcopy.h2d %[[S]]
// CHECK:   %[[Y:.*]] = func.call @step(%[[DS]], %[[DW]])
// CHECK:   %[[HY:.*]] = etcopy.d2h %[[Y]]
// CHECK:   %[[Z:.*]] = func.call @post(%[[HY]])
// CHECK:   scf.yield %[[Z]] : tensor<4xf32>
func.func private @step(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @post(tensor<4xf32>) -> tensor<4xf32>
func.func @for_host_step(%s0: tensor<4xf32>, %w: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %s0) -> (tensor<4xf32>) {
    %y = func.call @step(%s, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %z = func.call @post(%y) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %z : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Nested loops: a copy leaves every loop its value is invariant in, and
// only those. A device value the host uses inside the loops is copied back
// once, before them.
// CHECK-LABEL: func.func @nested_loops
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>, %[[N:.*]]: index)
// CHECK: %[[DX:.*]] = etcopy.h2d %[[X]]
// CHECK: %[[D:.*]] = call @step(%[[DX]], %[[DX]])
// CHECK: %[[DW:.*]] = etcopy.h2d %[[W]]
// CHECK: %[[HD:.*]] = etcopy.d2h %[[D]]
// CHECK: scf.for
// CHECK:   %[[P:.*]] = func.call @post(%[[X]])
// CHECK:   %[[DP:.*]] = etcopy.h2d %[[P]]
// CHECK:   scf.for
// CHECK:     func.call @step(%[[DP]], %[[DW]])
// CHECK:     func.call @use(%[[HD]])
func.func private @step(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @post(tensor<4xf32>) -> tensor<4xf32>
func.func private @use(tensor<4xf32>)
func.func @nested_loops(%x: tensor<4xf32>, %w: tensor<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = func.call @step(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %p = func.call @post(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.for %j = %c0 to %n step %c1 {
      %y = func.call @step(%p, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      func.call @use(%d) : (tensor<4xf32>) -> ()
    }
  }
  return
}

// -----

// scf.if: the result takes the placement that needs the fewest copies (here
// cuda:0: the branch yielding the host value copies it); the value the
// second delegate call needs stays there.
// CHECK-LABEL: func.func @if_result
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[C:.*]]: i1)
// CHECK: %[[DX:.*]] = etcopy.h2d %[[X]]
// CHECK: %[[R:.*]] = scf.if %[[C]] -> (tensor<4xf32, #etcopy.device<cuda:0>>) {
// CHECK:   %[[A:.*]] = func.call @step(%[[DX]], %[[DX]])
// CHECK:   scf.yield %[[A]] : tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: } else {
// CHECK:   scf.yield %[[DX]] : tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: }
// CHECK: %[[T:.*]] = call @step(%[[R]], %[[R]])
// CHECK: %[[H:.*]] = etcopy.d2h %[[T]]
// CHECK: return %[[H]]
func.func private @step(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @if_result(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %r = scf.if %c -> tensor<4xf32> {
    %a = func.call @step(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  %t = func.call @step(%r, %r) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

// A value needed in one branch only is copied in that branch (no copy on
// the other path); needed in both branches, it is copied once before the
// scf.if.
// CHECK-LABEL: func.func @if_copies
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[C:.*]]: i1)
// CHECK: %[[DY:.*]] = etcopy.h2d %[[Y]]
// CHECK: scf.if %[[C]] {
// CHECK:   %[[DX:.*]] = etcopy.h2d %[[X]]
// CHECK:   func.call @sink(%[[DX]], %[[DY]])
// CHECK: } else {
// CHECK:   func.call @sink(%[[DY]], %[[DY]])
// CHECK: }
func.func private @sink(tensor<4xf32>, tensor<4xf32>)
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @if_copies(%x: tensor<4xf32>, %y: tensor<4xf32>, %c: i1) {
  scf.if %c {
    func.call @sink(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> ()
  } else {
    func.call @sink(%y, %y) : (tensor<4xf32>, tensor<4xf32>) -> ()
  }
  return
}

// -----

// A copy inside a conditional inside a loop leaves the loop when its value
// is loop-invariant: once instead of once per iteration.
// CHECK-LABEL: func.func @if_in_loop
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[C:.*]]: i1, %[[N:.*]]: index)
// CHECK: %[[DX:.*]] = etcopy.h2d %[[X]]
// CHECK: scf.for
// CHECK:   scf.if %[[C]] {
// CHECK:     func.call @sink(%[[DX]], %[[DX]])
func.func private @sink(tensor<4xf32>, tensor<4xf32>)
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @if_in_loop(%x: tensor<4xf32>, %c: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.if %c {
      func.call @sink(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> ()
    }
  }
  return
}

// -----

// scf.while whose condition is computed on the device: the state stays on
// the device in both regions; only the i1 flag crosses each iteration.
// CHECK-LABEL: func.func @while_on_device
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>)
// CHECK: %[[DX:.*]] = etcopy.h2d %[[X]]
// CHECK: %[[DW:.*]] = etcopy.h2d %[[W]]
// CHECK: %[[R:.*]] = scf.while (%[[S:.*]] = %[[DX]]) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
// CHECK:   %[[F:.*]] = func.call @check(%[[S]]) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<i1, #etcopy.device<cuda:0>>
// CHECK:   %[[HF:.*]] = etcopy.d2h %[[F]] : tensor<i1, #etcopy.device<cuda:0>> -> tensor<i1>
// CHECK:   %[[B:.*]] = tensor.extract %[[HF]][]
// CHECK:   scf.condition(%[[B]]) %[[S]] : tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: } do {
// CHECK: ^bb0(%[[T:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>):
// CHECK:   %[[NEXT:.*]] = func.call @step(%[[T]], %[[DW]])
// CHECK:   scf.yield %[[NEXT]] : tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: }
// CHECK: %[[H:.*]] = etcopy.d2h %[[R]]
// CHECK: return %[[H]]
func.func private @step(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @check(tensor<4xf32>) -> tensor<i1>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @while_on_device(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.while (%s = %x) : (tensor<4xf32>) -> tensor<4xf32> {
    %f = func.call @check(%s) : (tensor<4xf32>) -> tensor<i1>
    %c = tensor.extract %f[] : tensor<i1>
    scf.condition(%c) %s : tensor<4xf32>
  } do {
  ^bb0(%t: tensor<4xf32>):
    %n = func.call @step(%t, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// scf.while whose condition reads the state on the host: the state is
// carried on the host; each iteration copies it to the device and the new
// state back, which is the least any placement can do.
// CHECK-LABEL: func.func @while_on_host
// CHECK: scf.while (%[[S:.*]] = %{{.*}}) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK:   func.call @test(%[[S]])
// CHECK: } do {
// CHECK: ^bb0(%[[T:.*]]: tensor<4xf32>):
// CHECK:   %[[DT:.*]] = etcopy.h2d %[[T]]
// CHECK:   %[[NEXT:.*]] = func.call @step(%[[DT]], %[[DT]])
// CHECK:   %[[HN:.*]] = etcopy.d2h %[[NEXT]]
// CHECK:   scf.yield %[[HN]] : tensor<4xf32>
func.func private @step(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @test(tensor<4xf32>) -> i1
func.func @while_on_host(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.while (%s = %x) : (tensor<4xf32>) -> tensor<4xf32> {
    %c = func.call @test(%s) : (tensor<4xf32>) -> i1
    scf.condition(%c) %s : tensor<4xf32>
  } do {
  ^bb0(%t: tensor<4xf32>):
    %n = func.call @step(%t, %t) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Unstructured control flow: a block argument takes a placement like any
// forwarded value; the branch operand from the host is copied on its edge.
// CHECK-LABEL: func.func @cf_branches
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[C:.*]]: i1)
// CHECK: %[[DX:.*]] = etcopy.h2d %[[X]]
// CHECK: %[[A:.*]] = call @step(%[[DX]], %[[DX]])
// CHECK: cf.cond_br %[[C]], ^bb1(%[[A]] : tensor<4xf32, #etcopy.device<cuda:0>>), ^bb1(%[[DX]] : tensor<4xf32, #etcopy.device<cuda:0>>)
// CHECK: ^bb1(%[[P:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>):
// CHECK: %[[Q:.*]] = call @step(%[[P]], %[[P]])
// CHECK: %[[H:.*]] = etcopy.d2h %[[Q]]
// CHECK: return %[[H]]
func.func private @step(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @cf_branches(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %a = func.call @step(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  cf.cond_br %c, ^bb1(%a : tensor<4xf32>), ^bb1(%x : tensor<4xf32>)
^bb1(%p: tensor<4xf32>):
  %q = func.call @step(%p, %p) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %q : tensor<4xf32>
}

// -----

// Calls between host functions: a private host function called only
// directly gets the signature that needs the fewest copies, so a value
// produced on the device in it and consumed on the device by its caller
// never visits the host.
// CHECK-LABEL: func.func private @layer
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[Y:.*]] = call @step(%[[A]], %[[A]])
// CHECK: return %[[Y]] : tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[DX:.*]] = etcopy.h2d %[[X]]
// CHECK: %[[L1:.*]] = call @layer(%[[DX]]) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[L2:.*]] = call @layer(%[[L1]])
// CHECK: %[[H:.*]] = etcopy.d2h %[[L2]]
// CHECK: return %[[H]]
func.func private @step(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @layer(%a: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @step(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func @two_layers(%x: tensor<4xf32>) -> tensor<4xf32> {
  %l1 = func.call @layer(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %l2 = func.call @layer(%l1) : (tensor<4xf32>) -> tensor<4xf32>
  return %l2 : tensor<4xf32>
}

// -----

// Negative: a host function whose address is taken keeps its signature;
// the copies happen inside it.
// CHECK-LABEL: func.func private @taken
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[DA:.*]] = etcopy.h2d %[[A]]
// CHECK: %[[Y:.*]] = call @step(%[[DA]], %[[DA]])
// CHECK: %[[H:.*]] = etcopy.d2h %[[Y]]
// CHECK: return %[[H]] : tensor<4xf32>
// CHECK-LABEL: func.func @address_taken
// CHECK: call @taken(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
func.func private @step(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @taken(%a: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @step(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func @address_taken(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = func.constant @taken : (tensor<4xf32>) -> tensor<4xf32>
  %y = func.call @taken(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A delegate called in a loop made of blocks: the loop-invariant argument is
// copied once, in front of the loop.
// CHECK-LABEL: func.func @cf_loop
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>,
// CHECK-NEXT: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: cf.br ^bb1
// CHECK: call @dev_cf(%[[D]])
func.func private @dev_cf(tensor<4xf32>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @cf_loop(%x: tensor<4xf32>, %c: i1) {
  cf.br ^bb1
^bb1:
  func.call @dev_cf(%x) : (tensor<4xf32>) -> ()
  cf.cond_br %c, ^bb1, ^bb2
^bb2:
  return
}

// -----

// The result comes back to the host in front of scf.forall's terminator,
// not inside it.
// CHECK-LABEL: func.func @forall
// CHECK: etcopy.h2d
// CHECK: %[[H:.*]] = etcopy.d2h
// CHECK-NEXT: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[H]]
func.func private @dev_forall(tensor<4xf32>) -> tensor<4xf32> attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @forall(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %r = scf.forall (%i) in (%n) shared_outs(%o = %x) -> tensor<4xf32> {
    %y = func.call @dev_forall(%o) : (tensor<4xf32>) -> tensor<4xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %y into %o[0][4][1] : tensor<4xf32> into tensor<4xf32>
    }
  }
  return %r : tensor<4xf32>
}
