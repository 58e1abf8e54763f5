// RUN: etcopy-opt %s -split-input-file -etcopy-optimize-transfers | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h
// The output verifies, parses again and is a fixed point.
// RUN: etcopy-opt %s -split-input-file -etcopy-optimize-transfers | etcopy-opt -split-input-file -etcopy-optimize-transfers | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h

// Code in blocks unreachable from the entry never runs and has no node in
// the dominator tree. Copies there stay where they are (an unused one is
// still erased); a reachable copy's users there get a copy of their own,
// one per unreachable block, so that they never hold the reachable copy in
// place.

// A copy in the entry used in a reachable block and in a dead one: it sinks
// to its reachable user; the dead user gets its own copy.
// CHECK-LABEL: func.func @copy_used_in_dead_block
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: cf.br ^[[LIVE:.*]]
// CHECK: ^[[LIVE]]:
// CHECK-NEXT: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: call @use(%[[D]])
// CHECK: ^{{.*}}:  // no predecessors
// CHECK-NEXT: %[[DEAD_D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: call @use(%[[DEAD_D]])
func.func private @use(tensor<4xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @copy_used_in_dead_block(%x: tensor<4xf32>) {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  cf.br ^bb1
^bb1:
  func.call @use(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
^dead:
  func.call @use(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// -----

// Copies in dead code are left alone: the round trip and the duplicate in
// ^dead are kept, the copy in front of @host_work is not sunk; the unused
// one is erased. The duplicate of a reachable copy in a dead block is not
// merged with it.
// CHECK-LABEL: func.func @copies_in_dead_code
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: call @use(%[[D]])
// CHECK-NEXT: return
// CHECK: ^{{.*}}:  // no predecessors
// CHECK-NEXT: %[[A:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: %[[B:.*]] = etcopy.d2h %[[A]]
// CHECK-NEXT: %[[C:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: call @host_work()
// CHECK-NEXT: call @log(%[[B]])
// CHECK-NEXT: call @use(%[[C]])
// CHECK-NEXT: return
func.func private @use(tensor<4xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @log(tensor<4xf32>)
func.func private @host_work()
func.func @copies_in_dead_code(%x: tensor<4xf32>) {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  func.call @use(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
^dead:
  %a = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %b = etcopy.d2h %a : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %c = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %unused = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  func.call @host_work() : () -> ()
  func.call @log(%b) : (tensor<4xf32>) -> ()
  func.call @use(%c) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// -----

// Duplicates in two reachable blocks merge into their common dominator; a
// third user in a dead block (one that also holds buffers) neither moves
// nor keeps it: it gets its own copy, before the loop it sits in.
// CHECK-LABEL: func.func @merge_with_dead_user
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[P:.*]]: i1, %[[N:.*]]: index)
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: cf.cond_br %[[P]]
// CHECK: call @use(%[[D]])
// CHECK: call @use(%[[D]])
// CHECK: ^{{.*}}:  // no predecessors
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: %[[DEAD_D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: scf.for
// CHECK-NEXT: func.call @use(%[[DEAD_D]])
func.func private @use(tensor<4xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @merge_with_dead_user(%x: tensor<4xf32>, %p: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  cf.cond_br %p, ^a, ^b
^a:
  %d1 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  func.call @use(%d1) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
^b:
  %d2 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  func.call @use(%d2) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
^dead:
  %buffer = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  scf.for %i = %c0 to %n step %c1 {
    func.call @use(%d2) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  }
  memref.dealloc %buffer : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// A loop-invariant copy hoists out of the loop for its reachable user; its
// user in a dead block of an scf.execute_region in the loop gets its own
// copy there.
// CHECK-LABEL: func.func @hoist_with_dead_user_in_region
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: index)
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.execute_region {
// CHECK-NEXT: func.call @use(%[[D]])
// CHECK: ^{{.*}}:  // no predecessors
// CHECK-NEXT: %[[DEAD_D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: func.call @use(%[[DEAD_D]])
func.func private @use(tensor<4xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @hoist_with_dead_user_in_region(%x: tensor<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    scf.execute_region {
      func.call @use(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
      scf.yield
    ^dead:
      func.call @use(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
      scf.yield
    }
  }
  return
}

// -----

// A copy used only in dead code is dead: the dead block gets the copy, the
// reachable code none.
// CHECK-LABEL: func.func @only_dead_users
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return
// CHECK: ^{{.*}}:  // no predecessors
// CHECK-NEXT: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK-NEXT: call @use(%[[D]])
func.func private @use(tensor<4xf32, #etcopy.device<cuda:0>>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @only_dead_users(%x: tensor<4xf32>) {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return
^dead:
  func.call @use(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}
