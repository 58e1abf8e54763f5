// RUN: etcopy-opt %s --etcopy-plan-device-memory=arena-ownership=caller | FileCheck %s

// arena-ownership=caller: the arenas become leading arguments, one per
// device in the order of etcopy.arenas; nothing allocates them inside.
// CHECK-LABEL: func.func private @callee
// CHECK-SAME: (%[[ARENA0:.*]]: memref<256xi8, #etcopy.device<cuda:0>>, %[[ARENA1:.*]]: memref<256xi8, #etcopy.device<cuda:1>>, %[[X:.*]]: memref<64xf32>)
// CHECK-SAME: attributes {etcopy.arenas = [{alignment = 256 : i64, device = #etcopy.device<cuda:0>, size = 256 : i64}, {alignment = 256 : i64, device = #etcopy.device<cuda:1>, size = 256 : i64}]}
// CHECK-NOT: memref.alloc
// CHECK: %[[A:.*]] = memref.view %[[ARENA0]][%{{.*}}][] : memref<256xi8, #etcopy.device<cuda:0>> to memref<64xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: %[[B:.*]] = memref.view %[[ARENA1]][%{{.*}}][] : memref<256xi8, #etcopy.device<cuda:1>> to memref<64xf32, #etcopy.device<cuda:1>>
// CHECK-NEXT: etcopy.h2d %[[X]], %[[A]]
// CHECK-NEXT: etcopy.d2h %[[B]], %[[X]]
// CHECK-NOT: memref.dealloc
// CHECK: return
!d0 = memref<64xf32, #etcopy.device<cuda:0>>
!d1 = memref<64xf32, #etcopy.device<cuda:1>>
func.func private @callee(%x: memref<64xf32>) {
  %a = memref.alloc() : !d0
  etcopy.h2d %x, %a : memref<64xf32> -> !d0
  %b = memref.alloc() : !d1
  etcopy.d2h %b, %x : !d1 -> memref<64xf32>
  memref.dealloc %a : !d0
  memref.dealloc %b : !d1
  return
}

// Callers in the module are updated, callees first: the caller provides the
// callee's arenas for the duration of each call, and plans them like its own
// buffers. Here its own buffer and the three calls' arenas never overlap,
// so all of them share offset 0 of the caller's own (caller-owned) arenas,
// the calls share one view of each arena, and a call in a loop costs no
// allocation.
// CHECK-LABEL: func.func @method
// CHECK-SAME: (%[[ARENA0:.*]]: memref<256xi8, #etcopy.device<cuda:0>>, %[[ARENA1:.*]]: memref<256xi8, #etcopy.device<cuda:1>>, %[[X:.*]]: memref<64xf32>, %[[N:.*]]: index)
// CHECK-SAME: etcopy.arenas = [{alignment = 256 : i64, device = #etcopy.device<cuda:0>, size = 256 : i64}, {alignment = 256 : i64, device = #etcopy.device<cuda:1>, size = 256 : i64}]
// CHECK-NEXT: %[[OFF0:.*]] = arith.constant 0 : index
// CHECK-NOT: memref.alloc
// CHECK-NEXT: %[[OWN:.*]] = memref.view %[[ARENA0]][%[[OFF0]]][] : memref<256xi8, #etcopy.device<cuda:0>> to memref<64xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: %[[CALL0:.*]] = memref.view %[[ARENA0]][%[[OFF0]]][] : memref<256xi8, #etcopy.device<cuda:0>> to memref<256xi8, #etcopy.device<cuda:0>>
// CHECK-NEXT: %[[CALL1:.*]] = memref.view %[[ARENA1]][%[[OFF0]]][] : memref<256xi8, #etcopy.device<cuda:1>> to memref<256xi8, #etcopy.device<cuda:1>>
// CHECK-NOT: memref.view
// CHECK: etcopy.h2d %[[X]], %[[OWN]]
// CHECK-NEXT: call @callee(%[[CALL0]], %[[CALL1]], %[[X]])
// CHECK-NEXT: call @callee(%[[CALL0]], %[[CALL1]], %[[X]])
// CHECK-NEXT: scf.for
// CHECK-NEXT: func.call @callee(%[[CALL0]], %[[CALL1]], %[[X]])
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @method(%x: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %own = memref.alloc() : !d0
  etcopy.h2d %x, %own : memref<64xf32> -> !d0
  memref.dealloc %own : !d0
  func.call @callee(%x) : (memref<64xf32>) -> ()
  func.call @callee(%x) : (memref<64xf32>) -> ()
  scf.for %i = %c0 to %n step %c1 {
    func.call @callee(%x) : (memref<64xf32>) -> ()
  }
  return
}

// A recursive call cannot be planned in the arena it is part of: it gets
// fresh arenas of its own around the call. The outside caller plans them.
// CHECK-LABEL: func.func private @recursive
// CHECK-SAME: (%[[ARENA:.*]]: memref<256xi8, #etcopy.device<cuda:0>>, %[[X:.*]]: memref<64xf32>, %[[P:.*]]: i1)
// CHECK: scf.if %[[P]] {
// CHECK-NEXT: %[[FRESH:.*]] = memref.alloc() {alignment = 256 : i64} : memref<256xi8, #etcopy.device<cuda:0>>
// CHECK-NEXT: func.call @recursive(%[[FRESH]], %[[X]], %[[P]])
// CHECK-NEXT: memref.dealloc %[[FRESH]]
// CHECK-LABEL: func.func @outside
// CHECK-SAME: (%[[ARENA:.*]]: memref<256xi8, #etcopy.device<cuda:0>>,
// CHECK: %[[VIEW:.*]] = memref.view %[[ARENA]]
// CHECK-NEXT: call @recursive(%[[VIEW]],
func.func private @recursive(%x: memref<64xf32>, %p: i1) {
  %a = memref.alloc() : !d0
  etcopy.h2d %x, %a : memref<64xf32> -> !d0
  scf.if %p {
    func.call @recursive(%x, %p) : (memref<64xf32>, i1) -> ()
  }
  memref.dealloc %a : !d0
  return
}
func.func @outside(%x: memref<64xf32>, %p: i1) {
  func.call @recursive(%x, %p) : (memref<64xf32>, i1) -> ()
  return
}

// A function without planned buffers keeps its signature.
// CHECK-LABEL: func.func @unplanned(%{{.*}}: index) {
// CHECK-NOT: etcopy.arenas
func.func @unplanned(%n: index) {
  %dyn = memref.alloc(%n) : memref<?xf32, #etcopy.device<cuda:0>>
  memref.dealloc %dyn : memref<?xf32, #etcopy.device<cuda:0>>
  return
}
