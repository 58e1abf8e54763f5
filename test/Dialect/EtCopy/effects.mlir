// RUN: etcopy-opt %s -cse -split-input-file | FileCheck %s --check-prefix=CSE
// RUN: etcopy-opt %s -loop-invariant-code-motion -split-input-file | FileCheck %s --check-prefix=LICM

// The functional form is pure: CSE merges two copies of one value to one
// device, and loop-invariant code motion hoists a copy out of a loop. The out
// form reads and writes memory: it is neither merged nor hoisted.

// CSE-LABEL: func.func @cse_functional
// CSE: %[[D:.*]] = etcopy.h2d
// CSE-NOT: etcopy.h2d
// CSE: return %[[D]], %[[D]]
func.func @cse_functional(%x: tensor<4xf32>) -> (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) {
  %0 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %1 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return %0, %1 : tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>
}

// -----

// Negative: copies of one value to different devices are different values.
// CSE-LABEL: func.func @cse_different_devices
// CSE: etcopy.h2d %{{.*}} : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// CSE: etcopy.h2d %{{.*}} : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
func.func @cse_different_devices(%x: tensor<4xf32>) -> (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:1>>) {
  %0 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %1 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  return %0, %1 : tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:1>>
}

// -----

// Negative: two out-form copies into one buffer are two writes.
// CSE-LABEL: func.func @cse_out_form
// CSE-COUNT-2: etcopy.h2d %{{.*}}, %{{.*}}
func.func @cse_out_form(%a: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  etcopy.h2d %a, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %a, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// LICM-LABEL: func.func @licm_functional
// LICM: etcopy.h2d
// LICM: scf.for
// LICM-NOT: etcopy.h2d
// LICM: func.call @use
func.func private @use(tensor<4xf32, #etcopy.device<cuda:0>>)
func.func @licm_functional(%x: tensor<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    func.call @use(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  }
  return
}

// -----

// Negative: the out form stays in the loop.
// LICM-LABEL: func.func @licm_out_form
// LICM: scf.for
// LICM-NEXT: etcopy.h2d
func.func @licm_out_form(%a: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    etcopy.h2d %a, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  }
  return
}

// -----

// Negative: a copy that narrows a dynamic size to a static one can fail at
// run time, so it is not speculated out of a loop that may not run.
// LICM-LABEL: func.func @licm_narrowing
// LICM: scf.for
// LICM-NEXT: etcopy.h2d
func.func private @use_static(tensor<4xf32, #etcopy.device<cuda:0>>)
func.func @licm_narrowing(%x: tensor<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %d = etcopy.h2d %x : tensor<?xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
    func.call @use_static(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> ()
  }
  return
}
