// RUN: etcopy-opt %s -split-input-file --convert-etcopy-to-gpu | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h --implicit-check-not=memref.alloc --implicit-check-not=memref.dealloc --implicit-check-not=memref.copy --implicit-check-not=gpu.wait

// Each op form lowered on its own, async: the chain starts with
// `gpu.wait async`, every device op depends on the previous token, and the
// host waits once, before the return.

// CHECK-LABEL: func.func @h2d
// CHECK-SAME: (%[[SRC:.*]]: memref<2x3xf32>, %[[DST:.*]]: memref<2x3xf32, #etcopy.device<cuda:0>>)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.memcpy async [%[[T0]]] %[[DST]], %[[SRC]] : memref<2x3xf32, #etcopy.device<cuda:0>>, memref<2x3xf32>
// CHECK: gpu.wait [%[[T1]]]
// CHECK-NEXT: return
func.func @h2d(%src: memref<2x3xf32>, %dst: memref<2x3xf32, #etcopy.device<cuda:0>>) {
  etcopy.h2d %src, %dst : memref<2x3xf32> -> memref<2x3xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// Layouts and static/dynamic sizes may differ between the two sides:
// gpu.memcpy takes them as they are.
// CHECK-LABEL: func.func @d2h_strided_dynamic
// CHECK-SAME: (%[[SRC:.*]]: memref<4x?xf32, strided<[?, 1], offset: ?>, #etcopy.device<cuda:1>>, %[[DST:.*]]: memref<?x8xf32>)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.memcpy async [%[[T0]]] %[[DST]], %[[SRC]] : memref<?x8xf32>, memref<4x?xf32, strided<[?, 1], offset: ?>, #etcopy.device<cuda:1>>
// CHECK: gpu.wait [%[[T1]]]
// CHECK-NEXT: return
func.func @d2h_strided_dynamic(%src: memref<4x?xf32, strided<[?, 1], offset: ?>, #etcopy.device<cuda:1>>, %dst: memref<?x8xf32>) {
  etcopy.d2h %src, %dst : memref<4x?xf32, strided<[?, 1], offset: ?>, #etcopy.device<cuda:1>> -> memref<?x8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @rank0
// CHECK-SAME: (%[[H:.*]]: memref<f64>, %[[D:.*]]: memref<f64, #etcopy.device<cuda:0>>)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.memcpy async [%[[T0]]] %[[D]], %[[H]] : memref<f64, #etcopy.device<cuda:0>>, memref<f64>
// CHECK: %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[H]], %[[D]] : memref<f64>, memref<f64, #etcopy.device<cuda:0>>
// CHECK: gpu.wait [%[[T2]]]
// CHECK-NEXT: return
func.func @rank0(%h: memref<f64>, %d: memref<f64, #etcopy.device<cuda:0>>) {
  etcopy.h2d %h, %d : memref<f64> -> memref<f64, #etcopy.device<cuda:0>>
  etcopy.d2h %d, %h : memref<f64, #etcopy.device<cuda:0>> -> memref<f64>
  return
}

// -----

// memref.copy with a device side, in each direction, becomes gpu.memcpy; a
// copy between host buffers stays on the host.
// CHECK-LABEL: func.func @memref_copies
// CHECK-SAME: (%[[H:.*]]: memref<4xi32>, %[[H2:.*]]: memref<4xi32>, %[[D0:.*]]: memref<4xi32, #etcopy.device<cuda:0>>, %[[D1:.*]]: memref<?xi32, #etcopy.device<cuda:1>>)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.memcpy async [%[[T0]]] %[[D0]], %[[H]] : memref<4xi32, #etcopy.device<cuda:0>>, memref<4xi32>
// CHECK: %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[D1]], %[[D0]] : memref<?xi32, #etcopy.device<cuda:1>>, memref<4xi32, #etcopy.device<cuda:0>>
// CHECK: %[[T3:.*]] = gpu.memcpy async [%[[T2]]] %[[H2]], %[[D1]] : memref<4xi32>, memref<?xi32, #etcopy.device<cuda:1>>
// CHECK: gpu.wait [%[[T3]]]
// CHECK-NEXT: memref.copy %[[H]], %[[H2]] : memref<4xi32> to memref<4xi32>
// CHECK-NEXT: return
func.func @memref_copies(%h: memref<4xi32>, %h2: memref<4xi32>, %d0: memref<4xi32, #etcopy.device<cuda:0>>, %d1: memref<?xi32, #etcopy.device<cuda:1>>) {
  memref.copy %h, %d0 : memref<4xi32> to memref<4xi32, #etcopy.device<cuda:0>>
  memref.copy %d0, %d1 : memref<4xi32, #etcopy.device<cuda:0>> to memref<?xi32, #etcopy.device<cuda:1>>
  memref.copy %d1, %h2 : memref<?xi32, #etcopy.device<cuda:1>> to memref<4xi32>
  memref.copy %h, %h2 : memref<4xi32> to memref<4xi32>
  return
}

// -----

// Device allocations and deallocations join the chain; dynamic sizes carry
// over and the alignment of memref.alloc is dropped (device allocations are
// always aligned more strictly). Host allocations stay.
// CHECK-LABEL: func.func @alloc_dealloc
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[A:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[B:.*]], %[[T2:.*]] = gpu.alloc async [%[[T1]]] (%[[N]], %[[N]]) : memref<?x2x?xf16, #etcopy.device<cuda:1>>
// CHECK: %[[H:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[T3:.*]] = gpu.dealloc async [%[[T2]]] %[[A]] : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: gpu.wait [%[[T3]]]
// CHECK-NEXT: return %[[B]], %[[H]]
func.func @alloc_dealloc(%n: index) -> (memref<?x2x?xf16, #etcopy.device<cuda:1>>, memref<4xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32, #etcopy.device<cuda:0>>
  %b = memref.alloc(%n, %n) : memref<?x2x?xf16, #etcopy.device<cuda:1>>
  %h = memref.alloc() : memref<4xf32>
  memref.dealloc %a : memref<4xf32, #etcopy.device<cuda:0>>
  return %b, %h : memref<?x2x?xf16, #etcopy.device<cuda:1>>, memref<4xf32>
}

// -----

// `#etcopy.device<cpu>` is host memory: nothing to lower.
// CHECK-LABEL: func.func @explicit_cpu
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<4xf32, #etcopy.device<cpu>>
// CHECK-NEXT: memref.copy %{{.*}}, %[[A]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @explicit_cpu(%h: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32, #etcopy.device<cpu>>
  memref.copy %h, %a : memref<4xf32> to memref<4xf32, #etcopy.device<cpu>>
  memref.dealloc %a : memref<4xf32, #etcopy.device<cpu>>
  return
}

// -----

// A function without device work gets no chain at all.
// CHECK-LABEL: func.func @host_only
// CHECK-NEXT: memref.load
// CHECK-NEXT: return
func.func @host_only(%h: memref<4xf32>, %i: index) -> f32 {
  %v = memref.load %h[%i] : memref<4xf32>
  return %v : f32
}

// -----

// Statically empty copies (etcopy and memref.copy with a device side) lower
// to nothing: no 0-byte gpu.memcpy reaches the CUDA lowering's batches. A
// copy with a dynamic side is lowered (its sizes are checked at run time).
// CHECK-LABEL: func.func @empty_copies
// CHECK-SAME: (%[[H:.*]]: memref<0x4xf32>, %[[D:.*]]: memref<0x4xf32, #etcopy.device<cuda:0>>, %[[DD:.*]]: memref<?x4xf32, #etcopy.device<cuda:0>>)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: %[[T1:.*]] = gpu.memcpy async [%[[T0]]] %[[DD]], %[[H]] : memref<?x4xf32, #etcopy.device<cuda:0>>, memref<0x4xf32>
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: return
func.func @empty_copies(%h: memref<0x4xf32>, %d: memref<0x4xf32, #etcopy.device<cuda:0>>, %dd: memref<?x4xf32, #etcopy.device<cuda:0>>) {
  etcopy.h2d %h, %d : memref<0x4xf32> -> memref<0x4xf32, #etcopy.device<cuda:0>>
  memref.copy %d, %h : memref<0x4xf32, #etcopy.device<cuda:0>> to memref<0x4xf32>
  etcopy.d2h %d, %h : memref<0x4xf32, #etcopy.device<cuda:0>> -> memref<0x4xf32>
  etcopy.h2d %h, %dd : memref<0x4xf32> -> memref<?x4xf32, #etcopy.device<cuda:0>>
  return
}
