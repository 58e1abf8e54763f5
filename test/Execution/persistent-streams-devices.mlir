// Streams persist across calls, one per device: a method with work on two
// devices, called 1000 times, makes the default stream provider create one
// stream on each device in total (at the first call), and gives the same
// data at every call. The streams are destroyed when the JIT session ends.
// RUN: etcopy-opt %s --etcopy-to-cuda="place-copies=false optimize-transfers=false" \
// RUN:   | env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_STATS=1 %run_sim 2>&1 \
// RUN:   | FileCheck %s

// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [2, -4, 1, 20]
// CHECK: stats: streams_created=2 streams_destroyed=2
// CHECK: stats: entry-points:
// CHECK-SAME: cudaStreamCreateWithFlags=2 cudaStreamDestroy=2
// CHECK-NOT: leak

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

// method(x) = x + x, each half through another device.
func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> {
  %x0 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %x1 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  %h0 = etcopy.d2h %x0 : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %h1 = etcopy.d2h %x1 : tensor<4xf32, #etcopy.device<cuda:1>> -> tensor<4xf32>
  %r = arith.addf %h0, %h1 : tensor<4xf32>
  return %r : tensor<4xf32>
}

// Sums the results of 1000 calls on the host, then prints the mean.
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %calls = arith.constant 1000 : index
  %x = arith.constant dense<[1.0, -2.0, 0.5, 10.0]> : tensor<4xf32>
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  %sum = scf.for %i = %c0 to %calls step %c1 iter_args(%acc = %zero) -> tensor<4xf32> {
    %r = func.call @method(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %next = arith.addf %acc, %r : tensor<4xf32>
    scf.yield %next : tensor<4xf32>
  }
  %n = arith.constant dense<1000.0> : tensor<4xf32>
  %mean = arith.divf %sum, %n : tensor<4xf32>
  %m = bufferization.to_buffer %mean : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
