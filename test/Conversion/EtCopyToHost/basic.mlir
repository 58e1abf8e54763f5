// RUN: etcopy-opt %s -split-input-file --convert-etcopy-to-host | FileCheck %s --implicit-check-not=etcopy

// The CPU reference lowering: copies are clones on the host and no
// #etcopy.device placement or etcopy attribute is left anywhere.

// Out form: memref.copy, which handles strided layouts.
// CHECK-LABEL: func.func @out_form
// CHECK-SAME: (%[[H:.*]]: memref<4x?xf32, strided<[?, 2], offset: ?>>, %[[N:.*]]: index) -> memref<4x?xf32>
// CHECK-NEXT: %[[D:.*]] = memref.alloc(%[[N]]) : memref<4x?xf32>
// CHECK-NEXT: memref.copy %[[H]], %[[D]] : memref<4x?xf32, strided<[?, 2], offset: ?>> to memref<4x?xf32>
// CHECK-NEXT: %[[O:.*]] = memref.alloc(%[[N]]) : memref<4x?xf32>
// CHECK-NEXT: memref.copy %[[D]], %[[O]] : memref<4x?xf32> to memref<4x?xf32>
// CHECK-NEXT: memref.dealloc %[[D]] : memref<4x?xf32>
// CHECK-NEXT: return %[[O]] : memref<4x?xf32>
func.func @out_form(%h: memref<4x?xf32, strided<[?, 2], offset: ?>>, %n: index) -> memref<4x?xf32> {
  %d = memref.alloc(%n) : memref<4x?xf32, #etcopy.device<cuda:1>>
  etcopy.h2d %h, %d : memref<4x?xf32, strided<[?, 2], offset: ?>> -> memref<4x?xf32, #etcopy.device<cuda:1>>
  %o = memref.alloc(%n) : memref<4x?xf32>
  etcopy.d2h %d, %o : memref<4x?xf32, #etcopy.device<cuda:1>> -> memref<4x?xf32>
  memref.dealloc %d : memref<4x?xf32, #etcopy.device<cuda:1>>
  return %o : memref<4x?xf32>
}

// -----

// Out form into a strided destination (a subview of a device buffer).
// CHECK-LABEL: func.func @out_form_strided_destination
// CHECK-SAME: (%[[H:.*]]: memref<2x2xi8>, %[[D:.*]]: memref<4x4xi8>)
// CHECK-NEXT: %[[V:.*]] = memref.subview %[[D]][1, 1] [2, 2] [1, 1] : memref<4x4xi8> to memref<2x2xi8, strided<[4, 1], offset: 5>>
// CHECK-NEXT: memref.copy %[[H]], %[[V]] : memref<2x2xi8> to memref<2x2xi8, strided<[4, 1], offset: 5>>
// CHECK-NEXT: return
func.func @out_form_strided_destination(%h: memref<2x2xi8>, %d: memref<4x4xi8, #etcopy.device<cuda:0>>) {
  %v = memref.subview %d[1, 1] [2, 2] [1, 1] : memref<4x4xi8, #etcopy.device<cuda:0>> to memref<2x2xi8, strided<[4, 1], offset: 5>, #etcopy.device<cuda:0>>
  etcopy.h2d %h, %v : memref<2x2xi8> -> memref<2x2xi8, strided<[4, 1], offset: 5>, #etcopy.device<cuda:0>>
  return
}

// -----

// Functional form: the source itself, or a tensor.cast where the static
// shapes differ.
// CHECK-LABEL: func.func @functional
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<?xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: %[[C:.*]] = tensor.cast %[[Y]] : tensor<?xf32> to tensor<4xf32>
// CHECK-NEXT: return %[[C]], %[[X]] : tensor<4xf32>, tensor<4xf32>
func.func @functional(%x: tensor<4xf32>, %y: tensor<?xf32, #etcopy.device<cpu>>) -> (tensor<4xf32>, tensor<4xf32, #etcopy.device<cuda:0>>) {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %e = etcopy.h2d %y : tensor<?xf32, #etcopy.device<cpu>> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %e : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h, %d : tensor<4xf32>, tensor<4xf32, #etcopy.device<cuda:0>>
}

// -----

