// Ranks 0 to 4, dynamic shapes and zero-sized buffers round-trip through a
// device unchanged, on the simulator and in the host reference lowering.
// RUN: etcopy-opt %s --etcopy-to-cuda | %run_sim | FileCheck %s
// No copy of 0 bytes reaches CUDA, in a batch or alone.
// RUN: etcopy-opt %s --etcopy-to-cuda | env ETCOPY_CUDA_SIM_TRACE=1 %run_sim 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRACE
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: %if cuda-gpu %{ etcopy-opt %s --etcopy-to-cuda | %run_gpu | FileCheck %s %}

// TRACE-NOT: trace: cudaMemcpy{{.*}}(0 copies
// TRACE-NOT: trace: cudaMemcpy{{.*}} 0 bytes
// TRACE: stats:

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @printMemrefI32(memref<*xi32>) attributes {llvm.emit_c_interface}

memref.global "private" constant @scalar : memref<f32> = dense<42.5>
memref.global "private" constant @rank4 : memref<2x1x2x3xi32> =
    dense<[[[[1, 2, 3], [4, 5, 6]]], [[[7, 8, 9], [10, 11, 12]]]]>
memref.global "private" constant @rows : memref<3x2xf32> =
    dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]>

func.func @main() {
  // CHECK: rank = 0 offset = 0 sizes = [] strides = [] data =
  // CHECK-NEXT: [42.5]
  %s = memref.get_global @scalar : memref<f32>
  %sd = memref.alloc() : memref<f32, #etcopy.device<cuda:0>>
  etcopy.h2d %s, %sd : memref<f32> -> memref<f32, #etcopy.device<cuda:0>>
  %sh = memref.alloc() : memref<f32>
  etcopy.d2h %sd, %sh : memref<f32, #etcopy.device<cuda:0>> -> memref<f32>
  %su = memref.cast %sh : memref<f32> to memref<*xf32>
  call @printMemrefF32(%su) : (memref<*xf32>) -> ()
  memref.dealloc %sd : memref<f32, #etcopy.device<cuda:0>>
  memref.dealloc %sh : memref<f32>

  // CHECK: rank = 4 offset = 0 sizes = [2, 1, 2, 3] strides = [6, 6, 3, 1] data =
  // CHECK-NEXT: {{\[\[\[\[}}1, 2, 3],
  // CHECK-NEXT: [4, 5, 6]]],
  // CHECK-NEXT: {{\[\[\[}}7, 8, 9],
  // CHECK-NEXT: [10, 11, 12]]]]
  %r = memref.get_global @rank4 : memref<2x1x2x3xi32>
  %rd = memref.alloc() : memref<2x1x2x3xi32, #etcopy.device<cuda:0>>
  etcopy.h2d %r, %rd : memref<2x1x2x3xi32> -> memref<2x1x2x3xi32, #etcopy.device<cuda:0>>
  %rh = memref.alloc() : memref<2x1x2x3xi32>
  etcopy.d2h %rd, %rh : memref<2x1x2x3xi32, #etcopy.device<cuda:0>> -> memref<2x1x2x3xi32>
  %ru = memref.cast %rh : memref<2x1x2x3xi32> to memref<*xi32>
  call @printMemrefI32(%ru) : (memref<*xi32>) -> ()
  memref.dealloc %rd : memref<2x1x2x3xi32, #etcopy.device<cuda:0>>
  memref.dealloc %rh : memref<2x1x2x3xi32>

  // Dynamic: the device buffer's size is only known at run time.
  // CHECK: rank = 2 offset = 0 sizes = [3, 2] strides = [2, 1] data =
  // CHECK-NEXT: {{\[\[}}1, 2],
  // CHECK-NEXT: [3, 4],
  // CHECK-NEXT: [5, 6]]
  %rows = memref.get_global @rows : memref<3x2xf32>
  %dyn = memref.cast %rows : memref<3x2xf32> to memref<?x2xf32>
  %c0 = arith.constant 0 : index
  %n = memref.dim %dyn, %c0 : memref<?x2xf32>
  %dd = memref.alloc(%n) : memref<?x2xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %dyn, %dd : memref<?x2xf32> -> memref<?x2xf32, #etcopy.device<cuda:0>>
  %dh = memref.alloc(%n) : memref<?x2xf32>
  etcopy.d2h %dd, %dh : memref<?x2xf32, #etcopy.device<cuda:0>> -> memref<?x2xf32>
  %du = memref.cast %dh : memref<?x2xf32> to memref<*xf32>
  call @printMemrefF32(%du) : (memref<*xf32>) -> ()
  memref.dealloc %dd : memref<?x2xf32, #etcopy.device<cuda:0>>
  memref.dealloc %dh : memref<?x2xf32>

  // Zero-sized: nothing to copy, no data to print, no error.
  // CHECK: rank = 2 offset = 0 sizes = [0, 4] strides = [4, 1] data =
  %e = memref.alloc() : memref<0x4xf32>
  %ed = memref.alloc() : memref<0x4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %e, %ed : memref<0x4xf32> -> memref<0x4xf32, #etcopy.device<cuda:0>>
  etcopy.d2h %ed, %e : memref<0x4xf32, #etcopy.device<cuda:0>> -> memref<0x4xf32>
  %eu = memref.cast %e : memref<0x4xf32> to memref<*xf32>
  call @printMemrefF32(%eu) : (memref<*xf32>) -> ()
  memref.dealloc %ed : memref<0x4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %e : memref<0x4xf32>

  // Zero-sized with a size known only at run time: the copies are skipped
  // then (a 0-byte copy's buffers may be null; CUDA rejects a batch holding
  // one).
  // CHECK: rank = 2 offset = 0 sizes = [0, 4] strides = [4, 1] data =
  %zn = call @zero() : () -> index
  %z = memref.alloc(%zn) : memref<?x4xf32>
  %zd = memref.alloc(%zn) : memref<?x4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %z, %zd : memref<?x4xf32> -> memref<?x4xf32, #etcopy.device<cuda:0>>
  etcopy.d2h %zd, %z : memref<?x4xf32, #etcopy.device<cuda:0>> -> memref<?x4xf32>
  %zu = memref.cast %z : memref<?x4xf32> to memref<*xf32>
  call @printMemrefF32(%zu) : (memref<*xf32>) -> ()
  memref.dealloc %zd : memref<?x4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %z : memref<?x4xf32>
  return
}

func.func private @zero() -> index {
  %c0 = arith.constant 0 : index
  return %c0 : index
}
