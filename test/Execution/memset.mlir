// gpu.memset of any 8-, 16- or 32-bit pattern, constant or not, and of
// 64-bit constants made of two equal halves: byte patterns with
// cudaMemsetAsync, the others with the driver's cuMemsetD16Async and
// cuMemsetD32Async, looked up once each with cudaGetDriverEntryPointByVersion
// (the program links no libcuda). A failed driver memset is reported with
// its CUresult's name and text, as clearly as a cudaError_t. (The lookup's
// failure is injected as the first "other" call, with the pool policy off:
// its calls are "other" calls too.)
// RUN: etcopy-opt %s --etcopy-to-cuda -o %t.mlir
// RUN: env ETCOPY_CUDA_SIM_STATS=1 %run_sim < %t.mlir 2> %t.stats | FileCheck %s
// RUN: FileCheck %s --check-prefix=STATS < %t.stats
// RUN: %if cuda-gpu %{ %run_gpu < %t.mlir | FileCheck %s %}
// RUN: env ETCOPY_CUDA_SIM_FAIL=memset:3 not %run_sim < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FAILED-MEMSET
// RUN: env ETCOPY_CUDA_SIM_FAIL=other:1 ETCOPY_POOL_RELEASE_THRESHOLD=0 not %run_sim < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-ENTRY-POINT

// The 16-bit patterns share one entry point, the 32-bit ones another.
// STATS: etcopy-cuda-sim: stats: entry-points:
// STATS-SAME: cudaMemsetAsync=3
// STATS-SAME: cuMemsetD16Async=2
// STATS-SAME: cuMemsetD32Async=4
// STATS-SAME: cudaGetDriverEntryPointByVersion=2

// FAILED-MEMSET: memset.mlir:[[# @LINE + 39]]:3: error: cuMemsetD32Async failed (set device memory, 16 bytes): CUDA_ERROR_INVALID_VALUE: invalid argument
// NO-ENTRY-POINT: memset.mlir:[[# @LINE + 18]]:3: error: cudaGetDriverEntryPointByVersion failed (find cuMemsetD16Async): cudaErrorNotSupported: operation not supported

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @printMemrefF16(memref<*xf16>) attributes {llvm.emit_c_interface}
func.func private @printMemrefI8(memref<*xi8>) attributes {llvm.emit_c_interface}
func.func private @printMemrefI16(memref<*xi16>) attributes {llvm.emit_c_interface}
func.func private @printMemrefI32(memref<*xi32>) attributes {llvm.emit_c_interface}
func.func private @printMemrefI64(memref<*xi64>) attributes {llvm.emit_c_interface}
func.func private @printMemrefF64(memref<*xf64>) attributes {llvm.emit_c_interface}

