// Memref-level input: a device buffer that only copies use, planned into an
// arena by default.
func.func @staged(%x: memref<16xf32>, %y: memref<16xf32>) {
  %d = memref.alloc() : memref<16xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %x, %d : memref<16xf32> -> memref<16xf32, #etcopy.device<cuda:0>>
  etcopy.d2h %d, %y : memref<16xf32, #etcopy.device<cuda:0>> -> memref<16xf32>
  memref.dealloc %d : memref<16xf32, #etcopy.device<cuda:0>>
  return
}
