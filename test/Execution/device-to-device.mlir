// etcopy.d2d moves data from cuda:0 to cuda:1 without the host: the upload
// to cuda:0, one cudaMemcpyPeerAsync per device-to-device copy, the two
// downloads from cuda:1 in one batch (no host staging), with the same data
// as the host build. Peer access from cuda:1 to cuda:0 is enabled before the first
// peer copy, once for both. Where the devices cannot access each other,
// cudaMemcpyPeerAsync still copies (the driver stages the data; the
// simulator records the path as peer_staged) and nothing is enabled.
// RUN: etcopy-opt %s --etcopy-to-cuda -o %t.mlir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 %run_sim < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,TRACE
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_PEER_ACCESS=none \
// RUN:   ETCOPY_CUDA_SIM_TRACE=1 %run_sim < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,STAGED
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: %if cuda-gpus-2 %{ etcopy-opt %s --etcopy-to-cuda | %run_gpu | FileCheck %s %}

// TRACE: cudaMemcpyAsync({{.*}}, 16 bytes, HostToDevice,
// TRACE-NOT: cudaMemcpy
// TRACE: cudaDeviceCanAccessPeer(device=1, peerDevice=0) -> 1
// TRACE-NEXT: cudaDeviceEnablePeerAccess(peerDevice=0, flags=0, cuda:1)
// TRACE-NEXT: cudaMemcpyPeerAsync({{.*}}, dstDevice=1, {{.*}}, srcDevice=0, 16 bytes, stream={{.*}}) [peer_direct]
// TRACE-NOT: cudaMemcpyAsync
// TRACE-NOT: PeerAccess
// TRACE: cudaMemcpyPeerAsync({{.*}}, dstDevice=1, {{.*}}, srcDevice=0, 16 bytes, stream={{.*}}) [peer_direct]
// TRACE-NOT: HostToDevice
// TRACE: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [d2h_pageable 2]

// STAGED: cudaMemcpyAsync({{.*}}, 16 bytes, HostToDevice,
// STAGED-NOT: cudaMemcpy
// STAGED: cudaDeviceCanAccessPeer(device=1, peerDevice=0) -> 0
// STAGED-NOT: cudaDeviceEnablePeerAccess
// STAGED: cudaMemcpyPeerAsync({{.*}}, dstDevice=1, {{.*}}, srcDevice=0, 16 bytes, stream={{.*}}) [peer_staged]
// STAGED-NOT: cudaDeviceCanAccessPeer
// STAGED: cudaMemcpyPeerAsync({{.*}}, dstDevice=1, {{.*}}, srcDevice=0, 16 bytes, stream={{.*}}) [peer_staged]

// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [1.5, -2, 3, 40]
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [1.5, -2, 3, 40]

// Two uploads and two downloads by the host, the two copies between the
// devices without it.
// TRACE: stats: copies: {{.*}} h2d_pageable=1 {{.*}} d2h_pageable=2 {{.*}} d2d=0 d2d_bytes=0 peer_direct=2 peer_direct_bytes=32 peer_staged=0
// STAGED: stats: copies: {{.*}} h2d_pageable=1 {{.*}} d2h_pageable=2 {{.*}} peer_direct=0 peer_direct_bytes=0 peer_staged=2 peer_staged_bytes=32
// TRACE: stats: calls: {{.*}} peer=2 other=0

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

memref.global "private" constant @values : memref<4xf32> = dense<[1.5, -2.0, 3.0, 40.0]>

func.func @main() {
  %v = memref.get_global @values : memref<4xf32>
  %d0 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  %d1 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:1>>
  %e1 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:1>>
  %out = memref.alloc() : memref<4xf32>
  %out2 = memref.alloc() : memref<4xf32>
  etcopy.h2d %v, %d0 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.d2d %d0, %d1 : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, #etcopy.device<cuda:1>>
  etcopy.d2d %d0, %e1 : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, #etcopy.device<cuda:1>>
  etcopy.d2h %d1, %out : memref<4xf32, #etcopy.device<cuda:1>> -> memref<4xf32>
  etcopy.d2h %e1, %out2 : memref<4xf32, #etcopy.device<cuda:1>> -> memref<4xf32>
  %u = memref.cast %out : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  %u2 = memref.cast %out2 : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
  memref.dealloc %d0 : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %d1 : memref<4xf32, #etcopy.device<cuda:1>>
  memref.dealloc %e1 : memref<4xf32, #etcopy.device<cuda:1>>
  memref.dealloc %out : memref<4xf32>
  memref.dealloc %out2 : memref<4xf32>
  return
}
