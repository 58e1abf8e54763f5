// The README's form: with the plugin loaded as dialect and pass plugin,
// stock mlir-opt reaches etcopy's passes and named pipelines through
// --pass-pipeline (or -p), options in braces.
// RUN: mlir-opt --load-dialect-plugin=%etcopy_lib_dir/libEtCopyPlugin.so \
// RUN:   --load-pass-plugin=%etcopy_lib_dir/libEtCopyPlugin.so \
// RUN:   --pass-pipeline='builtin.module(etcopy-propagate-device)' %s \
// RUN:   | FileCheck %s --check-prefix=COPY
// RUN: mlir-opt --load-dialect-plugin=%etcopy_lib_dir/libEtCopyPlugin.so \
// RUN:   --load-pass-plugin=%etcopy_lib_dir/libEtCopyPlugin.so \
// RUN:   -p 'builtin.module(etcopy-propagate-device{skip-h2d-for-method-inputs})' %s \
// RUN:   | FileCheck %s --check-prefix=SKIP
// RUN: mlir-opt --load-dialect-plugin=%etcopy_lib_dir/libEtCopyPlugin.so \
// RUN:   --load-pass-plugin=%etcopy_lib_dir/libEtCopyPlugin.so \
// RUN:   --pass-pipeline='builtin.module(etcopy-propagate-device,etcopy-to-cuda)' %s \
// RUN:   | FileCheck %s --check-prefix=CUDA --implicit-check-not=etcopy.h2d \
// RUN:     --implicit-check-not=etcopy.d2h

// A pass's own flag is not: mlir-opt loads the pass plugin while it parses
// its command line, too late for the passes to become flags.
// RUN: not mlir-opt --load-dialect-plugin=%etcopy_lib_dir/libEtCopyPlugin.so \
// RUN:   --load-pass-plugin=%etcopy_lib_dir/libEtCopyPlugin.so \
// RUN:   --etcopy-propagate-device %s 2>&1 | FileCheck %s --check-prefix=FLAG
// FLAG: Unknown command line argument '--etcopy-propagate-device'

// Without the dialect plugin the input does not parse.
// RUN: not mlir-opt --load-pass-plugin=%etcopy_lib_dir/libEtCopyPlugin.so \
// RUN:   --pass-pipeline='builtin.module(etcopy-propagate-device)' %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-DIALECT
// NO-DIALECT: error: #"etcopy"<"device<cuda:0>"> : 'none' attribute created with unregistered dialect

func.func private @delegate(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// COPY-LABEL: func.func @method
// COPY-SAME: (%[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// COPY: %[[D:.*]] = etcopy.h2d %[[X]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// COPY: %[[Y:.*]] = call @delegate(%[[D]])
// COPY: %[[H:.*]] = etcopy.d2h %[[Y]] : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
// COPY: return %[[H]]

// SKIP-LABEL: func.func @method
// SKIP-SAME: (%[[X:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32>
// SKIP-NOT: etcopy.h2d
// SKIP: call @delegate(%[[X]])

// CUDA-LABEL: llvm.func @method
// CUDA: llvm.call @__etcopy_memcpy(
// CUDA: llvm.call @delegate
// CUDA: llvm.call @__etcopy_memcpy(
func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @delegate(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
