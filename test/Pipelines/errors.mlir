// RUN: etcopy-opt %s --etcopy-to-cuda -split-input-file -verify-diagnostics
// RUN: etcopy-opt %s --etcopy-to-host -split-input-file -verify-diagnostics

// Tensor code whose buffers the pipeline must free, next to memref code that
// frees its own: the deallocation pipeline cannot handle both, so this is an
// error instead of a leak.
func.func @upload(%x: tensor<4xf32>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return %d : tensor<4xf32, #etcopy.device<cuda:0>>
}

func.func private @fill(memref<4xf32>)
func.func @scratch() {
  %m = memref.alloc() : memref<4xf32>
  call @fill(%m) : (memref<4xf32>) -> ()
  // expected-error @+1 {{cannot free the buffers bufferization creates for this module's tensors: the module also frees buffers itself, which the buffer deallocation pipeline does not support; free every buffer explicitly or none}}
  memref.dealloc %m : memref<4xf32>
  return
}

// -----

// An op no stage lowers is reported by name; the pipeline fails instead of
// handing mlir-translate IR it cannot translate.
func.func @leftover(%a: index) -> index {
  // expected-error @+1 {{'shape.index_to_size' was left unconverted by the pipeline}}
  %s = shape.index_to_size %a
  %t = shape.add %s, %s : !shape.size, !shape.size -> !shape.size
  %n = shape.size_to_index %t : !shape.size
  return %n : index
}

// -----

// Of an op with a region that no stage lowers, the op is named, not the ops
// of its body (the terminator 'async.yield' was named before).
func.func @leftover_region(%x: memref<8xf32>, %d: memref<8xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'async.execute' was left unconverted by the pipeline}}
  %t = async.execute {
    etcopy.h2d %x, %d : memref<8xf32> -> memref<8xf32, #etcopy.device<cuda:0>>
    async.yield
  }
  async.await %t : !async.token
  return
}

// -----

// A function is named when nothing else is left: here its signature, whose
// type no conversion lowers, while its body was lowered.
// expected-error @+1 {{'func.func' was left unconverted by the pipeline}}
func.func private @leftover_signature(%a: !shape.size) {
  return
}
