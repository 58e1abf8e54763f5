// Every kind of layout the memref type system allows is copied element for
// element, the same as in the host reference lowering (memref.copy): a unit
// dimension whose stride is smaller than a row, a broadcast source (stride
// 0), negative strides, overlapping rows (a sliding window), device-to-device
// copies between interleaved views of one buffer, and destinations that
// overlap themselves (a broadcast and a sliding window: the last write
// wins).
// RUN: etcopy-opt %s --etcopy-to-cuda | %run_sim | FileCheck %s
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: %if cuda-gpu %{ etcopy-opt %s --etcopy-to-cuda | %run_gpu | FileCheck %s %}

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

memref.global "private" constant @values : memref<24xf32> =
    dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0,
           12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0,
           23.0]>

/// Copies `src` to the device and back into a fresh host buffer, and prints
/// it.
func.func @round_trip_3x4(%src: memref<3x4xf32, strided<[?, ?], offset: ?>>) {
  %d = memref.alloc() : memref<3x4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %src, %d : memref<3x4xf32, strided<[?, ?], offset: ?>> -> memref<3x4xf32, #etcopy.device<cuda:0>>
  %h = memref.alloc() : memref<3x4xf32>
  etcopy.d2h %d, %h : memref<3x4xf32, #etcopy.device<cuda:0>> -> memref<3x4xf32>
  %u = memref.cast %h : memref<3x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %d : memref<3x4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h : memref<3x4xf32>
  return
}

