// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime -split-input-file \
// RUN:   | FileCheck %s --implicit-check-not=unrealized_conversion_cast

// The clean-up after the conversion. Host buffers come from aligned_alloc
// with their byte count as a constant: 16 x f32 is 64 bytes; 10 x f32 is 40,
// padded to the alignment, 64. The size arithmetic the patterns emit folds,
// nothing calls malloc or computes an aligned address, and each constant
// value is one op: `64 : i64` serves as the size and the alignment of both
// buffers, and the extents of the descriptors are not repeated.

// CHECK-LABEL: llvm.func @static_sizes(
// CHECK-SAME:    %[[C:.*]]: i1)
// CHECK-DAG:   %[[C64:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK-DAG:   %[[C16:.*]] = llvm.mlir.constant(16 : index) : i64
// CHECK:       %[[A:.*]] = llvm.call @aligned_alloc(%[[C64]], %[[C64]])
// CHECK:       llvm.insertvalue %[[C16]], %{{.*}}[3, 0]
// CHECK:       %[[B:.*]] = llvm.call @aligned_alloc(%[[C64]], %[[C64]])
// A constant first needed in another block moves to the end of the entry
// block, where it dominates both of its uses.
// CHECK:       %[[C7:.*]] = llvm.mlir.constant(7 : index) : i64
// CHECK:       llvm.cond_br %[[C]], ^bb1, ^bb2
// CHECK:     ^bb1:
// CHECK-NEXT:  llvm.call @use(%[[C7]])
// CHECK:     ^bb2:
// CHECK-NEXT:  llvm.call @use(%[[C7]])
// CHECK-NOT:   llvm.mlir.constant
// CHECK:       llvm.return
// CHECK:       }
// CHECK-NOT:   @malloc
// CHECK-NOT:   llvm.urem
// CHECK-NOT:   llvm.ptrtoint
// CHECK-NOT:   llvm.mlir.constant(64 : i64)
// CHECK-NOT:   llvm.mlir.constant(16 : index)
// CHECK:       llvm.func @use(
func.func @static_sizes(%c: i1) -> (memref<16xf32>, memref<10xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<10xf32>
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  %seven = arith.constant 7 : index
  func.call @use(%seven) : (index) -> ()
  return %a, %b : memref<16xf32>, memref<10xf32>
^bb2:
  %seven2 = arith.constant 7 : index
  func.call @use(%seven2) : (index) -> ()
  return %a, %b : memref<16xf32>, memref<10xf32>
}
func.func private @use(index)

// -----

// Negative: an i24 takes 4 bytes in LLVM's layout but its bit width says 3,
// so its size is left for LLVM to compute from the layout; so is a
// dynamic size.

// CHECK-LABEL: llvm.func @layout_dependent(
// CHECK:         %[[END:.*]] = llvm.getelementptr %{{.*}}[3] : (!llvm.ptr) -> !llvm.ptr, i24
// CHECK-NEXT:    %[[BYTES:.*]] = llvm.ptrtoint %[[END]] : !llvm.ptr to i64
// CHECK:         %[[BUMPED:.*]] = llvm.add %[[BYTES]],
// CHECK-NEXT:    %[[REM:.*]] = llvm.urem %[[BUMPED]],
// CHECK-NEXT:    %[[PADDED:.*]] = llvm.sub %[[BUMPED]], %[[REM]]
// CHECK-NEXT:    llvm.call @aligned_alloc(%{{.*}}, %[[PADDED]])
// CHECK:         %[[DYN:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[DYNBYTES:.*]] = llvm.ptrtoint %[[DYN]] : !llvm.ptr to i64
// CHECK:         llvm.add %[[DYNBYTES]],
// CHECK:         llvm.call @aligned_alloc(
func.func @layout_dependent(%n: index) -> (memref<3xi24>, memref<?xf32>) {
  %a = memref.alloc() : memref<3xi24>
  %b = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
  return %a, %b : memref<3xi24>, memref<?xf32>
}

// -----

