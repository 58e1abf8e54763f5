// Every element type goes host -> device -> host unchanged: on the simulator,
// with the host reference lowering (same output), and on a GPU when present.
// RUN: etcopy-opt %s --etcopy-to-cuda | %run_sim | FileCheck %s
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: %if cuda-gpu %{ etcopy-opt %s --etcopy-to-cuda | %run_gpu | FileCheck %s %}

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @printMemrefF64(memref<*xf64>) attributes {llvm.emit_c_interface}
func.func private @printMemrefF16(memref<*xf16>) attributes {llvm.emit_c_interface}
func.func private @printMemrefBF16(memref<*xbf16>) attributes {llvm.emit_c_interface}
func.func private @printMemrefI32(memref<*xi32>) attributes {llvm.emit_c_interface}
func.func private @printMemrefI64(memref<*xi64>) attributes {llvm.emit_c_interface}

memref.global "private" constant @f32 : memref<2x3xf32> = dense<[[1.5, -2.0, 3.25], [4.0, 5.5, -6.75]]>
memref.global "private" constant @f64 : memref<3xf64> = dense<[1.0e+100, -2.5, 0.125]>
memref.global "private" constant @f16 : memref<4xf16> = dense<[1.0, -0.5, 65504.0, 0.25]>
memref.global "private" constant @bf16 : memref<2xbf16> = dense<[3.0, -1.0e+30]>
memref.global "private" constant @i1 : memref<5xi1> = dense<[true, false, true, true, false]>
memref.global "private" constant @i8 : memref<4xi8> = dense<[-128, 127, 0, 7]>
memref.global "private" constant @i32 : memref<2x2xi32> = dense<[[2147483647, -1], [0, 42]]>
memref.global "private" constant @i64 : memref<2xi64> = dense<[9223372036854775807, -9223372036854775808]>

