// The main job: a host tensor goes to cuda:0 through a function boundary,
// comes back, and is printed. Run it with utils/run-example.sh, which lowers
// it with `etcopy-opt --etcopy-to-cuda` and executes it on the GPU when one
// is present, else on the CUDA runtime simulator.

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

// Stays on the device: the result is device memory owned by the caller.
func.func @to_device(%x: tensor<2x3xf32>) -> tensor<2x3xf32, #etcopy.device<cuda:0>> {
  %d = etcopy.h2d %x : tensor<2x3xf32> -> tensor<2x3xf32, #etcopy.device<cuda:0>>
  return %d : tensor<2x3xf32, #etcopy.device<cuda:0>>
}

func.func @main() {
  %x = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %d = call @to_device(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %d : tensor<2x3xf32, #etcopy.device<cuda:0>> -> tensor<2x3xf32>
  %m = bufferization.to_buffer %h : tensor<2x3xf32> to memref<2x3xf32>
  %u = memref.cast %m : memref<2x3xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
