// RUN: etcopy-opt %s --convert-etcopy-to-gpu=memory-space=gpu | mlir-opt | FileCheck %s --implicit-check-not=etcopy

// memory-space=gpu: #etcopy.device<cuda:0> becomes #gpu.address_space<global>
// and #etcopy.device<cpu> no memory space, in function signatures, block
// arguments and the types of all values; etcopy attributes are dropped, those
// of arguments too (`etcopy.writes` on what is no delegate any more failed
// to verify). The output is read and verified by upstream mlir-opt, which
// knows nothing of etcopy.

// CHECK-LABEL: func.func private @device_kernel(memref<4xf32, #gpu.address_space<global>>)
func.func private @device_kernel(memref<4xf32, #etcopy.device<cuda:0>> {etcopy.writes}) attributes {etcopy.device = #etcopy.device<cuda:0>}

// CHECK-LABEL: func.func @spaces
// CHECK-SAME: (%[[H:.*]]: memref<4xf32>, %[[CPU:.*]]: memref<4xf32>, %[[N:.*]]: index) -> memref<4xf32, #gpu.address_space<global>>
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[D:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<4xf32, #gpu.address_space<global>>
// CHECK: %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[D]], %[[H]] : memref<4xf32, #gpu.address_space<global>>, memref<4xf32>
// CHECK: gpu.wait [%[[T2]]]
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %[[D]]) -> (memref<4xf32, #gpu.address_space<global>>)
// CHECK:   func.call @device_kernel(%[[A]]) : (memref<4xf32, #gpu.address_space<global>>) -> ()
// CHECK:   %[[L0:.*]] = gpu.wait async
// CHECK:   %[[L1:.*]] = gpu.memcpy async [%[[L0]]] %[[CPU]], %[[A]] : memref<4xf32>, memref<4xf32, #gpu.address_space<global>>
// CHECK:   gpu.wait [%[[L1]]]
// CHECK:   scf.yield %[[A]] : memref<4xf32, #gpu.address_space<global>>
// CHECK: return %[[R]] : memref<4xf32, #gpu.address_space<global>>
func.func @spaces(%h: memref<4xf32>, %cpu: memref<4xf32, #etcopy.device<cpu>>, %n: index) -> memref<4xf32, #etcopy.device<cuda:0>> attributes {etcopy.propagate = {skip_h2d_for_method_inputs = true}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %d) -> memref<4xf32, #etcopy.device<cuda:0>> {
    func.call @device_kernel(%a) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
    etcopy.d2h %a, %cpu : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, #etcopy.device<cpu>>
    scf.yield %a : memref<4xf32, #etcopy.device<cuda:0>>
  }
  return %r : memref<4xf32, #etcopy.device<cuda:0>>
}
