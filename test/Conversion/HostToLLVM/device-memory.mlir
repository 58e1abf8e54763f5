// RUN: etcopy-opt %s --etcopy-host-to-llvm -split-input-file -verify-diagnostics
// The pass fails (exit status 1) on an error the type converter reports
// without failing the conversion (the last case below, alone).
// RUN: printf 'func.func @g(%%%%m: memref<4xf32, #gpu.address_space<global>>) {\n  return\n}\n' \
// RUN:   | not etcopy-opt --etcopy-host-to-llvm 2>&1 | FileCheck %s --check-prefix=STATUS
// STATUS: error: conversion of memref memory space #gpu.address_space<global> to integer address space failed

// etcopy-host-to-llvm lowers modules without device work: memory on a
// device is an error naming the op and the type, where the pass once let
// the type converter report an unknown-location error and succeeded anyway
// (the pipeline fuzzer's CheckSuccessfulPasses caught it). Memory placed on
// the host (#etcopy.device<cpu>) is not device work.

// expected-error @+1 {{'func.func' uses device memory '(memref<8xf32>, memref<8xf32, #etcopy.device<cuda:0>>) -> ()': etcopy-host-to-llvm lowers modules without device work; lower this one with convert-gpu-to-cuda-runtime (or --etcopy-to-cuda)}}
func.func @copy(%h: memref<8xf32>, %d: memref<8xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'gpu.memcpy' uses device memory 'memref<8xf32, #etcopy.device<cuda:0>>'}}
  gpu.memcpy %d, %h : memref<8xf32, #etcopy.device<cuda:0>>, memref<8xf32>
  return
}

// -----

// A declaration has no op to report: its signature is.
// expected-error @+1 {{'func.func' uses device memory '(memref<4xf32, #etcopy.device<cuda:1>>) -> ()'}}
func.func private @delegate(memref<4xf32, #etcopy.device<cuda:1>>)

// -----

// A nested module is walked too.
module {
  module {
    func.func @f() {
      // expected-error @+1 {{'memref.alloc' uses device memory 'memref<4xf32, #etcopy.device<cuda:0>>'}}
      %d = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
      return
    }
  }
}

// -----

// An error the LLVM type converter reports without failing the conversion
// (here, for a memory space it has no conversion for) fails the pass too;
// the pass once succeeded after it.
// expected-error @unknown {{conversion of memref memory space #gpu.address_space<global> to integer address space failed}}
func.func @gpu_space(%m: memref<4xf32, #gpu.address_space<global>>) {
  return
}
