// A host tensor goes to cuda:0, comes back, and the same-device round trip
// folds away; the copy to cuda:1 and back through the host is real and
// stays. Run: build/bin/etcopy-opt examples/copies.mlir --canonicalize
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32, #etcopy.device<cuda:1>>) {
  %d0 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h0 = etcopy.d2h %d0 : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %d1 = etcopy.h2d %h0 : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  return %h0, %d1 : tensor<4xf32>, tensor<4xf32, #etcopy.device<cuda:1>>
}
