// RUN: etcopy-opt %s -canonicalize -split-input-file | FileCheck %s

// Rule: d2h(h2d(x)) -> x, functional form, when x has the d2h result type.
// CHECK-LABEL: func.func @d2h_of_h2d
// CHECK-SAME: (%[[X:.*]]: tensor<2x?xf32>)
// CHECK-NOT: etcopy.{{h2d|d2h}}
// CHECK: return %[[X]]
func.func @d2h_of_h2d(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %d = etcopy.h2d %x : tensor<2x?xf32> -> tensor<2x?xf32, #etcopy.device<cuda:1>>
  %h = etcopy.d2h %d : tensor<2x?xf32, #etcopy.device<cuda:1>> -> tensor<2x?xf32>
  return %h : tensor<2x?xf32>
}

// -----

// Rule: h2d(d2h(y)) -> y when y is already on the same device (cuda:0).
// CHECK-LABEL: func.func @h2d_of_d2h_same_device
// CHECK-SAME: (%[[Y:.*]]: tensor<4xi8, #etcopy.device<cuda:0>>)
// CHECK-NOT: etcopy.{{h2d|d2h}}
// CHECK: return %[[Y]]
func.func @h2d_of_d2h_same_device(%y: tensor<4xi8, #etcopy.device<cuda:0>>) -> tensor<4xi8, #etcopy.device<cuda:0>> {
  %h = etcopy.d2h %y : tensor<4xi8, #etcopy.device<cuda:0>> -> tensor<4xi8>
  %d = etcopy.h2d %h : tensor<4xi8> -> tensor<4xi8, #etcopy.device<cuda:0>>
  return %d : tensor<4xi8, #etcopy.device<cuda:0>>
}

// -----

// A chain of round trips collapses entirely.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK-NOT: etcopy.{{h2d|d2h}}
// CHECK: return %[[X]]
func.func @chain(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = etcopy.h2d %x : tensor<3xf32> -> tensor<3xf32, #etcopy.device<cuda:0>>
  %1 = etcopy.d2h %0 : tensor<3xf32, #etcopy.device<cuda:0>> -> tensor<3xf32>
  %2 = etcopy.h2d %1 : tensor<3xf32> -> tensor<3xf32, #etcopy.device<cuda:0>>
  %3 = etcopy.d2h %2 : tensor<3xf32, #etcopy.device<cuda:0>> -> tensor<3xf32>
  return %3 : tensor<3xf32>
}

// -----

// Negative: a move between different devices (cuda:0 -> host -> cuda:1) is a
// real transfer and is kept.
// CHECK-LABEL: func.func @h2d_of_d2h_other_device
// CHECK: %[[H:.*]] = etcopy.d2h %{{.*}} : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
// CHECK: %[[D:.*]] = etcopy.h2d %[[H]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK: return %[[D]]
func.func @h2d_of_d2h_other_device(%y: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:1>> {
  %h = etcopy.d2h %y : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %d = etcopy.h2d %h : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  return %d : tensor<4xf32, #etcopy.device<cuda:1>>
}

// -----

// Negative: the round trip changes the static type (tensor<?xf32> to
// tensor<4xf32>), so folding would change the value's type: kept.
// CHECK-LABEL: func.func @d2h_of_h2d_type_change
// CHECK: etcopy.h2d
// CHECK: etcopy.d2h
func.func @d2h_of_h2d_type_change(%x: tensor<?xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<?xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %d : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

// Negative: the host side's spelling differs (#etcopy.device<cpu> encoding vs
// none); both are host data but the types differ, so the pair is kept.
// CHECK-LABEL: func.func @d2h_of_h2d_encoding_change
// CHECK: etcopy.h2d
// CHECK: etcopy.d2h
func.func @d2h_of_h2d_encoding_change(%x: tensor<4xf32, #etcopy.device<cpu>>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32, #etcopy.device<cpu>> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %d : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

// Negative: out-form copies have effects and never fold, even as a round
// trip through a device buffer.
// CHECK-LABEL: func.func @out_form_round_trip
// CHECK: etcopy.h2d %{{.*}}, %{{.*}} : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: etcopy.d2h %{{.*}}, %{{.*}} : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
func.func @out_form_round_trip(%a: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %b: memref<4xf32>) {
  etcopy.h2d %a, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.d2h %d, %b : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  return
}

// -----

// The functional form is pure: an unused copy is dead code.
// CHECK-LABEL: func.func @dead_copy
// CHECK-NOT: etcopy.{{h2d|d2h}}
// CHECK: return
func.func @dead_copy(%x: tensor<4xf32>) {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// Negative: an out-form copy with no user of its destination is still a write
// and stays.
// CHECK-LABEL: func.func @out_form_not_dead
// CHECK: etcopy.h2d
func.func @out_form_not_dead(%a: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  etcopy.h2d %a, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  return
}
