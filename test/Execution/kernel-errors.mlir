// Launch failures reach the error policy with the launch's location, and
// the program exits with status 1: a launch configuration CUDA rejects, a
// kernel the simulator cannot run (it synchronises its threads), and a
// failing library load (injected).
// RUN: etcopy-opt %s --etcopy-to-cuda -o %t.mlir
// RUN: not %run_sim -e too_many_threads < %t.mlir 2>&1 | FileCheck %s --check-prefix=CONFIG
// RUN: not %run_sim -e barrier < %t.mlir 2>&1 | FileCheck %s --check-prefix=BARRIER
// RUN: env ETCOPY_CUDA_SIM_FAIL=other:4 not %run_sim -e too_many_threads < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LOAD

// CONFIG: etcopy-cuda-sim: error: cudaLaunchKernel: kernel fill: block (2048, 1, 1) exceeds the limits (1024 x 1024 x 64, 1024 threads per block)
// CONFIG-NEXT: {{.*}}kernel-errors.mlir:[[# @LINE + 27]]:5: error: cudaLaunchKernel failed (launch the kernel): cudaErrorInvalidConfiguration: invalid configuration argument

// BARRIER: etcopy-cuda-sim: error: cudaLaunchKernel: kernel sync cannot run on the simulator: it uses gpu.barrier, which needs the threads of a block to run together
// BARRIER-NEXT: {{.*}}kernel-errors.mlir:[[# @LINE + 33]]:5: error: cudaLaunchKernel failed (launch the kernel): cudaErrorNotSupported: operation not supported

// The fourth "other" call, after the three of the pool policy, is the load.
// LOAD: etcopy-cuda-sim: error: cudaLibraryLoadData: injected failure: other call #4 fails with cudaErrorInvalidKernelImage because ETCOPY_CUDA_SIM_FAIL=other:4
// LOAD-NEXT: {{.*}}kernel-errors.mlir:[[# @LINE + 20]]:5: error: cudaLibraryLoadData failed (load the device code of the kernels): cudaErrorInvalidKernelImage: device kernel image is invalid

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%p: memref<?xf32, #etcopy.device<cuda:0>>) kernel {
      %i = gpu.thread_id x
      %c0 = arith.constant 0.0 : f32
      memref.store %c0, %p[%i] : memref<?xf32, #etcopy.device<cuda:0>>
      gpu.return
    }
    gpu.func @sync() kernel {
      gpu.barrier
      gpu.return
    }
  }

  func.func @too_many_threads() {
    %c1 = arith.constant 1 : index
    %n = arith.constant 2048 : index
    %d = memref.alloc(%n) : memref<?xf32, #etcopy.device<cuda:0>>
    gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1)
        args(%d : memref<?xf32, #etcopy.device<cuda:0>>)
    memref.dealloc %d : memref<?xf32, #etcopy.device<cuda:0>>
    return
  }

  func.func @barrier() {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @kernels::@sync blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
    return
  }
}
