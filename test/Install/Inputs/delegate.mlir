// A method calling a cuda:0 delegate: etcopy-propagate-device copies the
// argument to the device.
func.func private @delegate(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @delegate(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
