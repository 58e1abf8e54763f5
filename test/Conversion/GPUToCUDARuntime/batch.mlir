// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --split-input-file \
// RUN:   | FileCheck %s --implicit-check-not=gpu. --implicit-check-not=#etcopy
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime=batch-copies=false \
// RUN:   --split-input-file | FileCheck %s --check-prefix=NOBATCH \
// RUN:   --implicit-check-not=__etcopy_memcpy_batch

// Independent copies: three uploads into disjoint views of an arena, from
// the function's arguments (which they only read), with a new buffer
// allocated between them, make one batch at the last copy.
// CHECK-LABEL: llvm.func @batch(
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr, %[[A:[^:]+]]: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr, %[[B:[^:]+]]: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr, %[[C:[^:]+]]: !llvm.ptr,
// The two arrays of pointers are stack slots of the function, the byte
// counts a constant global.
// CHECK: %[[DSTS:.*]] = llvm.alloca %{{.*}} x !llvm.array<3 x ptr>
// CHECK: %[[SRCS:.*]] = llvm.alloca %{{.*}} x !llvm.array<3 x ptr>
// CHECK: %[[SIZES:.*]] = llvm.mlir.addressof @[[SIZES_SYMBOL:__etcopy_batch_sizes[_0-9]*]] : !llvm.ptr
// CHECK: %[[COUNT:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK: %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
// CHECK: %[[ARENA:.*]] = llvm.call @__etcopy_malloc(
// CHECK: %[[L_FIRST:.*]] = llvm.mlir.constant([[# @LINE + 39]] : i32) : i32
// CHECK: %[[D:.*]] = llvm.call @__etcopy_malloc(
// CHECK: %[[POISON:.*]] = llvm.mlir.poison : !llvm.array<3 x ptr>
// CHECK: %[[D0:.*]] = llvm.insertvalue %[[ARENA]], %[[POISON]][0]
// CHECK: %[[S0:.*]] = llvm.insertvalue %[[A]], %[[POISON]][0]
// CHECK: %[[VB:.*]] = llvm.getelementptr %[[ARENA]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: %[[D1:.*]] = llvm.insertvalue %[[VB]], %[[D0]][1]
// CHECK: %[[S1:.*]] = llvm.insertvalue %[[B]], %[[S0]][1]
// CHECK: %[[D2:.*]] = llvm.insertvalue %[[D]], %[[D1]][2]
// CHECK: %[[S2:.*]] = llvm.insertvalue %[[C]], %[[S1]][2]
// CHECK: llvm.store %[[D2]], %[[DSTS]] : !llvm.array<3 x ptr>, !llvm.ptr
// CHECK: llvm.store %[[S2]], %[[SRCS]] : !llvm.array<3 x ptr>, !llvm.ptr
// A failure of the batch is reported at its first copy.
// CHECK: llvm.call @__etcopy_memcpy_batch(%[[DSTS]], %[[SRCS]], %[[SIZES]], %[[COUNT]], %[[STREAM]], %{{[^,]+}}, %[[L_FIRST]], %{{[^,]+}})
// CHECK: llvm.call @__etcopy_free(%[[D]],
// CHECK: llvm.return
// CHECK: llvm.mlir.global private constant @[[SIZES_SYMBOL]](dense<[16, 32, 8]> : tensor<3xi64>)
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_memcpy_batch(
// CHECK: llvm.call @cudaMemcpyBatchAsync(

// Without batches, the three uploads are three cudaMemcpyAsync: the first
// two in one call (copy-sequences.mlir), the allocation before the third
// ending that sequence.
// NOBATCH-LABEL: llvm.func @batch(
// NOBATCH-NOT: @__etcopy_memcpy
// NOBATCH: llvm.call @__etcopy_memcpy_x2(
// NOBATCH-NOT: @__etcopy_memcpy
// NOBATCH: llvm.call @__etcopy_malloc(
// NOBATCH-NOT: @__etcopy_memcpy
// NOBATCH: llvm.call @__etcopy_memcpy(
// NOBATCH-NOT: @__etcopy_memcpy
// NOBATCH: llvm.return
func.func @batch(%a: memref<4xf32>, %b: memref<8xf32>, %c: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %t0 = gpu.wait async
  %arena, %t1 = gpu.alloc async [%t0] () : memref<64xi8, #etcopy.device<cuda:0>>
  %va = memref.view %arena[%c0][] : memref<64xi8, #etcopy.device<cuda:0>> to memref<4xf32, #etcopy.device<cuda:0>>
  %t2 = gpu.memcpy async [%t1] %va, %a : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %vb = memref.view %arena[%c16][] : memref<64xi8, #etcopy.device<cuda:0>> to memref<8xf32, #etcopy.device<cuda:0>>
  %t3 = gpu.memcpy async [%t2] %vb, %b : memref<8xf32, #etcopy.device<cuda:0>>, memref<8xf32>
  %d, %t4 = gpu.alloc async [%t3] () : memref<2xf32, #etcopy.device<cuda:0>>
  %t5 = gpu.memcpy async [%t4] %d, %c : memref<2xf32, #etcopy.device<cuda:0>>, memref<2xf32>
  %t6 = gpu.dealloc async [%t5] %d : memref<2xf32, #etcopy.device<cuda:0>>
  %t7 = gpu.dealloc async [%t6] %arena : memref<64xi8, #etcopy.device<cuda:0>>
  gpu.wait [%t7]
  return
}

// -----

// A download of what an upload wrote depends on it: two copies. So does a
// write to memory the run read or wrote, and so may a write to another
// argument (arguments may alias). No batch: the three copies are made in
// order, by one call (copy-sequences.mlir).
// CHECK-LABEL: llvm.func @dependent(
// CHECK-NOT: @__etcopy_memcpy
// CHECK: llvm.call @__etcopy_memcpy_x3(
// CHECK-NOT: @__etcopy_memcpy
// CHECK: llvm.return
func.func @dependent(%h: memref<4xf32>, %o1: memref<4xf32>, %o2: memref<4xf32>) {
  %t0 = gpu.wait async
  %d, %t1 = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
  %t2 = gpu.memcpy async [%t1] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t3 = gpu.memcpy async [%t2] %o1, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %t4 = gpu.memcpy async [%t3] %o2, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %t5 = gpu.dealloc async [%t4] %d : memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t5]
  return
}

