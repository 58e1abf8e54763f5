// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime -split-input-file -verify-diagnostics --allow-unregistered-dialect

// Everything convert-gpu-to-cuda-runtime cannot lower is a compile-time
// error naming the op and the types, never a silent leftover.

module attributes {gpu.container_module} {
  func.func @launch(%arg0: index) {
    // expected-error @+1 {{cannot launch @kernels::@k: its gpu.module is not compiled; run gpu-module-to-binary (as --etcopy-to-cuda does) before convert-gpu-to-cuda-runtime}}
    gpu.launch_func @kernels::@k blocks in (%arg0, %arg0, %arg0) threads in (%arg0, %arg0, %arg0)
    return
  }
  gpu.module @kernels {
    gpu.func @k() kernel { gpu.return }
  }
}

// -----

// A 64-bit pattern is set with cuMemsetD32Async only when its halves are
// equal; this one (1.5) is not.
func.func @memset_64_bit_pattern(%d: memref<4xf64, #etcopy.device<cuda:0>>) {
  %value = arith.constant 1.5 : f64
  // expected-error @+1 {{cannot lower 'gpu.memset' of 'memref<4xf64, #etcopy.device<cuda:0>>': the 64-bit pattern 0x3FF8000000000000, whose 32-bit halves differ (the driver sets at most 32-bit patterns); supported are patterns of 8, 16 and 32 bits, and constant 64-bit patterns made of one repeated byte or of two equal 32-bit halves}}
  gpu.memset %d, %value : memref<4xf64, #etcopy.device<cuda:0>>, f64
  return
}

// -----

func.func @memset_64_bit_value(%d: memref<4xi64, #etcopy.device<cuda:0>>, %v: i64) {
  // expected-error @+1 {{cannot lower 'gpu.memset' of 'memref<4xi64, #etcopy.device<cuda:0>>': a 64-bit value that is not a constant (the driver sets at most 32-bit patterns)}}
  gpu.memset %d, %v : memref<4xi64, #etcopy.device<cuda:0>>, i64
  return
}

// -----

func.func @memset_strided(%d: memref<4xi8, strided<[2]>, #etcopy.device<cuda:0>>) {
  %zero = arith.constant 0 : i8
  // expected-error @+1 {{cannot lower 'gpu.memset' of non-contiguous 'memref<4xi8, strided<[2]>, #etcopy.device<cuda:0>>'}}
  gpu.memset %d, %zero : memref<4xi8, strided<[2]>, #etcopy.device<cuda:0>>, i8
  return
}

// -----

func.func @alloc_on_host() {
  // expected-error @+1 {{'gpu.alloc' allocates device memory but its type 'memref<4xf32, #etcopy.device<cpu>>' is placed on the host}}
  %m = gpu.alloc () : memref<4xf32, #etcopy.device<cpu>>
  return
}

// -----

func.func @foreign_memory_space(%h: memref<4xf32>, %d: memref<4xf32, "hbm">) {
  // expected-error @+1 {{cannot lower memory space "hbm" of 'memref<4xf32, "hbm">'; supported: #etcopy.device<...>, #gpu.address_space<...> and integer memory spaces}}
  gpu.memcpy %d, %h : memref<4xf32, "hbm">, memref<4xf32>
  return
}

// -----

func.func @token_through_yield(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t0 = gpu.wait async
  // expected-error @+1 {{cannot lower a !gpu.async.token passed to 'scf.for'; tokens may only be used by gpu.alloc, gpu.dealloc, gpu.memcpy, gpu.memset, gpu.wait and gpu.launch_func in the same function}}
  %t = scf.for %i = %c0 to %n step %c1 iter_args(%tok = %t0) -> !gpu.async.token {
    // expected-error @+1 {{cannot lower a !gpu.async.token passed to 'scf.yield'}}
    scf.yield %tok : !gpu.async.token
  }
  // expected-error @+1 {{cannot lower a !gpu.async.token that does not come from gpu.alloc, gpu.dealloc, gpu.memcpy, gpu.memset, gpu.wait or gpu.launch_func in the same function}}
  gpu.wait [%t]
  return
}

// -----

llvm.func @outside_func() {
  // expected-error @+1 {{'gpu.wait' must be inside a func.func to be lowered}}
  gpu.wait
  llvm.return
}

// -----

// A declaration of a CUDA function with another signature is reported.
// expected-error @+1 {{'cudaMemcpyAsync' is declared with a type that differs from the CUDA Runtime API's: expected '!llvm.func<i32 (ptr, ptr, i64, i32, ptr)>', got '!llvm.func<void (ptr)>'}}
llvm.func @cudaMemcpyAsync(!llvm.ptr)
func.func @clash(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  gpu.memcpy %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  return
}

// -----

// Upstream's LLVM lowering cannot handle unranked memrefs in a non-integer
// memory space; rejected with a diagnostic instead of a crash.
func.func @unranked_device(%m: memref<*xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{cannot lower the unranked memref 'memref<*xf32, #etcopy.device<cuda:0>>' of 'memref.dealloc': its memory space is not an integer; cast it to a ranked memref first}}
  memref.dealloc %m : memref<*xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// A token from elsewhere (here a call) has no stream of this function.
