// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime \
// RUN:   | FileCheck %s --implicit-check-not=gpu. --implicit-check-not=#etcopy

// Two devices in one function: one stream each, got after selecting the
// device; an op selects its device when the previous one selected another;
// a token of one stream used by work on the other is joined with an event;
// the caller's device is restored. The gpu.wait that starts the chain
// selects nothing.

// CHECK-LABEL: llvm.func @two_devices
// CHECK-DAG:  %[[ZERO:.*]] = llvm.mlir.constant(0 : i32)
// CHECK-DAG:  %[[ONE:.*]] = llvm.mlir.constant(1 : i32)
// CHECK:      %[[PREVIOUS:.*]] = llvm.call @__etcopy_get_device(
// CHECK-NEXT: %[[S0:.*]] = llvm.call @__etcopy_get_stream(%[[ZERO]],
// CHECK-NEXT: %[[S1:.*]] = llvm.call @__etcopy_get_stream(%[[ONE]],
// First copy, on cuda:0 (cuda:1 was selected last).
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.call @__etcopy_set_device(%[[ZERO]],
// CHECK-NEXT: llvm.call @__etcopy_memcpy(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S0]],
// Second copy, on cuda:1, after the first: joined.
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.call @__etcopy_set_device(%[[ONE]],
// CHECK-NEXT: llvm.call @__etcopy_stream_join(%[[S0]], %[[ZERO]], %[[S1]], %[[ONE]],
// CHECK-NEXT: llvm.call @__etcopy_memcpy(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S1]],
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.call @__etcopy_stream_synchronize(%[[S1]],
// At the return the host waits for the stream not waited for yet (not for
// the other again), then restores the caller's device; both streams outlive
// the call.
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.call @__etcopy_stream_synchronize(%[[S0]],
// CHECK-NEXT: llvm.call @__etcopy_restore_device(%[[PREVIOUS]],
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_stream_join(
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
