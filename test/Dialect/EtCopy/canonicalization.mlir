// RUN: etcopy-opt %s -canonicalize -split-input-file | FileCheck %s
// RUN: etcopy-opt %s -etcopy-canonicalize -split-input-file | FileCheck %s

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

// A move between different devices through the host (cuda:0 -> host ->
// cuda:1) is a real transfer: it is kept, as one device-to-device copy when
// nothing else uses the host copy.
// CHECK-LABEL: func.func @h2d_of_d2h_other_device
// CHECK-SAME: (%[[Y:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>)
// CHECK-NEXT: %[[D:.*]] = etcopy.d2d %[[Y]] : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK-NEXT: return %[[D]]
func.func @h2d_of_d2h_other_device(%y: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:1>> {
  %h = etcopy.d2h %y : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %d = etcopy.h2d %h : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  return %d : tensor<4xf32, #etcopy.device<cuda:1>>
}

// -----

// Negative: the host also uses the host copy, which must be made anyway: the
// move keeps going through it.
// CHECK-LABEL: func.func @h2d_of_d2h_other_device_host_use
// CHECK: %[[H:.*]] = etcopy.d2h %{{.*}} : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
// CHECK: %[[D:.*]] = etcopy.h2d %[[H]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK: return %[[D]], %[[H]]
func.func @h2d_of_d2h_other_device_host_use(%y: tensor<4xf32, #etcopy.device<cuda:0>>) -> (tensor<4xf32, #etcopy.device<cuda:1>>, tensor<4xf32>) {
  %h = etcopy.d2h %y : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %d = etcopy.h2d %h : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  return %d, %h : tensor<4xf32, #etcopy.device<cuda:1>>, tensor<4xf32>
}

// -----

// d2d(d2d(x)) -> x: back on the device it came from.
// CHECK-LABEL: func.func @d2d_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>)
// CHECK-NEXT: return %[[X]]
func.func @d2d_round_trip(%x: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
  %a = etcopy.d2d %x : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32, #etcopy.device<cuda:1>>
  %b = etcopy.d2d %a : tensor<4xf32, #etcopy.device<cuda:1>> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return %b : tensor<4xf32, #etcopy.device<cuda:0>>
}

// -----

// Negative: two moves to a third device are two transfers.
// CHECK-LABEL: func.func @d2d_chain
// CHECK: %[[A:.*]] = etcopy.d2d %{{.*}} : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK: %[[B:.*]] = etcopy.d2d %[[A]] : tensor<4xf32, #etcopy.device<cuda:1>> -> tensor<4xf32, #etcopy.device<cuda:2>>
// CHECK: return %[[B]]
func.func @d2d_chain(%x: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:2>> {
  %a = etcopy.d2d %x : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32, #etcopy.device<cuda:1>>
  %b = etcopy.d2d %a : tensor<4xf32, #etcopy.device<cuda:1>> -> tensor<4xf32, #etcopy.device<cuda:2>>
  return %b : tensor<4xf32, #etcopy.device<cuda:2>>
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

// -----

// A move to two other devices through the host, which uses nothing: one d2d
// per device, no host copy.
// CHECK-LABEL: func.func @move_to_two_devices
// CHECK-SAME: (%[[Y:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>)
// CHECK-DAG: %[[A:.*]] = etcopy.d2d %[[Y]] : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK-DAG: %[[B:.*]] = etcopy.d2d %[[Y]] : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32, #etcopy.device<cuda:2>>
// CHECK-NOT: etcopy.{{d2h|h2d}}
// CHECK: return %[[A]], %[[B]]
func.func @move_to_two_devices(%y: tensor<4xf32, #etcopy.device<cuda:0>>) -> (tensor<4xf32, #etcopy.device<cuda:1>>, tensor<4xf32, #etcopy.device<cuda:2>>) {
  %h = etcopy.d2h %y : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %a = etcopy.h2d %h : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  %b = etcopy.h2d %h : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:2>>
  return %a, %b : tensor<4xf32, #etcopy.device<cuda:1>>, tensor<4xf32, #etcopy.device<cuda:2>>
}

// -----

// Negative: one of the h2d goes back to the source's device with a new
// static type (a round trip the folder keeps): the host copy stays.
// CHECK-LABEL: func.func @move_and_type_change
// CHECK: etcopy.d2h
// CHECK: etcopy.h2d
// CHECK: etcopy.h2d
func.func @move_and_type_change(%y: tensor<?xf32, #etcopy.device<cuda:0>>) -> (tensor<?xf32, #etcopy.device<cuda:1>>, tensor<4xf32, #etcopy.device<cuda:0>>) {
  %h = etcopy.d2h %y : tensor<?xf32, #etcopy.device<cuda:0>> -> tensor<?xf32>
  %a = etcopy.h2d %h : tensor<?xf32> -> tensor<?xf32, #etcopy.device<cuda:1>>
  %b = etcopy.h2d %h : tensor<?xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return %a, %b : tensor<?xf32, #etcopy.device<cuda:1>>, tensor<4xf32, #etcopy.device<cuda:0>>
}

// -----

// Rule: an out-form copy whose two sides are statically empty moves nothing
// and is erased, in all three directions (CUDA rejects a batch holding a
// 0-byte copy, so none may reach the lowering).
// CHECK-LABEL: func.func @empty_out_form
// CHECK-NOT: etcopy.{{h2d|d2h|d2d}}
// CHECK: return
func.func @empty_out_form(%h: memref<0x4xf32>, %d0: memref<0x4xf32, #etcopy.device<cuda:0>>, %d1: memref<0x4xf32, #etcopy.device<cuda:1>>) {
  etcopy.h2d %h, %d0 : memref<0x4xf32> -> memref<0x4xf32, #etcopy.device<cuda:0>>
  etcopy.d2d %d0, %d1 : memref<0x4xf32, #etcopy.device<cuda:0>> -> memref<0x4xf32, #etcopy.device<cuda:1>>
  etcopy.d2h %d1, %h : memref<0x4xf32, #etcopy.device<cuda:1>> -> memref<0x4xf32>
  return
}

// -----

// Negative: one side is dynamic, so the copy stays and its lowering checks
// at run time that both sides have the same size (a mismatch is reported
// even when nothing moves); and a non-empty static copy stays.
// CHECK-LABEL: func.func @empty_out_form_negative
// CHECK-SAME: (%[[H:.*]]: memref<0x4xf32>, %[[D:.*]]: memref<?x4xf32, #etcopy.device<cuda:0>>, %[[S:.*]]: memref<1xi8>, %[[SD:.*]]: memref<1xi8, #etcopy.device<cuda:0>>)
// CHECK-NEXT: etcopy.h2d %[[H]], %[[D]] : memref<0x4xf32> -> memref<?x4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: etcopy.h2d %[[S]], %[[SD]] : memref<1xi8> -> memref<1xi8, #etcopy.device<cuda:0>>
// CHECK-NEXT: return
func.func @empty_out_form_negative(%h: memref<0x4xf32>, %d: memref<?x4xf32, #etcopy.device<cuda:0>>, %s: memref<1xi8>, %sd: memref<1xi8, #etcopy.device<cuda:0>>) {
  etcopy.h2d %h, %d : memref<0x4xf32> -> memref<?x4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %s, %sd : memref<1xi8> -> memref<1xi8, #etcopy.device<cuda:0>>
  return
}

// -----

// Negative: the functional form of an empty tensor is kept (it still
// produces a value on the device; bufferization allocates it and the out
// form it becomes is then erased).
// CHECK-LABEL: func.func @empty_functional_form
// CHECK: etcopy.h2d
func.func @empty_functional_form(%t: tensor<0x4xf32>) -> tensor<0x4xf32, #etcopy.device<cuda:0>> {
  %d = etcopy.h2d %t : tensor<0x4xf32> -> tensor<0x4xf32, #etcopy.device<cuda:0>>
  return %d : tensor<0x4xf32, #etcopy.device<cuda:0>>
}
