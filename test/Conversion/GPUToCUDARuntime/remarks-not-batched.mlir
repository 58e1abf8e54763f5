// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --remarks-filter=convert-gpu-to-cuda-runtime -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=remark:

// The reasons of CopyNotBatched that remarks.mlir does not show: a copy
// whose run ends because the next copy cannot be batched at all (the op
// that ended it is named), and copies of one stream in different blocks.

func.func @more(%a: memref<4xf32>, %b: memref<4xf32>, %c: i1) {
  %t0 = gpu.wait async
  %d0, %ta = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
  %d1, %tb = gpu.alloc async [%ta] () : memref<4xf32, #etcopy.device<cuda:1>>
  // CHECK: remarks-not-batched.mlir:[[@LINE+1]]:9: remark: [Missed] CopyNotBatched | Category:convert-gpu-to-cuda-runtime | Function=more | Op=gpu.memcpy, Reason="the copy after it cannot be batched", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
  %t1 = gpu.memcpy async [%tb] %d0, %a : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  // CHECK: remarks-not-batched.mlir:[[@LINE+1]]:9: remark: [Missed] CopyNotBatched | Category:convert-gpu-to-cuda-runtime | Function=more | Reason="a copy between two devices (cudaMemcpyPeerAsync)", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
  %t2 = gpu.memcpy async [%t1] %d1, %d0 : memref<4xf32, #etcopy.device<cuda:1>>, memref<4xf32, #etcopy.device<cuda:0>>
  scf.if %c {
    %t3 = gpu.wait async
    // CHECK: remarks-not-batched.mlir:[[@LINE+1]]:11: remark: [Missed] CopyNotBatched | Category:convert-gpu-to-cuda-runtime | Function=more | Reason="in another block than the copy next to it", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
    %t4 = gpu.memcpy async [%t3] %b, %d0 : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  }
  // CHECK: remarks-not-batched.mlir:[[@LINE+1]]:9: remark: [Missed] CopyNotBatched | Category:convert-gpu-to-cuda-runtime | Function=more | Reason="in another block than the copy next to it", Remark="copy issued alone, not in a cudaMemcpyBatchAsync"
  %t5 = gpu.memcpy async [%t2] %d0, %a : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.wait [%t5]
  return
}
