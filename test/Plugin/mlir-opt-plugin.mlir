// Debian's stock mlir-opt loads etcopy as a dialect and pass plugin.
// RUN: mlir-opt --load-dialect-plugin=%etcopy_lib_dir/libEtCopyPlugin.so %s \
// RUN:   --split-input-file --canonicalize | FileCheck %s --check-prefix=DIALECT
// RUN: mlir-opt --load-dialect-plugin=%etcopy_lib_dir/libEtCopyPlugin.so \
// RUN:   --load-pass-plugin=%etcopy_lib_dir/libEtCopyPlugin.so %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(canonicalize,one-shot-bufferize{bufferize-function-boundaries},convert-etcopy-to-gpu,convert-gpu-to-cuda-runtime)" \
// RUN:   | FileCheck %s --check-prefix=PASSES

// DIALECT-LABEL: func.func @upload
// DIALECT: etcopy.h2d %{{.*}}, %{{.*}} : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
// PASSES-LABEL: llvm.func @upload
// PASSES: llvm.call @cudaMemcpyAsync
func.func @upload(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// The dialect's folders run in the stock tool.
// DIALECT-LABEL: func.func @round_trip
// DIALECT-SAME: (%[[X:.*]]: tensor<4xf32>)
// DIALECT-NEXT: return %[[X]]
// PASSES-LABEL: llvm.func @round_trip
// PASSES-NOT: cuda
func.func @round_trip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %d : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}
