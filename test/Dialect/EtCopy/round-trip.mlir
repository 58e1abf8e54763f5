// RUN: etcopy-opt %s | etcopy-opt | FileCheck %s
// RUN: etcopy-opt %s -mlir-print-op-generic | etcopy-opt | FileCheck %s

// Every op form and every spelling of the device attribute survives a print
// and a re-parse, printed canonically.

// CHECK-LABEL: func.func @functional_form
// CHECK-SAME: (%[[H:.*]]: tensor<2x?xf32>)
func.func @functional_form(%h: tensor<2x?xf32>) -> tensor<2x?xf32> {
  // CHECK: %[[D:.*]] = etcopy.h2d %[[H]] : tensor<2x?xf32> -> tensor<2x?xf32, #etcopy.device<cuda:0>>
  %d = etcopy.h2d %h : tensor<2x?xf32> -> tensor<2x?xf32, #etcopy.device<cuda:0>>
  // CHECK: %[[B:.*]] = etcopy.d2h %[[D]] : tensor<2x?xf32, #etcopy.device<cuda:0>> -> tensor<2x?xf32>
  %b = etcopy.d2h %d : tensor<2x?xf32, #etcopy.device<cuda:0>> -> tensor<2x?xf32>
  // CHECK: return %[[B]]
  return %b : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @out_form
// CHECK-SAME: (%[[SRC:.*]]: memref<2x3xf32>, %[[DEV:.*]]: memref<2x3xf32, #etcopy.device<cuda:0>>)
func.func @out_form(%src: memref<2x3xf32>,
                    %dev: memref<2x3xf32, #etcopy.device<cuda:0>>) {
  // CHECK: etcopy.h2d %[[SRC]], %[[DEV]] : memref<2x3xf32> -> memref<2x3xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %src, %dev : memref<2x3xf32> -> memref<2x3xf32, #etcopy.device<cuda:0>>
  // CHECK: etcopy.d2h %[[DEV]], %[[SRC]] : memref<2x3xf32, #etcopy.device<cuda:0>> -> memref<2x3xf32>
  etcopy.d2h %dev, %src : memref<2x3xf32, #etcopy.device<cuda:0>> -> memref<2x3xf32>
  return
}

// A dynamic source may meet a static target and vice versa; rank 0 and
// zero-sized shapes are valid; cpu-placed data is host data.
// CHECK-LABEL: func.func @shapes
func.func @shapes(%r0: tensor<f64>, %empty: memref<0x4xi8>,
                  %dempty: memref<0x4xi8, #etcopy.device<cuda:2>>,
                  %dyn: memref<?x3xf16>,
                  %dstat: memref<2x3xf16, #etcopy.device<cuda:0>>,
                  %cpu: tensor<4xi1, #etcopy.device<cpu>>) {
  // CHECK: etcopy.h2d %{{.*}} : tensor<f64> -> tensor<f64, #etcopy.device<cuda:0>>
  %0 = etcopy.h2d %r0 : tensor<f64> -> tensor<f64, #etcopy.device<cuda:0>>
  // CHECK: etcopy.h2d %{{.*}}, %{{.*}} : memref<0x4xi8> -> memref<0x4xi8, #etcopy.device<cuda:2>>
  etcopy.h2d %empty, %dempty : memref<0x4xi8> -> memref<0x4xi8, #etcopy.device<cuda:2>>
  // CHECK: etcopy.h2d %{{.*}}, %{{.*}} : memref<?x3xf16> -> memref<2x3xf16, #etcopy.device<cuda:0>>
  etcopy.h2d %dyn, %dstat : memref<?x3xf16> -> memref<2x3xf16, #etcopy.device<cuda:0>>
  // CHECK: etcopy.h2d %{{.*}} : tensor<4xi1, #etcopy.device<cpu>> -> tensor<4xi1, #etcopy.device<cuda:1>>
  %1 = etcopy.h2d %cpu : tensor<4xi1, #etcopy.device<cpu>> -> tensor<4xi1, #etcopy.device<cuda:1>>
  // CHECK: etcopy.d2h %{{.*}} : tensor<4xi1, #etcopy.device<cuda:1>> -> tensor<?xi1, #etcopy.device<cpu>>
  %2 = etcopy.d2h %1 : tensor<4xi1, #etcopy.device<cuda:1>> -> tensor<?xi1, #etcopy.device<cpu>>
  return
}

// Strided (subview) memrefs are valid out-form operands.
// CHECK-LABEL: func.func @strided
func.func @strided(%src: memref<2x3xf32, strided<[8, 1], offset: ?>>,
                   %dst: memref<2x3xf32, strided<[3, 1]>, #etcopy.device<cuda:0>>) {
  // CHECK: etcopy.h2d %{{.*}}, %{{.*}} : memref<2x3xf32, strided<[8, 1], offset: ?>> -> memref<2x3xf32, strided<[3, 1]>, #etcopy.device<cuda:0>>
  etcopy.h2d %src, %dst : memref<2x3xf32, strided<[8, 1], offset: ?>> -> memref<2x3xf32, strided<[3, 1]>, #etcopy.device<cuda:0>>
  return
}

// Attribute spellings: kinds are case-insensitive, the ordinal defaults to 0,
// the host prints without an ordinal.
// CHECK-LABEL: func.func private @spellings
// CHECK-SAME: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-SAME: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-SAME: memref<4xf32, #etcopy.device<cuda:7>>
// CHECK-SAME: memref<4xf32, #etcopy.device<cpu>>
// CHECK-SAME: memref<4xf32, #etcopy.device<cpu>>
// CHECK-SAME: tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK-SAME: attributes {etcopy.device = #etcopy.device<cuda:3>}
func.func private @spellings(memref<4xf32, #etcopy.device<cuda>>,
                             memref<4xf32, #etcopy.device<CUDA:0>>,
                             memref<4xf32, #etcopy.device<Cuda:7>>,
                             memref<4xf32, #etcopy.device<cpu:0>>,
                             memref<4xf32, #etcopy.device<CPU>>,
                             tensor<4xf32, #etcopy.device<cuda:1>>)
    attributes {etcopy.device = #etcopy.device<cuda:3>}

// The placement and per-method propagation attributes on ops and functions.
// CHECK-LABEL: func.func @discardable
// CHECK-SAME: etcopy.propagate = {skip_d2h_for_method_outputs = false, skip_h2d_for_method_inputs = true}
func.func @discardable() attributes {
    etcopy.propagate = {skip_h2d_for_method_inputs = true,
                        skip_d2h_for_method_outputs = false}} {
  // CHECK: call @spellings_user() {etcopy.device = #etcopy.device<cpu>}
  func.call @spellings_user() {etcopy.device = #etcopy.device<cpu>} : () -> ()
  return
}
func.func private @spellings_user()

// Planned-arena metadata.
// CHECK-LABEL: func.func private @planned
// CHECK-SAME: etcopy.arenas = [{alignment = 256 : i64, device = #etcopy.device<cuda:0>, size = 1024 : i64}, {alignment = 64 : i64, device = #etcopy.device<cpu>, size = 0 : i64}]
func.func private @planned() attributes {etcopy.arenas = [
    {device = #etcopy.device<cuda:0>, size = 1024 : i64, alignment = 256 : i64},
    {device = #etcopy.device<cpu>, size = 0 : i64, alignment = 64 : i64}]}

// Exported signature metadata: every kind of value.
// CHECK-LABEL: func.func private @described
// CHECK-SAME: etcopy.signature = {arguments = [{device = #etcopy.device<cuda:1>, element_bytes = 2 : i64, kind = "memref", rank = 2 : i64}, {device = #etcopy.device<cpu>, element_bytes = 4 : i64, kind = "unranked_memref", rank = 0 : i64}, {device = #etcopy.device<cpu>, element_bytes = 8 : i64, kind = "scalar", rank = 0 : i64}], results = []}
func.func private @described(memref<2x3xf16, #etcopy.device<cuda:1>>, memref<*xf32>, index)
    attributes {etcopy.signature = {
      arguments = [{kind = "memref", device = #etcopy.device<cuda:1>, rank = 2 : i64, element_bytes = 2 : i64},
                   {kind = "unranked_memref", device = #etcopy.device<cpu>, rank = 0 : i64, element_bytes = 4 : i64},
                   {kind = "scalar", device = #etcopy.device<cpu>, rank = 0 : i64, element_bytes = 8 : i64}],
      results = []}}

// The delegate contract's argument attribute, on tensors and memrefs.
// CHECK-LABEL: func.func private @writes_output
// CHECK-SAME: (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>> {etcopy.writes}, memref<4xf32, #etcopy.device<cuda:0>> {etcopy.writes})
func.func private @writes_output(tensor<4xf32, #etcopy.device<cuda:0>>,
                                 tensor<4xf32, #etcopy.device<cuda:0>> {etcopy.writes},
                                 memref<4xf32, #etcopy.device<cuda:0>> {etcopy.writes})
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// Device-to-device copies, both forms.
// CHECK-LABEL: func.func @d2d_forms
// CHECK: %{{.*}} = etcopy.d2d %{{.*}} : tensor<2x?xf16, #etcopy.device<cuda:0>> -> tensor<2x?xf16, #etcopy.device<cuda:1>>
// CHECK: etcopy.d2d %{{.*}}, %{{.*}} : memref<8xi8, #etcopy.device<cuda:1>> -> memref<8xi8, #etcopy.device<cuda:0>>
func.func @d2d_forms(%t: tensor<2x?xf16, #etcopy.device<cuda:0>>,
                     %a: memref<8xi8, #etcopy.device<cuda:1>>,
                     %b: memref<8xi8, #etcopy.device<cuda:0>>) -> tensor<2x?xf16, #etcopy.device<cuda:1>> {
  %m = etcopy.d2d %t : tensor<2x?xf16, #etcopy.device<cuda:0>> -> tensor<2x?xf16, #etcopy.device<cuda:1>>
  etcopy.d2d %a, %b : memref<8xi8, #etcopy.device<cuda:1>> -> memref<8xi8, #etcopy.device<cuda:0>>
  return %m : tensor<2x?xf16, #etcopy.device<cuda:1>>
}

// A delegate that orders its work on the stream it is given.
// CHECK-LABEL: func.func private @stream_ordered
// CHECK-SAME: attributes {etcopy.device = #etcopy.device<cuda:1>, etcopy.stream_ordered}
func.func private @stream_ordered(tensor<4xf32, #etcopy.device<cuda:1>>) -> tensor<4xf32, #etcopy.device<cuda:1>>
    attributes {etcopy.device = #etcopy.device<cuda:1>, etcopy.stream_ordered}
