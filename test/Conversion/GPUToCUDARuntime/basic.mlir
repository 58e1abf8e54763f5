// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --split-input-file \
// RUN:   | FileCheck %s --implicit-check-not=gpu. --implicit-check-not=#etcopy

// Async forms, as convert-etcopy-to-gpu emits them: one stream for the
// function, created at entry and synchronised and destroyed at the return;
// tokens are the stream, so no per-op synchronisation.

// CHECK-LABEL: llvm.func @async_round_trip
// CHECK:      %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// CHECK:      llvm.call @cudaGetDevice
// CHECK:      %[[DEV0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK:      llvm.call @cudaSetDevice(%[[DEV0]])
// CHECK:      %[[NONBLOCKING:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK:      llvm.call @cudaStreamCreateWithFlags(%[[SLOT]], %[[NONBLOCKING]])
// CHECK:      %[[STREAM:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK:      %[[ERR:.*]] = llvm.call @cudaMallocAsync(%[[SLOT]], %[[BYTES:.*]], %[[STREAM]])
// CHECK:      llvm.call @__etcopy_cuda_check(%[[ERR]], %{{.*}}, %{{.*}}, %{{.*}}, %[[BYTES]])
// CHECK:      %[[H2D:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK:      llvm.call @cudaMemcpyAsync(%{{.*}}, %{{.*}}, %{{.*}}, %[[H2D]], %[[STREAM]])
// CHECK:      %[[D2H:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK:      llvm.call @cudaMemcpyAsync(%{{.*}}, %{{.*}}, %{{.*}}, %[[D2H]], %[[STREAM]])
// CHECK:      llvm.call @cudaFreeAsync(%{{.*}}, %[[STREAM]])
// The explicit gpu.wait, then the function's own teardown.
// CHECK:      llvm.call @cudaStreamSynchronize(%[[STREAM]])
// CHECK:      llvm.call @cudaStreamSynchronize(%[[STREAM]])
// CHECK-NEXT: llvm.mlir.constant
// CHECK:      llvm.call @cudaStreamDestroy(%[[STREAM]])
// CHECK:      llvm.call @cudaSetDevice
// CHECK:      llvm.return
func.func @async_round_trip(%h: memref<2x3xf32>, %out: memref<2x3xf32>) {
  %t0 = gpu.wait async
  %d, %t1 = gpu.alloc async [%t0] () : memref<2x3xf32, #etcopy.device<cuda:0>>
  %t2 = gpu.memcpy async [%t1] %d, %h : memref<2x3xf32, #etcopy.device<cuda:0>>, memref<2x3xf32>
  %t3 = gpu.memcpy async [%t2] %out, %d : memref<2x3xf32>, memref<2x3xf32, #etcopy.device<cuda:0>>
  %t4 = gpu.dealloc async [%t3] %d : memref<2x3xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t4]
  return
}

// The runtime support is emitted once: the weak error policy and the checker.
// CHECK-DAG: llvm.func weak @etcopy_cuda_error(
// CHECK-DAG: llvm.func linkonce_odr @__etcopy_cuda_check(
// CHECK-DAG: llvm.func @cudaMemcpyAsync(!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> i32
// The op's source location is what a failure reports.
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("{{.*}}basic.mlir:30:
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("host-to-device\00")

// -----

// Sync forms, as upstream passes produce them: each op completes before it
// returns, so each is followed by a stream synchronisation. Without an
// #etcopy.device there is no cudaSetDevice: the current device is used.

// CHECK-LABEL: llvm.func @sync_forms
// CHECK-NOT:  cudaSetDevice
// CHECK:      llvm.call @cudaStreamCreateWithFlags
// CHECK:      %[[STREAM:.*]] = llvm.load
// CHECK:      llvm.call @cudaMallocAsync(%{{.*}}, %{{.*}}, %[[STREAM]])
// CHECK:      llvm.call @cudaStreamSynchronize(%[[STREAM]])
// CHECK:      %[[DEFAULT:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK:      llvm.call @cudaMemcpyAsync(%{{.*}}, %{{.*}}, %{{.*}}, %[[DEFAULT]], %[[STREAM]])
// CHECK:      llvm.call @cudaStreamSynchronize(%[[STREAM]])
// CHECK:      llvm.call @cudaMemsetAsync(%{{.*}}, %{{.*}}, %{{.*}}, %[[STREAM]])
// CHECK:      llvm.call @cudaStreamSynchronize(%[[STREAM]])
// CHECK:      llvm.call @cudaFreeAsync(%{{.*}}, %[[STREAM]])
// CHECK:      llvm.call @cudaStreamSynchronize(%[[STREAM]])
// CHECK:      llvm.call @cudaStreamSynchronize(%[[STREAM]])
// CHECK:      llvm.call @cudaStreamDestroy(%[[STREAM]])
// CHECK-NOT:  cudaSetDevice
// CHECK:      llvm.return
func.func @sync_forms(%h: memref<16xi32>, %n: index) {
  %d = gpu.alloc (%n) : memref<?xi32>
  %sub = memref.subview %d[0] [16] [1] : memref<?xi32> to memref<16xi32, strided<[1]>>
  gpu.memcpy %sub, %h : memref<16xi32, strided<[1]>>, memref<16xi32>
  %zero = arith.constant 0 : i32
  gpu.memset %d, %zero : memref<?xi32>, i32
  gpu.dealloc %d : memref<?xi32>
  return
}

// -----

// host_shared allocations are managed memory; their free waits for the
// stream and is not stream-ordered.
// CHECK-LABEL: llvm.func @host_shared
// CHECK:      llvm.call @cudaMallocManaged(
// CHECK-NOT:  cudaStreamSynchronize
// CHECK:      %[[ONES:.*]] = llvm.mlir.constant(255 : i32) : i32
// CHECK-NEXT: llvm.call @cudaMemsetAsync(%{{.*}}, %[[ONES]],
// CHECK:      llvm.call @cudaStreamSynchronize
// CHECK:      llvm.call @cudaFree(
// CHECK:      llvm.return
func.func @host_shared() {
  %m = gpu.alloc host_shared () : memref<8xi32, #gpu.address_space<global>>
  %t = gpu.wait async
  %ones = arith.constant -1 : i32
  %t1 = gpu.memset async [%t] %m, %ones : memref<8xi32, #gpu.address_space<global>>, i32
  gpu.dealloc %m : memref<8xi32, #gpu.address_space<global>>
  return
}

// -----

// A zero-sized and a rank-0 copy are still one cudaMemcpyAsync each (the
// byte count is computed at run time, 0 for the empty one).
// CHECK-LABEL: llvm.func @rank0_and_empty
// CHECK-COUNT-2: llvm.call @cudaMemcpyAsync
// CHECK-NOT:     __etcopy_memcpy_strided
func.func @rank0_and_empty(%a: memref<f64>, %da: memref<f64, #etcopy.device<cuda:0>>,
                           %e: memref<0x5xi8>, %de: memref<0x5xi8, #etcopy.device<cuda:0>>) {
  gpu.memcpy %da, %a : memref<f64, #etcopy.device<cuda:0>>, memref<f64>
  gpu.memcpy %de, %e : memref<0x5xi8, #etcopy.device<cuda:0>>, memref<0x5xi8>
  return
}

// -----

// A function without gpu ops gets no stream.
// CHECK-LABEL: llvm.func @no_device_work
// CHECK-NOT:   cudaStreamCreateWithFlags
// CHECK:       llvm.return
func.func @no_device_work(%a: memref<4xf32>) {
  return
}
