// A delegate that writes an argument (`etcopy.writes`), called through its
// C interface (`llvm.emit_c_interface`): both pipelines lower it (the
// `_mlir_ciface_` wrapper kept `etcopy.writes`, which the verifier rejected,
// and the host pipeline kept it on a function it no longer knew as a
// delegate), and the CUDA build on the simulator computes what the host
// build does. @bump writes the upload of %x, which @add reads afterwards:
// bufferization copies it on the device first, so @add sees %x as it was
// (tensor semantics); @bump's second call writes @add's result, which
// nothing reads again: no copy. The caller's %x is unchanged.
// RUN: %cc -shared -fPIC -DETCOPY_DEVICE_DELEGATES -I%cuda_sim_include \
// RUN:   %S/Inputs/delegate-writes.c -o %t.device.so %etcopy_cuda_sim
// RUN: %cc -shared -fPIC %S/Inputs/delegate-writes.c -o %t.host.so
// RUN: etcopy-opt %s --etcopy-propagate-device --etcopy-optimize-transfers \
// RUN:   --canonicalize --lift-cf-to-scf --etcopy-elementwise-to-linalg \
// RUN:   --etcopy-bufferize | FileCheck %s --check-prefix=IR
// RUN: etcopy-opt %s --etcopy-to-cuda | %run_sim,%t.device.so | FileCheck %s
// RUN: etcopy-opt %s --etcopy-to-host | %run_host,%t.host.so | FileCheck %s

// One copy on the device: of the upload that @bump writes and @add reads.
// IR-LABEL: func.func @method
// IR: %[[UP:.*]] = memref.alloc() {{.*}} : memref<4xf32, #etcopy.device<cuda:0>>
// IR: etcopy.h2d %{{.*}}, %[[UP]]
// IR: memref.copy %[[UP]], %[[COPY:.*]] : memref<4xf32, #etcopy.device<cuda:0>> to memref<4xf32, #etcopy.device<cuda:0>>
// IR: %[[B1:.*]] = call @bump(%[[COPY]],
// IR: %[[S:.*]] = call @add(%[[B1]], %[[UP]])
// IR-NOT: memref.copy
// IR: call @bump(%[[S]],
// IR-LABEL: func.func @main

// r1 = 10 * (x + y) = [20, -10, 15, 110], r2 = r1 + x = [21, -12, 15.5, 120],
// result = 10 * (r2 + y).
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [220, -110, 165, 1210]
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [1, -2, 0.5, 10]

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func private @bump(tensor<4xf32> {etcopy.writes}, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}
func.func private @add(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}

func.func @method(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r1 = call @bump(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r2 = call @add(%r1, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r3 = call @bump(%r2, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r3 : tensor<4xf32>
}

func.func @main() {
  %x = arith.constant dense<[1.0, -2.0, 0.5, 10.0]> : tensor<4xf32>
  %y = arith.constant dense<1.0> : tensor<4xf32>
  %r = call @method(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = bufferization.to_buffer %r : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  %mx = bufferization.to_buffer %x : tensor<4xf32> to memref<4xf32>
  %ux = memref.cast %mx : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%ux) : (memref<*xf32>) -> ()
  return
}
