// XFAIL: *
// A method that returns its device argument: etcopy places no copy, but
// the default --etcopy-to-cuda copies the argument device-to-device into a
// fresh buffer (ownership-based deallocation makes every returned buffer
// owned by the caller, and a function argument is not owned). Found by
// test/Pipelines/copy-bound.test on optimize-transfers.mlir's round_trips
// and cross_device_kept. Remove the XFAIL when a returned argument is
// returned as is.
// RUN: etcopy-opt %s --etcopy-to-cuda | FileCheck %s

// CHECK-LABEL: llvm.func @identity(
// CHECK-NOT: llvm.call @cudaMemcpyAsync(
// CHECK: llvm.return

func.func @identity(%y: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
  return %y : tensor<4xf32, #etcopy.device<cuda:0>>
}
