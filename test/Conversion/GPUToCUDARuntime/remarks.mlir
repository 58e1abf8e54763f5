// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime=pinned-host-memory=true --remarks-filter=convert-gpu-to-cuda-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,PINNED --implicit-check-not=remark:
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --remarks-filter=etcopy -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,PAGEABLE --implicit-check-not=remark:

// Selected by the pass's flag or by the category `etcopy`; nothing for
// another pass's flag.
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --remarks-filter=convert-etcopy-to-gpu -o /dev/null 2>&1 | count 0

// As YAML, one document per remark. (From the test's folder, so that YAML
// does not wrap the long path.)
// RUN: cd %S && etcopy-opt remarks.mlir --convert-gpu-to-cuda-runtime --remarks-filter=convert-gpu-to-cuda-runtime --remark-format=yaml --remarks-output-file=%t.yaml -o /dev/null
// RUN: FileCheck %s --check-prefix=YAML < %t.yaml

// What convert-gpu-to-cuda-runtime decided, function by function: each
// batch of copies (count and bytes, at the copy where it is issued), each
// copy left out of every batch (with the planner's reason) and whether
// each host buffer of transfers is pinned, with the option that decided.

// CHECK: remarks.mlir:[[# @LINE + 33]]:9: remark: [Passed] CopiesBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=batch_and_buffer | Bytes=48, Copies=2, Remark="copies of one stream issued as one cudaMemcpyBatchAsync"
// CHECK: remarks.mlir:[[# @LINE + 33]]:9: remark: [Missed] CopyNotBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=batch_and_buffer | Reason="depends on a copy next to it: one writes memory the other reads or writes (or may)", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
// PINNED: remarks.mlir:[[# @LINE + 26]]:8: remark: [Passed] TransferBufferPinned | Category:convert-gpu-to-cuda-runtime | Function=batch_and_buffer | Reason=pinned-host-memory=true, Remark="host buffer of transfers taken from the cache of pinned blocks (cudaMallocHost)"
// PAGEABLE: remarks.mlir:[[# @LINE + 25]]:8: remark: [Missed] TransferBufferPageable | Category:etcopy:convert-gpu-to-cuda-runtime | Function=batch_and_buffer | Reason="pinned-host-memory=false: CUDA stages copies of pageable memory through pinned buffers of its own", Remark="host buffer of transfers taken from the cache of pageable blocks"
// YAML:      --- !Passed
// YAML-NEXT: Pass: convert-gpu-to-cuda-runtime
// YAML-NEXT: Name: CopiesBatched
// YAML-NEXT: DebugLoc: { File: remarks.mlir, Line: [[# @LINE + 26]], Column: 9 }
// YAML-NEXT: Function: batch_and_buffer
// YAML-NEXT: Args:
// YAML-NEXT:   - Remark: copies of one stream issued as one cudaMemcpyBatchAsync
// YAML-NEXT:   - Copies: '2'
// YAML-NEXT:   - Bytes: '48'
// YAML-NEXT: ...
// YAML-NEXT: --- !Missed
// YAML-NEXT: Pass: convert-gpu-to-cuda-runtime
// YAML-NEXT: Name: CopyNotBatched
// YAML-NEXT: DebugLoc: { File: remarks.mlir, Line: [[# @LINE + 17]], Column: 9 }
// YAML-NEXT: Function: batch_and_buffer
// YAML-NEXT: Args:
// YAML-NEXT:   - Remark: copy issued alone, not in a cudaMemcpyBatchAsync
// YAML-NEXT:   - Reason: 'depends on a copy next to it: one writes memory the other reads or writes (or may)'
// YAML-NEXT: ...
// YAML-NEXT: --- !Missed
// YAML-NEXT: Pass: convert-gpu-to-cuda-runtime
// YAML-NEXT: Name: TransferBufferPageable
// YAML-NEXT: DebugLoc: { File: remarks.mlir, Line: [[# @LINE + 2]], Column: 8 }
func.func @batch_and_buffer(%a: memref<4xf32>, %b: memref<8xf32>) -> f32 {
  %h = memref.alloc() : memref<4xf32>
  %t0 = gpu.wait async
  %d, %ta = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
  %e, %tb = gpu.alloc async [%ta] () : memref<8xf32, #etcopy.device<cuda:0>>
  %t1 = gpu.memcpy async [%tb] %d, %a : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t2 = gpu.memcpy async [%t1] %e, %b : memref<8xf32, #etcopy.device<cuda:0>>, memref<8xf32>
  %t3 = gpu.memcpy async [%t2] %h, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %t4 = gpu.dealloc async [%t3] %d : memref<4xf32, #etcopy.device<cuda:0>>
  %t5 = gpu.dealloc async [%t4] %e : memref<8xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t5]
  %c0 = arith.constant 0 : index
  %v = memref.load %h[%c0] : memref<4xf32>
  memref.dealloc %h : memref<4xf32>
  return %v : f32
}

// Each copy that no batch holds, with the planner's reason: why it did not
// join the copies before it, else why its run ended before another joined
// (the copies of @batch_and_buffer that form a batch have none: see
// --implicit-check-not above). With batch-copies=false every copy has one.

