// RUN: etcopy-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries use-encoding-for-memory-space function-boundary-type-conversion=identity-layout-map" | FileCheck %s --implicit-check-not=bufferization.to_buffer --implicit-check-not=bufferization.to_tensor
// RUN: etcopy-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries use-encoding-for-memory-space function-boundary-type-conversion=identity-layout-map" --buffer-deallocation-pipeline | FileCheck %s --check-prefix=DEALLOC
// RUN: not etcopy-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" 2>&1 | FileCheck %s --check-prefix=NO-ENCODING

// One-shot bufferization of functional copies: each becomes a fresh
// allocation in the memory space named by the result's encoding and an
// out-form copy into it. Device tensor encodings become memref memory spaces
// across function boundaries, calls and scf regions. The second RUN line
// checks that buffer-deallocation-pipeline frees device buffers with
// memref.dealloc in their memory space. The third shows the error when
// bufferization drops the encodings (no use-encoding-for-memory-space).

// CHECK-LABEL: func.func @h2d_static
// CHECK-SAME: (%[[X:.*]]: memref<2x3xf32>) -> memref<2x3xf32, #etcopy.device<cuda:0>>
// CHECK: %[[D:.*]] = memref.alloc() {{.*}}: memref<2x3xf32, #etcopy.device<cuda:0>>
// CHECK: etcopy.h2d %[[X]], %[[D]] : memref<2x3xf32> -> memref<2x3xf32, #etcopy.device<cuda:0>>
// CHECK: return %[[D]]
func.func @h2d_static(%x: tensor<2x3xf32>) -> tensor<2x3xf32, #etcopy.device<cuda:0>> {
  %d = etcopy.h2d %x : tensor<2x3xf32> -> tensor<2x3xf32, #etcopy.device<cuda:0>>
  return %d : tensor<2x3xf32, #etcopy.device<cuda:0>>
}

// -----

// Dynamic result sizes are read from the source buffer; static ones are part
// of the allocated type.
// CHECK-LABEL: func.func @d2h_dynamic
// CHECK-SAME: (%[[X:.*]]: memref<?x3x?xf32, #etcopy.device<cuda:1>>) -> memref<?x3x?xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[DIM0:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK-DAG: %[[DIM2:.*]] = memref.dim %[[X]], %[[C2]]
// CHECK: %[[H:.*]] = memref.alloc(%[[DIM0]], %[[DIM2]]) {{.*}}: memref<?x3x?xf32>
// CHECK: etcopy.d2h %[[X]], %[[H]] : memref<?x3x?xf32, #etcopy.device<cuda:1>> -> memref<?x3x?xf32>
// CHECK: return %[[H]]

// NO-ENCODING: error: 'etcopy.d2h' op source 'tensor<?x3x?xf32, #etcopy.device<cuda:1>>' on cuda:1 was bufferized to 'memref<?x3x?xf32>' on the host; run one-shot-bufferize with use-encoding-for-memory-space
func.func @d2h_dynamic(%x: tensor<?x3x?xf32, #etcopy.device<cuda:1>>) -> tensor<?x3x?xf32> {
  %h = etcopy.d2h %x : tensor<?x3x?xf32, #etcopy.device<cuda:1>> -> tensor<?x3x?xf32>
  return %h : tensor<?x3x?xf32>
}

// -----

// A result dimension that is static where the source's is dynamic needs no
// size operand.
// CHECK-LABEL: func.func @h2d_static_result_of_dynamic_source
// CHECK-SAME: (%[[X:.*]]: memref<?xi8>)
// CHECK-NOT: memref.dim
// CHECK: %[[D:.*]] = memref.alloc() {{.*}}: memref<8xi8, #etcopy.device<cuda:0>>
// CHECK: etcopy.h2d %[[X]], %[[D]] : memref<?xi8> -> memref<8xi8, #etcopy.device<cuda:0>>
func.func @h2d_static_result_of_dynamic_source(%x: tensor<?xi8>) -> tensor<8xi8, #etcopy.device<cuda:0>> {
  %d = etcopy.h2d %x : tensor<?xi8> -> tensor<8xi8, #etcopy.device<cuda:0>>
  return %d : tensor<8xi8, #etcopy.device<cuda:0>>
}

// -----

