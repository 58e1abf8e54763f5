// RUN: etcopy-opt %s -split-input-file -verify-diagnostics --etcopy-elementwise-to-linalg

// etcopy generates no device kernels: computation on device tensors is an
// error, in host code and in the bodies of delegates.

// Negative: computing on device tensors in host code.
func.func @device_compute(%a: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
  // expected-error @+1 {{'arith.addf' computes on 'tensor<4xf32, #etcopy.device<cuda:0>>' on cuda:0 in host code, but etcopy generates no device kernels: compute it in a delegate, or copy the operands to the host with etcopy.d2h}}
  %s = arith.addf %a, %a : tensor<4xf32, #etcopy.device<cuda:0>>
  return %s : tensor<4xf32, #etcopy.device<cuda:0>>
}

// -----

// Negative: an elementwise select whose condition is a tensor computes.
func.func @device_select(%c: tensor<4xi1, #etcopy.device<cuda:1>>, %a: tensor<4xf32, #etcopy.device<cuda:1>>) -> tensor<4xf32, #etcopy.device<cuda:1>> {
  // expected-error @+1 {{'arith.select' computes on 'tensor<4xi1, #etcopy.device<cuda:1>>' on cuda:1 in host code}}
  %s = arith.select %c, %a, %a : tensor<4xi1, #etcopy.device<cuda:1>>, tensor<4xf32, #etcopy.device<cuda:1>>
  return %s : tensor<4xf32, #etcopy.device<cuda:1>>
}

// -----

// Negative: a linalg op on a device tensor, in a delegate's body.
func.func private @fill(%a: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>} {
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{'linalg.fill' computes on 'tensor<4xf32, #etcopy.device<cuda:0>>' on cuda:0 in the body of delegate @fill, but etcopy generates no device kernels: declare the delegate and link its implementation}}
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  return %f : tensor<4xf32, #etcopy.device<cuda:0>>
}
