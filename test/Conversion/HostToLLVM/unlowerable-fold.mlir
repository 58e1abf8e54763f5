// RUN: etcopy-opt %s --etcopy-host-to-llvm | FileCheck %s
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime | FileCheck %s
// RUN: etcopy-opt %s --etcopy-host-to-llvm --etcopy-finalize-llvm \
// RUN:   -verify-diagnostics > /dev/null

// Host code that cannot be lowered to LLVM, here math on a tensor, is left
// as it was by both conversions to LLVM, and etcopy-finalize-llvm reports
// it. The conversion driver first folds `arith.addf` of two constants into
// a tensor constant, which no pattern lowers, and must undo that fold: the
// conversions keep MLIR's pattern rollback for this. Without it (MLIR 22's
// experimental `allowPatternRollback = false`, 19 to 24 % faster on
// tensor-level input, docs/CompileTime.md) the driver aborts the process
// here with "folder rollback of IR modifications requested".

// CHECK-LABEL: func.func @host_tensor_math(
// CHECK-NEXT:    %[[A:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = arith.addf %[[A]], %[[A]] : tensor<4xf32>
// CHECK-NEXT:    return %[[B]] : tensor<4xf32>
func.func @host_tensor_math() -> tensor<4xf32> {
  // expected-error @below {{'arith.constant' was left unconverted by the pipeline}}
  %a = arith.constant dense<1.0> : tensor<4xf32>
  %b = arith.addf %a, %a : tensor<4xf32>
  return %b : tensor<4xf32>
}
