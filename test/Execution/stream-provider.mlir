// An embedding program supplies the streams by defining etcopy_get_stream
// (Inputs/stream-provider.c): the lowered method runs its work on the
// program's stream, asks for it at each call with its device current, and
// the default provider creates no stream. A request that fails is reported
// by the error policy like a failed CUDA call, with the function's location.
// RUN: etcopy-opt %s --etcopy-to-cuda | mlir-translate --mlir-to-llvmir -o %t.ll
// RUN: %cc -Wno-override-module -I%cuda_sim_include %t.ll \
// RUN:   %S/Inputs/stream-provider.c -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_STATS=1 %t 2>&1 | FileCheck %s
// RUN: env STREAM_PROVIDER_FAIL=2 not %t 2>&1 | FileCheck %s --check-prefix=FAIL

// CHECK: call 0: 2 4 6 0
// CHECK-NEXT: call 1: 2 4 6 2
// CHECK-NEXT: call 2: 2 4 6 4
// CHECK-NEXT: requests: 3
// CHECK: stats: entry-points:
// CHECK-NOT: cudaStreamCreateWithFlags
// CHECK-SAME: cudaStreamCreate=1 cudaStreamDestroy=1
// CHECK-NOT: leak

// FAIL: call 0: 2 4 6 0
// FAIL-NEXT: stream-provider.mlir:[[# @LINE + 2]]:1: error: etcopy_get_stream failed (get the device's stream): cudaErrorInvalidValue: invalid argument
// FAIL-NOT: call 1
func.func @method(%in: memref<4xf32>, %out: memref<4xf32>) attributes {llvm.emit_c_interface} {
  %d = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %in, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  %h = memref.alloc() : memref<4xf32>
  etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  memref.dealloc %d : memref<4xf32, #etcopy.device<cuda:0>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %h[%i] : memref<4xf32>
    %twice = arith.addf %v, %v : f32
    memref.store %twice, %out[%i] : memref<4xf32>
  }
  memref.dealloc %h : memref<4xf32>
  return
}
