// When an embedding program's error policy returns instead of exiting, the
// lowered code goes on: every out-parameter of a CUDA call is set before the
// call (pointers and streams to null, devices to a defined device), so a
// failed call leaves defined values, and what depends on them fails in turn
// and is reported, but nothing reads memory that was never written or that
// was freed. Each of the method's CUDA calls is failed in turn on the
// simulator (error-sweep.py); every run reports the failing op's location
// and completes, and valgrind's memcheck finds no error. (Without memory
// planning, so that the allocation and the free report their own lines, not
// the function's and the return's, where the planner puts the arena's.)
// RUN: etcopy-opt %s --etcopy-to-cuda=plan-memory=false \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.ll
// RUN: %cc -Wno-override-module %t.ll %S/Inputs/error-handler.c -o %t \
// RUN:   %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t | FileCheck %s --check-prefix=CLEAN
// RUN: %python %S/Inputs/error-sweep.py %t | FileCheck %s
// RUN: %if valgrind %{ %python %S/Inputs/error-sweep.py --valgrind %t \
// RUN:   | FileCheck %s --check-prefix=MEMCHECK %}

// CLEAN-NOT: handler
// CLEAN: column: 1 5 9 13
// CLEAN: out: 3.5 ... 3.5
// CLEAN: completed

// MEMCHECK: calls: 18
// MEMCHECK-COUNT-18: completed exit=0 memcheck=clean
// MEMCHECK-NOT: memcheck=errors

func.func @method(%in: memref<4x4xf32>, %out: memref<4x4xf32>, %column: memref<4xf32>)
    attributes {llvm.emit_c_interface} {
  %d = memref.alloc() : memref<4x4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %in, %d : memref<4x4xf32> -> memref<4x4xf32, #etcopy.device<cuda:0>>
  %sub = memref.subview %d[0, 1] [4, 1] [1, 1]
      : memref<4x4xf32, #etcopy.device<cuda:0>> to memref<4xf32, strided<[4], offset: 1>, #etcopy.device<cuda:0>>
  etcopy.d2h %sub, %column : memref<4xf32, strided<[4], offset: 1>, #etcopy.device<cuda:0>> -> memref<4xf32>
  %v = arith.constant 3.5 : f32
  gpu.memset %d, %v : memref<4x4xf32, #etcopy.device<cuda:0>>, f32
  etcopy.d2h %d, %out : memref<4x4xf32, #etcopy.device<cuda:0>> -> memref<4x4xf32>
  memref.dealloc %d : memref<4x4xf32, #etcopy.device<cuda:0>>
  return
}

// Each failure is the first the policy hears of, at the op that made the
// call, and the method completes.
// CHECK: calls: 18
// CHECK-NEXT: any:1 cudaGetDevice -> cudaGetDevice at {{.*}}error-handler.mlir:[[# @LINE - 17]]:1 completed exit=0
// CHECK-NEXT: any:2 cudaGetDevice -> cudaGetDevice at {{.*}}error-handler.mlir:[[# @LINE - 18]]:1 completed exit=0
// CHECK-NEXT: any:3 cudaDeviceGetMemPool -> cudaDeviceGetMemPool at {{.*}}error-handler.mlir:[[# @LINE - 19]]:1 completed exit=0
// CHECK-NEXT: any:4 cudaMemPoolGetAttribute -> cudaMemPoolGetAttribute at {{.*}}error-handler.mlir:[[# @LINE - 20]]:1 completed exit=0
// CHECK-NEXT: any:5 cudaMemPoolSetAttribute -> cudaMemPoolSetAttribute at {{.*}}error-handler.mlir:[[# @LINE - 21]]:1 completed exit=0
// CHECK-NEXT: any:6 cudaStreamCreateWithFlags -> etcopy_get_stream at {{.*}}error-handler.mlir:[[# @LINE - 22]]:1 completed exit=0
// CHECK-NEXT: any:7 cudaMallocAsync -> cudaMallocAsync at {{.*}}error-handler.mlir:[[# @LINE - 21]]:8 completed exit=0
// CHECK-NEXT: any:8 cudaMemcpyAsync -> cudaMemcpyAsync at {{.*}}error-handler.mlir:[[# @LINE - 21]]:3 completed exit=0
// CHECK-NEXT: any:9 cudaMemcpy2DAsync -> cudaMemcpy2DAsync at {{.*}}error-handler.mlir:[[# @LINE - 19]]:3 completed exit=0
// CHECK-NEXT: any:10 cudaStreamSynchronize -> cudaStreamSynchronize at {{.*}}error-handler.mlir:[[# @LINE - 18]]:3 completed exit=0
// CHECK-NEXT: any:11 cudaGetDriverEntryPointByVersion -> cudaGetDriverEntryPointByVersion at {{.*}}error-handler.mlir:[[# @LINE - 19]]:3 completed exit=0
// CHECK-NEXT: any:12 cuMemsetD32Async -> cuMemsetD32Async at {{.*}}error-handler.mlir:[[# @LINE - 20]]:3 completed exit=0
// CHECK-NEXT: any:13 cudaStreamSynchronize -> cudaStreamSynchronize at {{.*}}error-handler.mlir:[[# @LINE - 21]]:3 completed exit=0
// CHECK-NEXT: any:14 cudaMemcpyAsync -> cudaMemcpyAsync at {{.*}}error-handler.mlir:[[# @LINE - 21]]:3 completed exit=0
// CHECK-NEXT: any:15 cudaFreeAsync -> cudaFreeAsync at {{.*}}error-handler.mlir:[[# @LINE - 21]]:3 completed exit=0
// CHECK-NEXT: any:16 cudaStreamSynchronize -> cudaStreamSynchronize at {{.*}}error-handler.mlir:[[# @LINE - 21]]:3 completed exit=0
// CHECK-NEXT: any:17 cudaGetDevice -> cudaGetDevice at {{.*}}error-handler.mlir:[[# @LINE - 22]]:3 completed exit=0
// CHECK-NEXT: any:18 cudaStreamDestroy -> nothing completed exit=0
// The stream is created by the default stream provider, which reports its
// failure to the lowered code (etcopy_get_stream), and destroyed when the
// program is unloaded, where a failure is ignored: the policy must not run
// from a destructor (see docs/CUDALowering.md).
