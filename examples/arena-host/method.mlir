// The method that examples/arena-host runs: its buffers live on cuda:0, and
// it takes its input there too, as a method compiled with
// skip-h2d-for-method-inputs does. Built with
//   etcopy-opt method.mlir --etcopy-to-cuda=arena-ownership=caller \
//     | mlir-translate --mlir-to-llvmir
// the three device buffers become views of one caller-owned arena (a and c
// share their bytes: their lifetimes do not overlap), so @method takes it as
// a leading memref<512xi8> argument and exports @method_etcopy_arenas, and
// the signature @method_etcopy_signature tells the caller which arguments
// are device memory.
//
// @method(in, out): out = the halves of `in` swapped, then rotated left by
// one element, computed with copies on the device.
func.func @method(%in: memref<8xf32, #etcopy.device<cuda:0>>, %out: memref<8xf32>)
    attributes {llvm.emit_c_interface} {
  %a = memref.alloc() : memref<8xf32, #etcopy.device<cuda:0>>
  memref.copy %in, %a : memref<8xf32, #etcopy.device<cuda:0>> to memref<8xf32, #etcopy.device<cuda:0>>

  // b = a with its halves swapped.
  %b = memref.alloc() : memref<8xf32, #etcopy.device<cuda:0>>
  %a_lo = memref.subview %a[0] [4] [1] : memref<8xf32, #etcopy.device<cuda:0>> to memref<4xf32, strided<[1]>, #etcopy.device<cuda:0>>
  %a_hi = memref.subview %a[4] [4] [1] : memref<8xf32, #etcopy.device<cuda:0>> to memref<4xf32, strided<[1], offset: 4>, #etcopy.device<cuda:0>>
  %b_lo = memref.subview %b[0] [4] [1] : memref<8xf32, #etcopy.device<cuda:0>> to memref<4xf32, strided<[1]>, #etcopy.device<cuda:0>>
  %b_hi = memref.subview %b[4] [4] [1] : memref<8xf32, #etcopy.device<cuda:0>> to memref<4xf32, strided<[1], offset: 4>, #etcopy.device<cuda:0>>
  memref.copy %a_hi, %b_lo : memref<4xf32, strided<[1], offset: 4>, #etcopy.device<cuda:0>> to memref<4xf32, strided<[1]>, #etcopy.device<cuda:0>>
  memref.copy %a_lo, %b_hi : memref<4xf32, strided<[1]>, #etcopy.device<cuda:0>> to memref<4xf32, strided<[1], offset: 4>, #etcopy.device<cuda:0>>
  memref.dealloc %a : memref<8xf32, #etcopy.device<cuda:0>>

  // c = b rotated left by one element.
  %c = memref.alloc() : memref<8xf32, #etcopy.device<cuda:0>>
  %b_tail = memref.subview %b[1] [7] [1] : memref<8xf32, #etcopy.device<cuda:0>> to memref<7xf32, strided<[1], offset: 1>, #etcopy.device<cuda:0>>
  %b_head = memref.subview %b[0] [1] [1] : memref<8xf32, #etcopy.device<cuda:0>> to memref<1xf32, strided<[1]>, #etcopy.device<cuda:0>>
  %c_head = memref.subview %c[0] [7] [1] : memref<8xf32, #etcopy.device<cuda:0>> to memref<7xf32, strided<[1]>, #etcopy.device<cuda:0>>
  %c_tail = memref.subview %c[7] [1] [1] : memref<8xf32, #etcopy.device<cuda:0>> to memref<1xf32, strided<[1], offset: 7>, #etcopy.device<cuda:0>>
  memref.copy %b_tail, %c_head : memref<7xf32, strided<[1], offset: 1>, #etcopy.device<cuda:0>> to memref<7xf32, strided<[1]>, #etcopy.device<cuda:0>>
  memref.copy %b_head, %c_tail : memref<1xf32, strided<[1]>, #etcopy.device<cuda:0>> to memref<1xf32, strided<[1], offset: 7>, #etcopy.device<cuda:0>>
  memref.dealloc %b : memref<8xf32, #etcopy.device<cuda:0>>

  etcopy.d2h %c, %out : memref<8xf32, #etcopy.device<cuda:0>> -> memref<8xf32>
  memref.dealloc %c : memref<8xf32, #etcopy.device<cuda:0>>
  return
}
