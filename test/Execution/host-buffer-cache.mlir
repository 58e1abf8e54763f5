// Host buffers of transfers are reused across calls: @twice copies its
// input to cuda:0 and back into a 64 KiB host buffer it allocates and frees
// itself, then doubles it on the host. Called five times, it allocates that
// buffer at its first call only (from the cache of pageable blocks, or of
// pinned blocks with pinned-host-memory); with the cache disabled
// (ETCOPY_PAGEABLE_HOST_CACHE_BYTES=0) every call allocates it again, as
// the aligned_alloc of every call did before the cache. The harness
// (Inputs/count-host-buffers.c) counts the allocations; the data is right
// in every run, and the blocks are freed at exit (the simulator's leak
// check).
// RUN: etcopy-opt %s --etcopy-to-cuda=pinned-host-memory=false \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.ll
// RUN: %cc -Wno-override-module -I%cuda_sim_include -I%S/Inputs %t.ll \
// RUN:   %S/Inputs/count-host-buffers.c -Wl,--wrap=aligned_alloc,--wrap=cudaMallocHost \
// RUN:   -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s --check-prefix=CACHED --implicit-check-not=leak
// RUN: env ETCOPY_PAGEABLE_HOST_CACHE_BYTES=0 %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNCACHED
// RUN: etcopy-opt %s --etcopy-to-cuda=pinned-host-memory=true \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.pinned.ll
// RUN: %cc -Wno-override-module -I%cuda_sim_include -I%S/Inputs %t.pinned.ll \
// RUN:   %S/Inputs/count-host-buffers.c -Wl,--wrap=aligned_alloc,--wrap=cudaMallocHost \
// RUN:   -o %t.pinned %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_STATS=1 %t.pinned 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CACHED,PINNED --implicit-check-not=leak

// CACHED: call 0: 0 wrong elements, host blocks allocated: 1
// CACHED-NEXT: call 1: 0 wrong elements, host blocks allocated: 1
// CACHED-NEXT: call 2: 0 wrong elements, host blocks allocated: 1
// CACHED-NEXT: call 3: 0 wrong elements, host blocks allocated: 1
// CACHED-NEXT: call 4: 0 wrong elements, host blocks allocated: 1
// PINNED: copies: pinned=5 pinned_bytes=327680
// PINNED: entry-points: {{.*}} cudaMallocHost=1 cudaFreeHost=1

// UNCACHED: call 0: 0 wrong elements, host blocks allocated: 1
// UNCACHED-NEXT: call 1: 0 wrong elements, host blocks allocated: 2
// UNCACHED-NEXT: call 2: 0 wrong elements, host blocks allocated: 3
// UNCACHED-NEXT: call 3: 0 wrong elements, host blocks allocated: 4
// UNCACHED-NEXT: call 4: 0 wrong elements, host blocks allocated: 5

func.func @twice(%in: memref<16384xf32>, %out: memref<16384xf32>) attributes {llvm.emit_c_interface} {
  %d = memref.alloc() : memref<16384xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %in, %d : memref<16384xf32> -> memref<16384xf32, #etcopy.device<cuda:0>>
  %h = memref.alloc() : memref<16384xf32>
  etcopy.d2h %d, %h : memref<16384xf32, #etcopy.device<cuda:0>> -> memref<16384xf32>
  memref.dealloc %d : memref<16384xf32, #etcopy.device<cuda:0>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16384 = arith.constant 16384 : index
  scf.for %i = %c0 to %c16384 step %c1 {
    %v = memref.load %h[%i] : memref<16384xf32>
    %twice = arith.addf %v, %v : f32
    memref.store %twice, %out[%i] : memref<16384xf32>
  }
  memref.dealloc %h : memref<16384xf32>
  return
}
