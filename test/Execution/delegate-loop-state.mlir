// A state a loop updates with a delegate that also reads a loop-invariant
// weight stays on the device across iterations: the state goes in once and
// out once, the weight in once, and the lowered code executes exactly these
// 3 copies (the two uploads in one batch). Without the delegate contract's fresh results, One-Shot
// Bufferize would copy the carried state device-to-device every iteration
// (it must assume that the delegate's result may alias the weight).
// RUN: %cc -shared -fPIC -DETCOPY_DEVICE_DELEGATES -I%cuda_sim_include \
// RUN:   %S/Inputs/executorch-delegates.c -o %t.device.so %etcopy_cuda_sim
// RUN: etcopy-opt %s --etcopy-to-cuda \
// RUN:   | env ETCOPY_CUDA_SIM_TRACE=1 %run_sim,%t.device.so 2>&1 \
// RUN:   | grep -E "trace: cudaMemcpy(2D|Batch)?Async\(|^[^e]" | FileCheck %s

// CHECK: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// CHECK-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}2.5, -1],
// CHECK-NEXT: [9, 4.75]]

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @add(tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}

// method(x, w) = x + 3 * w
func.func @method(%x: tensor<2x2xf32>, %w: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%s = %x) -> (tensor<2x2xf32>) {
    %n = func.call @add(%s, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    scf.yield %n : tensor<2x2xf32>
  }
  return %r : tensor<2x2xf32>
}

func.func @main() {
  %x = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %w = arith.constant dense<[[0.5, -1.0], [2.0, 0.25]]> : tensor<2x2xf32>
  %r = call @method(%x, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %m = bufferization.to_buffer %r : tensor<2x2xf32> to memref<2x2xf32>
  %u = memref.cast %m : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
