// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime=use-bare-pointers-for-kernels \
// RUN:   | FileCheck %s --implicit-check-not=gpu.binary --implicit-check-not=gpu.launch_func
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime \
// RUN:   | FileCheck %s --check-prefix=DESCRIPTOR

// With use-bare-pointers-for-kernels (kernels compiled with
// convert-gpu-to-nvvm's use-bare-ptr-memref-call-conv), each memref kernel
// argument is passed as its aligned pointer alone: one parameter per memref,
// as upstream's gpu-to-llvm does with the option of the same name.

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "//\0A.version 8.0\0A.entry add">]

  // CHECK-LABEL: llvm.func @launch(
  // CHECK-SAME: %[[A_ALLOC:[^:]*]]: !llvm.ptr, %[[A:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %[[B_ALLOC:[^:]*]]: !llvm.ptr, %[[B:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %[[S:[^:]*]]: f32)
  // Three parameters: two pointers and the scalar.
  // CHECK: %[[ARGS:.*]] = llvm.alloca %{{.*}} x !llvm.array<3 x ptr>
  // CHECK: llvm.store %[[A]], %[[SLOT0:.*]] : !llvm.ptr, !llvm.ptr
  // CHECK: llvm.store %[[SLOT0]], %[[ARGS]]
  // CHECK: llvm.store %[[B]], %[[SLOT1:.*]] : !llvm.ptr, !llvm.ptr
  // CHECK: %[[ELEMENT1:.*]] = llvm.getelementptr %[[ARGS]][1]
  // CHECK: llvm.store %[[SLOT1]], %[[ELEMENT1]]
  // CHECK: llvm.store %[[S]], %[[SLOT2:.*]] : f32, !llvm.ptr
  // CHECK: %[[ELEMENT2:.*]] = llvm.getelementptr %[[ARGS]][2]
  // CHECK: llvm.store %[[SLOT2]], %[[ELEMENT2]]
  // Neither allocated pointer is a parameter.
  // CHECK-NOT: llvm.store %[[A_ALLOC]]
  // CHECK-NOT: llvm.store %[[B_ALLOC]]
  // CHECK: llvm.call @__etcopy_launch_kernel(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ARGS]],
  // Without the option, the descriptors' fields: 3 + 2 for the 1-D memref,
  // 3 + 4 for the 2-D one, and the scalar.
  // DESCRIPTOR-LABEL: llvm.func @launch(
  // DESCRIPTOR: llvm.alloca %{{.*}} x !llvm.array<13 x ptr>
  func.func @launch(%a: memref<8xf32>, %b: memref<2x4xf32>, %s: f32) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @kernels::@add blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%a : memref<8xf32>, %b : memref<2x4xf32>, %s : f32)
    return
  }
}
