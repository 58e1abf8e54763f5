// RUN: etcopy-opt %s -split-input-file --etcopy-bufferize | FileCheck %s

// A tensor constant created inside a loop and yielded by it. Upstream's
// scf.for and scf.while bufferization takes a value created in the loop for
// a new buffer that the loop may hand out without a copy
// (allow-return-allocs-from-loops), and the loop's results for writable:
// the loop's result was the read-only global itself, and the host wrote into
// it in place (a segfault at run time). etcopy-bufferize hoists tensor
// constants to the function's entry first, as the canonicalizer does, so
// that the loop copies the constant like any buffer from outside of it.
// (With optimize-transfers, the pipelines' canonicalizer hid it.)

// CHECK-LABEL: func.func @for_yields_constant
// CHECK: %[[G:.*]] = memref.get_global @{{.*}} : memref<4xf32>
// CHECK: %[[R:.*]] = scf.for
// CHECK-NOT: memref.get_global
// CHECK: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT: memref.copy %[[G]], %[[COPY]]
// CHECK: scf.yield %[[COPY]]
// CHECK: memref.store %{{.*}}, %[[R]][
func.func @for_yields_constant(%x: tensor<4xf32>, %n: index, %v: f32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> tensor<4xf32> {
    %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    scf.yield %c : tensor<4xf32>
  }
  %w = tensor.insert %v into %r[%c0] : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// scf.while: the constant forwarded by scf.condition is written in the
// loop's body (the global was) and after the loop.
// CHECK-LABEL: func.func @while_forwards_constant
// CHECK: %[[G:.*]] = memref.get_global @{{.*}} : memref<4xf32>
// CHECK: scf.while
// CHECK-NOT: memref.get_global
// CHECK: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT: memref.copy %[[G]], %[[COPY]]
// CHECK: scf.condition(%{{.*}}) %[[COPY]] :
// CHECK: } do {
// CHECK-NEXT: ^bb0(%[[B:.*]]: memref<4xf32>):
// CHECK: memref.store %{{.*}}, %[[B]][
func.func @while_forwards_constant(%x: tensor<4xf32>, %v: f32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %r = scf.while (%a = %x) : (tensor<4xf32>) -> tensor<4xf32> {
    %c = arith.constant dense<2.0> : tensor<4xf32>
    %e = tensor.extract %a[%c0] : tensor<4xf32>
    %go = arith.cmpf olt, %e, %v : f32
    scf.condition(%go) %c : tensor<4xf32>
  } do {
  ^bb0(%b: tensor<4xf32>):
    %e = tensor.extract %b[%c0] : tensor<4xf32>
    %s = arith.addf %e, %e : f32
    %i = tensor.insert %s into %b[%c0] : tensor<4xf32>
    scf.yield %i : tensor<4xf32>
  }
  %w = tensor.insert %v into %r[%c0] : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// Through an scf.if in the loop: the if's result aliases the constant,
// which aliases nothing outside of the loop (the global was yielded when
// %p held).
// CHECK-LABEL: func.func @if_in_for_yields_constant
// CHECK: %[[G:.*]] = memref.get_global @{{.*}} : memref<4xf32>
// CHECK: scf.for %{{.*}} iter_args(%[[A:[^ ]+]] = %{{[^ ]+}},
// CHECK-NOT: memref.get_global
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %[[G]], %[[A]]
// CHECK-NEXT: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT: memref.copy %[[S]], %[[COPY]]
// CHECK: scf.yield %[[COPY]],
func.func @if_in_for_yields_constant(%x: tensor<4xf32>, %n: index, %p: i1, %v: f32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> tensor<4xf32> {
    %s = scf.if %p -> tensor<4xf32> {
      %c = arith.constant dense<3.0> : tensor<4xf32>
      scf.yield %c : tensor<4xf32>
    } else {
      scf.yield %a : tensor<4xf32>
    }
    scf.yield %s : tensor<4xf32>
  }
  %w = tensor.insert %v into %r[%c0] : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// Negative: a constant the loop only reads is not copied.
// CHECK-LABEL: func.func @for_reads_constant
// CHECK: %[[G:.*]] = memref.get_global @{{.*}} : memref<4xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: scf.for
// CHECK: memref.load %[[G]][
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return
func.func @for_reads_constant(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %z) -> f32 {
    %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %e = tensor.extract %c[%i] : tensor<4xf32>
    %t = arith.addf %s, %e : f32
    scf.yield %t : f32
  }
  return %r : f32
}
