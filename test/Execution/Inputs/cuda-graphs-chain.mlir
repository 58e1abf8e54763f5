// A chain of 3 stream-ordered delegates on cuda:0 with its input and output on the device
// (as utils/transfer-performance/generate.py graphs --layers 3 --activation-bytes 64 writes it).
func.func private @layer(memref<16xf32, #etcopy.device<cuda:0>>) -> memref<16xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered, llvm.emit_c_interface}

func.func @chain(%x: memref<16xf32, #etcopy.device<cuda:0>>, %out: memref<16xf32, #etcopy.device<cuda:0>>) attributes {llvm.emit_c_interface} {
  %y0 = func.call @layer(%x) : (memref<16xf32, #etcopy.device<cuda:0>>) -> memref<16xf32, #etcopy.device<cuda:0>>
  %y1 = func.call @layer(%y0) : (memref<16xf32, #etcopy.device<cuda:0>>) -> memref<16xf32, #etcopy.device<cuda:0>>
  memref.dealloc %y0 : memref<16xf32, #etcopy.device<cuda:0>>
  %y2 = func.call @layer(%y1) : (memref<16xf32, #etcopy.device<cuda:0>>) -> memref<16xf32, #etcopy.device<cuda:0>>
  memref.dealloc %y1 : memref<16xf32, #etcopy.device<cuda:0>>
  memref.copy %y2, %out : memref<16xf32, #etcopy.device<cuda:0>> to memref<16xf32, #etcopy.device<cuda:0>>
  memref.dealloc %y2 : memref<16xf32, #etcopy.device<cuda:0>>
  return
}
