// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime | FileCheck %s --implicit-check-not=gpu.memset

// gpu.memset becomes __etcopy_memset(dst, pattern, count, unit bytes, ...):
// a pattern of one repeated byte is set bytewise with cudaMemsetAsync (unit
// 1, count in bytes); other 16- and 32-bit patterns are set in units of 2 or
// 4 bytes with the driver's cuMemsetD16Async/cuMemsetD32Async; a 64-bit
// constant of two equal halves in units of 4, two per element. A run-time
// value is bitcast to an integer and zero-extended to 32 bits.

// CHECK-LABEL: llvm.func @patterns
// CHECK-SAME: (%{{[^:]+}}: !llvm.ptr, %[[F32:[^:]+]]: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr, %[[I64:[^:]+]]: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr, %[[BF16:[^:]+]]: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr, %[[BYTES:[^:]+]]: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %[[V_F32:[^:]+]]: f32, %[[V_I8:[^:]+]]: i8, %[[V_BF16:[^:]+]]: bf16)
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG: %[[TWO:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-DAG: %[[FOUR:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-DAG: %[[THREE_AND_A_HALF:.*]] = llvm.mlir.constant(1080033280 : i32) : i32
// CHECK-DAG: %[[FIVES:.*]] = llvm.mlir.constant(85 : i32) : i32
// CHECK-DAG: %[[N8:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-DAG: %[[N16:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK-DAG: %[[N32:.*]] = llvm.mlir.constant(32 : i64) : i64
// 3.5 : f32 is 0x40600000, not one repeated byte.
// CHECK: llvm.call @__etcopy_memset(%[[F32]], %[[THREE_AND_A_HALF]], %[[N8]], %[[FOUR]],
// 0x0000000100000001: two halves of 1, 8 units of 4 bytes for 4 elements.
// CHECK: llvm.call @__etcopy_memset(%[[I64]], %[[ONE]], %[[N8]], %[[FOUR]],
// 0x5555555555555555: one repeated byte, 32 bytes.
// CHECK: llvm.call @__etcopy_memset(%[[I64]], %[[FIVES]], %[[N32]], %[[ONE]],
// CHECK: %[[BITS:.*]] = llvm.bitcast %[[V_F32]] : f32 to i32
// CHECK: llvm.call @__etcopy_memset(%[[F32]], %[[BITS]], %[[N8]], %[[FOUR]],
// CHECK: %[[BYTE:.*]] = llvm.zext %[[V_I8]] : i8 to i32
// CHECK: llvm.call @__etcopy_memset(%[[BYTES]], %[[BYTE]], %[[N32]], %[[ONE]],
// CHECK: %[[BF16_BITS:.*]] = llvm.bitcast %[[V_BF16]] : bf16 to i16
// CHECK: %[[BF16_WORD:.*]] = llvm.zext %[[BF16_BITS]] : i16 to i32
// CHECK: llvm.call @__etcopy_memset(%[[BF16]], %[[BF16_WORD]], %[[N16]], %[[TWO]],
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_memset(
// CHECK: llvm.call @cudaMemsetAsync(
// CHECK: llvm.call @cudaGetDriverEntryPointByVersion(
func.func @patterns(%f32: memref<8xf32, #etcopy.device<cuda:0>>,
                    %i64: memref<4xi64, #etcopy.device<cuda:0>>,
                    %bf16: memref<16xbf16, #etcopy.device<cuda:0>>,
                    %bytes: memref<32xi8, #etcopy.device<cuda:0>>,
                    %v_f32: f32, %v_i8: i8, %v_bf16: bf16) {
  %c_f32 = arith.constant 3.5 : f32
  gpu.memset %f32, %c_f32 : memref<8xf32, #etcopy.device<cuda:0>>, f32
  %halves = arith.constant 4294967297 : i64
  gpu.memset %i64, %halves : memref<4xi64, #etcopy.device<cuda:0>>, i64
  %fives = arith.constant 6148914691236517205 : i64
  gpu.memset %i64, %fives : memref<4xi64, #etcopy.device<cuda:0>>, i64
  gpu.memset %f32, %v_f32 : memref<8xf32, #etcopy.device<cuda:0>>, f32
  gpu.memset %bytes, %v_i8 : memref<32xi8, #etcopy.device<cuda:0>>, i8
  gpu.memset %bf16, %v_bf16 : memref<16xbf16, #etcopy.device<cuda:0>>, bf16
  return
}
