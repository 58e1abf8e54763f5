// RUN: etcopy-opt %s --convert-etcopy-to-gpu=async=false | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h --implicit-check-not=memref.alloc --implicit-check-not=memref.dealloc --implicit-check-not=memref.copy --implicit-check-not=gpu.wait --implicit-check-not=async

// async=false: the sync forms, no tokens and no waits, even where the async
// form would wait (before the host load and the call).

// CHECK-LABEL: func.func @sync
// CHECK-SAME: (%[[H:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK: %[[D:.*]] = gpu.alloc (%[[N]]) : memref<?xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: gpu.memcpy %[[D]], %[[H]] : memref<?xf32, #etcopy.device<cuda:0>>, memref<?xf32>
// CHECK-NEXT: gpu.memcpy %[[H]], %[[D]] : memref<?xf32>, memref<?xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: %[[V:.*]] = memref.load %[[H]]
// CHECK-NEXT: call @use(%[[D]])
// CHECK-NEXT: gpu.dealloc %[[D]] : memref<?xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: return %[[V]]
func.func private @use(memref<?xf32, #etcopy.device<cuda:0>>)
func.func @sync(%h: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %d = memref.alloc(%n) : memref<?xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h, %d : memref<?xf32> -> memref<?xf32, #etcopy.device<cuda:0>>
  memref.copy %d, %h : memref<?xf32, #etcopy.device<cuda:0>> to memref<?xf32>
  %v = memref.load %h[%c0] : memref<?xf32>
  func.call @use(%d) : (memref<?xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d : memref<?xf32, #etcopy.device<cuda:0>>
  return %v : f32
}
