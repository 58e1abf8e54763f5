// Stream-ordered delegates (Inputs/delegate-stream-ordered.c): each gets its
// device's stream, finds its input's copy still queued on it (the host did
// not wait before the call), enqueues its work on it and returns at once;
// the host waits only to read the results. A plain delegate after one still
// gets the host wait before its call. Each method prints its data; the
// simulator runs queued work only when the host waits, so a missing wait
// would print stale (poisoned) values. The statistics count the host waits
// of the whole program: none at the stream-ordered calls; one in @ordered
// (to read the d2h's destination), two in @then_plain (before the plain
// delegate, then to read), three in @two_devices (to read, then at the
// return for each device's stream, where frees were queued after the read).
// RUN: %cc -shared -fPIC -I%cuda_sim_include %S/Inputs/delegate-stream-ordered.c \
// RUN:   %S/Inputs/delegate-device.c -o %t.so %etcopy_cuda_sim
// RUN: etcopy-opt %s --etcopy-to-cuda="place-copies=false optimize-transfers=false" \
// RUN:   | env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_STATS=1 %run_sim,%t.so 2>&1 \
// RUN:   | FileCheck %s

// CHECK: reverse_on0 runs on device 0, input copy pending
// CHECK-NEXT: sizes = [4] strides = [1] data =
// CHECK-NEXT: [10, 0.5, -2, 1]
// CHECK-NEXT: reverse_on0 runs on device 0, input copy pending
// CHECK-NEXT: twice_on0 runs on device 0
// CHECK-NEXT: sizes = [4] strides = [1] data =
// CHECK-NEXT: [20, 1, -4, 2]
// CHECK-NEXT: reverse_on1 runs on device 1, input copy pending
// CHECK-NEXT: reverse_on0 runs on device 0, input copy pending
// CHECK-NEXT: sizes = [4] strides = [1] data =
// CHECK-NEXT: [20, 1, -4, 2]
// CHECK: stats: streams_created=2 streams_destroyed=2 syncs=7{{ }}
// CHECK-NOT: leak

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func private @reverse_on0(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered, llvm.emit_c_interface}
func.func private @reverse_on1(tensor<4xf32, #etcopy.device<cuda:1>>) -> tensor<4xf32, #etcopy.device<cuda:1>>
    attributes {etcopy.device = #etcopy.device<cuda:1>, etcopy.stream_ordered, llvm.emit_c_interface}
func.func private @twice_on0(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}

// The result of a stream-ordered delegate, read by the host.
func.func @ordered(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %r = call @reverse_on0(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %r : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// ... read by a plain delegate.
func.func @then_plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %r = call @reverse_on0(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %p = call @twice_on0(%r) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %p : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// Two devices: each delegate gets its own device's stream.
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
  %a = call @ordered(%x) : (tensor<4xf32>) -> tensor<4xf32>
  call @print(%a) : (tensor<4xf32>) -> ()
  %b = call @then_plain(%x) : (tensor<4xf32>) -> tensor<4xf32>
  call @print(%b) : (tensor<4xf32>) -> ()
  %c = call @two_devices(%x) : (tensor<4xf32>) -> tensor<4xf32>
  call @print(%c) : (tensor<4xf32>) -> ()
  return
}