// A descriptor field read again in its block is read once: both copies use
// one read of the returned buffer's aligned pointer (a store between them
// keeps them in two calls).
// CHECK-LABEL: llvm.func @reads_once(
// CHECK:         %[[M:.*]] = llvm.call @make()
// CHECK:         %[[ALIGNED:.*]] = llvm.extractvalue %[[M]][1]
// CHECK:         llvm.call @__etcopy_memcpy(%{{[^,]+}}, %[[ALIGNED]],
// CHECK-NOT:     llvm.extractvalue %[[M]][1]
// CHECK:         llvm.call @__etcopy_memcpy(%{{[^,]+}}, %[[ALIGNED]],
// CHECK:         llvm.return
func.func private @make() -> memref<16xf32>
func.func @reads_once(%d: memref<16xf32, #etcopy.device<cuda:0>>, %scratch: memref<1xf32>, %f: f32) {
  %m = func.call @make() : () -> memref<16xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d, %m : memref<16xf32, #etcopy.device<cuda:0>>, memref<16xf32>
  %c0 = arith.constant 0 : index
  memref.store %f, %scratch[%c0] : memref<1xf32>
  %t2 = gpu.memcpy async [%t1] %d, %m : memref<16xf32, #etcopy.device<cuda:0>>, memref<16xf32>
  gpu.wait [%t2]
  return
}

// -----

// Casts that cancel out are folded before the clean-up, which then sees the
// descriptor they hid: the call takes the arguments as they are, with no
// descriptor built and read back, and no cast is left.
// CHECK-LABEL: llvm.func @round_trip(
// CHECK-SAME:    %[[A0:[^:]*]]: !llvm.ptr, %[[A1:[^:]*]]: !llvm.ptr, %[[A2:[^:]*]]: i64, %[[A3:[^:]*]]: i64, %[[A4:[^:]*]]: i64)
// CHECK-NEXT:    llvm.call @use(%[[A0]], %[[A1]], %[[A2]], %[[A3]], %[[A4]])
// CHECK-NEXT:    llvm.return
func.func private @use(memref<4xf32>)
func.func @round_trip(%m: memref<4xf32>) {
  %a = builtin.unrealized_conversion_cast %m : memref<4xf32> to i64
  %b = builtin.unrealized_conversion_cast %a : i64 to memref<4xf32>
  func.call @use(%b) : (memref<4xf32>) -> ()
  return
}

// -----

// Integer arithmetic on constants folds, except what LLVM would not fold to
// a constant alone: an add with overflow flags (it may be poison), a
// remainder by zero. The clean-up applies to LLVM functions already in the
// module too.
// CHECK-LABEL: llvm.func @arithmetic(
// CHECK-DAG:     %[[SIX:.*]] = llvm.mlir.constant(6 : i64) : i64
// CHECK-DAG:     %[[FOUR:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-DAG:     %[[ZERO:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-DAG:     %[[TEN:.*]] = llvm.mlir.constant(10 : i64) : i64
// CHECK-DAG:     %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG:     %[[FLAGGED:.*]] = llvm.add %[[SIX]], %[[FOUR]] overflow<nsw> : i64
// CHECK-DAG:     %[[BYZERO:.*]] = llvm.urem %[[SIX]], %[[ZERO]] : i64
// CHECK-NOT:     llvm.add %[[SIX]], %[[FOUR]] :
// CHECK:         llvm.call @sink(%[[TEN]], %[[FLAGGED]], %[[TWO]], %[[BYZERO]])
llvm.func @sink(i64, i64, i64, i64)
llvm.func @arithmetic() {
  %c6 = llvm.mlir.constant(6 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %sum = llvm.add %c6, %c4 : i64
  %flagged = llvm.add %c6, %c4 overflow<nsw> : i64
  %rem = llvm.urem %c6, %c4 : i64
  %byzero = llvm.urem %c6, %c0 : i64
  llvm.call @sink(%sum, %flagged, %rem, %byzero) : (i64, i64, i64, i64) -> ()
  llvm.return
}
