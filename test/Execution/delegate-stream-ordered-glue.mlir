// A method that alternates stream-ordered delegates (Inputs/delegate-stream-
// ordered.c) with host glue that reads no device data: the glue (a
// linalg.generic after bufferization) runs while the delegates' work is
// queued, so the second delegate still finds the first one's work pending,
// and the host synchronises the stream twice per call: once to read the
// d2h's destination, once at the return for the frees queued after it. Each
// call prints the host reference's data (poisoned values if a wait were
// missing: the simulator runs queued work only when the host waits).
// RUN: %cc -shared -fPIC -I%cuda_sim_include %S/Inputs/delegate-stream-ordered.c \
// RUN:   %S/Inputs/delegate-device.c -o %t.so %etcopy_cuda_sim
// RUN: etcopy-opt %s --etcopy-to-cuda="place-copies=false optimize-transfers=false" \
// RUN:   | env ETCOPY_CUDA_SIM_TRACE=1 %run_sim,%t.so 2>&1 \
// RUN:   | FileCheck %s

// CHECK-NOT: cudaStreamSynchronize
// CHECK: reverse_on0 runs on device 0, input copy pending
// CHECK-NOT: cudaStreamSynchronize
// CHECK: reverse_on0 runs on device 0, input copy pending
// CHECK: cudaStreamSynchronize(S1)
// CHECK: cudaStreamSynchronize(S1)
// CHECK-NOT: cudaStreamSynchronize
// CHECK: data =
// CHECK-NEXT: [5, 7, 16.5, 35]
// CHECK-NOT: cudaStreamSynchronize
// CHECK: reverse_on0 runs on device 0, input copy pending
// CHECK-NOT: cudaStreamSynchronize
// CHECK: reverse_on0 runs on device 0, input copy pending
// CHECK: cudaStreamSynchronize(S1)
// CHECK: cudaStreamSynchronize(S1)
// CHECK-NOT: cudaStreamSynchronize
// CHECK: data =
// CHECK-NEXT: [21, 88, 272.5, 660]
// CHECK: stats: streams_created=1 streams_destroyed=1 syncs=4{{ }}

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func private @reverse_on0(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered, llvm.emit_c_interface}

// reverse(reverse(x)) + y * y, and y * y: the glue between the delegates
// reads and writes host tensors only.
func.func @glue(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %r = call @reverse_on0(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %g = arith.mulf %y, %y : tensor<4xf32>
  %s = call @reverse_on0(%r) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %s : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %o = arith.addf %h, %g : tensor<4xf32>
  return %o, %g : tensor<4xf32>, tensor<4xf32>
}

func.func @print(%t: tensor<4xf32>) {
  %m = bufferization.to_buffer %t : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %x = arith.constant dense<[1.0, -2.0, 0.5, 10.0]> : tensor<4xf32>
  %y = arith.constant dense<[2.0, 3.0, 4.0, 5.0]> : tensor<4xf32>
  %a:2 = call @glue(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  call @print(%a#0) : (tensor<4xf32>) -> ()
  %b:2 = call @glue(%a#0, %a#1) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  call @print(%b#0) : (tensor<4xf32>) -> ()
  return
}
