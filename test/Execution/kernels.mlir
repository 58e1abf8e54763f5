// Kernels between copies and a delegate: the method uploads its input,
// calls a delegate (C, Inputs/delegates.c), launches a kernel on the
// delegate's result and downloads it, twice. --etcopy-to-cuda compiles the
// gpu.module to PTX (and to host code, for the simulator), the lowered code
// loads the library once per process and launches the kernel per launch on
// the function's stream, without waiting in between; it prints the same
// data as the host build, where the launch is a loop over the threads.
// RUN: %cc -shared -fPIC -DETCOPY_DEVICE_DELEGATES -I%cuda_sim_include \
// RUN:   %S/Inputs/delegates.c -o %t.device.so %etcopy_cuda_sim
// RUN: %cc -shared -fPIC %S/Inputs/delegates.c -o %t.host.so
// RUN: etcopy-opt %s --etcopy-to-cuda="place-copies=false optimize-transfers=false" \
// RUN:   -o %t.cuda.mlir
// RUN: env ETCOPY_CUDA_SIM_TRACE=1 %run_sim,%t.device.so < %t.cuda.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,TRACE
// RUN: etcopy-opt %s --etcopy-to-host="place-copies=false optimize-transfers=false" \
// RUN:   | %run_host,%t.host.so | FileCheck %s
// The lowered code needs libcudart alone: no symbol of another CUDA
// library, no mgpu wrapper.
// RUN: FileCheck %s --check-prefix=LINK < %t.cuda.mlir
// RUN: %if cuda-gpu %{ %cc -shared -fPIC -DETCOPY_DEVICE_DELEGATES \
// RUN:   -I%cuda_sim_include %S/Inputs/delegates.c -o %t.gpu.so %cudart && \
// RUN:   %run_gpu,%t.gpu.so < %t.cuda.mlir | FileCheck %s %}

// The simulator's host kernels are handed over through dlsym, not linked.
// LINK-NOT: mgpu
// LINK-NOT: llvm.func @cu{{[A-Z]}}
// LINK-NOT: llvm.func @etcopy_cuda_sim
// LINK: llvm.func @cudaLibraryLoadData(
// LINK-NOT: mgpu
// LINK-NOT: llvm.func @etcopy_cuda_sim

// One load of the image (the PTX alone), the host kernels attached beside
// it, one look-up; a launch per call, after the delegate's work and before
// the download, with no host wait between them.
// TRACE: cudaMemcpyAsync({{.*}}HostToDevice, stream=[[S:S[0-9]+]])
// TRACE: cudaLibraryLoadData(PTX image, {{[0-9]+}} bytes) -> library 1
// TRACE-NEXT: etcopy_cuda_sim_attach_host_kernels(library 1, 1 host kernels)
// TRACE-NEXT: cudaLibraryGetKernel(library 1, "add_index")
// TRACE-NEXT: cudaLaunchKernel(add_index, grid=(2, 1, 1), block=(2, 1, 1), shared=0, stream=[[S]])
// TRACE-NEXT: cudaMemcpyAsync({{.*}}DeviceToHost, stream=[[S]])
// TRACE: cudaStreamSynchronize([[S]])
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [2, -3, 5, 83]
// TRACE-NOT: cudaLibraryLoadData
// TRACE-NOT: etcopy_cuda_sim_attach_host_kernels
// TRACE-NOT: cudaLibraryGetKernel
// TRACE: cudaLaunchKernel(add_index, grid=(2, 1, 1), block=(2, 1, 1), shared=0, stream=[[S]])
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [2, -3, 5, 83]
// TRACE: cudaLibraryUnload(library 1)
// TRACE: stats: entry-points: {{.*}} cudaLibraryLoadData=1 {{.*}}cudaLibraryGetKernel=1 cudaLaunchKernel=2{{$}}

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // y[i] += i, one thread per element.
    gpu.func @add_index(%y: memref<4xf32, #etcopy.device<cuda:0>>) kernel {
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %n = gpu.block_dim x
      %o = arith.muli %b, %n : index
      %i = arith.addi %o, %t : index
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      %v = memref.load %y[%i] : memref<4xf32, #etcopy.device<cuda:0>>
      %w = arith.addf %v, %f : f32
      memref.store %w, %y[%i] : memref<4xf32, #etcopy.device<cuda:0>>
      gpu.return
    }
  }
  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
  func.func private @scale(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
      attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}
  // method(x) = scale(x) + index = 2 * x + i: the kernel updates the
  // delegate's result in place.
  func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    %s = call @scale(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    %m = bufferization.to_buffer %s : tensor<4xf32, #etcopy.device<cuda:0>> to memref<4xf32, #etcopy.device<cuda:0>>
    gpu.launch_func @kernels::@add_index blocks in (%c2, %c1, %c1) threads in (%c2, %c1, %c1)
        args(%m : memref<4xf32, #etcopy.device<cuda:0>>)
    %r = bufferization.to_tensor %m restrict : memref<4xf32, #etcopy.device<cuda:0>> to tensor<4xf32, #etcopy.device<cuda:0>>
    %h = etcopy.d2h %r : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
    return %h : tensor<4xf32>
  }
  func.func @main() {
    %x = arith.constant dense<[1.0, -2.0, 1.5, 40.0]> : tensor<4xf32>
    %r = call @method(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %m = bufferization.to_buffer %r : tensor<4xf32> to memref<4xf32>
    %u = memref.cast %m : memref<4xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    %r2 = call @method(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %m2 = bufferization.to_buffer %r2 : tensor<4xf32> to memref<4xf32>
    %u2 = memref.cast %m2 : memref<4xf32> to memref<*xf32>
    call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
    return
  }
}
