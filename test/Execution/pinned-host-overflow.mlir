// A pinned buffer of dynamic size too large for its block's 256-byte
// header to fit in 64 bits is reported as the failed cudaMallocHost it
// stands for, at the allocation, with the bytes the buffer asked for;
// nothing wraps around to a small block: no cudaMallocHost is made. (A
// static size that large is a compile-time error, errors.mlir in
// test/Conversion/GPUToCUDARuntime.)
// RUN: etcopy-opt %s --etcopy-to-cuda="pinned-host-memory=true" \
// RUN:   | env ETCOPY_CUDA_SIM_LEAK_CHECK=0 ETCOPY_CUDA_SIM_TRACE=1 not %run_sim 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not='trace: cudaMallocHost'

func.func @stage(%n: index) {
  // CHECK: pinned-host-overflow.mlir:[[# @LINE + 1]]:9: error: cudaMallocHost failed (allocate pinned host memory, 18446744073709551488 bytes): cudaErrorMemoryAllocation: out of memory
  %in = memref.alloc(%n) : memref<?xf32>
  %d = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  %s = memref.subview %in[0] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1]>>
  etcopy.h2d %s, %d : memref<4xf32, strided<[1]>> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %d : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %in : memref<?xf32>
  return
}

func.func @main() {
  // 2^62 - 32 floats: 2^64 - 128 bytes.
  %n = arith.constant 4611686018427387872 : index
  call @stage(%n) : (index) -> ()
  return
}
