// A model method whose host glue between two delegates on cuda:0 stages
// its data in host buffers that the method allocates and frees itself.
func.func private @encode(tensor<16xf32>) -> tensor<16xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @decode(tensor<16xf32>) -> tensor<16xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @method(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = func.call @encode(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %h = arith.negf %e : tensor<16xf32>
  %d = func.call @decode(%h) : (tensor<16xf32>) -> tensor<16xf32>
  return %d : tensor<16xf32>
}
