// RUN: etcopy-opt %s --one-shot-bufferize="bufferize-function-boundaries use-encoding-for-memory-space function-boundary-type-conversion=identity-layout-map" --convert-etcopy-to-gpu | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h --implicit-check-not='gpu.wait ['
// RUN: etcopy-opt %s --one-shot-bufferize="bufferize-function-boundaries use-encoding-for-memory-space function-boundary-type-conversion=identity-layout-map" --buffer-deallocation-pipeline --convert-bufferization-to-memref --convert-etcopy-to-gpu | FileCheck %s --check-prefix=DEALLOC

// A tensor-level program through bufferization and convert-etcopy-to-gpu:
// send an input to a device function, bring its result back, read it on the
// host.

// CHECK-LABEL: func.func private @kernel(memref<?xf32, #etcopy.device<cuda:0>>) -> memref<?xf32, #etcopy.device<cuda:0>>

// The device buffer is allocated with the source's size and filled on the
// chain; the call waits; the result comes back on the same chain and the
// host waits before reading it.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: memref<?xf32>) -> f32
// CHECK: %[[N:.*]] = memref.dim %[[X]], %{{.*}} : memref<?xf32>
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[D:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] (%[[N]]) : memref<?xf32, #etcopy.device<cuda:0>>
// CHECK: %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[D]], %[[X]] : memref<?xf32, #etcopy.device<cuda:0>>, memref<?xf32>
// CHECK: gpu.wait [%[[T2]]]
// CHECK: %[[Y:.*]] = call @kernel(%[[D]])
// CHECK: %[[M:.*]] = memref.dim %[[Y]], %{{.*}} : memref<?xf32, #etcopy.device<cuda:0>>
// CHECK: %[[H:.*]] = memref.alloc(%[[M]]) {{.*}}: memref<?xf32>
// CHECK: %[[T3:.*]] = gpu.memcpy async [%[[T2]]] %[[H]], %[[Y]] : memref<?xf32>, memref<?xf32, #etcopy.device<cuda:0>>
// CHECK: gpu.wait [%[[T3]]]
// CHECK: %[[V:.*]] = memref.load %[[H]]
// CHECK: return %[[V]]

// With buffer deallocation, the device buffers are freed with gpu.dealloc
// (under the pipeline's runtime ownership checks), with no host wait: a free
// is not observable.
// DEALLOC-LABEL: func.func @main
// DEALLOC: %[[D:.*]], %{{.*}} = gpu.alloc async
// DEALLOC: %[[Y:.*]] = call @kernel(%[[D]])
// DEALLOC: %[[BASE:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[Y]]
// DEALLOC: scf.if
// DEALLOC-NEXT: %[[T0:.*]] = gpu.wait async
// DEALLOC-NEXT: gpu.dealloc async [%[[T0]]] %[[D]] : memref<?xf32, #etcopy.device<cuda:0>>
// DEALLOC-NEXT: }
// DEALLOC: scf.if
// DEALLOC-NEXT: %[[U0:.*]] = gpu.wait async
// DEALLOC-NEXT: gpu.dealloc async [%[[U0]]] %[[BASE]] : memref<f32, #etcopy.device<cuda:0>>
// DEALLOC-NEXT: }
// DEALLOC: return
func.func private @kernel(tensor<?xf32, #etcopy.device<cuda:0>>) -> tensor<?xf32, #etcopy.device<cuda:0>>

func.func @main(%x: tensor<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %d = etcopy.h2d %x : tensor<?xf32> -> tensor<?xf32, #etcopy.device<cuda:0>>
  %y = func.call @kernel(%d) : (tensor<?xf32, #etcopy.device<cuda:0>>) -> tensor<?xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %y : tensor<?xf32, #etcopy.device<cuda:0>> -> tensor<?xf32>
  %v = tensor.extract %h[%c0] : tensor<?xf32>
  return %v : f32
}

// Returning a device argument: the deallocation pipeline clones it, and the
// clone becomes a device allocation and a device-to-device copy.
// CHECK-LABEL: func.func @identity
// CHECK-SAME: (%[[D:.*]]: memref<4xf32, #etcopy.device<cuda:0>>)
// CHECK-NEXT: return %[[D]]

// DEALLOC-LABEL: func.func @identity
// DEALLOC-SAME: (%[[D:.*]]: memref<4xf32, #etcopy.device<cuda:0>>)
// DEALLOC-NEXT: %[[T0:.*]] = gpu.wait async
// DEALLOC-NEXT: %[[C:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<4xf32, #etcopy.device<cuda:0>>
// DEALLOC-NEXT: %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[C]], %[[D]] : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32, #etcopy.device<cuda:0>>
// DEALLOC-NEXT: gpu.wait [%[[T2]]]
// DEALLOC-NEXT: return %[[C]]
func.func @identity(%d: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
  return %d : tensor<4xf32, #etcopy.device<cuda:0>>
}
