// RUN: etcopy-opt %s -split-input-file -etcopy-optimize-transfers | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h
// The result is a fixed point.
// RUN: etcopy-opt %s -split-input-file -etcopy-optimize-transfers | etcopy-opt -split-input-file -etcopy-optimize-transfers | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h

// etcopy-optimize-transfers on hand-written IR, one rule per case, each
// with a negative case. Every copy left is checked (implicit-check-not).

// Rule: same-device round trips are elided, in both directions and in
// chains.
// CHECK-LABEL: func.func @round_trips
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>)
// CHECK: return %[[X]], %[[Y]]
func.func @round_trips(%x: tensor<4xf32>, %y: tensor<4xf32, #etcopy.device<cuda:0>>) -> (tensor<4xf32>, tensor<4xf32, #etcopy.device<cuda:0>>) {
  %0 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %1 = etcopy.d2h %0 : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %2 = etcopy.h2d %1 : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %3 = etcopy.d2h %2 : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %4 = etcopy.d2h %y : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %5 = etcopy.h2d %4 : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return %3, %5 : tensor<4xf32>, tensor<4xf32, #etcopy.device<cuda:0>>
}

// -----

// Negative: a move between devices is a transfer, never elided; a round
// trip whose host copy is also used keeps that copy.
// CHECK-LABEL: func.func @cross_device_kept
// CHECK-SAME: (%[[Y:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>)
// CHECK: %[[H:.*]] = etcopy.d2h %[[Y]] : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
// CHECK: %[[D:.*]] = etcopy.h2d %[[H]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK: return %[[D]], %[[Y]], %[[H]]
func.func @cross_device_kept(%y: tensor<4xf32, #etcopy.device<cuda:0>>) -> (tensor<4xf32, #etcopy.device<cuda:1>>, tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32>) {
  %h = etcopy.d2h %y : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %d1 = etcopy.h2d %h : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  %d0 = etcopy.h2d %h : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return %d1, %d0, %h : tensor<4xf32, #etcopy.device<cuda:1>>, tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32>
}

// -----

