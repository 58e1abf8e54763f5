// RUN: etcopy-opt %s -split-input-file --convert-gpu-to-cuda-runtime \
// RUN:   | FileCheck %s --implicit-check-not=gpu.
// RUN: etcopy-opt %s -split-input-file --convert-gpu-to-cuda-runtime \
// RUN:     --mlir-print-debuginfo \
// RUN:   | FileCheck %s --check-prefix=LOC

// Consecutive copies of one stream, with nothing between them that touches
// memory, are made by one call: `__etcopy_memcpy_x2` to `_x4` take the
// stream and the file, then each copy's destination, source, bytes, kind
// (1 is cudaMemcpyHostToDevice, 2 cudaMemcpyDeviceToHost), line and column,
// and make its cudaMemcpyAsync calls in this order. The call stands at the
// sequence's last copy. A copy alone keeps `__etcopy_memcpy`. Every copy
// call of each function is CHECKed (CHECK-NOT between them).

// Five copies: four in one call, the fifth alone.
// CHECK-LABEL: llvm.func @five_copies
// CHECK-SAME: (%{{[^:]+}}: !llvm.ptr, %[[H:[^:]+]]: !llvm.ptr, {{.*}}, %{{[^:]+}}: !llvm.ptr, %[[G:[^:]+]]: !llvm.ptr,
// CHECK:      %[[FILE:.*]] = llvm.mlir.addressof
// CHECK:      %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK:      %[[COL:.*]] = llvm.mlir.constant(9 : i32) : i32
// CHECK:      %[[BYTES:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK:      %[[TWO:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK:      %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
// CHECK:      %[[D:.*]] = llvm.call @__etcopy_malloc(
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      %[[L0:.*]] = llvm.mlir.constant([[# @LINE + 25]] : i32) : i32
// CHECK-NEXT: %[[L1:.*]] = llvm.mlir.constant([[# @LINE + 25]] : i32) : i32
// CHECK-NEXT: %[[L2:.*]] = llvm.mlir.constant([[# @LINE + 25]] : i32) : i32
// CHECK-NEXT: %[[L3:.*]] = llvm.mlir.constant([[# @LINE + 25]] : i32) : i32
// CHECK-NEXT: llvm.call @__etcopy_memcpy_x4(%[[STREAM]], %[[FILE]],
// CHECK-SAME:   %[[D]], %[[H]], %[[BYTES]], %[[ONE]], %[[L0]], %[[COL]],
// CHECK-SAME:   %[[G]], %[[D]], %[[BYTES]], %[[TWO]], %[[L1]], %[[COL]],
// CHECK-SAME:   %[[D]], %[[G]], %[[BYTES]], %[[ONE]], %[[L2]], %[[COL]],
// CHECK-SAME:   %[[H]], %[[D]], %[[BYTES]], %[[TWO]], %[[L3]], %[[COL]])
// CHECK-SAME: : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32, i32, !llvm.ptr, !llvm.ptr, i64, i32, i32, i32, !llvm.ptr, !llvm.ptr, i64, i32, i32, i32, !llvm.ptr, !llvm.ptr, i64, i32, i32, i32) -> ()
// CHECK-NEXT: %[[L4:.*]] = llvm.mlir.constant([[# @LINE + 19]] : i32) : i32
// CHECK-NEXT: llvm.call @__etcopy_memcpy(%[[D]], %[[H]], %[[BYTES]], %[[ONE]], %[[STREAM]], %[[FILE]], %[[L4]], %[[COL]])
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.return
// The sequence's call has the fused locations of its copies.
// LOC-LABEL: llvm.func @five_copies
// LOC:       llvm.call @__etcopy_memcpy_x4({{.*}}) loc(#[[CALL:loc[0-9]+]])
// LOC-DAG:   #[[LOC0:loc[0-9]+]] = loc("{{.*}}copy-sequences.mlir":[[# @LINE + 8]]:9)
// LOC-DAG:   #[[LOC1:loc[0-9]+]] = loc("{{.*}}copy-sequences.mlir":[[# @LINE + 8]]:9)
// LOC-DAG:   #[[LOC2:loc[0-9]+]] = loc("{{.*}}copy-sequences.mlir":[[# @LINE + 8]]:9)
// LOC-DAG:   #[[LOC3:loc[0-9]+]] = loc("{{.*}}copy-sequences.mlir":[[# @LINE + 8]]:9)
// LOC-DAG:   #[[CALL]] = loc(fused[#[[LOC0]], #[[LOC1]], #[[LOC2]], #[[LOC3]]])
func.func @five_copies(%h: memref<4xf32>, %g: memref<4xf32>) {
  %t0 = gpu.wait async
  %d, %t1 = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
  %t2 = gpu.memcpy async [%t1] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>  // C0
  %t3 = gpu.memcpy async [%t2] %g, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>  // C1
  %t4 = gpu.memcpy async [%t3] %d, %g : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>  // C2
  %t5 = gpu.memcpy async [%t4] %h, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>  // C3
  %t6 = gpu.memcpy async [%t5] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>  // C4
  %t7 = gpu.dealloc async [%t6] %d : memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t7]
  return
}

// -----

// Two and three copies: `_x2` and `_x3`. Ops without memory effects
// between copies (the constant) do not end a sequence.
// CHECK-LABEL: llvm.func @three_copies
// CHECK:      %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.call @__etcopy_memcpy_x3(%[[STREAM]],
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.call @__etcopy_memcpy_x2(%[[STREAM]],
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.return
func.func @three_copies(%h: memref<4xf32>, %g: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) -> index {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %c = arith.constant 7 : index
  %t2 = gpu.memcpy async [%t1] %g, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %t3 = gpu.memcpy async [%t2] %d, %g : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.wait [%t3]
  %t4 = gpu.wait async
  %t5 = gpu.memcpy async [%t4] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t6 = gpu.memcpy async [%t5] %g, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t6]
  return %c : index
}

// -----

// Host code that touches memory between two copies ends the sequence: the first
// copy is issued before the store, as written.
// CHECK-LABEL: llvm.func @store_between
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.call @__etcopy_memcpy(
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.store
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.call @__etcopy_memcpy(
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.return
func.func @store_between(%h: memref<4xf32>, %g: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %f: f32) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %c0 = arith.constant 0 : index
  memref.store %f, %h[%c0] : memref<4xf32>
  %t2 = gpu.memcpy async [%t1] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.wait [%t2]
  return
}

// -----

// A synchronous copy is issued where it stands, and the host waits for the
// stream right after it: it may end a sequence but not wait for a later copy.
// CHECK-LABEL: llvm.func @sync_copy
// CHECK:      %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
// CHECK-NOT:  @__etcopy_memcpy
// CHECK-NOT:  @__etcopy_stream_synchronize
// CHECK:      llvm.call @__etcopy_memcpy_x2(%[[STREAM]],
// CHECK-NEXT: llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.call @__etcopy_memcpy(
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.return
func.func @sync_copy(%h: memref<4xf32>, %g: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.memcpy %g, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %t2 = gpu.wait async
  %t3 = gpu.memcpy async [%t2] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.wait [%t3]
  return
}

// -----

// Copies of two devices' streams are not one sequence, nor are copies on either
// side of a copy that a sequence cannot hold (here one of dynamic shape).
// CHECK-LABEL: llvm.func @streams_and_strided
// CHECK:      %[[S0:.*]] = llvm.call @__etcopy_get_stream(
// CHECK:      %[[S1:.*]] = llvm.call @__etcopy_get_stream(
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.call @__etcopy_memcpy({{.*}}, %[[S0]],
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.call @__etcopy_memcpy({{.*}}, %[[S1]],
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.call @__etcopy_memcpy_strided({{.*}}, %[[S1]],
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.call @__etcopy_memcpy({{.*}}, %[[S1]],
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.return
func.func @streams_and_strided(%h: memref<4xf32>, %d0: memref<4xf32, #etcopy.device<cuda:0>>, %d1: memref<4xf32, #etcopy.device<cuda:1>>,
                               %hd: memref<?xf32>, %dd: memref<?xf32, #etcopy.device<cuda:1>>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d0, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %u0 = gpu.wait async
  %u1 = gpu.memcpy async [%u0] %d1, %h : memref<4xf32, #etcopy.device<cuda:1>>, memref<4xf32>
  %u2 = gpu.memcpy async [%u1] %dd, %hd : memref<?xf32, #etcopy.device<cuda:1>>, memref<?xf32>
  %u3 = gpu.memcpy async [%u2] %h, %d1 : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:1>>
  gpu.wait [%t1]
  gpu.wait [%u3]
  return
}

// -----

// Inline assembly may access memory through a pointer operand (the
// indirect `*m` here) although the LLVM dialect reports no effect without
// `has_side_effects`, and a loop is host work the earlier copy would wait
// for: either ends the sequence.
// CHECK-LABEL: llvm.func @asm_and_loop_between
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.call @__etcopy_memcpy(
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.inline_asm
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.call @__etcopy_memcpy(
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      scf.for
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.call @__etcopy_memcpy(
// CHECK-NOT:  @__etcopy_memcpy
// CHECK:      llvm.return
func.func @asm_and_loop_between(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %p: !llvm.ptr, %n: index) -> (i32, index) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %r = llvm.inline_asm "movl $$0, $1; movl $$1, $0", "=r,*m" %p : (!llvm.ptr) -> i32
  %t2 = gpu.memcpy async [%t1] %h, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> index {
    %next = arith.addi %acc, %i : index
    scf.yield %next : index
  }
  %t3 = gpu.memcpy async [%t2] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.wait [%t3]
  return %r, %sum : i32, index
}