func.func private @token() -> !gpu.async.token
func.func @token_from_call(%h: memref<4xf32>) {
  %t = func.call @token() : () -> !gpu.async.token
  // expected-error @+1 {{cannot lower a !gpu.async.token that does not come from gpu.alloc, gpu.dealloc, gpu.memcpy, gpu.memset, gpu.wait or gpu.launch_func in the same function}}
  %d, %t1 = gpu.alloc async [%t] () : memref<4xf32, #etcopy.device<cuda:1>>
  gpu.wait [%t1]
  gpu.dealloc %d : memref<4xf32, #etcopy.device<cuda:1>>
  return
}

// -----

// A symbol named like a CUDA Runtime function that is something else.
// expected-error @+1 {{'cudaStreamSynchronize' is defined by 'func.func', but the CUDA lowering needs it to be 'llvm.func'}}
func.func private @cudaStreamSynchronize(i64) -> i32
func.func @symbol_clash(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  gpu.memcpy %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  return
}

// -----

// Device memory cannot be a global: it would be compiled as host memory.
// expected-error @+1 {{cannot lower 'memref.global' @weights of 'memref<4xf32, #etcopy.device<cuda:0>>': device memory cannot be a global; allocate it and copy the data with etcopy.h2d}}
memref.global "private" @weights : memref<4xf32, #etcopy.device<cuda:0>> = dense<1.0>

// -----

// A stream-ordered delegate gets the stream of the calling func.func.
func.func private @scale(memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered}
llvm.func @stream_ordered_outside_func() {
  %d = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  // expected-error @+1 {{cannot pass a stream to the stream-ordered delegate @scale on #etcopy.device<cuda:0> from outside a func.func}}
  func.call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  llvm.return
}

// -----

// A static size whose bytes do not fit in 64 bits would wrap around to a
// small allocation: device, host and stack buffers are rejected. The
// largest size that fits is lowered.
func.func @too_large() {
  // expected-error @+1 {{cannot allocate 'memref<4611686018427387904xf32, #etcopy.device<cuda:0>>': its size in bytes does not fit in 64 bits}}
  %d = gpu.alloc () : memref<4611686018427387904xf32, #etcopy.device<cuda:0>>
  // expected-error @+1 {{cannot allocate 'memref<2305843009213693952x4xf32>': its size in bytes does not fit in 64 bits}}
  %h = memref.alloc() : memref<2305843009213693952x4xf32>
  // expected-error @+1 {{cannot allocate 'memref<1152921504606846976xi64>': its size in bytes does not fit in 64 bits}}
  %s = memref.alloca() : memref<1152921504606846976xi64>
  %fits = memref.alloc() : memref<1152921504606846975xi64>
  return
}

// -----

// An op the conversion knows nothing about (here of an unregistered
// dialect, at the top level of a function and nested in another op's
// region) keeps its device-placed operand: an error names it and the type,
// on host memrefs it is left to later passes as upstream does.
func.func @unknown_user(%h: memref<4xf32>) {
  %d = gpu.alloc () : memref<4xf32, #etcopy.device<cuda:0>>
  gpu.memcpy %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  // expected-error @+1 {{'test.use' was left with type 'memref<4xf32, #etcopy.device<cuda:0>>' that convert-gpu-to-cuda-runtime could not lower}}
  "test.use"(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  "test.region"() ({
    // expected-error @+1 {{'test.nested' was left with type 'memref<4xf32, #etcopy.device<cuda:0>>' that convert-gpu-to-cuda-runtime could not lower}}
    "test.nested"(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
    "test.terminator"() : () -> ()
  }) : () -> ()
  "test.host_use"(%h) : (memref<4xf32>) -> ()
  return
}

// -----

// So does an unknown op that produces a device memref a copy uses.
func.func @unknown_producer(%h: memref<4xf32>) {
  // expected-error @+1 {{'test.make' was left with type 'memref<4xf32, #etcopy.device<cuda:0>>' that convert-gpu-to-cuda-runtime could not lower}}
  %d = "test.make"() : () -> memref<4xf32, #etcopy.device<cuda:0>>
  gpu.memcpy %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  return
}

// -----

// The runtime support and the globals of locations go in the module the
// pass runs on: code in a module nested in it could not refer to them (the
// pass once left its addresses pointing at the outer module's globals, IR
// that does not verify). An empty nested module is left alone.
module {
  // expected-error @+1 {{cannot lower a nested 'builtin.module': the runtime support and its globals go in the top-level module; run the pass on the nested module instead, e.g. -p 'builtin.module(builtin.module(convert-gpu-to-cuda-runtime))'}}
  module {
    func.func @nested(%h: memref<8xf32>, %d: memref<8xf32, #etcopy.device<cuda:0>>) {
      gpu.memcpy %d, %h : memref<8xf32, #etcopy.device<cuda:0>>, memref<8xf32>
      return
    }
  }
  module {
  }
}
