// Kernels of several shapes on the simulator, checked against the host
// build: a 2-D grid of 2-D blocks over a matrix, a dynamic size (threads
// past the end do nothing), and a reduction without barriers (each thread
// sums a strided slice into its own partial, one thread sums the partials).
// RUN: etcopy-opt %s --etcopy-to-cuda -o %t.cuda.mlir
// RUN: env ETCOPY_CUDA_SIM_TRACE=1 %run_sim < %t.cuda.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,TRACE
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: %if cuda-gpu %{ %run_gpu < %t.cuda.mlir | FileCheck %s %}

// TRACE: cudaLaunchKernel(transpose_add, grid=(2, 3, 1), block=(2, 2, 1), shared=0, stream={{S[0-9]+}})
// CHECK: sizes = [6, 4] strides = [4, 1] data =
// CHECK-NEXT: [0, 5, 10, 15],
// CHECK-NEXT: [5, 10, 15, 20],
// CHECK-NEXT: [10, 15, 20, 25],
// CHECK-NEXT: [15, 20, 25, 30],
// CHECK-NEXT: [20, 25, 30, 35],
// CHECK-NEXT: [25, 30, 35, 40]

// TRACE: cudaLaunchKernel(negate_bounded, grid=(2, 1, 1), block=(4, 1, 1), shared=0, stream={{S[0-9]+}})
// CHECK: sizes = [7] strides = [1] data =
// CHECK-NEXT: [-0, -1, -2, -3, -4, -5, -6]

// TRACE: cudaLaunchKernel(partial_sums, grid=(1, 1, 1), block=(4, 1, 1), shared=0, stream={{S[0-9]+}})
// TRACE: cudaLaunchKernel(total, grid=(1, 1, 1), block=(1, 1, 1), shared=0, stream={{S[0-9]+}})
// CHECK: sizes = [1] strides = [1] data =
// CHECK-NEXT: [210]

