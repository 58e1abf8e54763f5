// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime=pinned-host-memory=true --remarks-filter=convert-gpu-to-cuda-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,PINNED --implicit-check-not=remark:
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --remarks-filter=etcopy -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,PAGEABLE --implicit-check-not=remark:

// Selected by the pass's flag or by the category `etcopy`; nothing for
// another pass's flag.
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --remarks-filter=convert-etcopy-to-gpu -o /dev/null 2>&1 | count 0

// As YAML, one document per remark. (From the test's folder, so that YAML
// does not wrap the long path.)
// RUN: cd %S && etcopy-opt remarks.mlir --convert-gpu-to-cuda-runtime --remarks-filter=convert-gpu-to-cuda-runtime --remark-format=yaml --remarks-output-file=%t.yaml -o /dev/null
// RUN: FileCheck %s --check-prefix=YAML < %t.yaml

// What convert-gpu-to-cuda-runtime decided: each batch of copies (count
// and bytes, at the copy where it is issued) and whether each host buffer
// of transfers is pinned, with the option that decided.

// CHECK: remarks.mlir:[[# @LINE + 23]]:9: remark: [Passed] CopiesBatched | Category:{{(etcopy:)?}}convert-gpu-to-cuda-runtime | Function=batch_and_buffer | Bytes=48, Copies=2, Remark="copies of one stream issued as one cudaMemcpyBatchAsync"
// PINNED: remarks.mlir:[[# @LINE + 17]]:8: remark: [Passed] TransferBufferPinned | Category:convert-gpu-to-cuda-runtime | Function=batch_and_buffer | Reason=pinned-host-memory=true, Remark="host buffer of transfers taken from the cache of pinned blocks (cudaMallocHost)"
// PAGEABLE: remarks.mlir:[[# @LINE + 16]]:8: remark: [Missed] TransferBufferPageable | Category:etcopy:convert-gpu-to-cuda-runtime | Function=batch_and_buffer | Reason="pinned-host-memory=false: CUDA stages copies of pageable memory through pinned buffers of its own", Remark="host buffer of transfers taken from the cache of pageable blocks"
// YAML:      --- !Passed
// YAML-NEXT: Pass: convert-gpu-to-cuda-runtime
// YAML-NEXT: Name: CopiesBatched
// YAML-NEXT: DebugLoc: { File: remarks.mlir, Line: [[# @LINE + 17]], Column: 9 }
// YAML-NEXT: Function: batch_and_buffer
// YAML-NEXT: Args:
// YAML-NEXT:   - Remark: copies of one stream issued as one cudaMemcpyBatchAsync
// YAML-NEXT:   - Copies: '2'
// YAML-NEXT:   - Bytes: '48'
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
