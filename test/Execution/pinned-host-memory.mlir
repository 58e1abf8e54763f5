// With pinned-host-memory, the host buffers a function stages its
// transfers in and frees itself come from cudaMallocHost: the simulator
// classifies both copies as pinned (pageable without the option), and the
// data is the host build's. The pipeline plans the host buffers when it
// pins them: %in and %out share one host arena (two 256-byte-aligned
// slots, 512 bytes), pinned once, behind the 256-byte header of a pinned
// block (768 bytes). The free returns the block to the cache of pinned
// memory, which releases it at exit, after the print
// (test/Execution/pinned-host-cache.mlir).
// RUN: etcopy-opt %s --etcopy-to-cuda="pinned-host-memory=true" \
// RUN:   | env ETCOPY_CUDA_SIM_TRACE=1 %run_sim 2>&1 | FileCheck %s --check-prefixes=CHECK,PINNED
// RUN: etcopy-opt %s --etcopy-to-cuda=pinned-host-memory=false \
// RUN:   | env ETCOPY_CUDA_SIM_STATS=1 %run_sim 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,PAGEABLE
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: %if cuda-gpu %{ etcopy-opt %s --etcopy-to-cuda="pinned-host-memory=true" | %run_gpu | FileCheck %s %}

// PINNED: cudaMallocHost(768 bytes)
// PINNED-NOT: cudaMallocHost
// PINNED: cudaMemcpyAsync({{.*}}, 16 bytes, HostToDevice, {{.*}}) [h2d_pinned]
// PINNED: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost, {{.*}}) [d2h_pinned]
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [3, 5, 7, 9]
// PINNED: cudaFreeHost(
// PINNED-NOT: cudaFreeHost(
// PINNED: stats: copies: pinned=2 pinned_bytes=32 pageable=0 pageable_bytes=0
// PAGEABLE: stats: copies: pinned=0 pinned_bytes=0 pageable=2 pageable_bytes=32

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

memref.global "private" constant @values : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// Doubles the values through the device and adds one on the host: %in and
// %out stage the transfers and are freed before the return.
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %values = memref.get_global @values : memref<4xf32>
  %in = memref.alloc() : memref<4xf32>
  %out = memref.alloc() : memref<4xf32>
  %result = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %values[%i] : memref<4xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %in[%i] : memref<4xf32>
  }
  %d = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %in, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.d2h %d, %out : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %out[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %result[%i] : memref<4xf32>
  }
  %u = memref.cast %result : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %d : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %in : memref<4xf32>
  memref.dealloc %out : memref<4xf32>
  memref.dealloc %result : memref<4xf32>
  return
}
