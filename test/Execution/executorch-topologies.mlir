// The graphs ExecuTorch tests its PropagateDevicePass on
// (exir/tests/test_propagate_device_pass.py: a delegated add, on cuda:0 and
// cuda:1; add then sin on the host; add, sin, add; mm then a host add), and
// the other partitioned shapes (a chain of delegates, delegates sharing
// inputs, a delegate output read by host code and by another delegate, neg
// and sin between delegates, linalg and tensor ops as glue, a delegate with
// two outputs), as tensor-level methods. Each lowers with --etcopy-to-cuda
// (with pageable host buffers, pinned-host-memory=false, as ExecuTorch has
// them) and runs on the CUDA simulator with the delegates in C
// (Inputs/executorch-delegates.c); the same methods through --etcopy-to-host
// with the host build of the delegates print the same data, the reference.
//
// The trace, filtered to the streams created and the copies the generated
// code makes (cudaMemcpyAsync, and cudaMemcpyBatchAsync for independent
// copies issued together; the device delegates stage their data with
// synchronous cudaMemcpy, left out), checks that each device's stream is
// created once, by the first method that uses the device, and reused by
// the others, and that every method executes exactly the copies placement
// needs: one per method input a delegate reads, one per delegate output
// the host reads, one per host value a delegate reads.
// RUN: %cc -shared -fPIC -DETCOPY_DEVICE_DELEGATES -I%cuda_sim_include \
// RUN:   %S/Inputs/executorch-delegates.c -o %t.device.so %etcopy_cuda_sim
// RUN: %cc -shared -fPIC %S/Inputs/executorch-delegates.c -o %t.host.so
// RUN: etcopy-opt %s --etcopy-to-cuda=pinned-host-memory=false \
// RUN:   | env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 %run_sim,%t.device.so 2>&1 \
// RUN:   | grep -E "trace: cuda(StreamCreateWithFlags|Memcpy(2D|Batch)?Async)\(|^[^e]" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,TRACE
// RUN: etcopy-opt %s --etcopy-to-host | %run_host,%t.host.so | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func private @add(tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}
func.func private @add_on_cuda1(tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    attributes {etcopy.device = #etcopy.device<cuda:1>, llvm.emit_c_interface}
func.func private @mm(tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}
func.func private @scale(tensor<2x2xf32>) -> tensor<2x2xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}
func.func private @sum_diff(tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}

// ExecuTorch: test_device_consistency_after_to_executorch, forward(a, b) =
// add(a, b), the whole graph delegated: a and b in, the sum out.
// TRACE: cudaStreamCreateWithFlags(flags=1, cuda:0)
// TRACE-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// TRACE-NOT: cudaMemcpyAsync
// CHECK: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}1.5, 1],
// CHECK-NEXT: [5, 4.25]]
func.func @single_add(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %r = func.call @add(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// ExecuTorch: test_device_consistency_cuda_1, the same on cuda:1.
// TRACE-NEXT: cudaStreamCreateWithFlags(flags=1, cuda:1)
// TRACE-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}1.5, 1],
// CHECK-NEXT: [5, 4.25]]
func.func @single_add_on_cuda1(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %r = func.call @add_on_cuda1(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// ExecuTorch: test_non_delegated_nodes_remain_cpu, forward(a, b) =
// sin(add(a, b)) with sin on the host.
// TRACE-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}0.997495, 0.841471],
// CHECK-NEXT: [-0.958924, -0.894989]]
func.func @add_then_sin(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c = func.call @add(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %d = math.sin %c : tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// ExecuTorch: test_multiple_delegates_same_device, forward(a, b, c) =
// add(sin(add(a, b)), c): host compute between two delegates. The upload
// of c joins those of a and b (upload-group-bytes): one batch of three.
// TRACE-NEXT: cudaMemcpyBatchAsync(3 copies, 48 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 3]
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, HostToDevice,
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}10.9975, 20.8415],
// CHECK-NEXT: [29.0411, 39.105]]
func.func @add_sin_add(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>, %c: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %x = func.call @add(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = math.sin %x : tensor<2x2xf32>
  %z = func.call @add(%y, %c) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %z : tensor<2x2xf32>
}

// ExecuTorch: test_getitem_inherits_device_from_delegate, forward(a, x, b)
// = mm(a, x) + b, the add on the host.
// TRACE-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}5.5, 1.5],
// CHECK-NEXT: [12.5, 2]]
func.func @mm_then_add(%a: tensor<2x2xf32>, %x: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %y = func.call @mm(%a, %x) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %z = arith.addf %y, %b : tensor<2x2xf32>
  return %z : tensor<2x2xf32>
}

// A chain of two delegates: the intermediate stays on the device.
// TRACE-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}3, 2],
// CHECK-NEXT: [10, 8.5]]
func.func @chain(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %x = func.call @add(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = func.call @scale(%x) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// Two delegates sharing their inputs, combined on the host: each input is
// copied once.
// TRACE-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// TRACE-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [d2h_pageable 2]
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}6, 0.5],
// CHECK-NEXT: [14.5, 2.25]]
func.func @shared_inputs(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %s = func.call @add(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %p = func.call @mm(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = arith.addf %s, %p : tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// A delegate output consumed by a host op and by another delegate, and
// two method outputs.
// TRACE-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}-1.5, -1],
// CHECK-NEXT: [-5, -4.25]]
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}3, 2],
// CHECK-NEXT: [10, 8.5]]
func.func @output_to_host_and_delegate(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %x = func.call @add(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %n = arith.negf %x : tensor<2x2xf32>
  %y = func.call @scale(%x) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %n, %y : tensor<2x2xf32>, tensor<2x2xf32>
}

// Host compute (neg, then sin) on a tensor between two delegates that
// both read the method input a: a is copied once.
// TRACE-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, HostToDevice,
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}0.002505, 1.15853],
// CHECK-NEXT: [3.95892, 4.89499]]
func.func @neg_sin_between(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %x = func.call @add(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %n = arith.negf %x : tensor<2x2xf32>
  %s = math.sin %n : tensor<2x2xf32>
  %r = func.call @add(%s, %a) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// linalg and tensor ops between delegates: transpose, a slice, a concat.
// TRACE-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, HostToDevice,
// TRACE-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}10.75, -0.25],
// CHECK-NEXT: [10.75, -0.25]]
func.func @linalg_and_tensor_glue(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %x = func.call @add(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %init = tensor.empty() : tensor<2x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x2xf32>) outs(%init : tensor<2x2xf32>) permutation = [1, 0]
  %row = tensor.extract_slice %t[0, 0] [1, 2] [1, 1] : tensor<2x2xf32> to tensor<1x2xf32>
  %c = tensor.concat dim(0) %row, %row : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
  %y = func.call @mm(%c, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// A delegate with two outputs (ExecuTorch's getitem nodes), both returned.
// TRACE-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// TRACE-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [d2h_pageable 2]
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}1.5, 1],
// CHECK-NEXT: [5, 4.25]]
// CHECK-NEXT: sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}0.5, 3],
// CHECK-NEXT: [1, 3.75]]
func.func @two_outputs(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %s, %d = func.call @sum_diff(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  return %s, %d : tensor<2x2xf32>, tensor<2x2xf32>
}

// a, b and c of the ExecuTorch tests (torch.randn(2, 2) there).
func.func @main() {
  %a = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = arith.constant dense<[[0.5, -1.0], [2.0, 0.25]]> : tensor<2x2xf32>
  %c = arith.constant dense<[[10.0, 20.0], [30.0, 40.0]]> : tensor<2x2xf32>
  %r1 = call @single_add(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  call @print(%r1) : (tensor<2x2xf32>) -> ()
  %r2 = call @single_add_on_cuda1(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  call @print(%r2) : (tensor<2x2xf32>) -> ()
  %r3 = call @add_then_sin(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  call @print(%r3) : (tensor<2x2xf32>) -> ()
  %r4 = call @add_sin_add(%a, %b, %c) : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  call @print(%r4) : (tensor<2x2xf32>) -> ()
  %r5 = call @mm_then_add(%a, %b, %a) : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  call @print(%r5) : (tensor<2x2xf32>) -> ()
  %r6 = call @chain(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  call @print(%r6) : (tensor<2x2xf32>) -> ()
  %r7 = call @shared_inputs(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  call @print(%r7) : (tensor<2x2xf32>) -> ()
  %r8:2 = call @output_to_host_and_delegate(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  call @print(%r8#0) : (tensor<2x2xf32>) -> ()
  call @print(%r8#1) : (tensor<2x2xf32>) -> ()
  %r9 = call @neg_sin_between(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  call @print(%r9) : (tensor<2x2xf32>) -> ()
  %r10 = call @linalg_and_tensor_glue(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  call @print(%r10) : (tensor<2x2xf32>) -> ()
  %r11:2 = call @two_outputs(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  call @print(%r11#0) : (tensor<2x2xf32>) -> ()
  call @print(%r11#1) : (tensor<2x2xf32>) -> ()
  return
}

func.func @print(%t: tensor<2x2xf32>) {
  %m = bufferization.to_buffer %t : tensor<2x2xf32> to memref<2x2xf32>
  %u = memref.cast %m : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
