// RUN: etcopy-opt %s -split-input-file -verify-diagnostics --convert-etcopy-to-gpu=memory-space=gpu

// An unknown memory-space is rejected while the options are parsed:
// test/Dialect/EtCopy/pass-options.test.

// #gpu.address_space<global> names no device: only cuda:0 maps onto it.

// expected-error @+1 {{'func.func' op uses 'memref<4xf32, #etcopy.device<cuda:1>>', whose memory space #etcopy.device<cuda:1> has no #gpu.address_space equivalent; memory-space=gpu supports cuda:0 only}}
func.func @second_device(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:1>>) {
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:1>>
  return
}

// -----

func.func @second_device_alloc() {
  // expected-error @+1 {{'gpu.alloc' op uses 'memref<4xf32, #etcopy.device<cuda:2>>', whose memory space #etcopy.device<cuda:2> has no #gpu.address_space equivalent; memory-space=gpu supports cuda:0 only}}
  %d = memref.alloc() : memref<4xf32, #etcopy.device<cuda:2>>
  memref.dealloc %d : memref<4xf32, #etcopy.device<cuda:2>>
  return
}

// -----

// memory-space=gpu drops the etcopy attributes that tell the CUDA lowering
// to pass the stream.
// expected-error @+1 {{'func.func' op is a stream-ordered delegate, which needs the etcopy attributes that memory-space=gpu drops; use memory-space=etcopy}}
func.func private @scale(memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered}
