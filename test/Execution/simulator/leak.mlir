// Device memory never freed is reported when the process exits, which then
// fails.
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --reconcile-unrealized-casts \
// RUN:   | not %run_sim 2>&1 | FileCheck %s

// CHECK: etcopy-cuda-sim: error: leak: 1 device allocation(s), 24 bytes, not freed at exit
// CHECK: etcopy-cuda-sim: note: leaked 24 bytes of device memory at 0x{{[0-9a-f]+}} on cuda:0 (allocation #1, cudaMallocAsync)

func.func @main() {
  %d = gpu.alloc () : memref<2x3xf32, #etcopy.device<cuda:0>>
  return
}
