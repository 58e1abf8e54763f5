// RUN: etcopy-opt %s --etcopy-to-cuda -split-input-file -verify-diagnostics \
// RUN:   -o /dev/null
// RUN: etcopy-opt %s --etcopy-to-host -split-input-file -verify-diagnostics \
// RUN:   -o /dev/null
// RUN: etcopy-opt %s -split-input-file \
// RUN:   -p 'builtin.module(builtin.module(etcopy-to-cuda))' \
// RUN:   | FileCheck %s
// RUN: not etcopy-opt %s -split-input-file \
// RUN:   -p 'builtin.module(etcopy-check-pipeline-input)' -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DEFAULT

// Tensor code in a nested module: bufferization skips nested modules, so
// without the check the pipelines stopped at convert-etcopy-to-gpu's
// "bufferize first" (CUDA) or at the final check for unconverted ops (host).
// Both pipelines now say what to run instead, before any stage runs; so
// does the check on its own, naming etcopy-to-cuda by default.
// DEFAULT: nested-module.mlir:[[# @LINE + 4]]:3: error: cannot lower the code of a nested 'builtin.module': etcopy-to-cuda lowers one module,
// DEFAULT-SAME: e.g. -p 'builtin.module(builtin.module(etcopy-to-cuda))'
module {
  // expected-error-re @+1 {{cannot lower the code of a nested 'builtin.module': {{etcopy-to-(cuda|host)}} lowers one module, and puts the runtime support and the globals its code refers to in that module; run it on the nested module instead (with the same options), e.g. -p 'builtin.module(builtin.module({{etcopy-to-(cuda|host)}}))'}}
  module {
    func.func @method(%x: tensor<8xf32>) -> tensor<8xf32, #etcopy.device<cuda:0>> {
      %d = etcopy.h2d %x : tensor<8xf32> -> tensor<8xf32, #etcopy.device<cuda:0>>
      return %d : tensor<8xf32, #etcopy.device<cuda:0>>
    }
  }
}

// The suggested form lowers the nested module in place, the support and the
// globals inside it (indented as its ops).
// CHECK-LABEL: module {
// CHECK-NEXT: module {
// CHECK-NOT: etcopy.h2d
// CHECK: llvm.func @method(
// CHECK-NOT: etcopy.h2d
// CHECK: llvm.call @__etcopy_memcpy(
// CHECK-NOT: etcopy.h2d
// CHECK: {{^    }}llvm.func linkonce_odr @__etcopy_memcpy(
// CHECK-NOT: etcopy.h2d
// CHECK: {{^// -{5}$}}

// -----

// Each nested module with code is reported, the others are not; an empty one
// is left alone.
module {
  // expected-error @+1 {{cannot lower the code of a nested 'builtin.module'}}
  module {
    func.func private @declared(memref<8xf32>)
  }
  module {
  }
  // expected-error @+1 {{cannot lower the code of a nested 'builtin.module'}}
  module @named {
    func.func private @declared(memref<8xf32>)
  }
}

// CHECK-NEXT: module {
// CHECK-NEXT: module {
// CHECK-NEXT: llvm.func @declared(!llvm.ptr, !llvm.ptr, i64, i64, i64) attributes {sym_visibility = "private"}
// CHECK-NEXT: }
// CHECK-NEXT: module {
// CHECK-NEXT: }
// CHECK-NEXT: module @named {
// CHECK-NEXT: llvm.func @declared(!llvm.ptr, !llvm.ptr, i64, i64, i64) attributes {sym_visibility = "private"}
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// Code beside an empty nested module lowers as usual.
module {
  module {
  }
  func.func @method(%x: memref<8xf32>, %d: memref<8xf32, #etcopy.device<cuda:0>>) {
    etcopy.h2d %x, %d : memref<8xf32> -> memref<8xf32, #etcopy.device<cuda:0>>
    return
  }
}
// The nested run leaves the outer code alone: run the pipeline on each module.
// CHECK: {{^// -{5}$}}
// CHECK-NEXT: module {
// CHECK-NEXT: module {
// CHECK-NEXT: }
// CHECK-NEXT: func.func @method(
// CHECK-NEXT: etcopy.h2d
