// RUN: etcopy-opt %s -split-input-file -etcopy-propagate-device | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h
// The output verifies, parses again and is a fixed point of both passes.
// RUN: etcopy-opt %s -split-input-file -etcopy-propagate-device | etcopy-opt -split-input-file -etcopy-propagate-device -etcopy-optimize-transfers | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h

// Code in blocks unreachable from the entry never runs and has no node in
// the dominator tree. Its uses weigh nothing in placement decisions and get
// copies of their own, one per unreachable block, just before the first of
// them there; the copies of reachable code are placed as if it were absent.

// A function argument used in a reachable block other than the entry and
// in a block nobody branches to: the reachable copy sits just before its
// user in ^bb1 (not in the entry, which the dead user would have forced),
// the dead block gets its own copies.
// CHECK-LABEL: func.func @argument_used_in_dead_block
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: cf.br ^[[LIVE:.*]]
// CHECK: ^[[LIVE]]:
// CHECK-NEXT: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: %[[Y:.*]] = call @f(%[[D]])
// CHECK-NEXT: %[[H:.*]] = etcopy.d2h %[[Y]]
// CHECK-NEXT: return %[[H]]
// CHECK: ^{{.*}}:  // no predecessors
// CHECK-NEXT: %[[DEAD_D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: %[[DEAD_Y:.*]] = call @f(%[[DEAD_D]])
// CHECK-NEXT: %[[DEAD_H:.*]] = etcopy.d2h %[[DEAD_Y]]
// CHECK-NEXT: return %[[DEAD_H]]
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @argument_used_in_dead_block(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^bb1
^bb1:
  %y = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
^dead:
  %z = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// Two dead blocks, one of them using a device result of the entry inside a
// loop and an scf.if, and one reached only from the other: each gets its
// copies in front of its first user, loops or not; the reachable code keeps
// its single copy after the delegate.
// CHECK-LABEL: func.func @dead_blocks_with_regions
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[C:.*]]: i1, %[[N:.*]]: index)
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK: %[[Y:.*]] = call @f(%[[D]])
// CHECK: %[[H:.*]] = etcopy.d2h %[[Y]]
// CHECK: call @log(%[[H]])
// CHECK: return
// CHECK: ^[[DEAD1:.*]]:  // no predecessors
// CHECK: %[[DEAD_H:.*]] = etcopy.d2h %[[Y]]
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.if %[[C]] {
// CHECK-NEXT: func.call @log(%[[DEAD_H]])
// CHECK: cf.br ^[[DEAD2:.*]]
// CHECK: ^[[DEAD2]]:  // pred: ^[[DEAD1]]
// CHECK-NEXT: %[[DEAD2_H:.*]] = etcopy.d2h %[[Y]]
// CHECK-NEXT: call @log(%[[DEAD2_H]])
// CHECK-NEXT: %[[DEAD2_D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: call @f(%[[DEAD2_D]])
// CHECK-NEXT: return
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @log(tensor<4xf32>)
func.func @dead_blocks_with_regions(%x: tensor<4xf32>, %c: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %y = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.call @log(%y) : (tensor<4xf32>) -> ()
  return
^dead:
  %buffer = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  scf.for %i = %c0 to %n step %c1 {
    scf.if %c {
      func.call @log(%y) : (tensor<4xf32>) -> ()
    }
  }
  memref.dealloc %buffer : memref<4xf32, #etcopy.device<cuda:0>>
  cf.br ^dead2
^dead2:
  func.call @log(%y) : (tensor<4xf32>) -> ()
  %z = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// A value defined in dead code and used there: its copy sits right before
// its user, in the same dead block.
// CHECK-LABEL: func.func @defined_in_dead_block
// CHECK: return
// CHECK: ^{{.*}}:  // no predecessors
// CHECK-NEXT: %[[D:.*]] = etcopy.h2d %{{.*}}
// CHECK-NEXT: %[[Y:.*]] = call @f(%[[D]])
// CHECK-NEXT: call @host_work()
// CHECK-NEXT: %[[H:.*]] = etcopy.d2h %[[Y]]
// CHECK-NEXT: call @log(%[[H]])
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @log(tensor<4xf32>)
func.func private @host_work()
func.func @defined_in_dead_block(%x: tensor<4xf32>) {
  return
^dead:
  %y = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.call @host_work() : () -> ()
  func.call @log(%y) : (tensor<4xf32>) -> ()
  return
}

// -----

// A block argument that reachable code feeds from the device and uses on
// the device stays on the device. Three dead branches feed it host values:
// counted, their three h2d would outweigh the two copies of a host
// placement; they do not count, and each gets its h2d in its own block.
// CHECK-LABEL: func.func @dead_predecessors_do_not_weigh
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xf32>)
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK: %[[Y:.*]] = call @f(%[[D]])
// CHECK: cf.br ^[[JOIN:.*]](%[[Y]] : tensor<4xf32, #etcopy.device<cuda:0>>)
// CHECK: ^[[JOIN]](%[[S:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>):
// CHECK: %[[Z:.*]] = call @f(%[[S]])
// CHECK: %[[H:.*]] = etcopy.d2h %[[Z]]
// CHECK: return %[[H]]
// CHECK: etcopy.h2d %[[A]]
// CHECK-NEXT: cf.br ^[[JOIN]]
// CHECK: etcopy.h2d %[[B]]
// CHECK-NEXT: cf.br ^[[JOIN]]
// CHECK: etcopy.h2d %[[C]]
// CHECK-NEXT: cf.br ^[[JOIN]]
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @dead_predecessors_do_not_weigh(%x: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  cf.br ^join(%y : tensor<4xf32>)
^join(%s: tensor<4xf32>):
  %z = func.call @f(%s) : (tensor<4xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
^dead_a:
  cf.br ^join(%a : tensor<4xf32>)
^dead_b:
  cf.br ^join(%b : tensor<4xf32>)
^dead_c:
  cf.br ^join(%c : tensor<4xf32>)
}

// -----

// skip-h2d-for-method-inputs: a host user in dead code does not keep an
// argument on the host (no remark); it gets a d2h of its own.
// CHECK-LABEL: func.func @skip_h2d_dead_host_user
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>)
// CHECK-NEXT: %[[Y:.*]] = call @f(%[[X]])
// CHECK: ^{{.*}}:  // no predecessors
// CHECK-NEXT: %[[H:.*]] = etcopy.d2h %[[X]]
// CHECK-NEXT: call @log(%[[H]])
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @log(tensor<4xf32>)
func.func @skip_h2d_dead_host_user(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.propagate = {skip_h2d_for_method_inputs = true,
                                    skip_d2h_for_method_outputs = true}} {
  %y = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
^dead:
  func.call @log(%x) : (tensor<4xf32>) -> ()
  return %x : tensor<4xf32>
}

// -----

// A dead block inside a region (scf.execute_region) is dead code too; the
// reachable user in the same region keeps the copy placed for it alone.
// CHECK-LABEL: func.func @dead_block_in_region
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: scf.execute_region
// CHECK-NEXT: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: %[[Y:.*]] = func.call @f(%[[D]])
// CHECK-NEXT: %[[H:.*]] = etcopy.d2h %[[Y]]
// CHECK-NEXT: scf.yield %[[H]]
// CHECK: ^{{.*}}:  // no predecessors
// CHECK-NEXT: %[[DEAD_D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: %[[DEAD_Y:.*]] = func.call @f(%[[DEAD_D]])
// CHECK-NEXT: %[[DEAD_H:.*]] = etcopy.d2h %[[DEAD_Y]]
// CHECK-NEXT: scf.yield %[[DEAD_H]]
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @dead_block_in_region(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.execute_region -> tensor<4xf32> {
    %y = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  ^dead:
    %z = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %z : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
