// RUN: etcopy-opt %s --etcopy-compile-kernels=use-bare-pointers-for-kernels \
// RUN:   | FileCheck %s --check-prefix=BARE --implicit-check-not=gpu.module
// RUN: etcopy-opt %s --etcopy-compile-kernels \
// RUN:   | FileCheck %s --check-prefix=DESCRIPTOR --implicit-check-not=gpu.module

// use-bare-pointers-for-kernels reaches convert-gpu-to-nvvm
// (use-bare-ptr-memref-call-conv): the kernel's .entry in the PTX takes the
// memref as one 64-bit pointer, then the scalar, and nothing else; with the
// default convention it takes the descriptor's five fields, then the scalar.

// BARE: gpu.binary @kernels
// BARE-SAME: .visible .entry scale(\0A\09.param .u64 {{[^_]*}}scale_param_0,\0A\09.param .f32 scale_param_1{{[^_)]*}})
// DESCRIPTOR: gpu.binary @kernels
// DESCRIPTOR-SAME: .visible .entry scale(
// DESCRIPTOR-SAME: .param .f32 scale_param_5{{[^_)]*}})
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<8xf32>, %a: f32) kernel {
      %i = gpu.thread_id x
      %xi = memref.load %x[%i] : memref<8xf32>
      %p = arith.mulf %a, %xi : f32
      memref.store %p, %x[%i] : memref<8xf32>
      gpu.return
    }
  }
  func.func @host(%x: memref<8xf32>, %a: f32) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1)
        threads in (%c8, %c1, %c1) args(%x : memref<8xf32>, %a : f32)
    return
  }
}
