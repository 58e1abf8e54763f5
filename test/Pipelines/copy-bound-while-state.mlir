// An scf.while whose state stays on cuda:0 (its condition is computed by a
// delegate): placement leaves 3 copies (the state in and out, the i1 flag out
// in each iteration), and so does the lowered code. One-Shot Bufferize
// copies every state scf.condition forwards unless the body yields a buffer
// equivalent to its argument (a delegate's fresh result never is);
// etcopy-bufferize removes that copy when nothing can observe it.
// RUN: etcopy-opt %s --etcopy-to-cuda | FileCheck %s

// CHECK-LABEL: llvm.func @while_on_device(
// CHECK-NOT: llvm.func
// CHECK: llvm.call @__etcopy_memcpy(
// CHECK-NOT: llvm.func
// CHECK: llvm.call @__etcopy_memcpy(
// CHECK-NOT: llvm.func
// CHECK: llvm.call @__etcopy_memcpy(
// CHECK-NOT: llvm.call @__etcopy_memcpy(
// CHECK: llvm.return

func.func private @step(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @check(tensor<4xf32>) -> tensor<i1>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

func.func @while_on_device(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.while (%s = %x) : (tensor<4xf32>) -> tensor<4xf32> {
    %f = func.call @check(%s) : (tensor<4xf32>) -> tensor<i1>
    %c = tensor.extract %f[] : tensor<i1>
    scf.condition(%c) %s : tensor<4xf32>
  } do {
  ^bb0(%t: tensor<4xf32>):
    %n = func.call @step(%t) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
