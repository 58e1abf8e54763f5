// A cf.cond_br joining two device values, which the canonicalizer turns into
// an arith.select of two device tensors with a scalar condition: the select
// only chooses a buffer, so it stays a select (etcopy-elementwise-to-linalg
// leaves it) and the method lowers with the bound's two copies.
// RUN: etcopy-opt %s --etcopy-to-cuda | FileCheck %s

// CHECK-LABEL: llvm.func @select(
// CHECK-NOT: llvm.func
// CHECK: llvm.call @__etcopy_memcpy(
// CHECK-NOT: llvm.func
// CHECK: llvm.call @__etcopy_memcpy(
// CHECK-NOT: llvm.call @__etcopy_memcpy(
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
