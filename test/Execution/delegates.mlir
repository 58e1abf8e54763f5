// A method calling two delegates on cuda:0, implemented in C on the
// simulator's device memory (or a GPU's, linked against libcudart):
// etcopy-propagate-device inserts the copies (the input, used by both
// delegates, is uploaded once), --etcopy-to-cuda lowers them, and the
// results match the same method with the delegates on the host (the same C
// code on host memory, through --etcopy-to-host).
// RUN: %cc -shared -fPIC -DETCOPY_DEVICE_DELEGATES -I%cuda_sim_include \
// RUN:   %S/Inputs/delegates.c -o %t.device.so %etcopy_cuda_sim
// RUN: %cc -shared -fPIC %S/Inputs/delegates.c -o %t.host.so
// RUN: etcopy-opt %s --etcopy-propagate-device | FileCheck %s --check-prefix=IR
// RUN: etcopy-opt %s --etcopy-propagate-device --etcopy-to-cuda \
// RUN:   | %run_sim,%t.device.so | FileCheck %s
// RUN: etcopy-opt %s --etcopy-propagate-device --etcopy-to-host \
// RUN:   | %run_host,%t.host.so | FileCheck %s
// RUN: %if cuda-gpu %{ %cc -shared -fPIC -DETCOPY_DEVICE_DELEGATES \
// RUN:   -I%cuda_sim_include %S/Inputs/delegates.c -o %t.gpu.so %cudart && \
// RUN:   etcopy-opt %s --etcopy-propagate-device --etcopy-to-cuda \
// RUN:   | %run_gpu,%t.gpu.so | FileCheck %s %}

// IR-LABEL: func.func @method
// IR-COUNT-1: etcopy.h2d
// IR-NOT: etcopy.h2d
// IR: etcopy.d2h

// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [3, -6, 1.5, 30]

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func private @scale(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}
func.func private @add(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}

// method(x) = add(scale(x), x) = 3 * x
func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = call @scale(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %r = call @add(%s, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @main() {
  %x = arith.constant dense<[1.0, -2.0, 0.5, 10.0]> : tensor<4xf32>
  %r = call @method(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %m = bufferization.to_buffer %r : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