// CHECK-LABEL: func.func @rank0_round_trip
// CHECK-SAME: (%[[X:.*]]: memref<f32>) -> memref<f32>
// CHECK: %[[D:.*]] = memref.alloc() {{.*}}: memref<f32, #etcopy.device<cuda:0>>
// CHECK: etcopy.h2d %[[X]], %[[D]] : memref<f32> -> memref<f32, #etcopy.device<cuda:0>>
// CHECK: %[[H:.*]] = memref.alloc() {{.*}}: memref<f32>
// CHECK: etcopy.d2h %[[D]], %[[H]] : memref<f32, #etcopy.device<cuda:0>> -> memref<f32>
// CHECK: return %[[H]]
func.func @rank0_round_trip(%x: tensor<f32>) -> tensor<f32> {
  %d = etcopy.h2d %x : tensor<f32> -> tensor<f32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %d : tensor<f32, #etcopy.device<cuda:0>> -> tensor<f32>
  return %h : tensor<f32>
}

// -----

// Device-typed arguments and results at a function boundary and a call: the
// callee reads its device argument back, updates it on the host and returns
// a new device buffer.
// CHECK-LABEL: func.func @device_callee
// CHECK-SAME: (%[[ARG:.*]]: memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[H:.*]] = memref.alloc() {{.*}}: memref<4xf32>
// CHECK: etcopy.d2h %[[ARG]], %[[H]]
// CHECK: memref.store %{{.*}}, %[[H]]
// CHECK: %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: etcopy.h2d %[[H]], %[[D]]
// CHECK: return %[[D]] : memref<4xf32, #etcopy.device<cuda:0>>
func.func @device_callee(%d: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
  %h = etcopy.d2h %d : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %h2 = tensor.insert %one into %h[%c0] : tensor<4xf32>
  %d2 = etcopy.h2d %h2 : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return %d2 : tensor<4xf32, #etcopy.device<cuda:0>>
}

// The d2h result is used by host code (tensor.extract becomes a host load).
// CHECK-LABEL: func.func @caller
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>) -> f32
// CHECK: %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: etcopy.h2d %[[X]], %[[D]]
// CHECK: %[[R:.*]] = call @device_callee(%[[D]]) : (memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[H:.*]] = memref.alloc() {{.*}}: memref<4xf32>
// CHECK: etcopy.d2h %[[R]], %[[H]] : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
// CHECK: %[[V:.*]] = memref.load %[[H]]
// CHECK: return %[[V]]

