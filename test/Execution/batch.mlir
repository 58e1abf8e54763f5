// Independent uploads execute as one cudaMemcpyBatchAsync with the data of
// the host build. A failed batch is reported at the run's first copy, with
// the number of copies and their bytes, and the program exits with status 1
// before printing anything.
// RUN: etcopy-opt %s --etcopy-to-cuda -o %t.mlir
// RUN: env ETCOPY_CUDA_SIM_TRACE=1 %run_sim < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,TRACE
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: env ETCOPY_CUDA_SIM_FAIL=batch:1 not %run_sim < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FAIL
// RUN: %if cuda-gpu %{ etcopy-opt %s --etcopy-to-cuda | %run_gpu | FileCheck %s %}

// TRACE: cudaMemcpyBatchAsync(3 copies, 48 bytes, 1 attribute(s), stream=S1) [h2d_pageable 3]
// TRACE-NOT: cudaMemcpyAsync({{.*}}HostToDevice
// CHECK: sizes = [3, 4] strides = [4, 1] data =
// CHECK-NEXT: {{\[\[}}1, 2, 3, 4],
// CHECK-NEXT: [10, 20, 30, 40],
// CHECK-NEXT: [-1, -2, -3, -4]]

// FAIL: batch.mlir:[[# @LINE + 17]]:3: error: cudaMemcpyBatchAsync failed (batch of 3 copies, 48 bytes): cudaErrorInvalidValue: invalid argument
// FAIL-NOT: data =

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

memref.global "private" constant @a : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
memref.global "private" constant @b : memref<4xf32> = dense<[10.0, 20.0, 30.0, 40.0]>
memref.global "private" constant @c : memref<4xf32> = dense<[-1.0, -2.0, -3.0, -4.0]>

func.func @main() {
  %a = memref.get_global @a : memref<4xf32>
  %b = memref.get_global @b : memref<4xf32>
  %c = memref.get_global @c : memref<4xf32>
  %da = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  %db = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  %dc = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  %out = memref.alloc() : memref<3x4xf32>
  etcopy.h2d %a, %da : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %b, %db : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %c, %dc : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  %o0 = memref.subview %out[0, 0] [1, 4] [1, 1] : memref<3x4xf32> to memref<4xf32, strided<[1]>>
  %o1 = memref.subview %out[1, 0] [1, 4] [1, 1] : memref<3x4xf32> to memref<4xf32, strided<[1], offset: 4>>
  %o2 = memref.subview %out[2, 0] [1, 4] [1, 1] : memref<3x4xf32> to memref<4xf32, strided<[1], offset: 8>>
  etcopy.d2h %da, %o0 : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, strided<[1]>>
  etcopy.d2h %db, %o1 : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, strided<[1], offset: 4>>
  etcopy.d2h %dc, %o2 : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, strided<[1], offset: 8>>
  %u = memref.cast %out : memref<3x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %da : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %db : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %dc : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %out : memref<3x4xf32>
  return
}
