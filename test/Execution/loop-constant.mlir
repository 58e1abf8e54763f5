// A loop that yields a tensor constant created in its body, whose result
// the host glue then writes in place (arith.addf reuses its first operand's
// buffer), with optimize-transfers=false so that no canonicalizer hoists the
// constant first. Bufferization made the loop's result the read-only global
// of the constant, and the host wrote into it: a segfault on the simulator
// and on the host. Now the loop yields a copy; the second call sees the
// constant unchanged.
// RUN: %cc -shared -fPIC -DETCOPY_DEVICE_DELEGATES -I%cuda_sim_include \
// RUN:   %S/Inputs/delegates.c -o %t.device.so %etcopy_cuda_sim
// RUN: %cc -shared -fPIC %S/Inputs/delegates.c -o %t.host.so
// RUN: etcopy-opt %s --etcopy-to-cuda="optimize-transfers=false" \
// RUN:   | %run_sim,%t.device.so | FileCheck %s
// RUN: etcopy-opt %s --etcopy-to-host="optimize-transfers=false" \
// RUN:   | %run_host,%t.host.so | FileCheck %s
// RUN: etcopy-opt %s --etcopy-to-cuda | %run_sim,%t.device.so | FileCheck %s

// scale(x + [1, 2, 3, 4]) with x = [10, 20, 30, 40], twice, then with no
// iteration: scale(x + x).
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [22, 44, 66, 88]
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [22, 44, 66, 88]
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [40, 80, 120, 160]

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

// scale(x) = 2 * x, on cuda:0 (Inputs/delegates.c).
func.func private @scale(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}

func.func @method(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> tensor<4xf32> {
    %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    scf.yield %c : tensor<4xf32>
  }
  %w = arith.addf %r, %x : tensor<4xf32>
  %s = call @scale(%w) : (tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}

func.func @print(%t: tensor<4xf32>) {
  %m = bufferization.to_buffer %t : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %x = arith.constant dense<[10.0, 20.0, 30.0, 40.0]> : tensor<4xf32>
  %zero = arith.constant 0 : index
  %two = arith.constant 2 : index
  %r1 = call @method(%x, %two) : (tensor<4xf32>, index) -> tensor<4xf32>
  call @print(%r1) : (tensor<4xf32>) -> ()
  %r2 = call @method(%x, %two) : (tensor<4xf32>, index) -> tensor<4xf32>
  call @print(%r2) : (tensor<4xf32>) -> ()
  %r3 = call @method(%x, %zero) : (tensor<4xf32>, index) -> tensor<4xf32>
  call @print(%r3) : (tensor<4xf32>) -> ()
  return
}
