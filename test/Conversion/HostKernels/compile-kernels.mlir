// RUN: etcopy-opt %s -split-input-file --etcopy-compile-kernels=chip=sm_80 \
// RUN:   | FileCheck %s --implicit-check-not=gpu.module \
// RUN:     --implicit-check-not=gpu.func
// RUN: not etcopy-opt %s --etcopy-compile-kernels=format=ptx 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FORMAT --implicit-check-not=gpu.binary

// A gpu.module goes through upstream's NVPTX path (nvvm-attach-target with
// the chip, the NVVM lowering of its kernels, gpu-module-to-binary): it
// becomes a gpu.binary of PTX for that chip; host code is left alone.

// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">
// CHECK-SAME: .target sm_80
// CHECK-SAME: .visible .entry scale(
// CHECK: func.func @host(
// CHECK-NEXT: arith.constant 1
// CHECK-NEXT: gpu.launch_func @kernels::@scale
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>, %a: f32) kernel {
      %i = gpu.global_id x
      %xi = memref.load %x[%i] : memref<?xf32>
      %p = arith.mulf %a, %xi : f32
      memref.store %p, %x[%i] : memref<?xf32>
      gpu.return
    }
  }
  func.func @host(%x: memref<?xf32>, %a: f32) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>, %a : f32)
    return
  }
}

// -----

// Without gpu.module the module is left as it is (and not verified again).

// CHECK-LABEL: func.func @no_kernels(
// CHECK-NEXT: arith.constant 0
// CHECK-NEXT: arith.constant 1
// CHECK-NEXT: scf.for
// CHECK-NEXT: etcopy.h2d
func.func @no_kernels(%x: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    etcopy.h2d %x, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  }
  return
}

// FORMAT: <unknown>:0: error: option 'format' of 'etcopy-compile-kernels': 'ptx' is not a kernel format; expected isa, bin or fatbin
