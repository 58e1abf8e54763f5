// A delegate called in a loop made of blocks (cf.br / cf.cond_br): placement
// copies the loop-invariant argument once, in front of the loop, and the
// pipeline lifts the loop to scf.while (lift-cf-to-scf) so that One-Shot
// Bufferize, which supports structured loops only, bufferizes it: one copy
// in the lowered code.
// RUN: etcopy-opt %s --etcopy-to-cuda | FileCheck %s

// CHECK-LABEL: llvm.func @cf_loop(
// CHECK-NOT: llvm.func
// CHECK: llvm.call @__etcopy_memcpy(
// CHECK-NOT: llvm.call @__etcopy_memcpy(
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
