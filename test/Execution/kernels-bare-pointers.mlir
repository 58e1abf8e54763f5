// Kernels compiled and launched with bare pointers for memrefs
// (--etcopy-to-cuda's use-bare-pointers-for-kernels): the launch passes the
// aligned pointer of the 2-D memref alone ('p' in the simulator's table, the
// host version's entry rebuilding the descriptor from the static shape) and
// the scalar; the simulator prints the same data as the host build.
// RUN: etcopy-opt %s --etcopy-to-cuda="place-copies=false optimize-transfers=false use-bare-pointers-for-kernels=true" \
// RUN:   -o %t.cuda.mlir
// RUN: env ETCOPY_CUDA_SIM_TRACE=1 %run_sim < %t.cuda.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,TRACE
// RUN: etcopy-opt %s --etcopy-to-host="place-copies=false optimize-transfers=false" | %run_host | FileCheck %s
// The PTX of the kernel takes one pointer and the scalar.
// RUN: FileCheck %s --check-prefix=PTX < %t.cuda.mlir
// RUN: %if cuda-gpu %{ %run_gpu < %t.cuda.mlir | FileCheck %s %}

// PTX: .visible .entry scale_add(\0A\09.param .u64 {{[^_]*}}scale_add_param_0,\0A\09.param .f32 scale_add_param_1{{[^_)]*}})

// TRACE: cudaLaunchKernel(scale_add, grid=(2, 1, 1), block=(3, 1, 1), shared=0, stream=[[S:S[0-9]+]])
// y[b][t] = y[b][t] * s + 10 * b + t, s = 2.
// CHECK: sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}2, 5, 8],
// CHECK-NEXT: [18, 21, 24]]

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale_add(%y: memref<2x3xf32, #etcopy.device<cuda:0>>, %s: f32) kernel {
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %c10 = arith.constant 10 : index
      %o = arith.muli %b, %c10 : index
      %i = arith.addi %o, %t : index
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      %v = memref.load %y[%b, %t] : memref<2x3xf32, #etcopy.device<cuda:0>>
      %m = arith.mulf %v, %s : f32
      %w = arith.addf %m, %f : f32
      memref.store %w, %y[%b, %t] : memref<2x3xf32, #etcopy.device<cuda:0>>
      gpu.return
    }
  }
  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
  func.func @method(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %s = arith.constant 2.0 : f32
    %d = etcopy.h2d %x : tensor<2x3xf32> -> tensor<2x3xf32, #etcopy.device<cuda:0>>
    %m = bufferization.to_buffer %d : tensor<2x3xf32, #etcopy.device<cuda:0>> to memref<2x3xf32, #etcopy.device<cuda:0>>
    gpu.launch_func @kernels::@scale_add blocks in (%c2, %c1, %c1) threads in (%c3, %c1, %c1)
        args(%m : memref<2x3xf32, #etcopy.device<cuda:0>>, %s : f32)
    %r = bufferization.to_tensor %m restrict : memref<2x3xf32, #etcopy.device<cuda:0>> to tensor<2x3xf32, #etcopy.device<cuda:0>>
    %h = etcopy.d2h %r : tensor<2x3xf32, #etcopy.device<cuda:0>> -> tensor<2x3xf32>
    return %h : tensor<2x3xf32>
  }
  func.func @main() {
    %x = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
    %r = call @method(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %m = bufferization.to_buffer %r : tensor<2x3xf32> to memref<2x3xf32>
    %u = memref.cast %m : memref<2x3xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    return
  }
}
