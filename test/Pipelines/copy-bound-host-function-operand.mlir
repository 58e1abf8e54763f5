// The delegate contract covers delegates only. A device tensor passed twice
// to a private function without etcopy.device (unknown code, to
// bufferization: it may write its operand) is copied before one of the
// calls, device-to-device; passed to a delegate, it is not. This is why
// the placement tests that test/Pipelines/copy-bound.test lowers declare
// their device consumers as delegates.
// RUN: etcopy-opt %s --etcopy-to-cuda | FileCheck %s

// CHECK-LABEL: llvm.func @host_function(
// CHECK-DAG: %[[H2D:.*]] = llvm.mlir.constant(1 : i32)
// CHECK-DAG: %[[D2D:.*]] = llvm.mlir.constant(3 : i32)
// CHECK: llvm.call @__etcopy_memcpy(%{{.*}}, %{{.*}}, %{{.*}}, %[[H2D]],
// CHECK: llvm.call @__etcopy_memcpy(%{{.*}}, %{{.*}}, %{{.*}}, %[[D2D]],
// CHECK-NOT: llvm.call @__etcopy_memcpy(
// CHECK: llvm.return
func.func private @use(tensor<4xf32, #etcopy.device<cuda:0>>)
func.func @host_function(%x: tensor<4xf32>) {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  func.call @use(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  func.call @use(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// CHECK-LABEL: llvm.func @delegate(
// CHECK-NOT: llvm.func
// CHECK: llvm.call @__etcopy_memcpy(
// CHECK-NOT: llvm.call @__etcopy_memcpy(
// CHECK: llvm.return
func.func private @consume(tensor<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @delegate(%x: tensor<4xf32>) {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  func.call @consume(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  func.call @consume(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}