// -----

// Views of one arena that overlap are not independent; a host op that
// touches memory between two copies ends the run; a sync-form copy ends
// its run, and the host waits after the batch.
// CHECK-LABEL: llvm.func @breaks(
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr, %[[H:[^:]+]]: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr, %[[G:[^:]+]]: !llvm.ptr,
// CHECK: %[[ARENA:.*]] = llvm.call @__etcopy_malloc(
// Bytes 0-16 and 8-24 of the arena overlap: no batch, but one call that
// makes the two copies in order (copy-sequences.mlir).
// CHECK: %[[V8:.*]] = llvm.getelementptr %[[ARENA]][8]
// CHECK-NEXT: llvm.call @__etcopy_memcpy_x2(%{{[^,]+}}, %{{[^,]+}}, %[[ARENA]], %[[H]], %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[V8]], %[[G]],
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// Bytes 32-48 and the sync copy to bytes 0-16, then the host waits.
// CHECK: %[[V32:.*]] = llvm.getelementptr %[[ARENA]][32]
// CHECK: llvm.insertvalue %[[V32]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[H]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[ARENA]], %{{.*}}[1]
// CHECK: llvm.insertvalue %[[G]], %{{.*}}[1]
// CHECK: llvm.call @__etcopy_memcpy_batch(
// CHECK-NEXT: llvm.call @__etcopy_stream_synchronize(
// CHECK-NOT: @__etcopy_memcpy
// CHECK: llvm.return
func.func @breaks(%h: memref<4xf32>, %g: memref<4xf32>, %scratch: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %f = arith.constant 1.0 : f32
  %t0 = gpu.wait async
  %arena, %t1 = gpu.alloc async [%t0] () : memref<64xi8, #etcopy.device<cuda:0>>
  %v0 = memref.view %arena[%c0][] : memref<64xi8, #etcopy.device<cuda:0>> to memref<4xf32, #etcopy.device<cuda:0>>
  %v8 = memref.view %arena[%c8][] : memref<64xi8, #etcopy.device<cuda:0>> to memref<4xf32, #etcopy.device<cuda:0>>
  %v32 = memref.view %arena[%c32][] : memref<64xi8, #etcopy.device<cuda:0>> to memref<4xf32, #etcopy.device<cuda:0>>
  %t2 = gpu.memcpy async [%t1] %v0, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t3 = gpu.memcpy async [%t2] %v8, %g : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  memref.store %f, %scratch[%c0] : memref<1xf32>
  %t4 = gpu.memcpy async [%t3] %v32, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.memcpy %v0, %g : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t5 = gpu.dealloc async [%t4] %arena : memref<64xi8, #etcopy.device<cuda:0>>
  gpu.wait [%t5]
  return
}

