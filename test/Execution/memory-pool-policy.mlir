// An embedding program chooses the pool policy by defining
// etcopy_get_pool_release_threshold (Inputs/pool-policy.c): the lowered
// code asks it once per device, with the device current, at the first call.
// It raises cuda:1's threshold to the 1 GiB asked for, and leaves cuda:0's
// pool alone: the program had set a higher threshold (1 MiB) than the
// 64 KiB asked for, and a threshold is never lowered.
// RUN: etcopy-opt %s --etcopy-to-cuda | mlir-translate --mlir-to-llvmir -o %t.ll
// RUN: %cc -Wno-override-module -I%cuda_sim_include -I%S/Inputs %t.ll \
// RUN:   %S/Inputs/pool-policy.c -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 %t 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not='trace: cudaMemPoolSetAttribute' \
// RUN:       --implicit-check-not='policy asked'

// The program's own setting.
// CHECK: trace: cudaMemPoolSetAttribute(P0, attr=4) -> 1048576
// CHECK: policy asked for cuda:0 with cuda:0 current
// CHECK-NEXT: trace: cudaDeviceGetMemPool(cuda:0) -> P0
// CHECK-NEXT: trace: cudaMemPoolGetAttribute(P0, attr=4) -> 1048576
// CHECK: policy asked for cuda:1 with cuda:1 current
// CHECK-NEXT: trace: cudaDeviceGetMemPool(cuda:1) -> P0@cuda:1
// CHECK-NEXT: trace: cudaMemPoolGetAttribute(P0@cuda:1, attr=4) -> 0
// CHECK-NEXT: trace: cudaMemPoolSetAttribute(P0@cuda:1, attr=4) -> 1073741824
// CHECK: call 0: 1.5 -2 3 40
// CHECK: call 1: 1.5 -2 3 40
// CHECK: call 2: 1.5 -2 3 40

func.func @relay(%in: memref<4xf32>, %out: memref<4xf32>) attributes {llvm.emit_c_interface} {
  %d0 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %in, %d0 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  %d1 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:1>>
  etcopy.d2d %d0, %d1 : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, #etcopy.device<cuda:1>>
  etcopy.d2h %d1, %out : memref<4xf32, #etcopy.device<cuda:1>> -> memref<4xf32>
  memref.dealloc %d0 : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %d1 : memref<4xf32, #etcopy.device<cuda:1>>
  return
}
