// A public function returning its device argument returns a copy of it: with
// MLIR's ownership-based deallocation a caller owns every buffer a function
// returns, and the function does not own its argument. This is the one
// device-to-device copy the lowered code may add to etcopy's count
// (utils/transfer-benchmark/check_copy_bound.py counts it in the bound). A
// host argument is copied on the host (memcpy), with no CUDA call.
// RUN: etcopy-opt %s --etcopy-to-cuda | FileCheck %s

// CHECK-LABEL: llvm.func @identity(
// CHECK: %[[KIND:.*]] = llvm.mlir.constant(3 : i32)
// CHECK: llvm.call @__etcopy_memcpy(%{{.*}}, %{{.*}}, %{{.*}}, %[[KIND]],
// CHECK-NOT: llvm.call @__etcopy_memcpy(
// CHECK: llvm.return
func.func @identity(%y: tensor<4xf32, #etcopy.device<cuda:0>>, %x: tensor<4xf32>)
    -> (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32>) {
  return %y, %x : tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32>
}
