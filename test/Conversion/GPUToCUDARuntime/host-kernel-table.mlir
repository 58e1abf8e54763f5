// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime \
// RUN:   | FileCheck %s --implicit-check-not=gpu.binary

// With host versions of its kernels (etcopy-outline-host-kernels), a
// gpu.binary still becomes an image holding exactly its object: the table
// of host kernels is a global of its own, beside the image, which the
// kernel look-up passes to the runtime support for the CUDA simulator
// (lib/Runtime/CudaSim/CudaSimKernels.h). CUDA never sees it.

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "//\0A.version 8.0\0A.entry scale">]

  // CHECK-LABEL: llvm.func @launch(
  // CHECK-DAG: %[[LIB:.*]] = llvm.mlir.addressof @__etcopy_library_kernels
  // CHECK-DAG: %[[IMAGE:.*]] = llvm.mlir.addressof @__etcopy_kernels_kernels
  // CHECK-DAG: %[[TABLE:.*]] = llvm.mlir.addressof @__etcopy_host_kernels_kernels
  // CHECK-DAG: %[[CELL:.*]] = llvm.mlir.addressof @__etcopy_kernel_kernels_scale
  // CHECK: llvm.call @__etcopy_get_kernel(%[[LIB]], %[[IMAGE]], %[[TABLE]], %[[CELL]],
  // CHECK: llvm.call @__etcopy_launch_kernel(
  func.func @launch(%a: memref<8xf32>, %s: f32) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%a : memref<8xf32>, %s : f32)
    return
  }

  func.func private @__etcopy_host_kernel.kernels.scale(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %nx: index, %ny: index, %nz: index, %gx: index, %gy: index, %gz: index, %y: memref<8xf32>, %s: f32) attributes {etcopy.host_kernel = ["kernels", "scale"]} {
    %v = memref.load %y[%tx] : memref<8xf32>
    %w = arith.mulf %v, %s : f32
    memref.store %w, %y[%tx] : memref<8xf32>
    return
  }
  func.func private @__etcopy_host_kernel.kernels.sync(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %nx: index, %ny: index, %nz: index, %gx: index, %gy: index, %gz: index, %x: memref<4xf32>) attributes {etcopy.host_kernel = ["kernels", "sync"], etcopy.host_kernel_unsupported = "it uses gpu.barrier"} {
    return
  }
}

// The image is the PTX and its NUL, nothing after it.
// CHECK-DAG: llvm.mlir.global private constant @__etcopy_kernels_kernels("//\0A.version 8.0\0A.entry scale\00") {addr_space = 0 : i32, alignment = 8 : i64}{{$}}
// The table: the magic, the count, then per kernel its name, the kinds of
// its parameters (the memref descriptor's pointers and i64s, the f32), its
// entry and why it has none.
// CHECK-DAG: llvm.mlir.global private constant @__etcopy_host_kernels_kernels() {addr_space = 0 : i32, alignment = 8 : i64} : !llvm.struct<(array<8 x i8>, i64, array<2 x struct<(ptr, ptr, ptr, ptr)>>)> {
// CHECK-DAG: llvm.mlir.constant("ETCHOSTK") : !llvm.array<8 x i8>
// CHECK-DAG: llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG: llvm.mlir.addressof @__etcopy_host_kernel.kernels.scale.entry
// CHECK-DAG: llvm.mlir.global private constant @__etcopy_host_kernel_kinds("pp8884\00")
// CHECK-DAG: llvm.mlir.global private constant @__etcopy_host_kernel_why("it uses gpu.barrier\00")
// CHECK-DAG: llvm.func private @__etcopy_host_kernel.kernels.scale.entry(