// -----

// Copies on the streams of two devices are two runs; a copy between the
// devices is a cudaMemcpyPeerAsync (dst, its device, src, its device) and
// never part of a batch.
// CHECK-LABEL: llvm.func @devices(
// CHECK-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG: %[[BYTES:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK: %[[S1:.*]] = llvm.call @__etcopy_get_stream(%[[ONE]],
// CHECK: %[[D0:.*]] = llvm.call @__etcopy_malloc(
// CHECK: %[[D1:.*]] = llvm.call @__etcopy_malloc(
// CHECK: %[[E1:.*]] = llvm.call @__etcopy_malloc(
// CHECK: llvm.call @__etcopy_memcpy(%[[D0]],
// CHECK: llvm.call @__etcopy_memcpy(%[[D1]],
// CHECK: llvm.call @__etcopy_memcpy_peer(%[[E1]], %[[ONE]], %[[D0]], %[[ZERO]], %[[BYTES]], %[[S1]],
// CHECK-NOT: @__etcopy_memcpy
// CHECK: llvm.return
// Peer access is set up by the thread that claims the pair in a table that
// the modules of a program share.
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_memcpy_peer(
// CHECK: llvm.mlir.addressof @__etcopy_peer_claimed
// CHECK: llvm.atomicrmw _or
// CHECK: llvm.call @cudaDeviceCanAccessPeer(
// CHECK: llvm.call @cudaDeviceEnablePeerAccess(
// CHECK: llvm.call @cudaMemcpyPeerAsync(
// CHECK: llvm.mlir.global linkonce_odr @__etcopy_peer_claimed(
func.func @devices(%h: memref<4xf32>, %g: memref<4xf32>) {
  %t0 = gpu.wait async
  %d0, %t1 = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
  %d1, %t2 = gpu.alloc async [%t1] () : memref<4xf32, #etcopy.device<cuda:1>>
  %e1, %t3 = gpu.alloc async [%t2] () : memref<4xf32, #etcopy.device<cuda:1>>
  %t4 = gpu.memcpy async [%t3] %d0, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t5 = gpu.memcpy async [%t4] %d1, %g : memref<4xf32, #etcopy.device<cuda:1>>, memref<4xf32>
  %t6 = gpu.memcpy async [%t5] %e1, %d0 : memref<4xf32, #etcopy.device<cuda:1>>, memref<4xf32, #etcopy.device<cuda:0>>
  %t7 = gpu.dealloc async [%t6] %d0 : memref<4xf32, #etcopy.device<cuda:0>>
  %t8 = gpu.dealloc async [%t7] %d1 : memref<4xf32, #etcopy.device<cuda:1>>
  %t9 = gpu.dealloc async [%t8] %e1 : memref<4xf32, #etcopy.device<cuda:1>>
  gpu.wait [%t9]
  return
}

// -----

// Inline assembly between two independent uploads ends the run: it may
// access memory through a pointer operand (the indirect `*m` here) although
// the LLVM dialect reports no effect without `has_side_effects`.
// CHECK-LABEL: llvm.func @asm_between(
// CHECK-NOT: @__etcopy_memcpy
// CHECK: llvm.call @__etcopy_memcpy(
// CHECK-NOT: @__etcopy_memcpy
// CHECK: llvm.inline_asm
// CHECK-NOT: @__etcopy_memcpy
// CHECK: llvm.call @__etcopy_memcpy(
// CHECK-NOT: @__etcopy_memcpy
// CHECK: llvm.return
func.func @asm_between(%h: memref<4xf32>, %g: memref<4xf32>, %p: !llvm.ptr) -> i32 {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %t0 = gpu.wait async
  %arena, %t1 = gpu.alloc async [%t0] () : memref<32xi8, #etcopy.device<cuda:0>>
  %v0 = memref.view %arena[%c0][] : memref<32xi8, #etcopy.device<cuda:0>> to memref<4xf32, #etcopy.device<cuda:0>>
  %v16 = memref.view %arena[%c16][] : memref<32xi8, #etcopy.device<cuda:0>> to memref<4xf32, #etcopy.device<cuda:0>>
  %t2 = gpu.memcpy async [%t1] %v0, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %r = llvm.inline_asm "movl $$0, $1; movl $$1, $0", "=r,*m" %p : (!llvm.ptr) -> i32
  %t3 = gpu.memcpy async [%t2] %v16, %g : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t4 = gpu.dealloc async [%t3] %arena : memref<32xi8, #etcopy.device<cuda:0>>
  gpu.wait [%t4]
  return %r : i32
}
