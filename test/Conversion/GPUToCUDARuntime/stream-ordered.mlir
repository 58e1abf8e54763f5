// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime | FileCheck %s --implicit-check-not=#etcopy

// A stream-ordered delegate gets the stream of its device as an extra last
// argument, in its signature and at every call, and the lowering adds no
// host wait around the call: the host waits where convert-etcopy-to-gpu put
// a gpu.wait (before reading the d2h's destination).

// The declarations: descriptors, then the stream.
// CHECK-DAG: llvm.func @scale(!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr)
// CHECK-DAG: llvm.func @scale_on1(!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr)
// CHECK-DAG: llvm.func @_mlir_ciface_wrapped(!llvm.ptr, !llvm.ptr)
func.func private @scale(memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered}
func.func private @scale_on1(memref<4xf32, #etcopy.device<cuda:1>>)
    attributes {etcopy.device = #etcopy.device<cuda:1>, etcopy.stream_ordered}
func.func private @wrapped(memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered, llvm.emit_c_interface}

// CHECK-LABEL: llvm.func @same_device
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr, %[[H:[^:]+]]: !llvm.ptr,
// CHECK:      %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
// CHECK:      llvm.call @__etcopy_memcpy(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[STREAM]],
// CHECK-NEXT: llvm.call @scale(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[STREAM]]) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.call @__etcopy_memcpy(%[[H]], %{{.*}}, %{{.*}}, %{{.*}}, %[[STREAM]],
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.call @__etcopy_restore_device(
// CHECK-NEXT: llvm.return
func.func @same_device(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  %t2 = gpu.memcpy async [%t1] %h, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t2]
  return
}

// A delegate on another device than the function's work: its device is
// made current, its stream waits for the function's other stream (an
// event), and after the call the other stream waits for it, so that later
// work and host waits on either stream are ordered after the delegate's.
// CHECK-LABEL: llvm.func @other_device
// CHECK-DAG:  %[[ZERO:.*]] = llvm.mlir.constant(0 : i32)
// CHECK-DAG:  %[[ONE:.*]] = llvm.mlir.constant(1 : i32)
// CHECK:      %[[S0:.*]] = llvm.call @__etcopy_get_stream(%[[ZERO]],
// CHECK-NEXT: %[[S1:.*]] = llvm.call @__etcopy_get_stream(%[[ONE]],
// CHECK:      llvm.call @__etcopy_memcpy(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S0]],
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: %[[PREVIOUS:.*]] = llvm.call @__etcopy_enter_device(%[[ONE]],
// CHECK-NEXT: llvm.call @__etcopy_stream_join(%[[S0]], %[[ZERO]], %[[S1]], %[[ONE]],
// CHECK-NEXT: llvm.call @scale_on1(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S1]])
// CHECK-NEXT: llvm.call @__etcopy_stream_join(%[[S1]], %[[ONE]], %[[S0]], %[[ZERO]],
// CHECK-NEXT: llvm.call @__etcopy_set_device(%[[ONE]],
// CHECK-NEXT: llvm.call @__etcopy_leave_device(%[[PREVIOUS]], %[[ONE]],
// CHECK-NOT:  llvm.call @__etcopy_stream_synchronize
// CHECK:      llvm.call @__etcopy_stream_synchronize(%[[S0]],
// CHECK-NEXT: llvm.call @__etcopy_stream_synchronize(%[[S1]],
// CHECK-NEXT: llvm.call @__etcopy_restore_device(
// CHECK-NEXT: llvm.return
func.func @other_device(%h: memref<4xf32>, %d0: memref<4xf32, #etcopy.device<cuda:0>>,
                        %d1: memref<4xf32, #etcopy.device<cuda:1>>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d0, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  call @scale_on1(%d1) : (memref<4xf32, #etcopy.device<cuda:1>>) -> ()
  return
}

// A function whose only device work is the delegate's gets the delegate's
// device's stream, and waits for it where convert-etcopy-to-gpu put the
// wait. The C interface wrapper passes the stream too.
// CHECK-LABEL: llvm.func @only_delegate
// CHECK:      %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
// CHECK-NOT:  __etcopy_enter_device
// CHECK:      llvm.call @wrapped(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[STREAM]])
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.call @__etcopy_restore_device(
// CHECK-NEXT: llvm.return
func.func @only_delegate(%d: memref<4xf32, #etcopy.device<cuda:0>>) {
  %t0 = gpu.wait async
  call @wrapped(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  gpu.wait [%t0]
  return
}