// Tensor code around copies, with device tensors carried by a loop: block
// arguments, results and the function signature lose their placement.
// CHECK-LABEL: func.func @tensor_loop
// CHECK-SAME: (%[[X:.*]]: tensor<2x?xf32>, %[[N:.*]]: index) -> tensor<2x?xf32>
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[A:.*]] = %[[X]]) -> (tensor<2x?xf32>)
// CHECK-NEXT: %[[E:.*]] = tensor.extract %[[A]][%{{.*}}, %{{.*}}] : tensor<2x?xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[E]], %[[E]] : f32
// CHECK-NEXT: %[[I:.*]] = tensor.insert %[[S]] into %[[A]][%{{.*}}, %{{.*}}] : tensor<2x?xf32>
// CHECK-NEXT: scf.yield %[[I]] : tensor<2x?xf32>
// CHECK: return %[[R]] : tensor<2x?xf32>
func.func @tensor_loop(%x: tensor<2x?xf32>, %n: index) -> tensor<2x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = etcopy.h2d %x : tensor<2x?xf32> -> tensor<2x?xf32, #etcopy.device<cuda:0>>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %d) -> tensor<2x?xf32, #etcopy.device<cuda:0>> {
    %h = etcopy.d2h %a : tensor<2x?xf32, #etcopy.device<cuda:0>> -> tensor<2x?xf32>
    %e = tensor.extract %h[%c0, %c0] : tensor<2x?xf32>
    %s = arith.addf %e, %e : f32
    %i2 = tensor.insert %s into %h[%c0, %c0] : tensor<2x?xf32>
    %b = etcopy.h2d %i2 : tensor<2x?xf32> -> tensor<2x?xf32, #etcopy.device<cuda:0>>
    scf.yield %b : tensor<2x?xf32, #etcopy.device<cuda:0>>
  }
  %o = etcopy.d2h %r : tensor<2x?xf32, #etcopy.device<cuda:0>> -> tensor<2x?xf32>
  return %o : tensor<2x?xf32>
}

// -----

// Signatures of declarations, calls, unranked memrefs, the discardable
// etcopy attributes and those of arguments: `etcopy.writes` goes with the
// delegate's `etcopy.device` (the verifier rejected it on what was left, a
// host function). Other attributes stay.
// CHECK-LABEL: func.func private @delegate(tensor<4xf32> {bufferization.access = "read-write"}, memref<*xf32>, memref<4xf32>) -> memref<4xf32>
// CHECK-SAME: attributes {keep = 1 : i32}
func.func private @delegate(tensor<4xf32, #etcopy.device<cuda:0>> {bufferization.access = "read-write", etcopy.writes}, memref<*xf32, #etcopy.device<cuda:0>>, memref<4xf32, #etcopy.device<cuda:0>> {etcopy.writes}) -> memref<4xf32, #etcopy.device<cuda:0>> attributes {etcopy.device = #etcopy.device<cuda:0>, keep = 1 : i32}

// CHECK-LABEL: func.func @method
// CHECK-SAME: (%[[T:.*]]: tensor<4xf32>, %[[U:.*]]: memref<*xf32>, %[[W:.*]]: memref<4xf32>) -> memref<4xf32> {
// CHECK-NEXT: %[[R:.*]] = call @delegate(%[[T]], %[[U]], %[[W]]) : (tensor<4xf32>, memref<*xf32>, memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT: return %[[R]] : memref<4xf32>
func.func @method(%t: tensor<4xf32, #etcopy.device<cuda:0>>, %u: memref<*xf32, #etcopy.device<cuda:0>>, %w: memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>> attributes {etcopy.propagate = {skip_h2d_for_method_inputs = true}} {
  %r = func.call @delegate(%t, %u, %w) {etcopy.device = #etcopy.device<cuda:0>} : (tensor<4xf32, #etcopy.device<cuda:0>>, memref<*xf32, #etcopy.device<cuda:0>>, memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>>
  return %r : memref<4xf32, #etcopy.device<cuda:0>>
}

// -----

// Memory spaces etcopy does not own are left alone.
// CHECK-LABEL: func.func @foreign_memory_space
// CHECK-SAME: (%{{.*}}: memref<4xf32, 3>, %{{.*}}: memref<4xf32, #gpu.address_space<workgroup>>)
func.func @foreign_memory_space(%a: memref<4xf32, 3>, %b: memref<4xf32, #gpu.address_space<workgroup>>) {
  return
}
