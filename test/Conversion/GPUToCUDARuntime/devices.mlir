// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime \
// RUN:   | FileCheck %s --implicit-check-not=gpu. --implicit-check-not=#etcopy

// Two devices in one function: one stream each, created after selecting the
// device; every op selects its device; a token of one stream used by work on
// the other is joined with an event; the caller's device is restored.

// CHECK-LABEL: llvm.func @two_devices
// CHECK:      llvm.call @cudaGetDevice
// CHECK:      %[[PREVIOUS:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK:      %[[ZERO:.*]] = llvm.mlir.constant(0 : i32)
// CHECK:      llvm.call @cudaSetDevice(%[[ZERO]])
// CHECK:      llvm.call @cudaStreamCreateWithFlags
// CHECK:      %[[S0:.*]] = llvm.load
// CHECK:      %[[ONE:.*]] = llvm.mlir.constant(1 : i32)
// CHECK:      llvm.call @cudaSetDevice(%[[ONE]])
// CHECK:      llvm.call @cudaStreamCreateWithFlags
// CHECK:      %[[S1:.*]] = llvm.load
// First copy, on cuda:0.
// CHECK:      llvm.call @cudaSetDevice
// CHECK:      llvm.call @cudaMemcpyAsync(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S0]])
// Second copy, on cuda:1, after the first: joined.
// CHECK:      llvm.call @cudaSetDevice
// CHECK:      llvm.call @__etcopy_stream_join(%[[S0]], %[[ZERO]], %[[S1]], %[[ONE]],
// CHECK:      llvm.call @cudaMemcpyAsync(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S1]])
// CHECK:      llvm.call @cudaStreamSynchronize(%[[S1]])
// Teardown of both streams, then the caller's device.
// CHECK:      llvm.call @cudaStreamSynchronize(%[[S0]])
// CHECK:      llvm.call @cudaStreamDestroy(%[[S0]])
// CHECK:      llvm.call @cudaStreamSynchronize(%[[S1]])
// CHECK:      llvm.call @cudaStreamDestroy(%[[S1]])
// CHECK:      llvm.call @cudaSetDevice(%[[PREVIOUS]])
// CHECK:      llvm.return
// CHECK:      llvm.func linkonce_odr @__etcopy_stream_join(
// CHECK:      llvm.call @cudaEventRecord
// CHECK:      llvm.call @cudaStreamWaitEvent
func.func @two_devices(%h: memref<4xf32>, %d0: memref<4xf32, #etcopy.device<cuda:0>>,
                       %d1: memref<4xf32, #etcopy.device<cuda:1>>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d0, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t2 = gpu.memcpy async [%t1] %d1, %h : memref<4xf32, #etcopy.device<cuda:1>>, memref<4xf32>
  gpu.wait [%t2]
  return
}
