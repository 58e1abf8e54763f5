// A method whose copies are already placed, one of them a same-device round
// trip that transfer optimisation removes.
func.func private @step(tensor<16xf32, #etcopy.device<cuda:0>>) -> tensor<16xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @method(%x: tensor<16xf32>) -> tensor<16xf32> {
  %d = etcopy.h2d %x : tensor<16xf32> -> tensor<16xf32, #etcopy.device<cuda:0>>
  %a = func.call @step(%d) : (tensor<16xf32, #etcopy.device<cuda:0>>) -> tensor<16xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %a : tensor<16xf32, #etcopy.device<cuda:0>> -> tensor<16xf32>
  %back = etcopy.h2d %h : tensor<16xf32> -> tensor<16xf32, #etcopy.device<cuda:0>>
  %b = func.call @step(%back) : (tensor<16xf32, #etcopy.device<cuda:0>>) -> tensor<16xf32, #etcopy.device<cuda:0>>
  %r = etcopy.d2h %b : tensor<16xf32, #etcopy.device<cuda:0>> -> tensor<16xf32>
  return %r : tensor<16xf32>
}

