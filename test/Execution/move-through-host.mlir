// A move from cuda:0 to cuda:1 written at the memref level as ExecuTorch
// writes it, through a host temporary (etcopy.d2h, then etcopy.h2d, then the
// temporary's dealloc): --etcopy-to-cuda makes it one cudaMemcpyPeerAsync,
// the host never sees the data on the way, and the result is what the host
// build (and the same program with optimize-transfers=false, which keeps the
// staging) computes. A second move of dynamic size, whose temporary takes
// the source's size, goes the same way.
// RUN: etcopy-opt %s --etcopy-to-cuda -o %t.mlir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 %run_sim < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,TRACE
// RUN: etcopy-opt %s --etcopy-to-cuda="optimize-transfers=false pinned-host-memory=false" \
// RUN:   | env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 %run_sim 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,STAGED
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s

// TRACE: cudaMemcpyAsync({{.*}}, 16 bytes, HostToDevice,
// TRACE-NOT: cudaMemcpy
// TRACE: cudaMemcpyPeerAsync({{.*}}, dstDevice=1, {{.*}}, srcDevice=0, 16 bytes, stream={{.*}}) [peer_direct]
// TRACE-NOT: cudaMemcpy
// TRACE: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [1.5, -2, 3, 40]
// TRACE: cudaMemcpyAsync({{.*}}, 16 bytes, HostToDevice,
// TRACE-NOT: cudaMemcpy
// TRACE: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToDevice, {{.*}}) [peer_direct]
// TRACE-NOT: cudaMemcpy
// TRACE: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [1.5, -2, 3, 40]

// Both moves go between the devices; the host copies are the two uploads
// and the two downloads that print. Staged, each move is one more download
// and one more upload.
// TRACE: stats: copies: {{.*}} h2d_pageable=2 {{.*}} d2h_pageable=2 {{.*}} peer_direct=2 peer_direct_bytes=32 peer_staged=0
// STAGED: stats: copies: {{.*}} h2d_pageable=4 {{.*}} d2h_pageable=4 {{.*}} peer_direct=0 peer_direct_bytes=0 peer_staged=0

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

memref.global "private" constant @values : memref<4xf32> = dense<[1.5, -2.0, 3.0, 40.0]>

!d0 = memref<4xf32, #etcopy.device<cuda:0>>
!d1 = memref<4xf32, #etcopy.device<cuda:1>>

// Moves %src (cuda:0) to a new buffer on cuda:1 through the host.
func.func @move(%src: !d0) -> !d1 {
  %dst = memref.alloc() : !d1
  %tmp = memref.alloc() : memref<4xf32>
  etcopy.d2h %src, %tmp : !d0 -> memref<4xf32>
  etcopy.h2d %tmp, %dst : memref<4xf32> -> !d1
  memref.dealloc %tmp : memref<4xf32>
  return %dst : !d1
}

// The same for any size.
func.func @move_dynamic(%src: memref<?xf32, #etcopy.device<cuda:0>>)
    -> memref<?xf32, #etcopy.device<cuda:1>> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %src, %c0 : memref<?xf32, #etcopy.device<cuda:0>>
  %dst = memref.alloc(%n) : memref<?xf32, #etcopy.device<cuda:1>>
  %tmp = memref.alloc(%n) : memref<?xf32>
  etcopy.d2h %src, %tmp : memref<?xf32, #etcopy.device<cuda:0>> -> memref<?xf32>
  etcopy.h2d %tmp, %dst : memref<?xf32> -> memref<?xf32, #etcopy.device<cuda:1>>
  memref.dealloc %tmp : memref<?xf32>
  return %dst : memref<?xf32, #etcopy.device<cuda:1>>
}

func.func @main() {
  %v = memref.get_global @values : memref<4xf32>
  %d0 = memref.alloc() : !d0
  etcopy.h2d %v, %d0 : memref<4xf32> -> !d0
  %d1 = call @move(%d0) : (!d0) -> !d1
  %out = memref.alloc() : memref<4xf32>
  etcopy.d2h %d1, %out : !d1 -> memref<4xf32>
  %u = memref.cast %out : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()

  %e0 = memref.alloc() : !d0
  etcopy.h2d %v, %e0 : memref<4xf32> -> !d0
  %e0d = memref.cast %e0 : !d0 to memref<?xf32, #etcopy.device<cuda:0>>
  %e1 = call @move_dynamic(%e0d) : (memref<?xf32, #etcopy.device<cuda:0>>) -> memref<?xf32, #etcopy.device<cuda:1>>
  %out2 = memref.alloc() : memref<4xf32>
  %e1s = memref.cast %e1 : memref<?xf32, #etcopy.device<cuda:1>> to !d1
  etcopy.d2h %e1s, %out2 : !d1 -> memref<4xf32>
  %u2 = memref.cast %out2 : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u2) : (memref<*xf32>) -> ()

  memref.dealloc %d0 : !d0
  memref.dealloc %d1 : !d1
  memref.dealloc %e0 : !d0
  memref.dealloc %e1 : memref<?xf32, #etcopy.device<cuda:1>>
  memref.dealloc %out : memref<4xf32>
  memref.dealloc %out2 : memref<4xf32>
  return
}