// Negative: a round trip that changes the static type is kept.
// CHECK-LABEL: func.func @type_change_kept
// CHECK: etcopy.h2d
// CHECK: etcopy.d2h
func.func @type_change_kept(%x: tensor<?xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<?xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %d : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

// Rule: dead copies are removed.
// CHECK-LABEL: func.func @dead
// CHECK-NEXT: return
func.func @dead(%x: tensor<4xf32>) {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %d : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %e = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:3>>
  return
}

// -----

// Rule: copies of one value to one device merge into one that dominates
// all their users, also across the branches of an scf.if, which CSE
// cannot merge.
// CHECK-LABEL: func.func @duplicates
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[C:.*]]: i1)
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: scf.if %[[C]] {
// CHECK:   func.call @use(%[[D]])
// CHECK: } else {
// CHECK:   func.call @use(%[[D]])
// CHECK: }
// CHECK: call @use(%[[D]])
func.func private @use(tensor<4xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @duplicates(%x: tensor<4xf32>, %c: i1) {
  scf.if %c {
    %a = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    func.call @use(%a) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  } else {
    %b = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    func.call @use(%b) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  }
  %e = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  func.call @use(%e) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// -----

// Negative: copies of one value to different devices never merge.
// CHECK-LABEL: func.func @different_devices
// CHECK: etcopy.h2d %{{.*}} : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: etcopy.h2d %{{.*}} : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
func.func @different_devices(%x: tensor<4xf32>) -> (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:1>>) {
  %0 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %1 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  return %0, %1 : tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:1>>
}

// -----

// Rule: a copy of a loop-invariant value leaves every loop it is invariant
// in, also from inside a conditional; a copy of a value the loop defines
// stays.
// CHECK-LABEL: func.func @hoist
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: index, %[[C:.*]]: i1)
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK: scf.for %[[I:.*]] =
// CHECK:   %[[V:.*]] = func.call @make(%[[I]])
// CHECK:   %[[DV:.*]] = etcopy.h2d %[[V]]
// CHECK:   scf.for
// CHECK:     scf.if %[[C]] {
// CHECK:       func.call @use(%[[D]])
// CHECK:       func.call @use(%[[DV]])
func.func private @make(index) -> tensor<4xf32>
func.func private @use(tensor<4xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @hoist(%x: tensor<4xf32>, %n: index, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = func.call @make(%i) : (index) -> tensor<4xf32>
    scf.for %j = %c0 to %n step %c1 {
      scf.if %c {
        %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
        func.call @use(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
        %dv = etcopy.h2d %v : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
        func.call @use(%dv) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
      }
    }
  }
  return
}

// -----

// Rule: a loop-carried value that the body only copies to the device, and
// whose next value is copied back from the device, is carried on the
// device: one copy before the loop and one after, none per iteration.
// CHECK-LABEL: func.func @loop_carried
// CHECK-SAME: (%[[S0:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>, %[[N:.*]]: index)
// CHECK: %[[DS0:.*]] = etcopy.h2d %[[S0]]
// CHECK: %[[DW:.*]] = etcopy.h2d %[[W]]
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[S:.*]] = %[[DS0]]) -> (tensor<4xf32, #etcopy.device<cuda:0>>) {
// CHECK:   %[[Y:.*]] = func.call @step(%[[S]], %[[DW]])
// CHECK:   scf.yield %[[Y]] : tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: }
// CHECK: %[[H:.*]] = etcopy.d2h %[[R]]
// CHECK: return %[[H]]
func.func private @step(tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @loop_carried(%s0: tensor<4xf32>, %w: tensor<4xf32>, %n: index) -> tensor<4xf32> {
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

// -----

// Negative: the host also reads the loop-carried value each iteration, so
// it stays on the host.
// CHECK-LABEL: func.func @loop_carried_host_use
// CHECK: scf.for {{.*}} -> (tensor<4xf32>) {
// CHECK:   func.call @log
// CHECK:   etcopy.h2d
// CHECK:   func.call @step
// CHECK:   etcopy.d2h
func.func private @step(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @log(tensor<4xf32>)
func.func @loop_carried_host_use(%s0: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %s0) -> (tensor<4xf32>) {
    %ds = etcopy.h2d %s : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    func.call @log(%s) : (tensor<4xf32>) -> ()
    %y = func.call @step(%ds) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    %h = etcopy.d2h %y : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
    scf.yield %h : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Rule: a d2h sinks to just before its first host user, into the branch
// that uses it, but never into a loop.
// CHECK-LABEL: func.func @sink
// CHECK-SAME: (%[[Y:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>, %[[Z:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>, %[[W:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>, %[[C:.*]]: i1, %[[N:.*]]: index)
// CHECK: call @host_work()
// CHECK: %[[HY:.*]] = etcopy.d2h %[[Y]]
// CHECK: call @log(%[[HY]])
// CHECK: scf.if %[[C]] {
// CHECK:   %[[HZ:.*]] = etcopy.d2h %[[Z]]
// CHECK:   func.call @log(%[[HZ]])
// CHECK: }
// CHECK: %[[HW:.*]] = etcopy.d2h %[[W]]
// CHECK: scf.for
// CHECK:   func.call @log(%[[HW]])
func.func private @host_work()
func.func private @log(tensor<4xf32>)
func.func @sink(%y: tensor<4xf32, #etcopy.device<cuda:0>>, %z: tensor<4xf32, #etcopy.device<cuda:0>>, %w: tensor<4xf32, #etcopy.device<cuda:0>>, %c: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %hy = etcopy.d2h %y : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %hz = etcopy.d2h %z : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %hw = etcopy.d2h %w : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  func.call @host_work() : () -> ()
  func.call @log(%hy) : (tensor<4xf32>) -> ()
  scf.if %c {
    func.call @log(%hz) : (tensor<4xf32>) -> ()
  }
  scf.for %i = %c0 to %n step %c1 {
    func.call @log(%hw) : (tensor<4xf32>) -> ()
  }
  return
}

// -----

// Negative: out-form copies read and write memory; they are left alone.
// CHECK-LABEL: func.func @out_form
// CHECK: etcopy.h2d %{{.*}}, %{{.*}} : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: etcopy.d2h %{{.*}}, %{{.*}} : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
// CHECK: etcopy.h2d %{{.*}}, %{{.*}} : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
func.func @out_form(%a: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  etcopy.h2d %a, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.d2h %d, %a : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    etcopy.h2d %a, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  }
  return
}

// -----

// A copy in a loop made of blocks is hoisted to its source's definition,
// like one in an scf loop.
// CHECK-LABEL: func.func @cf_loop
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>,
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: cf.br ^bb1
// CHECK: ^bb1:
// CHECK-NEXT: call @use_cf(%[[D]])
func.func private @use_cf(tensor<4xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @cf_loop(%x: tensor<4xf32>, %c: i1) {
  cf.br ^bb1
^bb1:
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  func.call @use_cf(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  cf.cond_br %c, ^bb1, ^bb2
^bb2:
  return
}

// -----

// A d2h whose user sits in scf.forall's in_parallel terminator is placed in
// front of the terminator, where ops may live.
// CHECK-LABEL: func.func @forall_terminator
// CHECK: etcopy.h2d
// CHECK: %[[H:.*]] = etcopy.d2h
// CHECK-NEXT: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[H]]
func.func private @dev_forall(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @forall_terminator(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %r = scf.forall (%i) in (%n) shared_outs(%o = %x) -> tensor<4xf32> {
    %d = etcopy.h2d %o : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    %z = func.call @dev_forall(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    %h = etcopy.d2h %z : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %h into %o[0][4][1] : tensor<4xf32> into tensor<4xf32>
    }
  }
  return %r : tensor<4xf32>
}

// -----

// Negative: a copy that narrows a dynamic size can fail at run time, so it is
// not hoisted out of a loop that may not run.
// CHECK-LABEL: func.func @narrowing_in_loop
// CHECK: scf.for
// CHECK-NEXT: etcopy.h2d %{{.*}} : tensor<?xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
func.func private @use_narrow(tensor<4xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @narrowing_in_loop(%x: tensor<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %d = etcopy.h2d %x : tensor<?xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    func.call @use_narrow(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  }
  return
}
