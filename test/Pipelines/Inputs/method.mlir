// A model method for the pipeline tests: two delegates on cuda:0, a host
// input they share, host glue between them, a loop.
func.func private @encode(tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @step(tensor<16xf32>) -> tensor<16xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @method(%x: tensor<16xf32>, %w: tensor<16xf32>, %n: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = func.call @encode(%x, %w) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %h = arith.negf %e : tensor<16xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %h) -> (tensor<16xf32>) {
    %t = func.call @step(%s) : (tensor<16xf32>) -> tensor<16xf32>
    scf.yield %t : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
