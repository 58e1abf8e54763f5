// RUN: etcopy-opt %s --etcopy-bufferize --etcopy-plan-device-memory \
// RUN:   | FileCheck %s --implicit-check-not=memref.dealloc
// RUN: etcopy-opt %s --etcopy-bufferize --etcopy-plan-device-memory \
// RUN:   --remarks-filter=etcopy-plan-device-memory -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK

// etcopy-bufferize's frees through scf.for and scf.if and the planner's
// lifetimes agree: a buffer freed in the block that allocates it (the loop
// body's upload buffer %d, freed after the delegate reads it; %e in the
// scf.if, the same) is planned and keeps its arena slot, its free gone;
// %d and %e are never live at once and share offset 0, and one view, made
// at entry. The delegates'
// results and the buffers a block gives away (%h, which the scf.if takes
// over, and the loop's state) stay allocations freed where etcopy-bufferize
// put them.

// REMARK: BufferPlanned {{.*}} Arena=cuda:0, Offset=0, Size=16
// REMARK: BufferPlanned {{.*}} Arena=cuda:0, Offset=0, Size=16
// REMARK: planned cuda:0 arena: 2 buffer(s), 32 bytes requested, 256 bytes (peak live 256)

// CHECK-LABEL: func.func @method(
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64} : memref<256xi8, #etcopy.device<cuda:0>>
// CHECK-NEXT:    %[[OFF:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[D:.*]] = memref.view %[[ARENA]][%[[OFF]]][]
// CHECK-NOT:     memref.view
// CHECK:         %[[LOOP:.*]] = scf.for {{.*}} iter_args(%[[S:.*]] = %{{.*}})
// CHECK-NEXT:      etcopy.h2d %[[S]], %[[D]]
// CHECK-NEXT:      memref.dealloc %[[S]]
// CHECK-NEXT:      %[[A:.*]] = func.call @reverse(%[[D]])
// CHECK-NEXT:      %[[H:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT:      etcopy.d2h %[[A]], %[[H]]
// CHECK-NEXT:      memref.dealloc %[[A]]
// CHECK-NEXT:      %[[IF:.*]] = scf.if
// CHECK-NEXT:        etcopy.h2d %[[H]], %[[D]]
// CHECK-NEXT:        memref.dealloc %[[H]]
// CHECK-NEXT:        %[[B:.*]] = func.call @reverse(%[[D]])
// CHECK-NEXT:        %[[H2:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT:        etcopy.d2h %[[B]], %[[H2]]
// CHECK-NEXT:        memref.dealloc %[[B]]
// CHECK-NEXT:        scf.yield %[[H2]]
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[H]]
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[IF]]
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[ARENA]]
// CHECK-NEXT:    return %[[LOOP]]
func.func private @reverse(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @method(%x: tensor<4xf32>, %n: index, %c: i1) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %x) -> tensor<4xf32> {
    %d = etcopy.h2d %s : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    %a = func.call @reverse(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    %h = etcopy.d2h %a : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
    %y = scf.if %c -> tensor<4xf32> {
      %e = etcopy.h2d %h : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
      %b = func.call @reverse(%e) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
      %h2 = etcopy.d2h %b : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
      scf.yield %h2 : tensor<4xf32>
    } else {
      scf.yield %h : tensor<4xf32>
    }
    scf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
