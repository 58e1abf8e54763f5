// The pool policy (CUDALowering.md, "Memory pools"): at the first stream
// request for a device, the lowered code raises the release threshold of
// the device's current memory pool, so that device memory freed by one call
// stays in the pool for the next instead of going back to the system at
// every synchronisation. @relay, called three times, moves data through
// cuda:0 and cuda:1: each device's pool is configured once, at the first
// call. By default the threshold becomes UINT64_MAX (keep all);
// ETCOPY_POOL_RELEASE_THRESHOLD sets another bound, and 0 leaves the pools
// as they are (no pool call at all). The data is the host build's.
// RUN: etcopy-opt %s --etcopy-to-cuda -o %t.mlir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 %run_sim < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,KEEP-ALL --implicit-check-not='trace: cudaMemPool' \
// RUN:       --implicit-check-not='trace: cudaDeviceGetMemPool'
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 \
// RUN:   ETCOPY_POOL_RELEASE_THRESHOLD=1048576 %run_sim < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,BOUND --implicit-check-not='trace: cudaMemPool' \
// RUN:       --implicit-check-not='trace: cudaDeviceGetMemPool'
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 \
// RUN:   ETCOPY_POOL_RELEASE_THRESHOLD=0 %run_sim < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not='trace: cudaMemPool' \
// RUN:       --implicit-check-not='trace: cudaDeviceGetMemPool'
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s

// KEEP-ALL: trace: cudaDeviceGetMemPool(cuda:0) -> P0
// KEEP-ALL-NEXT: trace: cudaMemPoolGetAttribute(P0, attr=4) -> 0
// KEEP-ALL-NEXT: trace: cudaMemPoolSetAttribute(P0, attr=4) -> 18446744073709551615
// KEEP-ALL: trace: cudaDeviceGetMemPool(cuda:1) -> P0@cuda:1
// KEEP-ALL-NEXT: trace: cudaMemPoolGetAttribute(P0@cuda:1, attr=4) -> 0
// KEEP-ALL-NEXT: trace: cudaMemPoolSetAttribute(P0@cuda:1, attr=4) -> 18446744073709551615
// BOUND: trace: cudaDeviceGetMemPool(cuda:0) -> P0
// BOUND-NEXT: trace: cudaMemPoolGetAttribute(P0, attr=4) -> 0
// BOUND-NEXT: trace: cudaMemPoolSetAttribute(P0, attr=4) -> 1048576
// BOUND: trace: cudaDeviceGetMemPool(cuda:1) -> P0@cuda:1
// BOUND-NEXT: trace: cudaMemPoolGetAttribute(P0@cuda:1, attr=4) -> 0
// BOUND-NEXT: trace: cudaMemPoolSetAttribute(P0@cuda:1, attr=4) -> 1048576
// CHECK-COUNT-3: [1.5,  -2,  3,  40]
// Two devices, three calls: the policy is applied once per device.
// KEEP-ALL: entry-points: {{.*}} cudaDeviceGetMemPool=2 cudaMemPoolSetAttribute=2 cudaMemPoolGetAttribute=2

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

memref.global "private" constant @values : memref<4xf32> = dense<[1.5, -2.0, 3.0, 40.0]>

func.func @relay(%in: memref<4xf32>, %out: memref<4xf32>) {
  %d0 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %in, %d0 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  %d1 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:1>>
  etcopy.d2d %d0, %d1 : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, #etcopy.device<cuda:1>>
  etcopy.d2h %d1, %out : memref<4xf32, #etcopy.device<cuda:1>> -> memref<4xf32>
  memref.dealloc %d0 : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %d1 : memref<4xf32, #etcopy.device<cuda:1>>
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %in = memref.get_global @values : memref<4xf32>
  %out = memref.alloc() : memref<4xf32>
  %u = memref.cast %out : memref<4xf32> to memref<*xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    func.call @relay(%in, %out) : (memref<4xf32>, memref<4xf32>) -> ()
    func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  }
  memref.dealloc %out : memref<4xf32>
  return
}
