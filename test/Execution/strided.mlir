// Strided and offset memrefs (subviews) on either side are copied element
// for element, never as if contiguous: host-side and device-side subviews,
// pitched rows and an inner stride.
// RUN: etcopy-opt %s --etcopy-to-cuda | %run_sim | FileCheck %s
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: %if cuda-gpu %{ etcopy-opt %s --etcopy-to-cuda | %run_gpu | FileCheck %s %}

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

memref.global "private" constant @grid : memref<4x5xf32> =
    dense<[[ 0.0,  1.0,  2.0,  3.0,  4.0],
           [10.0, 11.0, 12.0, 13.0, 14.0],
           [20.0, 21.0, 22.0, 23.0, 24.0],
           [30.0, 31.0, 32.0, 33.0, 34.0]]>

memref.global "private" constant @zeros : memref<3x4xf32> = dense<0.0>

func.func @main() {
  %grid = memref.get_global @grid : memref<4x5xf32>

  // Host subview (rows 1-2, columns 2-4) to a contiguous device buffer:
  // pitched rows.
  // CHECK: sizes = [2, 3] strides = [3, 1] data =
  // CHECK-NEXT: {{\[\[}}12, 13, 14],
  // CHECK-NEXT: [22, 23, 24]]
  %block = memref.subview %grid[1, 2] [2, 3] [1, 1]
      : memref<4x5xf32> to memref<2x3xf32, strided<[5, 1], offset: 7>>
  %d = memref.alloc() : memref<2x3xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %block, %d : memref<2x3xf32, strided<[5, 1], offset: 7>> -> memref<2x3xf32, #etcopy.device<cuda:0>>
  %h = memref.alloc() : memref<2x3xf32>
  etcopy.d2h %d, %h : memref<2x3xf32, #etcopy.device<cuda:0>> -> memref<2x3xf32>
  %hu = memref.cast %h : memref<2x3xf32> to memref<*xf32>
  call @printMemrefF32(%hu) : (memref<*xf32>) -> ()

  // The whole grid on the device; a device-side subview with an inner
  // stride (every other column of rows 0 and 3) back to the host.
  // CHECK: sizes = [2, 3] strides = [3, 1] data =
  // CHECK-NEXT: {{\[\[}}0, 2, 4],
  // CHECK-NEXT: [30, 32, 34]]
  %all = memref.alloc() : memref<4x5xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %grid, %all : memref<4x5xf32> -> memref<4x5xf32, #etcopy.device<cuda:0>>
  %corners = memref.subview %all[0, 0] [2, 3] [3, 2]
      : memref<4x5xf32, #etcopy.device<cuda:0>> to memref<2x3xf32, strided<[15, 2]>, #etcopy.device<cuda:0>>
  etcopy.d2h %corners, %h : memref<2x3xf32, strided<[15, 2]>, #etcopy.device<cuda:0>> -> memref<2x3xf32>
  call @printMemrefF32(%hu) : (memref<*xf32>) -> ()

  // Into a strided host destination: column 1 of a zeroed 3x4 host buffer
  // receives a device column.
  // CHECK: sizes = [3, 4] strides = [4, 1] data =
  // CHECK-NEXT: {{\[\[}}0, 1, 0, 0],
  // CHECK-NEXT: [0, 11, 0, 0],
  // CHECK-NEXT: [0, 21, 0, 0]]
  %zeros = memref.get_global @zeros : memref<3x4xf32>
  %target = memref.alloc() : memref<3x4xf32>
  memref.copy %zeros, %target : memref<3x4xf32> to memref<3x4xf32>
  %column = memref.subview %all[0, 1] [3, 1] [1, 1]
      : memref<4x5xf32, #etcopy.device<cuda:0>> to memref<3x1xf32, strided<[5, 1], offset: 1>, #etcopy.device<cuda:0>>
  %slot = memref.subview %target[0, 1] [3, 1] [1, 1]
      : memref<3x4xf32> to memref<3x1xf32, strided<[4, 1], offset: 1>>
  etcopy.d2h %column, %slot : memref<3x1xf32, strided<[5, 1], offset: 1>, #etcopy.device<cuda:0>> -> memref<3x1xf32, strided<[4, 1], offset: 1>>
  %tu = memref.cast %target : memref<3x4xf32> to memref<*xf32>
  call @printMemrefF32(%tu) : (memref<*xf32>) -> ()

  memref.dealloc %d : memref<2x3xf32, #etcopy.device<cuda:0>>
  memref.dealloc %all : memref<4x5xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h : memref<2x3xf32>
  memref.dealloc %target : memref<3x4xf32>
  return
}
