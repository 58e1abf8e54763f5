// RUN: etcopy-opt %s -split-input-file -verify-diagnostics --etcopy-export-signatures | FileCheck %s
// RUN: etcopy-opt %s -split-input-file -verify-diagnostics --etcopy-export-signatures --etcopy-export-signatures | FileCheck %s

// etcopy-export-signatures: the etcopy.signature attribute and the C-layout
// globals of every public function with a body (the second RUN line: running
// it again gives the same output). Layout of etcopy_value_desc:
// {i32 kind (0 scalar, 1 memref, 2 unranked memref), i32 device_kind
// (0 cpu, 1 cuda), i32 ordinal, i32 rank, i64 element_bytes}.

// CHECK-LABEL: llvm.mlir.global internal constant @method_etcopy_signature_values()
// CHECK-SAME: !llvm.array<4 x struct<(i32, i32, i32, i32, i64)>>
// Argument 0: memref, cuda:1, rank 2, 2-byte elements.
// CHECK: %[[K0:.*]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: llvm.insertvalue %[[K0]], %{{.*}}[0, 0]
// CHECK-NEXT: %[[D0:.*]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: llvm.insertvalue %[[D0]], %{{.*}}[0, 1]
// CHECK-NEXT: %[[O0:.*]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: llvm.insertvalue %[[O0]], %{{.*}}[0, 2]
// CHECK-NEXT: %[[R0:.*]] = llvm.mlir.constant(2 : i32)
// CHECK-NEXT: llvm.insertvalue %[[R0]], %{{.*}}[0, 3]
// CHECK-NEXT: %[[B0:.*]] = llvm.mlir.constant(2 : i64)
// CHECK-NEXT: llvm.insertvalue %[[B0]], %{{.*}}[0, 4]
// Argument 1: an index scalar on the host, 8 bytes.
// CHECK: %[[K1:.*]] = llvm.mlir.constant(0 : i32)
// CHECK-NEXT: llvm.insertvalue %[[K1]], %{{.*}}[1, 0]
// CHECK: %[[B1:.*]] = llvm.mlir.constant(8 : i64)
// CHECK-NEXT: llvm.insertvalue %[[B1]], %{{.*}}[1, 4]
// Argument 2: an unranked host memref of i1 (stored as bytes).
// CHECK: %[[K2:.*]] = llvm.mlir.constant(2 : i32)
// CHECK-NEXT: llvm.insertvalue %[[K2]], %{{.*}}[2, 0]
// CHECK: %[[B2:.*]] = llvm.mlir.constant(1 : i64)
// CHECK-NEXT: llvm.insertvalue %[[B2]], %{{.*}}[2, 4]
// Result 0: memref on the host, rank 1, f32.
// CHECK: %[[K3:.*]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: llvm.insertvalue %[[K3]], %{{.*}}[3, 0]
// CHECK-NEXT: %[[D3:.*]] = llvm.mlir.constant(0 : i32)
// CHECK-NEXT: llvm.insertvalue %[[D3]], %{{.*}}[3, 1]
// CHECK: %[[R3:.*]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: llvm.insertvalue %[[R3]], %{{.*}}[3, 3]
// CHECK-NEXT: %[[B3:.*]] = llvm.mlir.constant(4 : i64)
// CHECK-NEXT: llvm.insertvalue %[[B3]], %{{.*}}[3, 4]
// The table: 3 arguments from the first entry, 1 result from the fourth.
// CHECK-LABEL: llvm.mlir.global external constant @method_etcopy_signature()
// CHECK-SAME: !llvm.struct<(i64, ptr, i64, ptr)>
// CHECK: %[[VALUES:.*]] = llvm.mlir.addressof @method_etcopy_signature_values
// CHECK-NEXT: %[[RESULTS:.*]] = llvm.getelementptr %[[VALUES]][3]
// CHECK-NEXT: %[[NARGS:.*]] = llvm.mlir.constant(3 : i64)
// CHECK-NEXT: %[[NRESULTS:.*]] = llvm.mlir.constant(1 : i64)
// CHECK-NEXT: llvm.insertvalue %[[NARGS]], %{{.*}}[0]
// CHECK-NEXT: llvm.insertvalue %[[VALUES]], %{{.*}}[1]
// CHECK-NEXT: llvm.insertvalue %[[NRESULTS]], %{{.*}}[2]
// CHECK-NEXT: llvm.insertvalue %[[RESULTS]], %{{.*}}[3]
// CHECK-LABEL: func.func @method
// CHECK-SAME: etcopy.signature = {arguments = [{device = #etcopy.device<cuda:1>, element_bytes = 2 : i64, kind = "memref", rank = 2 : i64}, {device = #etcopy.device<cpu>, element_bytes = 8 : i64, kind = "scalar", rank = 0 : i64}, {device = #etcopy.device<cpu>, element_bytes = 1 : i64, kind = "unranked_memref", rank = 0 : i64}], results = [{device = #etcopy.device<cpu>, element_bytes = 4 : i64, kind = "memref", rank = 1 : i64}]}
func.func @method(%x: memref<8x4xf16, #etcopy.device<cuda:1>>, %n: index, %flags: memref<*xi1>) -> memref<8xf32> {
  %r = memref.alloc() : memref<8xf32>
  return %r : memref<8xf32>
}

// Private functions and declarations are not entry points: nothing.
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: etcopy.signature
func.func private @helper(%x: memref<4xf32>) {
  return
}
// CHECK-LABEL: func.func private @declared
// CHECK-NOT: etcopy.signature
func.func private @declared(memref<4xf32, #etcopy.device<cuda:0>>)

// -----

// A method without arguments or results points at one unused entry.
// CHECK-LABEL: llvm.mlir.global internal constant @nothing_etcopy_signature_values()
// CHECK-SAME: !llvm.array<1 x struct<(i32, i32, i32, i32, i64)>>
// CHECK-LABEL: llvm.mlir.global external constant @nothing_etcopy_signature()
// CHECK: llvm.mlir.constant(0 : i64)
// CHECK-LABEL: func.func @nothing()
// CHECK-SAME: etcopy.signature = {arguments = [], results = []}
func.func @nothing() {
  return
}

// -----

// expected-note @+1 {{defined here}}
func.func private @clash_etcopy_signature()
// expected-error @+1 {{cannot export the signature of @clash: symbol @clash_etcopy_signature already exists}}
func.func @clash() {
  return
}

// -----

// expected-error @+1 {{cannot describe argument #0 of @opaque: '!shape.size' has no size a host program could use}}
func.func @opaque(%s: !shape.size) {
  return
}

// -----

// Every value that cannot be described is reported.
// expected-error @+2 {{cannot describe argument #0 of @foreign_space: memory space 1 : i64 of 'memref<4xf32, 1>' is not an #etcopy.device}}
// expected-error @+1 {{cannot describe result #0 of @foreign_space: memory space 1 : i64 of 'memref<4xf32, 1>' is not an #etcopy.device}}
func.func @foreign_space(%m: memref<4xf32, 1>) -> memref<4xf32, 1> {
  return %m : memref<4xf32, 1>
}
