// RUN: etcopy-opt %s --etcopy-host-to-llvm -split-input-file \
// RUN:   | FileCheck %s --implicit-check-not=unrealized_conversion_cast \
// RUN:       --implicit-check-not=func.func --implicit-check-not=memref.
// RUN: etcopy-opt %s --etcopy-host-to-llvm --etcopy-finalize-llvm \
// RUN:   -split-input-file -verify-diagnostics > /dev/null

// etcopy-host-to-llvm: the whole module to LLVM in one conversion. Calls
// become llvm.call (through a symbol table), host buffers aligned_alloc and
// free, control flow and arithmetic their LLVM forms; each constant value is
// one op, the descriptor of a buffer that is only passed on is not rebuilt,
// and no cast is left.

// CHECK-LABEL: llvm.func @method(
// CHECK-SAME:    %[[C:.*]]: i1)
// CHECK-DAG:     %[[C64:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK-DAG:     %[[C16:.*]] = llvm.mlir.constant(16 : index) : i64
// CHECK:         %[[A:.*]] = llvm.call @aligned_alloc(%[[C64]], %[[C64]])
// CHECK:         llvm.call @fill(%[[A]], %[[A]], %{{.*}}, %[[C16]], %{{.*}})
// CHECK:         llvm.cond_br %[[C]], ^bb1, ^bb2
// CHECK:       ^bb1:
// CHECK-NEXT:    llvm.call @consume(%[[A]], %[[A]], %{{.*}}, %[[C16]], %{{.*}})
// CHECK-NEXT:    llvm.br ^bb2
// CHECK:       ^bb2:
// CHECK-NEXT:    llvm.call @free(%[[A]])
// CHECK-NEXT:    llvm.return
// CHECK-NOT:   llvm.mlir.constant(64 : i64)
// CHECK-NOT:   @malloc
func.func private @fill(memref<16xf32>)
func.func private @consume(memref<16xf32>)
func.func @method(%c: i1) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  func.call @fill(%a) : (memref<16xf32>) -> ()
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  func.call @consume(%a) : (memref<16xf32>) -> ()
  cf.br ^bb2
^bb2:
  memref.dealloc %a : memref<16xf32>
  return
}

// -----

// Negative: device work is not this pass's (convert-gpu-to-cuda-runtime
// lowers it); it is left, and etcopy-finalize-llvm reports it.
// CHECK-LABEL: llvm.func @device_work(
// CHECK:         gpu.wait
func.func @device_work() {
  // expected-error @below {{'gpu.wait' was left unconverted by the pipeline}}
  gpu.wait
  return
}