func.func @main() {
  %values = memref.get_global @values : memref<24xf32>

  // A 2x1x4 view with strides [8, 1, 1], as numpy or expand_shape and
  // transpose make it: the unit dimension's stride is not a row pitch.
  // CHECK: sizes = [2, 1, 4] strides = [4, 4, 1] data =
  // CHECK-NEXT: {{\[\[\[}}0, 1, 2, 3]],
  // CHECK-NEXT: {{\[\[}}8, 9, 10, 11]]]
  %unit = memref.reinterpret_cast %values to offset: [0], sizes: [2, 1, 4], strides: [8, 1, 1]
      : memref<24xf32> to memref<2x1x4xf32, strided<[8, 1, 1]>>
  %du = memref.alloc() : memref<2x1x4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %unit, %du : memref<2x1x4xf32, strided<[8, 1, 1]>> -> memref<2x1x4xf32, #etcopy.device<cuda:0>>
  %hu = memref.alloc() : memref<2x1x4xf32>
  etcopy.d2h %du, %hu : memref<2x1x4xf32, #etcopy.device<cuda:0>> -> memref<2x1x4xf32>
  %pu = memref.cast %hu : memref<2x1x4xf32> to memref<*xf32>
  call @printMemrefF32(%pu) : (memref<*xf32>) -> ()
  memref.dealloc %du : memref<2x1x4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %hu : memref<2x1x4xf32>

  // Broadcast: every row is elements 4 to 7.
  // CHECK: sizes = [3, 4] strides = [4, 1] data =
  // CHECK-NEXT: {{\[\[}}4, 5, 6, 7],
  // CHECK-NEXT: [4, 5, 6, 7],
  // CHECK-NEXT: [4, 5, 6, 7]]
  %broadcast = memref.reinterpret_cast %values to offset: [4], sizes: [3, 4], strides: [0, 1]
      : memref<24xf32> to memref<3x4xf32, strided<[?, ?], offset: ?>>
  call @round_trip_3x4(%broadcast) : (memref<3x4xf32, strided<[?, ?], offset: ?>>) -> ()

  // Negative strides: rows and columns reversed.
  // CHECK: sizes = [3, 4] strides = [4, 1] data =
  // CHECK-NEXT: {{\[\[}}23, 22, 21, 20],
  // CHECK-NEXT: [17, 16, 15, 14],
  // CHECK-NEXT: [11, 10, 9, 8]]
  %reversed = memref.reinterpret_cast %values to offset: [23], sizes: [3, 4], strides: [-6, -1]
      : memref<24xf32> to memref<3x4xf32, strided<[?, ?], offset: ?>>
  call @round_trip_3x4(%reversed) : (memref<3x4xf32, strided<[?, ?], offset: ?>>) -> ()

  // A sliding window: rows overlap, each starts one element later.
  // CHECK: sizes = [3, 4] strides = [4, 1] data =
  // CHECK-NEXT: {{\[\[}}0, 1, 2, 3],
  // CHECK-NEXT: [1, 2, 3, 4],
  // CHECK-NEXT: [2, 3, 4, 5]]
  %window = memref.reinterpret_cast %values to offset: [0], sizes: [3, 4], strides: [1, 1]
      : memref<24xf32> to memref<3x4xf32, strided<[?, ?], offset: ?>>
  call @round_trip_3x4(%window) : (memref<3x4xf32, strided<[?, ?], offset: ?>>) -> ()

  // On the device, the even columns of a 2x8 buffer are copied onto its odd
  // columns: the two views share no element, but the span of a single
  // pitched copy would overlap.
  // CHECK: sizes = [2, 8] strides = [8, 1] data =
  // CHECK-NEXT: {{\[\[}}0, 0, 2, 2, 4, 4, 6, 6],
  // CHECK-NEXT: [8, 8, 10, 10, 12, 12, 14, 14]]
  %grid = memref.reinterpret_cast %values to offset: [0], sizes: [2, 8], strides: [8, 1]
      : memref<24xf32> to memref<2x8xf32, strided<[8, 1]>>
  %dg = memref.alloc() : memref<2x8xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %grid, %dg : memref<2x8xf32, strided<[8, 1]>> -> memref<2x8xf32, #etcopy.device<cuda:0>>
  %even = memref.subview %dg[0, 0] [2, 4] [1, 2]
      : memref<2x8xf32, #etcopy.device<cuda:0>> to memref<2x4xf32, strided<[8, 2]>, #etcopy.device<cuda:0>>
  %odd = memref.subview %dg[0, 1] [2, 4] [1, 2]
      : memref<2x8xf32, #etcopy.device<cuda:0>> to memref<2x4xf32, strided<[8, 2], offset: 1>, #etcopy.device<cuda:0>>
  memref.copy %even, %odd : memref<2x4xf32, strided<[8, 2]>, #etcopy.device<cuda:0>> to memref<2x4xf32, strided<[8, 2], offset: 1>, #etcopy.device<cuda:0>>
  %hg = memref.alloc() : memref<2x8xf32>
  etcopy.d2h %dg, %hg : memref<2x8xf32, #etcopy.device<cuda:0>> -> memref<2x8xf32>
  %pg = memref.cast %hg : memref<2x8xf32> to memref<*xf32>
  call @printMemrefF32(%pg) : (memref<*xf32>) -> ()

  // Destinations that overlap themselves, on the host: the last write wins.
  // A broadcast destination keeps the last row of the device's 2x8 buffer;
  // a sliding window of stride 1 gets each element from the last row that
  // reaches it.
  // CHECK: sizes = [8] strides = [1] data =
  // CHECK-NEXT: [8, 8, 10, 10, 12, 12, 14, 14]
  // CHECK: sizes = [9] strides = [1] data =
  // CHECK-NEXT: [0, 8, 8, 10, 10, 12, 12, 14, 14]
  %row = memref.alloc() : memref<8xf32>
  %rows = memref.reinterpret_cast %row to offset: [0], sizes: [2, 8], strides: [0, 1]
      : memref<8xf32> to memref<2x8xf32, strided<[0, 1]>>
  etcopy.d2h %dg, %rows : memref<2x8xf32, #etcopy.device<cuda:0>> -> memref<2x8xf32, strided<[0, 1]>>
  %pr = memref.cast %row : memref<8xf32> to memref<*xf32>
  call @printMemrefF32(%pr) : (memref<*xf32>) -> ()
  %line = memref.alloc() : memref<9xf32>
  %windows = memref.reinterpret_cast %line to offset: [0], sizes: [2, 8], strides: [1, 1]
      : memref<9xf32> to memref<2x8xf32, strided<[1, 1]>>
  etcopy.d2h %dg, %windows : memref<2x8xf32, #etcopy.device<cuda:0>> -> memref<2x8xf32, strided<[1, 1]>>
  %pl = memref.cast %line : memref<9xf32> to memref<*xf32>
  call @printMemrefF32(%pl) : (memref<*xf32>) -> ()

  memref.dealloc %dg : memref<2x8xf32, #etcopy.device<cuda:0>>
  memref.dealloc %hg : memref<2x8xf32>
  memref.dealloc %row : memref<8xf32>
  memref.dealloc %line : memref<9xf32>
  return
}
