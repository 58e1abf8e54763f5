// With pinned-host-memory, buffers freed by the lowered code go back to a
// cache of pinned memory, and a later request of the same size reuses one:
// @stage, called five times with 4, 8, 4, 8 and 4 elements, pins one
// staging buffer per size (16 + 256 and 32 + 256 bytes, the header included)
// and no more. (Only the upload's buffer is pinned: the download's goes to a
// call, which could free it with free().) The blocks are released at exit, after the last print. With
// the cache disabled (ETCOPY_PINNED_HOST_CACHE_BYTES=0) every call pins and
// unpins its buffer; with room for one 16-byte block only (272 bytes) the
// 8-element buffer is unpinned at each of its frees while the 4-element one
// stays cached. The data is the same in every run, and the host build's.
// RUN: etcopy-opt %s --etcopy-to-cuda="pinned-host-memory=true" \
// RUN:   | env ETCOPY_CUDA_SIM_TRACE=1 %run_sim 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,CACHED \
// RUN:       --implicit-check-not='trace: cudaMallocHost' --implicit-check-not='trace: cudaFreeHost'
// RUN: etcopy-opt %s --etcopy-to-cuda="pinned-host-memory=true" \
// RUN:   | env ETCOPY_CUDA_SIM_TRACE=1 ETCOPY_PINNED_HOST_CACHE_BYTES=0 %run_sim 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,UNCACHED \
// RUN:       --implicit-check-not='trace: cudaMallocHost' --implicit-check-not='trace: cudaFreeHost'
// RUN: etcopy-opt %s --etcopy-to-cuda="pinned-host-memory=true" \
// RUN:   | env ETCOPY_CUDA_SIM_TRACE=1 ETCOPY_PINNED_HOST_CACHE_BYTES=272 %run_sim 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SMALL \
// RUN:       --implicit-check-not='trace: cudaMallocHost' --implicit-check-not='trace: cudaFreeHost'
// A failed pinning is reported at the allocation, with the bytes the
// buffer asked for (the header not counted), after the first call's data.
// RUN: etcopy-opt %s --etcopy-to-cuda="pinned-host-memory=true" \
// RUN:   | env ETCOPY_CUDA_SIM_FAIL=host-alloc:2 not %run_sim 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FAIL
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: %if cuda-gpu %{ etcopy-opt %s --etcopy-to-cuda="pinned-host-memory=true" | %run_gpu | FileCheck %s %}

// CACHED: cudaMallocHost(272 bytes) -> [[P4:0x[0-9a-f]+]]
// UNCACHED: cudaMallocHost(272 bytes)
// SMALL: cudaMallocHost(272 bytes) -> [[S4:0x[0-9a-f]+]]
// CHECK: data =
// CHECK-NEXT: [1,  2,  3,  4]
// UNCACHED: cudaFreeHost(
// CACHED: cudaMallocHost(288 bytes) -> [[P8:0x[0-9a-f]+]]
// UNCACHED: cudaMallocHost(288 bytes)
// SMALL: cudaMallocHost(288 bytes) -> [[S8:0x[0-9a-f]+]]
// CHECK: data =
// CHECK-NEXT: [1,  2,  3,  4,  5,  6,  7,  8]
// UNCACHED: cudaFreeHost(
// SMALL: cudaFreeHost([[S8]])
// UNCACHED: cudaMallocHost(272 bytes)
// CHECK: data =
// CHECK-NEXT: [1,  2,  3,  4]
// UNCACHED: cudaFreeHost(
// UNCACHED: cudaMallocHost(288 bytes)
// SMALL: cudaMallocHost(288 bytes)
// CHECK: data =
// CHECK-NEXT: [1,  2,  3,  4,  5,  6,  7,  8]
// UNCACHED: cudaFreeHost(
// SMALL: cudaFreeHost(
// UNCACHED: cudaMallocHost(272 bytes)
// CHECK: data =
// CHECK-NEXT: [1,  2,  3,  4]
// UNCACHED: cudaFreeHost(
// CACHED-DAG: cudaFreeHost([[P4]])
// CACHED-DAG: cudaFreeHost([[P8]])
// SMALL: cudaFreeHost([[S4]])
// CACHED: entry-points: {{.*}} cudaMallocHost=2 cudaFreeHost=2
// UNCACHED: entry-points: {{.*}} cudaMallocHost=5 cudaFreeHost=5
// SMALL: entry-points: {{.*}} cudaMallocHost=3 cudaFreeHost=3

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

// Stages 1..n through cuda:0 and prints what comes back.
func.func @stage(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // FAIL: data =
  // FAIL-NEXT: [1,  2,  3,  4]
  // FAIL: pinned-host-cache.mlir:[[# @LINE + 1]]:9: error: cudaMallocHost failed (allocate pinned host memory, 32 bytes): cudaErrorMemoryAllocation: out of memory
  %in = memref.alloc(%n) : memref<?xf32>
  %out = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %j = arith.addi %i, %c1 : index
    %k = arith.index_cast %j : index to i32
    %v = arith.sitofp %k : i32 to f32
    memref.store %v, %in[%i] : memref<?xf32>
  }
  %d = memref.alloc(%n) : memref<?xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %in, %d : memref<?xf32> -> memref<?xf32, #etcopy.device<cuda:0>>
  etcopy.d2h %d, %out : memref<?xf32, #etcopy.device<cuda:0>> -> memref<?xf32>
  %u = memref.cast %out : memref<?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %d : memref<?xf32, #etcopy.device<cuda:0>>
  memref.dealloc %in : memref<?xf32>
  memref.dealloc %out : memref<?xf32>
  return
}

func.func @main() {
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  call @stage(%c4) : (index) -> ()
  call @stage(%c8) : (index) -> ()
  call @stage(%c4) : (index) -> ()
  call @stage(%c8) : (index) -> ()
  call @stage(%c4) : (index) -> ()
  return
}
