// XFAIL: *
// Two values on cuda:0 joined by a conditional branch: placement keeps the
// block argument on the device, then the canonicalizer turns the
// cf.cond_br into an arith.select of two device tensors, which
// convert-elementwise-to-linalg makes an element-wise linalg.generic on the
// host: --etcopy-to-cuda fails with "'memref.load' op reads device memory
// 'memref<4xf32, #etcopy.device<cuda:0>>' on the host". A select with a
// scalar condition only picks one of the two buffers and should bufferize
// as such. Found by test/Pipelines/copy-bound.test on
// propagate-device-control-flow.mlir's cf_branches. Remove the XFAIL when
// the method lowers.
// RUN: etcopy-opt %s --etcopy-to-cuda | FileCheck %s

// CHECK-LABEL: llvm.func @select(
// CHECK-COUNT-2: llvm.call @cudaMemcpyAsync(
// CHECK-NOT: llvm.call @cudaMemcpyAsync(
// CHECK: llvm.return

func.func private @step(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

func.func @select(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %a = func.call @step(%x) : (tensor<4xf32>) -> tensor<4xf32>
  cf.cond_br %c, ^bb1(%a : tensor<4xf32>), ^bb1(%x : tensor<4xf32>)
^bb1(%p: tensor<4xf32>):
  %q = func.call @step(%p) : (tensor<4xf32>) -> tensor<4xf32>
  return %q : tensor<4xf32>
}