// The deallocation pipeline cannot tell whether the call result aliases its
// argument: it frees both device buffers (the result through its base
// buffer) under a runtime ownership check, in their memory space.
// DEALLOC-LABEL: func.func @caller
// DEALLOC-SAME: (%[[X:.*]]: memref<4xf32>)
// DEALLOC: %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// DEALLOC: etcopy.h2d %[[X]], %[[D]]
// DEALLOC: %[[R:.*]] = call @device_callee(%[[D]])
// DEALLOC: %[[H:.*]] = memref.alloc() {{.*}}: memref<4xf32>
// DEALLOC: etcopy.d2h %[[R]], %[[H]]
// DEALLOC: memref.load %[[H]]
// DEALLOC: %[[BASE:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[R]] : memref<4xf32, #etcopy.device<cuda:0>> -> memref<f32, #etcopy.device<cuda:0>>
// DEALLOC: scf.if
// DEALLOC-NEXT: memref.dealloc %[[D]] : memref<4xf32, #etcopy.device<cuda:0>>
// DEALLOC: scf.if
// DEALLOC-NEXT: memref.dealloc %[[BASE]] : memref<f32, #etcopy.device<cuda:0>>
// DEALLOC: scf.if
// DEALLOC-NEXT: memref.dealloc %[[H]] : memref<4xf32>
// DEALLOC: return
func.func @caller(%x: tensor<4xf32>) -> f32 {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %r = func.call @device_callee(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %r : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %c0 = arith.constant 0 : index
  %v = tensor.extract %h[%c0] : tensor<4xf32>
  return %v : f32
}

// -----

// A device buffer that does not escape is freed unconditionally.
// DEALLOC-LABEL: func.func @send
// DEALLOC-SAME: (%[[X:.*]]: memref<4xf32>)
// DEALLOC: %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// DEALLOC: etcopy.h2d %[[X]], %[[D]]
// DEALLOC: call @consume(%[[D]])
// DEALLOC-NEXT: memref.dealloc %[[D]] : memref<4xf32, #etcopy.device<cuda:0>>
// DEALLOC-NEXT: return
func.func private @consume(tensor<4xf32, #etcopy.device<cuda:0>>)
func.func @send(%x: tensor<4xf32>) {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  func.call @consume(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// -----

// Device values inside a loop body; the loop carries a host tensor updated in
// place.
// CHECK-LABEL: func.func @loop
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[ACC:.*]]: memref<4xf32>, %{{.*}}: index)
// CHECK: scf.for {{.*}} iter_args(%[[A:.*]] = %[[ACC]]) -> (memref<4xf32>)
// CHECK:   %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK:   etcopy.h2d %[[X]], %[[D]]
// CHECK:   %[[R:.*]] = func.call @device_op(%[[D]]) : (memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>>
// CHECK:   %[[H:.*]] = memref.alloc() {{.*}}: memref<4xf32>
// CHECK:   etcopy.d2h %[[R]], %[[H]]
// CHECK:   %[[V:.*]] = memref.load %[[H]]
// CHECK:   memref.store %[[V]], %[[A]]
// CHECK:   scf.yield %[[A]] : memref<4xf32>

// Buffers allocated in the loop are freed in the loop.
// DEALLOC-LABEL: func.func @loop
// DEALLOC: scf.for
// DEALLOC:   %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// DEALLOC:   scf.if
// DEALLOC-NEXT: memref.dealloc %[[D]] : memref<4xf32, #etcopy.device<cuda:0>>
// DEALLOC: return
func.func private @device_op(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
func.func @loop(%x: tensor<4xf32>, %acc: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %acc) -> tensor<4xf32> {
    %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    %y = func.call @device_op(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    %h = etcopy.d2h %y : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
    %v = tensor.extract %h[%i] : tensor<4xf32>
    %a2 = tensor.insert %v into %a[%i] : tensor<4xf32>
    scf.yield %a2 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// An scf.if yielding device tensors yields device buffers.
// CHECK-LABEL: func.func @if
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[Y:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[B:.*]]: i1) -> memref<4xf32>
// CHECK: %[[S:.*]] = scf.if %[[B]] -> (memref<4xf32, #etcopy.device<cuda:0>>)
// CHECK:   %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK:   etcopy.h2d %[[X]], %[[D]]
// CHECK:   scf.yield %[[D]] : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: } else {
// CHECK:   scf.yield %[[Y]] : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[H:.*]] = memref.alloc() {{.*}}: memref<4xf32>
// CHECK: etcopy.d2h %[[S]], %[[H]] : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
// CHECK: return %[[H]]
func.func @if(%x: tensor<4xf32>, %y: tensor<4xf32, #etcopy.device<cuda:0>>, %b: i1) -> tensor<4xf32> {
  %s = scf.if %b -> tensor<4xf32, #etcopy.device<cuda:0>> {
    %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    scf.yield %d : tensor<4xf32, #etcopy.device<cuda:0>>
  } else {
    scf.yield %y : tensor<4xf32, #etcopy.device<cuda:0>>
  }
  %h = etcopy.d2h %s : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

// Host tensors placed explicitly on `#etcopy.device<cpu>` keep that memory
// space, as use-encoding-for-memory-space gives every other tensor.
// CHECK-LABEL: func.func @explicit_cpu
// CHECK-SAME: (%[[X:.*]]: memref<4xf32, #etcopy.device<cpu>>) -> memref<4xf32, #etcopy.device<cpu>>
// CHECK: %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: etcopy.h2d %[[X]], %[[D]]
// CHECK: %[[H:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cpu>>
// CHECK: etcopy.d2h %[[D]], %[[H]] : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, #etcopy.device<cpu>>
func.func @explicit_cpu(%x: tensor<4xf32, #etcopy.device<cpu>>) -> tensor<4xf32, #etcopy.device<cpu>> {
  %d = etcopy.h2d %x : tensor<4xf32, #etcopy.device<cpu>> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %d : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32, #etcopy.device<cpu>>
  return %h : tensor<4xf32, #etcopy.device<cpu>>
}
