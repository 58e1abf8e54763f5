// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime=use-bare-pointers-for-kernels \
// RUN:   | FileCheck %s --implicit-check-not=gpu.binary

// With bare pointers, the simulator's table says that each memref parameter
// of a host kernel is one pointer ('p'), as the launch passes it, and the
// entry rebuilds the descriptor the host kernel takes from it and the
// memref's static shape: allocated and aligned pointers the same, offset 0,
// sizes, identity strides.

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "//\0A.version 8.0\0A.entry scale">]

  // CHECK-LABEL: llvm.func @launch(
  // CHECK: llvm.alloca %{{.*}} x !llvm.array<2 x ptr>
  // CHECK: llvm.call @__etcopy_launch_kernel(
  func.func @launch(%a: memref<2x4xf32>, %s: f32) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%a : memref<2x4xf32>, %s : f32)
    return
  }

  func.func private @__etcopy_host_kernel.kernels.scale(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %nx: index, %ny: index, %nz: index, %gx: index, %gy: index, %gz: index, %y: memref<2x4xf32>, %s: f32) attributes {etcopy.host_kernel = ["kernels", "scale"]} {
    %v = memref.load %y[%bx, %tx] : memref<2x4xf32>
    %w = arith.mulf %v, %s : f32
    memref.store %w, %y[%bx, %tx] : memref<2x4xf32>
    return
  }
}

// CHECK-DAG: llvm.mlir.global private constant @__etcopy_host_kernel_kinds("p4\00")
// CHECK-LABEL: llvm.func private @__etcopy_host_kernel.kernels.scale.entry(
// CHECK-SAME: %[[ARGS:[^:]*]]: !llvm.ptr, %[[IDS:[^:]*]]: !llvm.ptr)
// CHECK: %[[PARAM0:.*]] = llvm.load %[[ARGS]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[POINTER:.*]] = llvm.load %[[PARAM0]] : !llvm.ptr -> !llvm.ptr
// CHECK-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-DAG: %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG: %[[FOUR:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[SLOT1:.*]] = llvm.getelementptr %[[ARGS]][1]
// CHECK: %[[PARAM1:.*]] = llvm.load %[[SLOT1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S:.*]] = llvm.load %[[PARAM1]] : !llvm.ptr -> f32
// CHECK: llvm.call @__etcopy_host_kernel.kernels.scale({{.*}}, %[[POINTER]], %[[POINTER]], %[[ZERO]], %[[TWO]], %[[FOUR]], %[[FOUR]], %[[ONE]], %[[S]])
