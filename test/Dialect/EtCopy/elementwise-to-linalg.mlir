// RUN: etcopy-opt %s -split-input-file --etcopy-elementwise-to-linalg | FileCheck %s

// Host computation on tensors becomes linalg; a select of device buffers
// stays (elementwise-to-linalg-invalid.mlir: computation on device tensors
// is rejected).

// CHECK-LABEL: func.func @host_glue
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4xf32>) outs(%[[X]] : tensor<4xf32>)
// CHECK: arith.negf
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[N]] : tensor<4xf32>) outs(%[[N]] : tensor<4xf32>)
// CHECK: math.sin
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<4xi32>)
// CHECK: arith.sitofp
// CHECK: return
func.func @host_glue(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %n = arith.negf %x : tensor<4xf32>
  %s = math.sin %n : tensor<4xf32>
  %f = arith.sitofp %i : tensor<4xi32> to tensor<4xf32>
  return %s, %f : tensor<4xf32>, tensor<4xf32>
}

// -----

// Choosing one of two device buffers with a scalar condition moves no data:
// the select stays (and bufferizes to a select of buffers). Scalars are not
// touched either.
// CHECK-LABEL: func.func @choose
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[T:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: return %[[S]], %[[T]]
func.func @choose(%c: i1, %a: tensor<4xf32, #etcopy.device<cuda:0>>,
                  %b: tensor<4xf32, #etcopy.device<cuda:0>>, %f: f32)
    -> (tensor<4xf32, #etcopy.device<cuda:0>>, f32) {
  %s = arith.select %c, %a, %b : tensor<4xf32, #etcopy.device<cuda:0>>
  %t = arith.addf %f, %f : f32
  return %s, %t : tensor<4xf32, #etcopy.device<cuda:0>>, f32
}

// -----

// A select on host tensors is host computation like any other, also when it
// is the only one in the module (the pass then has something to convert).
// CHECK-LABEL: func.func @only_host_select
// CHECK: linalg.generic
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
func.func @only_host_select(%c: i1, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %s = arith.select %c, %a, %b : tensor<4xf32>
  return %s : tensor<4xf32>
}
