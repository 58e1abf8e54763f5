// RUN: etcopy-opt %s --etcopy-outline-host-kernels | FileCheck %s
// RUN: etcopy-opt %s --etcopy-outline-host-kernels=launch-on-host \
// RUN:   | FileCheck %s --check-prefix=HOST --implicit-check-not=gpu.module \
// RUN:     --implicit-check-not=gpu.launch_func --implicit-check-not=unsupported

// Each kernel gets a host version taking the block id, thread id, block
// size and grid size (x, y, z) before its arguments; the kernels whose
// threads must run together get an empty one saying why. The gpu.module
// loses the #etcopy.device memory space (for convert-gpu-to-nvvm) and the
// launch casts its operands to match.

module attributes {gpu.container_module} {
  // CHECK-LABEL: gpu.module @kernels
  // CHECK: gpu.func @axpy(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: f32) kernel
  // CHECK: gpu.func @sync(%{{.*}}: memref<4xf32>) kernel
  gpu.module @kernels {
    gpu.func @axpy(%x: memref<?xf32, #etcopy.device<cuda:0>>, %y: memref<?xf32, #etcopy.device<cuda:0>>, %a: f32) kernel {
      %i = gpu.global_id x
      %j = gpu.block_id y
      %g = gpu.grid_dim z
      %k = arith.addi %j, %g : index
      %xi = memref.load %x[%i] : memref<?xf32, #etcopy.device<cuda:0>>
      %yi = memref.load %y[%k] : memref<?xf32, #etcopy.device<cuda:0>>
      %p = arith.mulf %a, %xi : f32
      %s = arith.addf %p, %yi : f32
      memref.store %s, %y[%i] : memref<?xf32, #etcopy.device<cuda:0>>
      gpu.return
    }
    gpu.func @sync(%x: memref<4xf32>) kernel {
      gpu.barrier
      gpu.return
    }
    gpu.func @shared(%x: memref<4xf32>) workgroup(%tile: memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
    gpu.func @shuffle(%x: memref<4xf32>, %v: f32) kernel {
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %r, %ok = gpu.shuffle xor %v, %c1, %c32 : f32
      gpu.return
    }
  }

  // CHECK-LABEL: func.func @launch(
  // CHECK-SAME: %[[X:.*]]: memref<?xf32, #etcopy.device<cuda:0>>, %[[Y:.*]]: memref<?xf32, #etcopy.device<cuda:0>>
  // CHECK: %[[XC:.*]] = memref.memory_space_cast %[[X]] : memref<?xf32, #etcopy.device<cuda:0>> to memref<?xf32>
  // CHECK: %[[YC:.*]] = memref.memory_space_cast %[[Y]] : memref<?xf32, #etcopy.device<cuda:0>> to memref<?xf32>
  // CHECK: gpu.launch_func @kernels::@axpy {{.*}} args(%[[XC]] : memref<?xf32>, %[[YC]] : memref<?xf32>, %{{.*}} : f32)

  // HOST-LABEL: func.func @launch(
  // HOST-SAME: %[[X:.*]]: memref<?xf32, #etcopy.device<cuda:0>>, %[[Y:.*]]: memref<?xf32, #etcopy.device<cuda:0>>, %[[A:.*]]: f32, %[[GX:.*]]: index, %[[BX:.*]]: index)
  // HOST-DAG: %[[ZERO:.*]] = arith.constant 0 : index
  // HOST-DAG: %[[ONE:.*]] = arith.constant 1 : index
  // HOST: scf.for %[[GZ:.*]] = %[[ZERO]] to %[[ONE]]
  // HOST: scf.for %[[GY:.*]] = %[[ZERO]] to %[[ONE]]
  // HOST: scf.for %[[GXI:.*]] = %[[ZERO]] to %[[GX]]
  // HOST: scf.for %[[TZ:.*]] = %[[ZERO]] to %[[ONE]]
  // HOST: scf.for %[[TY:.*]] = %[[ZERO]] to %[[ONE]]
  // HOST: scf.for %[[TX:.*]] = %[[ZERO]] to %[[BX]]
  // HOST-DAG: %[[XC:.*]] = memref.memory_space_cast %[[X]]
  // HOST-DAG: %[[YC:.*]] = memref.memory_space_cast %[[Y]]
  // HOST: func.call @__etcopy_host_kernel.kernels.axpy(%[[GXI]], %[[GY]], %[[GZ]], %[[TX]], %[[TY]], %[[TZ]], %[[BX]], %{{.*}}, %{{.*}}, %[[GX]], %{{.*}}, %{{.*}}, %[[XC]], %[[YC]], %[[A]])
  func.func @launch(%x: memref<?xf32, #etcopy.device<cuda:0>>, %y: memref<?xf32, #etcopy.device<cuda:0>>, %a: f32, %gx: index, %bx: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@axpy blocks in (%gx, %c1, %c1) threads in (%bx, %c1, %c1)
        args(%x : memref<?xf32, #etcopy.device<cuda:0>>, %y : memref<?xf32, #etcopy.device<cuda:0>>, %a : f32)
    return
  }
}

// The host versions: ids read from the leading arguments (a global id is
// block id * block size + thread id), no device memory space.
// CHECK-LABEL: func.func private @__etcopy_host_kernel.kernels.axpy(
// CHECK-SAME: %[[BX:[^:]*]]: index, %[[BY:[^:]*]]: index, %[[BZ:[^:]*]]: index, %[[TX:[^:]*]]: index, %[[TY:[^:]*]]: index, %[[TZ:[^:]*]]: index, %[[DX:[^:]*]]: index, %[[DY:[^:]*]]: index, %[[DZ:[^:]*]]: index, %[[GX:[^:]*]]: index, %[[GY:[^:]*]]: index, %[[GZ:[^:]*]]: index, %[[X:[^:]*]]: memref<?xf32>, %[[Y:[^:]*]]: memref<?xf32>, %[[A:[^:]*]]: f32)
// CHECK-SAME: attributes {etcopy.host_kernel = ["kernels", "axpy"]}
// CHECK: %[[OFFSET:.*]] = arith.muli %[[BX]], %[[DX]] : index
// CHECK: %[[I:.*]] = arith.addi %[[OFFSET]], %[[TX]] : index
// CHECK: %[[K:.*]] = arith.addi %[[BY]], %[[GZ]] : index
// CHECK: memref.load %[[X]][%[[I]]] : memref<?xf32>
// CHECK: memref.load %[[Y]][%[[K]]] : memref<?xf32>
// CHECK: memref.store %{{.*}}, %[[Y]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: return
// CHECK: func.func private @__etcopy_host_kernel.kernels.sync({{.*}}) attributes {etcopy.host_kernel = ["kernels", "sync"], etcopy.host_kernel_unsupported = "it uses gpu.barrier, which needs the threads of a block to run together"}
// CHECK-NEXT: return
// CHECK: func.func private @__etcopy_host_kernel.kernels.shared({{.*}}) attributes {etcopy.host_kernel = ["kernels", "shared"], etcopy.host_kernel_unsupported = "it uses shared memory (workgroup attributions), which needs the threads of a block to run together"}
// CHECK: func.func private @__etcopy_host_kernel.kernels.shuffle({{.*}}) attributes {etcopy.host_kernel = ["kernels", "shuffle"], etcopy.host_kernel_unsupported = "it uses 'gpu.shuffle' (warp, subgroup and other gpu operations have no host version)"}

// With launch-on-host only the host version that runs is left.
// HOST: func.func private @__etcopy_host_kernel.kernels.axpy(
