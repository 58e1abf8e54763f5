// Dynamic sizes are only known at run time: a copy between buffers whose
// sizes differ is reported with the op's location before any byte moves,
// instead of overrunning the smaller one (which a GPU would not report for
// pageable host memory).
// RUN: etcopy-opt %s --etcopy-to-cuda | not %run_sim 2>&1 | FileCheck %s

// CHECK: size-mismatch.mlir:[[# @LINE + 13]]:3: error: device-to-host: size mismatch in dimension 0: source has 4 elements, destination 2
// CHECK-NOT: data =

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

memref.global "private" constant @data : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// Copies %h through the device into %out; the caller got the sizes wrong.
func.func @through_device(%h: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %h, %c0 : memref<?xf32>
  %d = memref.alloc(%n) : memref<?xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h, %d : memref<?xf32> -> memref<?xf32, #etcopy.device<cuda:0>>
  etcopy.d2h %d, %out : memref<?xf32, #etcopy.device<cuda:0>> -> memref<?xf32>
  memref.dealloc %d : memref<?xf32, #etcopy.device<cuda:0>>
  return
}

func.func @main() {
  %data = memref.get_global @data : memref<4xf32>
  %h = memref.cast %data : memref<4xf32> to memref<?xf32>
  %small = memref.alloc() : memref<2xf32>
  %out = memref.cast %small : memref<2xf32> to memref<?xf32>
  call @through_device(%h, %out) : (memref<?xf32>, memref<?xf32>) -> ()
  %u = memref.cast %small : memref<2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %small : memref<2xf32>
  return
}
