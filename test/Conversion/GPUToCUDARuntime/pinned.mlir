// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime=pinned-host-memory=true \
// RUN:   --split-input-file | FileCheck %s --implicit-check-not=gpu. \
// RUN:   --implicit-check-not=#etcopy
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --split-input-file \
// RUN:   | FileCheck %s --check-prefix=PAGEABLE \
// RUN:   --implicit-check-not=__etcopy_malloc_host \
// RUN:   --implicit-check-not=__etcopy_free_host \
// RUN:   --implicit-check-not=pinned_cache

// With pinned-host-memory, a host buffer that the function allocates,
// copies to or from a device and frees itself is pinned: cudaMallocHost
// (at the allocation's location) instead of malloc, cudaFreeHost instead
// of free. Host code reads and writes it as any host memory. The support
// functions keep freed blocks in a cache of pinned memory, one per program
// (a linkonce_odr global), that a destructor releases. Without the option,
// the buffer comes from the cache of pageable blocks (PAGEABLE).

// CHECK-LABEL: llvm.func @staging(
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK: %[[L_ALLOC:.*]] = llvm.mlir.constant([[# @LINE + 23]] : i32) : i32
// CHECK: %[[H:.*]] = llvm.call @__etcopy_malloc_host(%[[BYTES]], %{{[^,]+}}, %[[L_ALLOC]], %{{[^,]+}}) : (i64, !llvm.ptr, i32, i32) -> !llvm.ptr
// CHECK: llvm.store %{{.*}}, %[[H]] : f32, !llvm.ptr
// The two copies are one call (copy-sequences.mlir): from and to the buffer.
// CHECK: llvm.call @__etcopy_memcpy_x2(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[H]], %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[H]],
// CHECK: llvm.load %[[H]] : !llvm.ptr -> f32
// CHECK: llvm.call @__etcopy_free_host(%[[H]], %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}) : (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
// CHECK-NOT: @free
// CHECK: llvm.return
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_malloc_host(
// CHECK: llvm.mlir.addressof @__etcopy_pinned_cache
// CHECK: llvm.call @cudaMallocHost(
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_free_host(
// CHECK: llvm.mlir.addressof @__etcopy_pinned_cache
// CHECK: llvm.call @cudaFreeHost(
// CHECK: llvm.mlir.global linkonce_odr @__etcopy_pinned_cache()
// CHECK: llvm.mlir.global_dtors dtors = [{{.*}}@__etcopy.release_pinned_host_cache]

// PAGEABLE-LABEL: llvm.func @staging(
// PAGEABLE: llvm.call @__etcopy_malloc_pageable(
// PAGEABLE: llvm.call @__etcopy_free_pageable(
func.func @staging(%v: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %h = memref.alloc() : memref<4xf32>
  memref.store %v, %h[%c0] : memref<4xf32>
  %t0 = gpu.wait async
  %d, %t1 = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
  %t2 = gpu.memcpy async [%t1] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t3 = gpu.memcpy async [%t2] %h, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %t4 = gpu.dealloc async [%t3] %d : memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t4]
  %r = memref.load %h[%c0] : memref<4xf32>
  memref.dealloc %h : memref<4xf32>
  return %r : f32
}

// -----

// A planned host arena, copied through views (one a cast to
// #etcopy.device<cpu>), is pinned as a whole.

// CHECK-LABEL: llvm.func @host_arena(
// CHECK: %[[ARENA:.*]] = llvm.call @__etcopy_malloc_host(
// CHECK: %[[VIEW:.*]] = llvm.getelementptr %[[ARENA]][64]
// CHECK: %[[CAST:.*]] = llvm.addrspacecast %[[VIEW]]
// CHECK: llvm.call @__etcopy_memcpy_x2(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[ARENA]], %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[CAST]],
// CHECK: llvm.call @__etcopy_free_host(%[[ARENA]],
func.func @host_arena(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %arena = memref.alloc() : memref<128xi8>
  %a = memref.view %arena[%c0][] : memref<128xi8> to memref<4xf32>
  %b = memref.view %arena[%c64][] : memref<128xi8> to memref<4xf32>
  %bc = memref.memory_space_cast %b : memref<4xf32> to memref<4xf32, #etcopy.device<cpu>>
  %t0 = gpu.wait async
  %d, %t1 = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
  %t2 = gpu.memcpy async [%t1] %d, %a : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t3 = gpu.memcpy async [%t2] %bc, %d : memref<4xf32, #etcopy.device<cpu>>, memref<4xf32, #etcopy.device<cuda:0>>
  %t4 = gpu.dealloc async [%t3] %d : memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t4]
  memref.copy %b, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %arena : memref<128xi8>
  return
}

// -----

// Buffers that may be freed elsewhere, with free(), stay pageable: one the
// function returns (its caller frees it), one it passes to a call, one it
// does not free. So does a buffer no copy to or from a device uses.

// CHECK-LABEL: llvm.func @not_pinned(
// CHECK-COUNT-4: llvm.call @aligned_alloc(
// CHECK-NOT: __etcopy_malloc_host
// CHECK: llvm.call @free(
// CHECK-NOT: __etcopy_free_host
// CHECK: llvm.return
func.func private @consume(memref<4xf32>)
func.func @not_pinned() -> memref<4xf32> {
  %returned = memref.alloc() : memref<4xf32>
  %passed = memref.alloc() : memref<4xf32>
  %kept = memref.alloc() : memref<4xf32>
  %host_only = memref.alloc() : memref<4xf32>
  %t0 = gpu.wait async
  %d, %t1 = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
  %t2 = gpu.memcpy async [%t1] %returned, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %t3 = gpu.memcpy async [%t2] %passed, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %t4 = gpu.memcpy async [%t3] %kept, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %t5 = gpu.dealloc async [%t4] %d : memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t5]
  call @consume(%passed) : (memref<4xf32>) -> ()
  memref.copy %kept, %host_only : memref<4xf32> to memref<4xf32>
  memref.dealloc %host_only : memref<4xf32>
  return %returned : memref<4xf32>
}
