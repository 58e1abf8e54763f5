// RUN: etcopy-opt %s -p 'builtin.module(builtin.module(convert-gpu-to-cuda-runtime))' \
// RUN:   | FileCheck %s --implicit-check-not=gpu.memcpy

// Run on a nested module, as its error for nested modules suggests
// (errors.mlir), the pass puts the runtime support and the globals in that
// module (indented as its ops): the output verifies (etcopy-opt verifies
// after the pass).

// CHECK-LABEL: module {
// CHECK-NEXT: module {
// CHECK: llvm.func @nested(
// CHECK: %[[FILE:.*]] = llvm.mlir.addressof @__etcopy_file
// CHECK: llvm.call @__etcopy_memcpy({{.*}}, %[[FILE]],
// CHECK-DAG: {{^    }}llvm.mlir.global private constant @__etcopy_file(
// CHECK-DAG: {{^    }}llvm.func linkonce_odr @__etcopy_memcpy(
module {
  module {
    func.func @nested(%h: memref<8xf32>, %d: memref<8xf32, #etcopy.device<cuda:0>>) {
      gpu.memcpy %d, %h : memref<8xf32, #etcopy.device<cuda:0>>, memref<8xf32>
      return
    }
  }
}