// CHECK: remarks.mlir:[[# @LINE + 37]]:9: remark: [Missed] CopyNotBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=not_batched | Reason="on another stream than the copy next to it", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
// CHECK: remarks.mlir:[[# @LINE + 37]]:9: remark: [Missed] CopyNotBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=not_batched | Reason="on another stream than the copy next to it", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
// CHECK: remarks.mlir:[[# @LINE + 37]]:9: remark: [Missed] CopyNotBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=not_batched | Reason="a copy between two devices (cudaMemcpyPeerAsync)", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
// CHECK: remarks.mlir:[[# @LINE + 37]]:9: remark: [Missed] CopyNotBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=not_batched | Op=gpu.wait, Reason="an op that touches memory, waits or has regions follows it", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
// CHECK: remarks.mlir:[[# @LINE + 39]]:9: remark: [Missed] CopyNotBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=not_batched | Op=memref.load, Reason="an op that touches memory, waits or has regions comes between it and the copy next to it", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
// CHECK: remarks.mlir:[[# @LINE + 40]]:9: remark: [Missed] CopyNotBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=not_batched | Op=memref.load, Reason="an op that touches memory, waits or has regions comes between it and the copy next to it", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
// CHECK: remarks.mlir:[[# @LINE + 41]]:3: remark: [Missed] CopyNotBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=not_batched | Reason="a synchronous copy: the host waits after it", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
// CHECK: remarks.mlir:[[# @LINE + 43]]:9: remark: [Missed] CopyNotBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=not_batched | Reason="not contiguous or not of static size (the strided copy)", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
// CHECK: remarks.mlir:[[# @LINE + 43]]:9: remark: [Missed] CopyNotBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=not_batched | Reason="depends on a copy next to it: one writes memory the other reads or writes (or may)", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
// CHECK: remarks.mlir:[[# @LINE + 43]]:9: remark: [Missed] CopyNotBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=not_batched | Reason="depends on a copy next to it: one writes memory the other reads or writes (or may)", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
// YAML:      --- !Missed
// YAML-NEXT: Pass: convert-gpu-to-cuda-runtime
// YAML-NEXT: Name: CopyNotBatched
// YAML-NEXT: DebugLoc: { File: remarks.mlir, Line: [[# @LINE + 24]], Column: 9 }
// YAML-NEXT: Function: not_batched
// YAML-NEXT: Args:
// YAML-NEXT:   - Remark: copy issued alone, not in a cudaMemcpyBatchAsync
// YAML-NEXT:   - Reason: on another stream than the copy next to it
// YAML-NEXT: ...
// YAML:      DebugLoc: { File: remarks.mlir, Line: [[# @LINE + 21]], Column: 9 }
// YAML-NEXT: Function: not_batched
// YAML-NEXT: Args:
// YAML-NEXT:   - Remark: copy issued alone, not in a cudaMemcpyBatchAsync
// YAML-NEXT:   - Reason: an op that touches memory, waits or has regions follows it
// YAML-NEXT:   - Op: gpu.wait
// YAML-NEXT: ...

// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime=batch-copies=false --remarks-filter-missed=convert-gpu-to-cuda-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFF
// OFF-COUNT-3: remark: [Missed] CopyNotBatched | {{.*}} | Function=batch_and_buffer | Reason=batch-copies=false,
// OFF-COUNT-10: remark: [Missed] CopyNotBatched | {{.*}} | Function=not_batched | Reason=batch-copies=false,
// OFF-NOT: CopyNotBatched
func.func @not_batched(%a: memref<4xf32>, %b: memref<4xf32>, %n: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %t0 = gpu.wait async
  %d0, %ta = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
  %d1, %tb = gpu.alloc async [%ta] () : memref<4xf32, #etcopy.device<cuda:1>>
  %d2, %tc = gpu.alloc async [%tb] () : memref<4xf32, #etcopy.device<cuda:0>>
  %t1 = gpu.memcpy async [%tc] %d0, %a : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t2 = gpu.memcpy async [%t1] %d1, %b : memref<4xf32, #etcopy.device<cuda:1>>, memref<4xf32>
  %t3 = gpu.memcpy async [%t2] %d1, %d0 : memref<4xf32, #etcopy.device<cuda:1>>, memref<4xf32, #etcopy.device<cuda:0>>
  %t4 = gpu.memcpy async [%t3] %a, %d0 : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t4]
  %t5 = gpu.wait async
  %t6 = gpu.memcpy async [%t5] %d0, %b : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %v = memref.load %b[%c0] : memref<4xf32>
  %t7 = gpu.memcpy async [%t6] %d2, %a : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.wait [%t7]
  gpu.memcpy %b, %d0 : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %t8 = gpu.wait async
  %dn, %td = gpu.alloc async [%t8] (%c0) : memref<?xf32, #etcopy.device<cuda:0>>
  %t9 = gpu.memcpy async [%td] %dn, %n : memref<?xf32, #etcopy.device<cuda:0>>, memref<?xf32>
  %ua = gpu.memcpy async [%t9] %d0, %a : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %ub = gpu.memcpy async [%ua] %a, %d0 : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %uc = gpu.dealloc async [%ub] %d0 : memref<4xf32, #etcopy.device<cuda:0>>
  %ud = gpu.dealloc async [%uc] %d1 : memref<4xf32, #etcopy.device<cuda:1>>
  %ue = gpu.dealloc async [%ud] %d2 : memref<4xf32, #etcopy.device<cuda:0>>
  %uf = gpu.dealloc async [%ue] %dn : memref<?xf32, #etcopy.device<cuda:0>>
  gpu.wait [%uf]
  return %v : f32
}
