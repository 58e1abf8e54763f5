// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --split-input-file \
// RUN:   | FileCheck %s --implicit-check-not=gpu. \
// RUN:       --implicit-check-not='llvm.call @__etcopy_memcpy' \
// RUN:       --implicit-check-not='llvm.call @__etcopy_memset'

// gpu.memcpy and gpu.memset whose memrefs are static and empty move no
// byte: they make no call (CUDA rejects a batch that holds a copy of 0
// bytes, and the buffer of an empty memref may be null). In a chain, the
// token of such an op becomes its dependency, so the copies around it
// still form one batch; a cast that made a side dynamic folds first.

// CHECK-LABEL: llvm.func @empty_in_chain
// CHECK: llvm.call @__etcopy_get_stream
// CHECK: llvm.call @__etcopy_memcpy_batch
// CHECK: llvm.call @__etcopy_stream_synchronize
// CHECK: llvm.return
func.func @empty_in_chain(%h: memref<0x4xf32>, %a: memref<8xf32>, %b: memref<8xf32>) {
  %t0 = gpu.wait async
  %d, %ta = gpu.alloc async [%t0] () : memref<0x4xf32, #gpu.address_space<global>>
  %da, %tb = gpu.alloc async [%ta] () : memref<8xf32, #gpu.address_space<global>>
  %db, %tc = gpu.alloc async [%tb] () : memref<8xf32, #gpu.address_space<global>>
  %t1 = gpu.memcpy async [%tc] %da, %a : memref<8xf32, #gpu.address_space<global>>, memref<8xf32>
  %t2 = gpu.memcpy async [%t1] %d, %h : memref<0x4xf32, #gpu.address_space<global>>, memref<0x4xf32>
  %c = memref.cast %d : memref<0x4xf32, #gpu.address_space<global>> to memref<?x4xf32, #gpu.address_space<global>>
  %zero = arith.constant 0.0 : f32
  %t3 = gpu.memset async [%t2] %c, %zero : memref<?x4xf32, #gpu.address_space<global>>, f32
  %t4 = gpu.memcpy async [%t3] %db, %b : memref<8xf32, #gpu.address_space<global>>, memref<8xf32>
  %t5 = gpu.dealloc async [%t4] %d : memref<0x4xf32, #gpu.address_space<global>>
  %t6 = gpu.dealloc async [%t5] %da : memref<8xf32, #gpu.address_space<global>>
  %t7 = gpu.dealloc async [%t6] %db : memref<8xf32, #gpu.address_space<global>>
  gpu.wait [%t7]
  return
}

// -----

// Without a dependency, or with several, the token becomes a `gpu.wait
// async` of the dependencies (which lowers to nothing on one stream). The
// sync form has nothing to wait for.
// CHECK-LABEL: llvm.func @empty_joins
// CHECK: llvm.call @__etcopy_get_stream
// CHECK: llvm.call @__etcopy_memcpy(
// CHECK: llvm.call @__etcopy_stream_synchronize
// CHECK: llvm.return
func.func @empty_joins(%h: memref<0x4xf32>, %d: memref<0x4xf32, #gpu.address_space<global>>,
                       %a: memref<8xf32>, %da: memref<8xf32, #gpu.address_space<global>>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async %h, %d : memref<0x4xf32>, memref<0x4xf32, #gpu.address_space<global>>
  %t2 = gpu.memcpy async [%t0, %t1] %d, %h : memref<0x4xf32, #gpu.address_space<global>>, memref<0x4xf32>
  gpu.memcpy %h, %d : memref<0x4xf32>, memref<0x4xf32, #gpu.address_space<global>>
  %t3 = gpu.memcpy async [%t2] %da, %a : memref<8xf32, #gpu.address_space<global>>, memref<8xf32>
  gpu.wait [%t3]
  return
}

// -----

// Negative: an empty memref of dynamic shape is copied: its size is known
// at run time only (and the runtime support skips it then).
// CHECK-LABEL: llvm.func @dynamic_empty
// CHECK: llvm.call @__etcopy_memcpy_strided
func.func @dynamic_empty(%h: memref<?x4xf32>, %d: memref<?x4xf32, #gpu.address_space<global>>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d, %h : memref<?x4xf32, #gpu.address_space<global>>, memref<?x4xf32>
  gpu.wait [%t1]
  return
}
