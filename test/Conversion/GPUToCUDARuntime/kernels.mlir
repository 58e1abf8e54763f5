// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime \
// RUN:   | FileCheck %s --implicit-check-not=gpu.binary --implicit-check-not=gpu.launch_func

// gpu.binary becomes its image (the object, NUL-terminated PTX here), a
// library cell that the runtime support loads on the first launch, a cell
// per launched kernel and its name; gpu.launch_func a look-up of the kernel
// (cached after the first) and a cudaLaunchKernel on the function's stream
// with one pointer per parameter, memrefs expanded as the NVVM calling
// convention does (allocated and aligned pointers, offset, sizes, strides).

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "//\0A.version 8.0\0A.entry scale">]

  // CHECK-LABEL: llvm.func @launch_sync(
  // CHECK-SAME: %[[ALLOC:[^:]*]]: !llvm.ptr, %[[ALIGNED:[^:]*]]: !llvm.ptr, %[[OFFSET:[^:]*]]: i64, %[[SIZE:[^:]*]]: i64, %[[STRIDE:[^:]*]]: i64, %[[S:[^:]*]]: f32, %[[N:[^:]*]]: i64)
  // CHECK: %[[ARGS:.*]] = llvm.alloca %{{.*}} x !llvm.array<6 x ptr>
  // CHECK: %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
  // CHECK: llvm.store %[[ALLOC]], %[[SLOT0:.*]] : !llvm.ptr, !llvm.ptr
  // CHECK: llvm.store %[[SLOT0]], %[[ARGS]]
  // CHECK: llvm.store %[[ALIGNED]]
  // CHECK: llvm.store %[[OFFSET]]
  // CHECK: llvm.store %[[SIZE]]
  // CHECK: llvm.store %[[STRIDE]]
  // CHECK: llvm.store %[[S]], %[[SLOT5:.*]] : f32, !llvm.ptr
  // CHECK: %[[ELEMENT5:.*]] = llvm.getelementptr %[[ARGS]][5]
  // CHECK: llvm.store %[[SLOT5]], %[[ELEMENT5]]
  // CHECK-DAG: %[[NAME:.*]] = llvm.mlir.addressof @__etcopy_kernel_name
  // CHECK-DAG: %[[LIB:.*]] = llvm.mlir.addressof @__etcopy_library_kernels
  // CHECK-DAG: %[[IMAGE:.*]] = llvm.mlir.addressof @__etcopy_kernels_kernels
  // CHECK-DAG: %[[CELL:.*]] = llvm.mlir.addressof @__etcopy_kernel_kernels_scale
  // Without host versions of the kernels there is no table to pass.
  // CHECK-DAG: %[[NO_TABLE:.*]] = llvm.mlir.zero : !llvm.ptr
  // CHECK: %[[KERNEL:.*]] = llvm.call @__etcopy_get_kernel(%[[LIB]], %[[IMAGE]], %[[NO_TABLE]], %[[CELL]], %[[NAME]], %{{.*}}, %{{.*}}, %{{.*}})
  // CHECK: llvm.call @__etcopy_launch_kernel(%[[KERNEL]], %[[NAME]], %[[N]], %[[ONE:.*]], %[[ONE]], %[[THREADS:.*]], %[[ONE]], %[[ONE]], %[[SHARED:.*]], %[[STREAM]], %[[ARGS]],
  // The sync form waits for its stream.
  // CHECK-NOT: llvm.call
  // CHECK: llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
  // CHECK-NEXT: llvm.return
  func.func @launch_sync(%a: memref<8xf32>, %s: f32, %n: index) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1) threads in (%c4, %c1, %c1)
        args(%a : memref<8xf32>, %s : f32)
    return
  }

  // The async form runs between copies on the stream, the dynamic shared
  // memory passed on; the host waits once, at the return.
  // CHECK-LABEL: llvm.func @launch_async(
  // CHECK: %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
  // CHECK: llvm.call @__etcopy_memcpy(
  // CHECK-NOT: @__etcopy_stream_synchronize
  // CHECK: %[[KERNEL:.*]] = llvm.call @__etcopy_get_kernel(
  // CHECK: llvm.call @__etcopy_launch_kernel(%[[KERNEL]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SHARED:.*]], %[[STREAM]],
  // CHECK-NOT: @__etcopy_stream_synchronize
  // CHECK: llvm.call @__etcopy_memcpy(
  // CHECK-NOT: llvm.call
  // CHECK: llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
  // CHECK: llvm.return
  func.func @launch_async(%h: memref<8xf32>, %d: memref<8xf32, #etcopy.device<cuda:0>>, %s: f32, %shared: i32) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %t0 = gpu.wait async
    %t1 = gpu.memcpy async [%t0] %d, %h : memref<8xf32, #etcopy.device<cuda:0>>, memref<8xf32>
    %v = memref.memory_space_cast %d : memref<8xf32, #etcopy.device<cuda:0>> to memref<8xf32>
    %t2 = gpu.launch_func async [%t1] @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        dynamic_shared_memory_size %shared args(%v : memref<8xf32>, %s : f32)
    %t3 = gpu.memcpy async [%t2] %h, %d : memref<8xf32>, memref<8xf32, #etcopy.device<cuda:0>>
    gpu.wait [%t3]
    return
  }

  // A launch runs on the device of its first memref on an explicit device,
  // here cuda:1, whatever comes before it: a scalar, a host memref.
  // CHECK-LABEL: llvm.func @launch_scalar_first(
  // CHECK-DAG: %[[CUDA1:.*]] = llvm.mlir.constant(1 : i32) : i32
  // CHECK-DAG: %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(%[[CUDA1]],
  // CHECK: llvm.call @__etcopy_launch_kernel(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[STREAM]],
  func.func @launch_scalar_first(%s: f32, %h: memref<8xf32>, %d: memref<8xf32, #etcopy.device<cuda:1>>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %v = memref.memory_space_cast %d : memref<8xf32, #etcopy.device<cuda:1>> to memref<8xf32>
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%s : f32, %h : memref<8xf32>, %v : memref<8xf32>)
    return
  }
}

// The binary's globals and the runtime support's kernel functions.
// CHECK-DAG: llvm.mlir.global private constant @__etcopy_kernels_kernels("//\0A.version 8.0\0A.entry scale\00") {addr_space = 0 : i32, alignment = 8 : i64}{{$}}
// CHECK-DAG: llvm.mlir.global internal @__etcopy_library_kernels() {{.*}} : !llvm.ptr
// CHECK-DAG: llvm.mlir.global internal @__etcopy_kernel_kernels_scale() {{.*}} : !llvm.ptr
// CHECK-DAG: llvm.mlir.global private constant @__etcopy_kernel_name("scale\00")
// CHECK-DAG: llvm.func linkonce_odr @__etcopy_get_kernel(
// CHECK-DAG: llvm.func linkonce_odr @__etcopy_launch_kernel(
// CHECK-DAG: llvm.func @cudaLibraryLoadData(
// CHECK-DAG: llvm.func @cudaLibraryGetKernel(
// CHECK-DAG: llvm.func @cudaLaunchKernel(
