// A method with stream-ordered delegates on two devices (Inputs/delegate-
// stream-ordered.c), called three times. The lowered code joins the two
// streams with events that it creates once per stream, at the first call,
// and records again at every later one; it makes a device current only
// where another one is (the support functions compare with cudaGetDevice).
// Inputs/count-per-call.awk counts per call from the simulator's trace;
// docs/CUDALowering.md quotes the counts.
// RUN: %cc -shared -fPIC -I%cuda_sim_include %S/Inputs/delegate-stream-ordered.c \
// RUN:   %S/Inputs/delegate-device.c -o %t.so %etcopy_cuda_sim
// RUN: etcopy-opt %s --etcopy-to-cuda="place-copies=false optimize-transfers=false" -o %t.mlir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 %run_sim,%t.so < %t.mlir 2>&1 | FileCheck %s
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 %run_sim,%t.so < %t.mlir 2>&1 \
// RUN:   | awk -f %S/Inputs/count-per-call.awk | FileCheck %s --check-prefix=COUNTS

// CHECK: data =
// CHECK-NEXT: [20, 1, -4, 2]
// CHECK: data =
// CHECK-NEXT: [4, -8, 2, 40]
// CHECK: data =
// CHECK-NEXT: [80, 4, -16, 8]
// CHECK-NOT: leak

// COUNTS: call: set_device=18 unchanged=0 events_created=2 events_destroyed=0 syncs=3
// COUNTS-NEXT: call: set_device=14 unchanged=0 events_created=0 events_destroyed=0 syncs=3
// COUNTS-NEXT: call: set_device=14 unchanged=0 events_created=0 events_destroyed=0 syncs=3

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func private @reverse_on0(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered, llvm.emit_c_interface}
func.func private @reverse_on1(tensor<4xf32, #etcopy.device<cuda:1>>) -> tensor<4xf32, #etcopy.device<cuda:1>>
    attributes {etcopy.device = #etcopy.device<cuda:1>, etcopy.stream_ordered, llvm.emit_c_interface}

// reverse(x) on each device, summed on the host: 2 * reverse(x).
func.func @two_devices(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d0 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %d1 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  %r1 = call @reverse_on1(%d1) : (tensor<4xf32, #etcopy.device<cuda:1>>) -> tensor<4xf32, #etcopy.device<cuda:1>>
  %r0 = call @reverse_on0(%d0) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h0 = etcopy.d2h %r0 : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %h1 = etcopy.d2h %r1 : tensor<4xf32, #etcopy.device<cuda:1>> -> tensor<4xf32>
  %r = arith.addf %h0, %h1 : tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @print(%t: tensor<4xf32>) {
  %m = bufferization.to_buffer %t : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %x = arith.constant dense<[1.0, -2.0, 0.5, 10.0]> : tensor<4xf32>
  %a = call @two_devices(%x) : (tensor<4xf32>) -> tensor<4xf32>
  call @print(%a) : (tensor<4xf32>) -> ()
  %b = call @two_devices(%a) : (tensor<4xf32>) -> tensor<4xf32>
  call @print(%b) : (tensor<4xf32>) -> ()
  %c = call @two_devices(%b) : (tensor<4xf32>) -> tensor<4xf32>
  call @print(%c) : (tensor<4xf32>) -> ()
  return
}
