// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime=use-bare-pointers-for-kernels -split-input-file -verify-diagnostics

// A kernel compiled for bare pointers gets a memref's aligned pointer alone:
// its sizes, strides and offset must be known to it (static shape, identity
// layout), as upstream's gpu-to-llvm requires with the same option.

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, assembly = ".version 8.0">]
  func.func @dynamic_shape(%a: memref<?xf32>, %n: index) {
    // expected-error @+1 {{cannot pass 'memref<?xf32>' to a kernel compiled for bare pointers (use-bare-pointers-for-kernels): its memref arguments must have a static shape and the identity layout}}
    gpu.launch_func @kernels::@k blocks in (%n, %n, %n) threads in (%n, %n, %n) args(%a : memref<?xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, assembly = ".version 8.0">]
  func.func @strided(%a: memref<4xf32, strided<[2]>>, %n: index) {
    // expected-error @+1 {{cannot pass 'memref<4xf32, strided<[2]>>' to a kernel compiled for bare pointers (use-bare-pointers-for-kernels): its memref arguments must have a static shape and the identity layout}}
    gpu.launch_func @kernels::@k blocks in (%n, %n, %n) threads in (%n, %n, %n) args(%a : memref<4xf32, strided<[2]>>)
    return
  }
}

