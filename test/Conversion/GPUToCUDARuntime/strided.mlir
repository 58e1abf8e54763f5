// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --split-input-file \
// RUN:   | FileCheck %s --implicit-check-not=gpu. --implicit-check-not=#etcopy

// Non-contiguous memrefs are never copied as if contiguous: sizes and strides
// are read from the descriptors at run time and handed to the strided-copy
// helper, which picks one cudaMemcpyAsync, pitched cudaMemcpy2DAsync rows or
// element-wise 2-D copies.

// CHECK-LABEL: llvm.func @subview_rows
// CHECK-SAME: (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SRC_ALIGNED:.*]]: !llvm.ptr
// CHECK:      %[[SIZES:.*]] = llvm.alloca %[[TWO:.*]] x i64
// CHECK:      %[[DST_STRIDES:.*]] = llvm.alloca %[[TWO]] x i64
// CHECK:      %[[SRC_STRIDES:.*]] = llvm.alloca %[[TWO]] x i64
// CHECK-NOT:  llvm.call @cudaMemcpyAsync
// CHECK:      %[[RANK:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK:      llvm.call @__etcopy_memcpy_strided(%{{.*}}, %{{.*}}, %[[RANK]], %[[SIZES]], %[[DST_STRIDES]], %[[SRC_STRIDES]],
// CHECK-SAME: : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK:      llvm.return
// CHECK:      llvm.func @cudaMemcpy2DAsync(!llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i32, !llvm.ptr) -> i32
// CHECK:      llvm.func linkonce_odr @__etcopy_memcpy_strided(
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
// is one plain copy from the offset pointer.
// CHECK-LABEL: llvm.func @contiguous_slice
// CHECK-NOT:  __etcopy_memcpy_strided
// CHECK:      %[[OFFSET:.*]] = llvm.extractvalue %{{.*}}[2]
// CHECK:      %[[FIRST:.*]] = llvm.getelementptr %{{.*}}[%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:      llvm.call @cudaMemcpyAsync(%{{.*}}, %[[FIRST]],
func.func @contiguous_slice(%dst: memref<2x8xf32, #etcopy.device<cuda:0>>,
                            %src: memref<2x8xf32, strided<[8, 1], offset: ?>>) {
  gpu.memcpy %dst, %src : memref<2x8xf32, #etcopy.device<cuda:0>>, memref<2x8xf32, strided<[8, 1], offset: ?>>
  return
}

// -----

// Fully dynamic strides: decided at run time by the helper.
// CHECK-LABEL: llvm.func @dynamic_strides
// CHECK:      llvm.call @__etcopy_memcpy_strided
func.func @dynamic_strides(%dst: memref<?x?xi8, strided<[?, ?], offset: ?>>,
                           %src: memref<?x?xi8, strided<[?, ?], offset: ?>, #etcopy.device<cuda:1>>) {
  gpu.memcpy %dst, %src : memref<?x?xi8, strided<[?, ?], offset: ?>>, memref<?x?xi8, strided<[?, ?], offset: ?>, #etcopy.device<cuda:1>>
  return
}
