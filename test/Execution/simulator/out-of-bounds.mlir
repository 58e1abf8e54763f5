// A copy larger than its device destination (here through a view that
// claims more than was allocated, which no static check can see) is
// reported by the simulator, and the generated code reports the failed call
// with the op's location.
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --reconcile-unrealized-casts \
// RUN:   | not %run_sim 2>&1 | FileCheck %s

// CHECK: etcopy-cuda-sim: error: cudaMemcpyAsync: out-of-bounds: dst 0x{{[0-9a-f]+}} + 16 bytes (offset 0) exceeds the 8-byte device allocation 0x{{[0-9a-f]+}} on cuda:0
// CHECK: out-of-bounds.mlir:[[# @LINE + 9]]:3: error: cudaMemcpyAsync failed (host-to-device, 16 bytes): cudaErrorInvalidValue: invalid argument

memref.global "private" constant @data : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

func.func @main() {
  %data = memref.get_global @data : memref<4xf32>
  %d = gpu.alloc () : memref<2xf32, #etcopy.device<cuda:0>>
  %wide = memref.reinterpret_cast %d to offset: [0], sizes: [4], strides: [1]
      : memref<2xf32, #etcopy.device<cuda:0>> to memref<4xf32, #etcopy.device<cuda:0>>
  gpu.memcpy %wide, %data : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.dealloc %d : memref<2xf32, #etcopy.device<cuda:0>>
  return
}
