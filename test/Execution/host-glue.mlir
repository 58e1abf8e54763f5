// Host glue between delegates, as a model's method has it, lowers with the
// default pipeline: elementwise arith and math on tensors, linalg ops, tensor
// slices and an affine loop, around two delegates on cuda:0 (implemented in
// C on the simulator's device memory, or a GPU's). The CUDA build gives the
// data of the host reference build, and the copies the simulator executes
// are the lower bound: one upload of sin(-x), one of the broadcast sum, one
// download.
// RUN: %cc -shared -fPIC -DETCOPY_DEVICE_DELEGATES -I%cuda_sim_include \
// RUN:   %S/Inputs/delegates.c -o %t.device.so %etcopy_cuda_sim
// RUN: %cc -shared -fPIC %S/Inputs/delegates.c -o %t.host.so
// RUN: etcopy-opt %s --etcopy-to-cuda \
// RUN:   | env ETCOPY_CUDA_SIM_STATS=1 %run_sim,%t.device.so 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SIM
// RUN: etcopy-opt %s --etcopy-to-host \
// RUN:   | %run_host,%t.host.so | FileCheck %s
// RUN: %if cuda-gpu %{ %cc -shared -fPIC -DETCOPY_DEVICE_DELEGATES \
// RUN:   -I%cuda_sim_include %S/Inputs/delegates.c -o %t.gpu.so %cudart && \
// RUN:   etcopy-opt %s --etcopy-to-cuda | %run_gpu,%t.gpu.so | FileCheck %s %}

// method(x) = add(scale(sin(-x)), broadcast(sum(x))) with its second half
// overwritten by its first: x = [1, -2, 0.5, 10], sum(x) = 9.5.
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [7.81706, 11.3186, 7.81706, 11.3186]
// The delegates stage their data with cudaMemcpy (two copies in @scale,
// three in @add); the method's own copies are the three cudaMemcpyAsync.
// SIM: stats: {{.*}}copies=8
// SIM: stats: entry-points:{{.*}} cudaMemcpy=5 cudaMemcpyAsync=3 

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func private @scale(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}
func.func private @add(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}

func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> {
  // Elementwise glue before the first delegate.
  %n = arith.negf %x : tensor<4xf32>
  %s = math.sin %n : tensor<4xf32>
  %d = call @scale(%s) : (tensor<4xf32>) -> tensor<4xf32>
  // sum(x) in an affine loop, broadcast with linalg.
  %zero = arith.constant 0.0 : f32
  %sum = affine.for %i = 0 to 4 iter_args(%acc = %zero) -> f32 {
    %v = tensor.extract %x[%i] : tensor<4xf32>
    %next = arith.addf %acc, %v : f32
    affine.yield %next : f32
  }
  %empty = tensor.empty() : tensor<4xf32>
  %b = linalg.fill ins(%sum : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %r = call @add(%d, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // Tensor ops after the last delegate.
  %head = tensor.extract_slice %r[0] [2] [1] : tensor<4xf32> to tensor<2xf32>
  %out = tensor.insert_slice %head into %r[2] [2] [1] : tensor<2xf32> into tensor<4xf32>
  return %out : tensor<4xf32>
}

func.func @main() {
  %x = arith.constant dense<[1.0, -2.0, 0.5, 10.0]> : tensor<4xf32>
  %r = call @method(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %m = bufferization.to_buffer %r : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
