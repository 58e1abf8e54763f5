// cuda-graphs with a kernel: @negate's one launch is captured at the first
// call and replayed; another buffer of another size captures again (the
// key: the stream, and the buffer's address, offset, size and stride, its
// shape being dynamic). @run loops on the host and is not captured.
// cudaLaunchKernel is called at the two captures only; the kernel runs at
// each of the five graph launches: %d, negated four times, is back to its
// values (a replay that did not run the kernel would leave it negated).
// The data is the host build's.
// RUN: etcopy-opt %s --etcopy-to-cuda="cuda-graphs=true" \
// RUN:   --remarks-filter=convert-gpu-to-cuda-runtime -o %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: env ETCOPY_CUDA_SIM_STATS=1 %run_sim < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,STATS
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: %if cuda-gpu %{ %run_gpu < %t.mlir | FileCheck %s %}

// REMARK: remark: [Passed] GraphCaptured | {{.*}} | Function=negate | Delegates=0, KeyWords=5, Ops=2,

// Four calls on the first buffer (captured, replayed three times), one on
// the second (captured).
// CHECK: sizes = [7] strides = [1] data =
// CHECK-NEXT: [0, 1, 2, 3, 4, 5, 6]
// CHECK: sizes = [5] strides = [1] data =
// CHECK-NEXT: [-0, -1, -2, -3, -4]
// STATS: entry-points: {{.*}} cudaLaunchKernel=2 {{.*}}cudaStreamBeginCapture=2 {{.*}}cudaGraphLaunch=5

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // v[i] = -v[i] for i < dim(v).
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
  }

  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

  func.func @negate(%d: memref<?xf32, #etcopy.device<cuda:0>>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @kernels::@negate_bounded blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1)
        args(%d : memref<?xf32, #etcopy.device<cuda:0>>)
    return
  }

  func.func @run(%n: index, %times: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %h = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      memref.store %f, %h[%i] : memref<?xf32>
    }
    %d = memref.alloc(%n) : memref<?xf32, #etcopy.device<cuda:0>>
    etcopy.h2d %h, %d : memref<?xf32> -> memref<?xf32, #etcopy.device<cuda:0>>
    scf.for %t = %c0 to %times step %c1 {
      func.call @negate(%d) : (memref<?xf32, #etcopy.device<cuda:0>>) -> ()
    }
    etcopy.d2h %d, %h : memref<?xf32, #etcopy.device<cuda:0>> -> memref<?xf32>
    %u = memref.cast %h : memref<?xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    memref.dealloc %d : memref<?xf32, #etcopy.device<cuda:0>>
    memref.dealloc %h : memref<?xf32>
    return
  }

  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    call @run(%c7, %c4) : (index, index) -> ()
    call @run(%c5, %c1) : (index, index) -> ()
    return
  }
}
