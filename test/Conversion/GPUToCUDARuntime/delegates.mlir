// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime \
// RUN:   | FileCheck %s --implicit-check-not=#etcopy --implicit-check-not=etcopy.writes

// A delegate runs with its device current: the call is bracketed by
// __etcopy_enter_device (select the device, return the previous one) and
// __etcopy_leave_device (restore it), except where the caller keeps that
// device current anyway (its only device).

func.func private @on0(memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @on1(memref<4xf32, #etcopy.device<cuda:1>>)
    attributes {etcopy.device = #etcopy.device<cuda:1>}
func.func private @host(memref<4xf32>)
func.func private @cpu_placed(memref<4xf32>)
    attributes {etcopy.device = #etcopy.device<cpu>}

// The caller selects cuda:0 at entry for its own work and keeps it current:
// a call on cuda:0 needs nothing, a call on cuda:1 switches and restores.
// CHECK-LABEL: llvm.func @home_device
// CHECK-DAG: %[[FILE:.*]] = llvm.mlir.addressof
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG: %[[COL3:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NOT: __etcopy_enter_device
// CHECK: llvm.call @on0(
// CHECK-NEXT: %[[LINE:.*]] = llvm.mlir.constant([[# @LINE + 13]] : i32) : i32
// CHECK-NEXT: %[[PREVIOUS:.*]] = llvm.call @__etcopy_enter_device(%[[ONE]], %[[FILE]], %[[LINE]], %[[COL3]])
// CHECK-NEXT: llvm.call @on1(
// CHECK-NEXT: llvm.call @__etcopy_leave_device(%[[PREVIOUS]], %[[ONE]], %[[FILE]], %[[LINE]], %[[COL3]])
// Host functions, placed on the host or not, are called as they are.
// CHECK-NEXT: llvm.call @host(
// CHECK-NEXT: llvm.call @cpu_placed(
func.func @home_device(%d0: memref<4xf32, #etcopy.device<cuda:0>>,
                       %d1: memref<4xf32, #etcopy.device<cuda:1>>,
                       %h: memref<4xf32>) {
  %t = gpu.memcpy async %d0, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.wait [%t]
  call @on0(%d0) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  call @on1(%d1) : (memref<4xf32, #etcopy.device<cuda:1>>) -> ()
  call @host(%h) : (memref<4xf32>) -> ()
  call @cpu_placed(%h) : (memref<4xf32>) -> ()
  return
}

// Without device work of its own, the caller does not know which device is
// current: every delegate call selects its device.
// CHECK-LABEL: llvm.func @no_device_work
// CHECK-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[PREVIOUS:.*]] = llvm.call @__etcopy_enter_device(%[[ZERO]],
// CHECK-NEXT: llvm.call @on0(
// CHECK-NEXT: llvm.call @__etcopy_leave_device(%[[PREVIOUS]], %[[ZERO]],
func.func @no_device_work(%d0: memref<4xf32, #etcopy.device<cuda:0>>) {
  call @on0(%d0) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// A function whose own work is on another device (cuda:1: the copy's
// destination) selects cuda:0 for the call.
// CHECK-LABEL: llvm.func @two_devices
// CHECK: llvm.call @__etcopy_enter_device(
// CHECK-NEXT: llvm.call @on0(
// CHECK-NEXT: llvm.call @__etcopy_leave_device(
func.func @two_devices(%d0: memref<4xf32, #etcopy.device<cuda:0>>,
                       %d1: memref<4xf32, #etcopy.device<cuda:1>>) {
  %t = gpu.memcpy async %d1, %d0 : memref<4xf32, #etcopy.device<cuda:1>>, memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t]
  call @on0(%d0) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// A delegate call and a copy on one source line (as a frontend emits many
// ops per line): the device switch around the call is planned after the
// copy, yet its line constant must come before the call; one constant then
// serves both (without that, the enter call used the constant made for the
// copy, after it, and the lowered function did not verify).
// CHECK-LABEL: llvm.func @one_line
// CHECK: %[[LINE:.*]] = llvm.mlir.constant(7 : i32) : i32
// CHECK-NEXT: %[[PREVIOUS:.*]] = llvm.call @__etcopy_enter_device({{.*}}, %[[LINE]],
// CHECK-NEXT: llvm.call @on1(
// CHECK-NEXT: llvm.call @__etcopy_leave_device(%[[PREVIOUS]], {{.*}}, %[[LINE]],
// CHECK-NEXT: llvm.call @__etcopy_memcpy({{.*}}, %[[LINE]],
// CHECK-NOT: llvm.mlir.constant(7 : i32)
// CHECK: llvm.return
func.func @one_line(%d0: memref<4xf32, #etcopy.device<cuda:0>>,
                    %d1: memref<4xf32, #etcopy.device<cuda:1>>,
                    %h: memref<4xf32>) {
  call @on1(%d1) : (memref<4xf32, #etcopy.device<cuda:1>>) -> () loc("model.py":7:3)
  gpu.memcpy %d0, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32> loc("model.py":7:9)
  return loc("model.py":7:20)
}

// A delegate that writes an argument, called through its C interface
// (plain and stream-ordered): the `_mlir_ciface_` wrapper that the LLVM
// lowering derives from it copies its argument attributes, but not
// `etcopy.writes`, which the verifier accepts on delegates only (the
// lowered module did not verify). Other argument attributes stay.
// CHECK-LABEL: llvm.func private @writes(
// CHECK: llvm.call @_mlir_ciface_writes(
// CHECK-LABEL: llvm.func @_mlir_ciface_writes(!llvm.ptr {bufferization.access = "read-write"}, !llvm.ptr)
// CHECK-LABEL: llvm.func private @writes_on_stream(
// CHECK: llvm.call @_mlir_ciface_writes_on_stream(
// CHECK-LABEL: llvm.func @_mlir_ciface_writes_on_stream(!llvm.ptr, !llvm.ptr)
// CHECK-LABEL: llvm.func @writes_c_interface
// CHECK: llvm.call @writes(
// CHECK: llvm.call @writes_on_stream(
func.func private @writes(memref<4xf32, #etcopy.device<cuda:0>> {bufferization.access = "read-write", etcopy.writes},
                          memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}
func.func private @writes_on_stream(memref<4xf32, #etcopy.device<cuda:0>> {etcopy.writes})
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered,
                llvm.emit_c_interface}

func.func @writes_c_interface(%d: memref<4xf32, #etcopy.device<cuda:0>>,
                              %e: memref<4xf32, #etcopy.device<cuda:0>>) {
  call @writes(%d, %e) : (memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  call @writes_on_stream(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// The support functions: the previous device is read with cudaGetDevice
// into a variable that holds the target device if the call fails; every
// call is checked with the call site's location.
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_enter_device
// CHECK-SAME: (%[[DEVICE:[^:]+]]: i32, %[[AT:[^:]+]]: !llvm.ptr,
// CHECK: %[[SLOT:.*]] = llvm.alloca
// CHECK: llvm.store %[[DEVICE]], %[[SLOT]]
// CHECK: %[[E0:.*]] = llvm.call @cudaGetDevice(%[[SLOT]])
// CHECK: llvm.call fastcc @{{.*}}report(%[[E0]], %[[AT]],
// CHECK: llvm.call @cudaSetDevice(%[[DEVICE]])
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_leave_device
// CHECK: llvm.call @cudaSetDevice(
