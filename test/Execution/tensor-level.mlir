// Tensor-level programs: one-shot-bufferize turns device-encoded tensors into
// device memrefs across function boundaries and inside loops, functional
// copies into out-form copies into fresh device buffers; the deallocation
// pipeline frees them (the simulator fails the run on any leak).
// RUN: etcopy-opt %s --etcopy-to-cuda | %run_sim | FileCheck %s
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: %if cuda-gpu %{ etcopy-opt %s --etcopy-to-cuda | %run_gpu | FileCheck %s %}

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

// A device-resident value crosses a function boundary.
func.func @upload(%x: tensor<2x2xf32>) -> tensor<2x2xf32, #etcopy.device<cuda:0>> {
  %d = etcopy.h2d %x : tensor<2x2xf32> -> tensor<2x2xf32, #etcopy.device<cuda:0>>
  return %d : tensor<2x2xf32, #etcopy.device<cuda:0>>
}

func.func @download(%d: tensor<2x2xf32, #etcopy.device<cuda:0>>) -> tensor<2x2xf32> {
  %h = etcopy.d2h %d : tensor<2x2xf32, #etcopy.device<cuda:0>> -> tensor<2x2xf32>
  return %h : tensor<2x2xf32>
}

func.func @print(%t: tensor<2x2xf32>) {
  %m = bufferization.to_buffer %t : tensor<2x2xf32> to memref<2x2xf32>
  %u = memref.cast %m : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %x = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>

  // CHECK: sizes = [2, 2] strides = [2, 1] data =
  // CHECK-NEXT: {{\[\[}}1, 2],
  // CHECK-NEXT: [3, 4]]
  %d = call @upload(%x) : (tensor<2x2xf32>) -> tensor<2x2xf32, #etcopy.device<cuda:0>>
  %h = call @download(%d) : (tensor<2x2xf32, #etcopy.device<cuda:0>>) -> tensor<2x2xf32>
  call @print(%h) : (tensor<2x2xf32>) -> ()

  // A round trip per iteration; the host adds one to element [0, 0], and a
  // branch sends the incremented value only in the first iteration, so the
  // result is the input plus one once.
  // CHECK: sizes = [2, 2] strides = [2, 1] data =
  // CHECK-NEXT: {{\[\[}}2, 2],
  // CHECK-NEXT: [3, 4]]
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %h) -> tensor<2x2xf32> {
    %v = tensor.extract %acc[%c0, %c0] : tensor<2x2xf32>
    %v1 = arith.addf %v, %one : f32
    %inc = tensor.insert %v1 into %acc[%c0, %c0] : tensor<2x2xf32>
    %first = arith.cmpi eq, %i, %c0 : index
    %src = scf.if %first -> tensor<2x2xf32> {
      scf.yield %inc : tensor<2x2xf32>
    } else {
      scf.yield %acc : tensor<2x2xf32>
    }
    %dev = etcopy.h2d %src : tensor<2x2xf32> -> tensor<2x2xf32, #etcopy.device<cuda:0>>
    %back = func.call @download(%dev) : (tensor<2x2xf32, #etcopy.device<cuda:0>>) -> tensor<2x2xf32>
    scf.yield %back : tensor<2x2xf32>
  }
  call @print(%r) : (tensor<2x2xf32>) -> ()
  return
}
