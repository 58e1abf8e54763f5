// Device memory is not host memory: a host load from a device allocation
// faults, and the simulator says which allocation it was.
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --convert-to-llvm \
// RUN:   --reconcile-unrealized-casts | not %run_sim 2>&1 | FileCheck %s

// CHECK: etcopy-cuda-sim: error: host code dereferenced device pointer 0x{{[0-9a-f]+}} (offset 8 in a 16-byte allocation on cuda:0)

func.func private @printF32(f32)

func.func @main() {
  %d = gpu.alloc () : memref<4xf32>
  %c2 = arith.constant 2 : index
  %x = memref.load %d[%c2] : memref<4xf32>
  call @printF32(%x) : (f32) -> ()
  gpu.dealloc %d : memref<4xf32>
  return
}
