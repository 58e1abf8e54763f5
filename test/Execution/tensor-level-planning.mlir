// Memory planning of a tensor-level method: the device buffers that
// bufferization creates for the copies into delegates (five of them, on two
// devices) are planned into one arena per device, so the generated code
// makes one device allocation per device per call (cudaMallocAsync in the
// simulator's trace; the delegates' own results come from cudaMalloc in
// Inputs/delegates.c). Without planning it makes one per buffer. Both give
// the host reference's data, and the simulator fails the run on any leak.
// RUN: %cc -shared -fPIC -DETCOPY_DEVICE_DELEGATES -I%cuda_sim_include \
// RUN:   %S/Inputs/delegates.c -o %t.device.so %etcopy_cuda_sim
// RUN: %cc -shared -fPIC %S/Inputs/delegates.c -o %t.host.so
// RUN: etcopy-opt %s --etcopy-to-cuda | env ETCOPY_CUDA_SIM_DEVICES=2 \
// RUN:   ETCOPY_CUDA_SIM_TRACE=1 %run_sim,%t.device.so 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,PLANNED
// RUN: etcopy-opt %s --etcopy-to-cuda=plan-memory=false | env \
// RUN:   ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 \
// RUN:   %run_sim,%t.device.so 2>&1 | FileCheck %s --check-prefixes=CHECK,UNPLANNED
// RUN: etcopy-opt %s --etcopy-to-host | %run_host,%t.host.so | FileCheck %s

// Planned: one arena on cuda:0 (x and y), one on cuda:1 (y, z and x).
// PLANNED-COUNT-2: trace: cudaMallocAsync(
// PLANNED-NOT: trace: cudaMallocAsync(
// UNPLANNED-COUNT-5: trace: cudaMallocAsync(
// UNPLANNED-NOT: trace: cudaMallocAsync(

// r = (2x + y) + ((y + z) + x) = 3x + 2y + z
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [7, -2, 5.5, 34]

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func private @scale(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}
func.func private @add(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}
func.func private @add_on_cuda1(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:1>, llvm.emit_c_interface}

func.func @method(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %s = call @scale(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %a = call @add(%s, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = call @add_on_cuda1(%y, %z) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = call @add_on_cuda1(%b, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = arith.addf %a, %c : tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @main() {
  %x = arith.constant dense<[1.0, -2.0, 0.5, 10.0]> : tensor<4xf32>
  %y = arith.constant dense<1.0> : tensor<4xf32>
  %z = arith.constant dense<2.0> : tensor<4xf32>
  %r = call @method(%x, %y, %z) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = bufferization.to_buffer %r : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
