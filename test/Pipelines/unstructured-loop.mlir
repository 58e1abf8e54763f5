// XFAIL: *
// A delegate called in a loop made of blocks (cf.br / cf.cond_br):
// placement copies the loop-invariant argument once, in front of the loop,
// but --etcopy-to-cuda fails in bufferization with "Only structured
// control-flow loops are supported." (One-Shot Bufferize's limit). Found
// by test/Pipelines/copy-bound.test on optimize-transfers.mlir's and
// propagate-device-control-flow.mlir's cf_loop. Remove the XFAIL when the
// method lowers (for example by lifting such loops to scf first).
// RUN: etcopy-opt %s --etcopy-to-cuda | FileCheck %s

// CHECK-LABEL: llvm.func @cf_loop(
// CHECK-COUNT-1: llvm.call @cudaMemcpyAsync(
// CHECK-NOT: llvm.call @cudaMemcpyAsync(
// CHECK: llvm.return

func.func private @step(tensor<4xf32>) attributes {etcopy.device = #etcopy.device<cuda:0>}

func.func @cf_loop(%x: tensor<4xf32>, %c: i1) {
  cf.br ^bb1
^bb1:
  func.call @step(%x) : (tensor<4xf32>) -> ()
  cf.cond_br %c, ^bb1, ^bb2
^bb2:
  return
}
