// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --split-input-file \
// RUN:   | FileCheck %s --implicit-check-not=gpu. --implicit-check-not=#etcopy

// Non-contiguous memrefs are never copied as if contiguous: both
// descriptors are stored to stack slots at the function's entry and handed to
// the strided copy of the runtime support, which reads sizes and strides at
// run time and picks the copies.

// CHECK-LABEL: llvm.func @subview_rows
// CHECK-SAME: (%{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr, %[[SRC_ALIGNED:[^:]+]]: !llvm.ptr
// CHECK-DAG:  %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-DAG:  %[[DST_SLOT:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-DAG:  %[[SRC_SLOT:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-DAG:  %[[RANK:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG:  %[[F32:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NOT:  llvm.call @__etcopy_memcpy(
// CHECK:      llvm.store %{{.*}}, %[[DST_SLOT]]
// CHECK-NEXT: llvm.store %{{.*}}, %[[SRC_SLOT]]
// CHECK-NEXT: llvm.call @__etcopy_memcpy_strided(%[[DST_SLOT]], %[[SRC_SLOT]], %[[RANK]], %[[F32]], %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64, i32, !llvm.ptr, !llvm.ptr, i32, i32) -> ()
// CHECK:      llvm.return
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_memcpy_strided(
// CHECK:      llvm.call @cudaMemcpyAsync
// CHECK:      llvm.call @cudaMemcpy2DAsync
func.func @subview_rows(%dst: memref<2x3xf32, #etcopy.device<cuda:0>>,
                        %src: memref<4x8xf32>) {
  %sub = memref.subview %src[1, 2] [2, 3] [1, 1]
      : memref<4x8xf32> to memref<2x3xf32, strided<[8, 1], offset: 10>>
  gpu.memcpy %dst, %sub : memref<2x3xf32, #etcopy.device<cuda:0>>, memref<2x3xf32, strided<[8, 1], offset: 10>>
  return
}

// -----

// A strided layout that is contiguous in fact (a row slice with an offset)
// is one plain copy from the element at the offset.
// CHECK-LABEL: llvm.func @contiguous_slice
// CHECK-SAME: (%{{[^:]+}}: !llvm.ptr, %[[DST:[^:]+]]: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr, %[[SRC:[^:]+]]: !llvm.ptr, %[[OFFSET:[^:]+]]: i64
// CHECK-NOT:  __etcopy_memcpy_strided
// CHECK:      %[[FIRST:.*]] = llvm.getelementptr %[[SRC]][%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.call @__etcopy_memcpy(%[[DST]], %[[FIRST]],
func.func @contiguous_slice(%dst: memref<2x8xf32, #etcopy.device<cuda:0>>,
                            %src: memref<2x8xf32, strided<[8, 1], offset: ?>>) {
  gpu.memcpy %dst, %src : memref<2x8xf32, #etcopy.device<cuda:0>>, memref<2x8xf32, strided<[8, 1], offset: ?>>
  return
}

// -----

// Fully dynamic strides: decided at run time by the helper.
// CHECK-LABEL: llvm.func @dynamic_strides
// CHECK:      llvm.call @__etcopy_memcpy_strided(
func.func @dynamic_strides(%dst: memref<?x?xi8, strided<[?, ?], offset: ?>>,
                           %src: memref<?x?xi8, strided<[?, ?], offset: ?>, #etcopy.device<cuda:1>>) {
  gpu.memcpy %dst, %src : memref<?x?xi8, strided<[?, ?], offset: ?>>, memref<?x?xi8, strided<[?, ?], offset: ?>, #etcopy.device<cuda:1>>
  return
}