// One library for the module, loaded once; each kernel looked up once.
// TRACE: stats: entry-points: {{.*}} cudaLibraryLoadData=1 {{.*}}cudaLibraryGetKernel=4 cudaLaunchKernel=4{{$}}

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // m[r][c] = 5 * (r + c): row r = block y * 2 + thread y, column c =
    // block x * 2 + thread x.
    gpu.func @transpose_add(%m: memref<6x4xf32, #etcopy.device<cuda:0>>) kernel {
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %dx = gpu.block_dim x
      %dy = gpu.block_dim y
      %c0 = arith.muli %bx, %dx : index
      %c = arith.addi %c0, %tx : index
      %r0 = arith.muli %by, %dy : index
      %r = arith.addi %r0, %ty : index
      %s = arith.addi %r, %c : index
      %si = arith.index_cast %s : index to i32
      %sf = arith.sitofp %si : i32 to f32
      %five = arith.constant 5.0 : f32
      %v = arith.mulf %sf, %five : f32
      memref.store %v, %m[%r, %c] : memref<6x4xf32, #etcopy.device<cuda:0>>
      gpu.return
    }
    // v[i] = -v[i] for i < dim(v): the grid covers 8 threads for 7 elements.
    gpu.func @negate_bounded(%v: memref<?xf32, #etcopy.device<cuda:0>>) kernel {
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %n = memref.dim %v, %c0 : memref<?xf32, #etcopy.device<cuda:0>>
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %v[%i] : memref<?xf32, #etcopy.device<cuda:0>>
        %y = arith.negf %x : f32
        memref.store %y, %v[%i] : memref<?xf32, #etcopy.device<cuda:0>>
      }
      gpu.return
    }
    // partial[t] = sum of x[t], x[t + 4], x[t + 8], ...
    gpu.func @partial_sums(%x: memref<20xf32, #etcopy.device<cuda:0>>, %partial: memref<4xf32, #etcopy.device<cuda:0>>) kernel {
      %t = gpu.thread_id x
      %step = gpu.block_dim x
      %c20 = arith.constant 20 : index
      %zero = arith.constant 0.0 : f32
      %sum = scf.for %i = %t to %c20 step %step iter_args(%acc = %zero) -> (f32) {
        %e = memref.load %x[%i] : memref<20xf32, #etcopy.device<cuda:0>>
        %a = arith.addf %acc, %e : f32
        scf.yield %a : f32
      }
      memref.store %sum, %partial[%t] : memref<4xf32, #etcopy.device<cuda:0>>
      gpu.return
    }
    gpu.func @total(%partial: memref<4xf32, #etcopy.device<cuda:0>>, %out: memref<1xf32, #etcopy.device<cuda:0>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %zero = arith.constant 0.0 : f32
      %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
        %e = memref.load %partial[%i] : memref<4xf32, #etcopy.device<cuda:0>>
        %a = arith.addf %acc, %e : f32
        scf.yield %a : f32
      }
      memref.store %sum, %out[%c0] : memref<1xf32, #etcopy.device<cuda:0>>
      gpu.return
    }
  }

  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

  func.func @matrix() {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %d = memref.alloc() : memref<6x4xf32, #etcopy.device<cuda:0>>
    %h = memref.alloc() : memref<6x4xf32>
    gpu.launch_func @kernels::@transpose_add blocks in (%c2, %c3, %c1) threads in (%c2, %c2, %c1)
        args(%d : memref<6x4xf32, #etcopy.device<cuda:0>>)
    etcopy.d2h %d, %h : memref<6x4xf32, #etcopy.device<cuda:0>> -> memref<6x4xf32>
    %u = memref.cast %h : memref<6x4xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    memref.dealloc %d : memref<6x4xf32, #etcopy.device<cuda:0>>
    memref.dealloc %h : memref<6x4xf32>
    return
  }

  func.func @bounded(%n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %h = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      memref.store %f, %h[%i] : memref<?xf32>
    }
    %d = memref.alloc(%n) : memref<?xf32, #etcopy.device<cuda:0>>
    etcopy.h2d %h, %d : memref<?xf32> -> memref<?xf32, #etcopy.device<cuda:0>>
    gpu.launch_func @kernels::@negate_bounded blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1)
        args(%d : memref<?xf32, #etcopy.device<cuda:0>>)
    etcopy.d2h %d, %h : memref<?xf32, #etcopy.device<cuda:0>> -> memref<?xf32>
    %u = memref.cast %h : memref<?xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    memref.dealloc %d : memref<?xf32, #etcopy.device<cuda:0>>
    memref.dealloc %h : memref<?xf32>
    return
  }

  func.func @reduce() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c20 = arith.constant 20 : index
    %h = memref.alloc() : memref<20xf32>
    scf.for %i = %c0 to %c20 step %c1 {
      %i1 = arith.addi %i, %c1 : index
      %ii = arith.index_cast %i1 : index to i32
      %f = arith.sitofp %ii : i32 to f32
      memref.store %f, %h[%i] : memref<20xf32>
    }
    %x = memref.alloc() : memref<20xf32, #etcopy.device<cuda:0>>
    %partial = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
    %out = memref.alloc() : memref<1xf32, #etcopy.device<cuda:0>>
    %r = memref.alloc() : memref<1xf32>
    etcopy.h2d %h, %x : memref<20xf32> -> memref<20xf32, #etcopy.device<cuda:0>>
    gpu.launch_func @kernels::@partial_sums blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1)
        args(%x : memref<20xf32, #etcopy.device<cuda:0>>, %partial : memref<4xf32, #etcopy.device<cuda:0>>)
    gpu.launch_func @kernels::@total blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%partial : memref<4xf32, #etcopy.device<cuda:0>>, %out : memref<1xf32, #etcopy.device<cuda:0>>)
    etcopy.d2h %out, %r : memref<1xf32, #etcopy.device<cuda:0>> -> memref<1xf32>
    %u = memref.cast %r : memref<1xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    memref.dealloc %x : memref<20xf32, #etcopy.device<cuda:0>>
    memref.dealloc %partial : memref<4xf32, #etcopy.device<cuda:0>>
    memref.dealloc %out : memref<1xf32, #etcopy.device<cuda:0>>
    memref.dealloc %h : memref<20xf32>
    memref.dealloc %r : memref<1xf32>
    return
  }

  func.func @main() {
    %c7 = arith.constant 7 : index
    call @matrix() : () -> ()
    call @bounded(%c7) : (index) -> ()
    call @reduce() : () -> ()
    return
  }
}