func.func @main() {
  %n = arith.constant 4 : index

  // 16-bit: a constant f16 and a run-time i16.
  // CHECK: [-2.5, -2.5, -2.5, -2.5]
  // CHECK: [-1234, -1234, -1234, -1234]
  %f16 = memref.alloc() : memref<4xf16, #etcopy.device<cuda:0>>
  %c_f16 = arith.constant -2.5 : f16
  gpu.memset %f16, %c_f16 : memref<4xf16, #etcopy.device<cuda:0>>, f16
  %hf16 = memref.alloc() : memref<4xf16>
  etcopy.d2h %f16, %hf16 : memref<4xf16, #etcopy.device<cuda:0>> -> memref<4xf16>
  %pf16 = memref.cast %hf16 : memref<4xf16> to memref<*xf16>
  call @printMemrefF16(%pf16) : (memref<*xf16>) -> ()
  %i16 = memref.alloc() : memref<4xi16, #etcopy.device<cuda:0>>
  %v_i16 = arith.constant -1234 : i16
  %r_i16 = call @opaque_i16(%v_i16) : (i16) -> i16
  gpu.memset %i16, %r_i16 : memref<4xi16, #etcopy.device<cuda:0>>, i16
  %hi16 = memref.alloc() : memref<4xi16>
  etcopy.d2h %i16, %hi16 : memref<4xi16, #etcopy.device<cuda:0>> -> memref<4xi16>
  %pi16 = memref.cast %hi16 : memref<4xi16> to memref<*xi16>
  call @printMemrefI16(%pi16) : (memref<*xi16>) -> ()

  // 32-bit: a constant f32, a run-time f32 and a dynamic size.
  // CHECK: [3.5, 3.5, 3.5, 3.5]
  // CHECK: [-0.125, -0.125, -0.125, -0.125]
  // CHECK: [305419896, 305419896, 305419896, 305419896]
  %f32 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  %c_f32 = arith.constant 3.5 : f32
  gpu.memset %f32, %c_f32 : memref<4xf32, #etcopy.device<cuda:0>>, f32
  %hf32 = memref.alloc() : memref<4xf32>
  etcopy.d2h %f32, %hf32 : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  %pf32 = memref.cast %hf32 : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%pf32) : (memref<*xf32>) -> ()
  %v_f32 = arith.constant -0.125 : f32
  %r_f32 = call @opaque_f32(%v_f32) : (f32) -> f32
  gpu.memset %f32, %r_f32 : memref<4xf32, #etcopy.device<cuda:0>>, f32
  etcopy.d2h %f32, %hf32 : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  call @printMemrefF32(%pf32) : (memref<*xf32>) -> ()
  %i32 = memref.alloc(%n) : memref<?xi32, #etcopy.device<cuda:0>>
  %c_i32 = arith.constant 305419896 : i32
  gpu.memset %i32, %c_i32 : memref<?xi32, #etcopy.device<cuda:0>>, i32
  %hi32 = memref.alloc(%n) : memref<?xi32>
  etcopy.d2h %i32, %hi32 : memref<?xi32, #etcopy.device<cuda:0>> -> memref<?xi32>
  %pi32 = memref.cast %hi32 : memref<?xi32> to memref<*xi32>
  call @printMemrefI32(%pi32) : (memref<*xi32>) -> ()

  // 64-bit: two equal 32-bit halves.
  // CHECK: [4294967297, 4294967297, 4294967297, 4294967297]
  %i64 = memref.alloc() : memref<4xi64, #etcopy.device<cuda:0>>
  %c_i64 = arith.constant 4294967297 : i64
  gpu.memset %i64, %c_i64 : memref<4xi64, #etcopy.device<cuda:0>>, i64
  %hi64 = memref.alloc() : memref<4xi64>
  etcopy.d2h %i64, %hi64 : memref<4xi64, #etcopy.device<cuda:0>> -> memref<4xi64>
  %pi64 = memref.cast %hi64 : memref<4xi64> to memref<*xi64>
  call @printMemrefI64(%pi64) : (memref<*xi64>) -> ()

  // Byte patterns: a run-time i8 ('A'), an f64 zero and an i32 of one byte.
  // CHECK: [A, A, A, A]
  // CHECK: [0, 0, 0, 0]
  // CHECK: [-1, -1, -1, -1]
  %i8 = memref.alloc() : memref<4xi8, #etcopy.device<cuda:0>>
  %v_i8 = arith.constant 65 : i8
  %r_i8 = call @opaque_i8(%v_i8) : (i8) -> i8
  gpu.memset %i8, %r_i8 : memref<4xi8, #etcopy.device<cuda:0>>, i8
  %hi8 = memref.alloc() : memref<4xi8>
  etcopy.d2h %i8, %hi8 : memref<4xi8, #etcopy.device<cuda:0>> -> memref<4xi8>
  %pi8 = memref.cast %hi8 : memref<4xi8> to memref<*xi8>
  call @printMemrefI8(%pi8) : (memref<*xi8>) -> ()
  %f64 = memref.alloc() : memref<4xf64, #etcopy.device<cuda:0>>
  %c_f64 = arith.constant 0.0 : f64
  gpu.memset %f64, %c_f64 : memref<4xf64, #etcopy.device<cuda:0>>, f64
  %hf64 = memref.alloc() : memref<4xf64>
  etcopy.d2h %f64, %hf64 : memref<4xf64, #etcopy.device<cuda:0>> -> memref<4xf64>
  %pf64 = memref.cast %hf64 : memref<4xf64> to memref<*xf64>
  call @printMemrefF64(%pf64) : (memref<*xf64>) -> ()
  %ones = arith.constant -1 : i32
  gpu.memset %i32, %ones : memref<?xi32, #etcopy.device<cuda:0>>, i32
  etcopy.d2h %i32, %hi32 : memref<?xi32, #etcopy.device<cuda:0>> -> memref<?xi32>
  call @printMemrefI32(%pi32) : (memref<*xi32>) -> ()

  memref.dealloc %f16 : memref<4xf16, #etcopy.device<cuda:0>>
  memref.dealloc %i16 : memref<4xi16, #etcopy.device<cuda:0>>
  memref.dealloc %f32 : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %i32 : memref<?xi32, #etcopy.device<cuda:0>>
  memref.dealloc %i64 : memref<4xi64, #etcopy.device<cuda:0>>
  memref.dealloc %i8 : memref<4xi8, #etcopy.device<cuda:0>>
  memref.dealloc %f64 : memref<4xf64, #etcopy.device<cuda:0>>
  memref.dealloc %hf16 : memref<4xf16>
  memref.dealloc %hi16 : memref<4xi16>
  memref.dealloc %hf32 : memref<4xf32>
  memref.dealloc %hi32 : memref<?xi32>
  memref.dealloc %hi64 : memref<4xi64>
  memref.dealloc %hi8 : memref<4xi8>
  memref.dealloc %hf64 : memref<4xf64>
  return
}

// Values the compiler cannot see through: the memsets of their results are
// lowered with the value known only at run time.
func.func private @opaque_i8(%v: i8) -> i8 attributes {no_inline} {
  return %v : i8
}
func.func private @opaque_i16(%v: i16) -> i16 attributes {no_inline} {
  return %v : i16
}
func.func private @opaque_f32(%v: f32) -> f32 attributes {no_inline} {
  return %v : f32
}
