// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime -split-input-file -verify-diagnostics

// Launches convert-gpu-to-cuda-runtime cannot lower are compile-time errors
// naming the kernel, the binary or the type.

module attributes {gpu.container_module} {
  // expected-note @+1 {{the binary}}
  gpu.binary @kernels [#gpu.object<#nvvm.target, offload = "BC">]
  func.func @offload_object(%n: index) {
    // expected-error @+1 {{cannot launch from gpu.binary @kernels: its object is LLVM bitcode (format offload), which cudaLibraryLoadData cannot load; use format isa, bin or fatbin}}
    gpu.launch_func @kernels::@k blocks in (%n, %n, %n) threads in (%n, %n, %n)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, assembly = ".version 8.0">]
  func.func @cluster(%n: index) {
    // expected-error @+1 {{cannot lower a cluster launch: cudaLaunchKernel takes no cluster size}}
    gpu.launch_func @kernels::@k clusters in (%n, %n, %n) blocks in (%n, %n, %n) threads in (%n, %n, %n)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, assembly = ".version 8.0">]
  func.func @unranked(%n: index, %m: memref<*xf32>) {
    // expected-error @+1 {{cannot pass the unranked memref 'memref<*xf32>' to a kernel; cast it to a ranked memref first}}
    gpu.launch_func @kernels::@k blocks in (%n, %n, %n) threads in (%n, %n, %n) args(%m : memref<*xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, assembly = ".version 8.0">]
  func.func @vector(%n: index, %v: vector<4xf32>) {
    // expected-error @+1 {{cannot pass a value of type 'vector<4xf32>' to a kernel; supported: memrefs, integers, floats, index}}
    gpu.launch_func @kernels::@k blocks in (%n, %n, %n) threads in (%n, %n, %n) args(%v : vector<4xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-note @+1 {{the binary}}
  gpu.binary @kernels <#gpu.select_object<1>> [#gpu.object<#nvvm.target, assembly = ".version 8.0">]
  func.func @no_selected_object(%n: index) {
    // expected-error @+1 {{cannot launch from gpu.binary @kernels: it has no object that its offloading handler selects}}
    gpu.launch_func @kernels::@k blocks in (%n, %n, %n) threads in (%n, %n, %n)
    return
  }
}
