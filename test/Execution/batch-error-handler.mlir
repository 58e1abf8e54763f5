// A batch under an error policy that returns (Inputs/error-handler.c): each
// CUDA call of the method is failed in turn (error-sweep.py); every run
// reports the failing op's location and completes, a failed batch at its
// first copy. When the device's stream could not be created, the batch, which
// cudaMemcpyBatchAsync cannot issue on the legacy default stream, is one
// cudaMemcpyAsync per copy there, and the data still arrives.
// RUN: etcopy-opt %s --etcopy-to-cuda=plan-memory=false \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.ll
// RUN: %cc -Wno-override-module %t.ll %S/Inputs/error-handler.c -o %t \
// RUN:   %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_TRACE=1 %t 2>&1 | FileCheck %s --check-prefix=CLEAN
// RUN: env ETCOPY_CUDA_SIM_FAIL=stream:1 ETCOPY_CUDA_SIM_TRACE=1 %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-STREAM
// RUN: %python %S/Inputs/error-sweep.py %t | FileCheck %s
// RUN: %if valgrind %{ %python %S/Inputs/error-sweep.py --valgrind %t \
// RUN:   | FileCheck %s --check-prefix=MEMCHECK %}

// CLEAN-NOT: handler
// CLEAN: cudaMemcpyBatchAsync(2 copies, 80 bytes, 1 attribute(s), stream=S1) [h2d_pageable 2]
// CLEAN: column: -1 -1 -1 -1
// CLEAN: out: 0 ... 15
// CLEAN: completed

// NO-STREAM: handler: {{.*}}batch-error-handler.mlir:[[# @LINE + 9]]:1: etcopy_get_stream
// NO-STREAM-NOT: cudaMemcpyBatchAsync
// NO-STREAM: cudaMemcpyAsync({{.*}}, 64 bytes, Default, stream=S0) [h2d_pageable]
// NO-STREAM-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, Default, stream=S0) [h2d_pageable]
// NO-STREAM-NOT: handler
// NO-STREAM: column: -1 -1 -1 -1
// NO-STREAM: out: 0 ... 15
// NO-STREAM: completed

func.func @method(%in: memref<4x4xf32>, %out: memref<4x4xf32>, %column: memref<4xf32>)
    attributes {llvm.emit_c_interface} {
  %d = memref.alloc() : memref<4x4xf32, #etcopy.device<cuda:0>>
  %e = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %in, %d : memref<4x4xf32> -> memref<4x4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %column, %e : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.d2h %d, %out : memref<4x4xf32, #etcopy.device<cuda:0>> -> memref<4x4xf32>
  etcopy.d2h %e, %column : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  memref.dealloc %d : memref<4x4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %e : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// Each failure is the first the policy hears of, at the op that made the
// call (the batch's first copy for the batch), and the method completes.
// CHECK: calls: 16
// CHECK-NEXT: any:1 cudaGetDevice -> cudaGetDevice at {{.*}}batch-error-handler.mlir:[[# @LINE - 16]]:1 completed exit=0
// CHECK-NEXT: any:2 cudaGetDevice -> cudaGetDevice at {{.*}}batch-error-handler.mlir:[[# @LINE - 17]]:1 completed exit=0
// CHECK-NEXT: any:3 cudaDeviceGetMemPool -> cudaDeviceGetMemPool at {{.*}}batch-error-handler.mlir:[[# @LINE - 18]]:1 completed exit=0
// CHECK-NEXT: any:4 cudaMemPoolGetAttribute -> cudaMemPoolGetAttribute at {{.*}}batch-error-handler.mlir:[[# @LINE - 19]]:1 completed exit=0
// CHECK-NEXT: any:5 cudaMemPoolSetAttribute -> cudaMemPoolSetAttribute at {{.*}}batch-error-handler.mlir:[[# @LINE - 20]]:1 completed exit=0
// CHECK-NEXT: any:6 cudaStreamCreateWithFlags -> etcopy_get_stream at {{.*}}batch-error-handler.mlir:[[# @LINE - 21]]:1 completed exit=0
// CHECK-NEXT: any:7 cudaMallocAsync -> cudaMallocAsync at {{.*}}batch-error-handler.mlir:[[# @LINE - 20]]:8 completed exit=0
// CHECK-NEXT: any:8 cudaMallocAsync -> cudaMallocAsync at {{.*}}batch-error-handler.mlir:[[# @LINE - 20]]:8 completed exit=0
// CHECK-NEXT: any:9 cudaMemcpyBatchAsync -> cudaMemcpyBatchAsync at {{.*}}batch-error-handler.mlir:[[# @LINE - 20]]:3 completed exit=0
// CHECK-NEXT: any:10 cudaMemcpyAsync -> cudaMemcpyAsync at {{.*}}batch-error-handler.mlir:[[# @LINE - 19]]:3 completed exit=0
// CHECK-NEXT: any:11 cudaMemcpyAsync -> cudaMemcpyAsync at {{.*}}batch-error-handler.mlir:[[# @LINE - 19]]:3 completed exit=0
// CHECK-NEXT: any:12 cudaFreeAsync -> cudaFreeAsync at {{.*}}batch-error-handler.mlir:[[# @LINE - 19]]:3 completed exit=0
// CHECK-NEXT: any:13 cudaFreeAsync -> cudaFreeAsync at {{.*}}batch-error-handler.mlir:[[# @LINE - 19]]:3 completed exit=0
// CHECK-NEXT: any:14 cudaStreamSynchronize -> cudaStreamSynchronize at {{.*}}batch-error-handler.mlir:[[# @LINE - 19]]:3 completed exit=0
// CHECK-NEXT: any:15 cudaGetDevice -> cudaGetDevice at {{.*}}batch-error-handler.mlir:[[# @LINE - 20]]:3 completed exit=0
// CHECK-NEXT: any:16 cudaStreamDestroy -> nothing completed exit=0
// The stream comes from the default stream provider, which reports a
// failure to create it to the lowered code (etcopy_get_stream), and is
// destroyed when the program is unloaded, where no policy runs.

// MEMCHECK: calls: 16
// MEMCHECK-COUNT-16: completed exit=0 memcheck=clean
// MEMCHECK-NOT: memcheck=errors