func.func @main() {
  // CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
  // CHECK-NEXT: {{\[\[}}1.5, -2, 3.25],
  // CHECK-NEXT: [4, 5.5, -6.75]]
  %f32 = memref.get_global @f32 : memref<2x3xf32>
  %f32d = memref.alloc() : memref<2x3xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %f32, %f32d : memref<2x3xf32> -> memref<2x3xf32, #etcopy.device<cuda:0>>
  %f32h = memref.alloc() : memref<2x3xf32>
  etcopy.d2h %f32d, %f32h : memref<2x3xf32, #etcopy.device<cuda:0>> -> memref<2x3xf32>
  %f32u = memref.cast %f32h : memref<2x3xf32> to memref<*xf32>
  call @printMemrefF32(%f32u) : (memref<*xf32>) -> ()
  memref.dealloc %f32d : memref<2x3xf32, #etcopy.device<cuda:0>>
  memref.dealloc %f32h : memref<2x3xf32>

  // CHECK: rank = 1 offset = 0 sizes = [3] strides = [1] data =
  // CHECK-NEXT: [1e+100, -2.5, 0.125]
  %f64 = memref.get_global @f64 : memref<3xf64>
  %f64d = memref.alloc() : memref<3xf64, #etcopy.device<cuda:0>>
  etcopy.h2d %f64, %f64d : memref<3xf64> -> memref<3xf64, #etcopy.device<cuda:0>>
  %f64h = memref.alloc() : memref<3xf64>
  etcopy.d2h %f64d, %f64h : memref<3xf64, #etcopy.device<cuda:0>> -> memref<3xf64>
  %f64u = memref.cast %f64h : memref<3xf64> to memref<*xf64>
  call @printMemrefF64(%f64u) : (memref<*xf64>) -> ()
  memref.dealloc %f64d : memref<3xf64, #etcopy.device<cuda:0>>
  memref.dealloc %f64h : memref<3xf64>

  // CHECK: rank = 1 offset = 0 sizes = [4] strides = [1] data =
  // CHECK-NEXT: [1, -0.5, 65504, 0.25]
  %f16 = memref.get_global @f16 : memref<4xf16>
  %f16d = memref.alloc() : memref<4xf16, #etcopy.device<cuda:0>>
  etcopy.h2d %f16, %f16d : memref<4xf16> -> memref<4xf16, #etcopy.device<cuda:0>>
  %f16h = memref.alloc() : memref<4xf16>
  etcopy.d2h %f16d, %f16h : memref<4xf16, #etcopy.device<cuda:0>> -> memref<4xf16>
  %f16u = memref.cast %f16h : memref<4xf16> to memref<*xf16>
  call @printMemrefF16(%f16u) : (memref<*xf16>) -> ()
  memref.dealloc %f16d : memref<4xf16, #etcopy.device<cuda:0>>
  memref.dealloc %f16h : memref<4xf16>

  // CHECK: rank = 1 offset = 0 sizes = [2] strides = [1] data =
  // CHECK-NEXT: [3, -1.00{{[0-9]*}}e+30]
  %bf16 = memref.get_global @bf16 : memref<2xbf16>
  %bf16d = memref.alloc() : memref<2xbf16, #etcopy.device<cuda:0>>
  etcopy.h2d %bf16, %bf16d : memref<2xbf16> -> memref<2xbf16, #etcopy.device<cuda:0>>
  %bf16h = memref.alloc() : memref<2xbf16>
  etcopy.d2h %bf16d, %bf16h : memref<2xbf16, #etcopy.device<cuda:0>> -> memref<2xbf16>
  %bf16u = memref.cast %bf16h : memref<2xbf16> to memref<*xbf16>
  call @printMemrefBF16(%bf16u) : (memref<*xbf16>) -> ()
  memref.dealloc %bf16d : memref<2xbf16, #etcopy.device<cuda:0>>
  memref.dealloc %bf16h : memref<2xbf16>

  // i1 has no printer (and printMemrefI8 prints characters): widen on the
  // host after the copy back; the host loads what the d2h wrote, so the
  // lowering must wait for it first.
  // CHECK: rank = 1 offset = 0 sizes = [5] strides = [1] data =
  // CHECK-NEXT: [1, 0, 1, 1, 0]
  %i1 = memref.get_global @i1 : memref<5xi1>
  %i1d = memref.alloc() : memref<5xi1, #etcopy.device<cuda:0>>
  etcopy.h2d %i1, %i1d : memref<5xi1> -> memref<5xi1, #etcopy.device<cuda:0>>
  %i1h = memref.alloc() : memref<5xi1>
  etcopy.d2h %i1d, %i1h : memref<5xi1, #etcopy.device<cuda:0>> -> memref<5xi1>
  %wide = memref.alloc() : memref<5xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c5 step %c1 {
    %bit = memref.load %i1h[%i] : memref<5xi1>
    %word = arith.extui %bit : i1 to i32
    memref.store %word, %wide[%i] : memref<5xi32>
  }
  %wideu = memref.cast %wide : memref<5xi32> to memref<*xi32>
  call @printMemrefI32(%wideu) : (memref<*xi32>) -> ()
  memref.dealloc %i1d : memref<5xi1, #etcopy.device<cuda:0>>
  memref.dealloc %i1h : memref<5xi1>
  memref.dealloc %wide : memref<5xi32>

  // CHECK: rank = 1 offset = 0 sizes = [4] strides = [1] data =
  // CHECK-NEXT: [-128, 127, 0, 7]
  %i8 = memref.get_global @i8 : memref<4xi8>
  %i8d = memref.alloc() : memref<4xi8, #etcopy.device<cuda:0>>
  etcopy.h2d %i8, %i8d : memref<4xi8> -> memref<4xi8, #etcopy.device<cuda:0>>
  %i8h = memref.alloc() : memref<4xi8>
  etcopy.d2h %i8d, %i8h : memref<4xi8, #etcopy.device<cuda:0>> -> memref<4xi8>
  %i8w = memref.alloc() : memref<4xi32>
  scf.for %i = %c0 to %c4 step %c1 {
    %byte = memref.load %i8h[%i] : memref<4xi8>
    %word = arith.extsi %byte : i8 to i32
    memref.store %word, %i8w[%i] : memref<4xi32>
  }
  %i8u = memref.cast %i8w : memref<4xi32> to memref<*xi32>
  call @printMemrefI32(%i8u) : (memref<*xi32>) -> ()
  memref.dealloc %i8w : memref<4xi32>
  memref.dealloc %i8d : memref<4xi8, #etcopy.device<cuda:0>>
  memref.dealloc %i8h : memref<4xi8>

  // CHECK: rank = 2 offset = 0 sizes = [2, 2] strides = [2, 1] data =
  // CHECK-NEXT: {{\[\[}}2147483647, -1],
  // CHECK-NEXT: [0, 42]]
  %i32 = memref.get_global @i32 : memref<2x2xi32>
  %i32d = memref.alloc() : memref<2x2xi32, #etcopy.device<cuda:0>>
  etcopy.h2d %i32, %i32d : memref<2x2xi32> -> memref<2x2xi32, #etcopy.device<cuda:0>>
  %i32h = memref.alloc() : memref<2x2xi32>
  etcopy.d2h %i32d, %i32h : memref<2x2xi32, #etcopy.device<cuda:0>> -> memref<2x2xi32>
  %i32u = memref.cast %i32h : memref<2x2xi32> to memref<*xi32>
  call @printMemrefI32(%i32u) : (memref<*xi32>) -> ()
  memref.dealloc %i32d : memref<2x2xi32, #etcopy.device<cuda:0>>
  memref.dealloc %i32h : memref<2x2xi32>

  // CHECK: rank = 1 offset = 0 sizes = [2] strides = [1] data =
  // CHECK-NEXT: [9223372036854775807, -9223372036854775808]
  %i64 = memref.get_global @i64 : memref<2xi64>
  %i64d = memref.alloc() : memref<2xi64, #etcopy.device<cuda:0>>
  etcopy.h2d %i64, %i64d : memref<2xi64> -> memref<2xi64, #etcopy.device<cuda:0>>
  %i64h = memref.alloc() : memref<2xi64>
  etcopy.d2h %i64d, %i64h : memref<2xi64, #etcopy.device<cuda:0>> -> memref<2xi64>
  %i64u = memref.cast %i64h : memref<2xi64> to memref<*xi64>
  call @printMemrefI64(%i64u) : (memref<*xi64>) -> ()
  memref.dealloc %i64d : memref<2xi64, #etcopy.device<cuda:0>>
  memref.dealloc %i64h : memref<2xi64>
  return
}
