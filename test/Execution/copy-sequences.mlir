// Four consecutive copies of one stream are made by one call of
// `__etcopy_memcpy_x4` (the lowered method holds no other copy call), which
// issues them in program order: the data arrive as four calls would bring
// them, and when any one of the four cudaMemcpyAsync calls fails, the error
// policy hears of it at that copy's own line (error-sweep.py fails each
// CUDA call in turn; error-handler.c's policy prints the location and
// returns, and the method completes). Without batching, which would issue
// the two h2d copies as one cudaMemcpyBatchAsync.
// RUN: etcopy-opt %s --etcopy-to-cuda="plan-memory=false batch-copies=false" \
// RUN:   -o %t.mlir
// RUN: FileCheck %s --check-prefix=LOWERED < %t.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.mlir -o %t.ll
// RUN: %cc -Wno-override-module %t.ll %S/Inputs/error-handler.c -o %t \
// RUN:   %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t | FileCheck %s --check-prefix=CLEAN
// RUN: %python %S/Inputs/error-sweep.py %t | FileCheck %s

// LOWERED-LABEL: llvm.func @method(
// LOWERED-NOT:   @__etcopy_memcpy
// LOWERED:       llvm.call @__etcopy_memcpy_x4(
// LOWERED-NOT:   @__etcopy_memcpy
// LOWERED:       llvm.return

// The second row of `in` reaches `column` through the device.
// CLEAN-NOT: handler
// CLEAN: column: 4 5 6 7
// CLEAN: out: 0 ... 15
// CLEAN: completed

func.func @method(%in: memref<4x4xf32>, %out: memref<4x4xf32>, %column: memref<4xf32>)
    attributes {llvm.emit_c_interface} {
  %d = memref.alloc() : memref<4x4xf32, #etcopy.device<cuda:0>>
  %c = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %in, %d : memref<4x4xf32> -> memref<4x4xf32, #etcopy.device<cuda:0>>
  %row = memref.subview %in[1, 0] [1, 4] [1, 1] : memref<4x4xf32> to memref<4xf32, strided<[1], offset: 4>>
  etcopy.h2d %row, %c : memref<4xf32, strided<[1], offset: 4>> -> memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.d2h %d, %out : memref<4x4xf32, #etcopy.device<cuda:0>> -> memref<4x4xf32>
  etcopy.d2h %c, %column : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  memref.dealloc %d : memref<4x4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %c : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// CHECK: calls: 17
// CHECK: any:9 cudaMemcpyAsync -> cudaMemcpyAsync at {{.*}}copy-sequences.mlir:[[# @LINE - 11]]:3 completed exit=0
// CHECK-NEXT: any:10 cudaMemcpyAsync -> cudaMemcpyAsync at {{.*}}copy-sequences.mlir:[[# @LINE - 10]]:3 completed exit=0
// CHECK-NEXT: any:11 cudaMemcpyAsync -> cudaMemcpyAsync at {{.*}}copy-sequences.mlir:[[# @LINE - 10]]:3 completed exit=0
// CHECK-NEXT: any:12 cudaMemcpyAsync -> cudaMemcpyAsync at {{.*}}copy-sequences.mlir:[[# @LINE - 10]]:3 completed exit=0
// CHECK-NEXT: any:13 cudaFreeAsync
