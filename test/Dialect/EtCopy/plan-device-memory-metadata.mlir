// RUN: etcopy-opt %s --etcopy-plan-device-memory=plan-host | FileCheck %s
// The metadata survives the lowering (which drops the etcopy.* attributes),
// the translation to LLVM IR, and compilation: the object exports it.
// RUN: etcopy-opt %s --etcopy-plan-device-memory=plan-host --etcopy-to-cuda -o %t.mlir
// RUN: FileCheck %s --input-file=%t.mlir --check-prefix=LOWERED --implicit-check-not=etcopy.arenas
// RUN: mlir-translate --mlir-to-llvmir %t.mlir -o %t.ll
// RUN: FileCheck %s --input-file=%t.ll --check-prefix=LLVM
// RUN: %cc -c -Wno-override-module %t.ll -o %t.o
// RUN: llvm-nm %t.o | FileCheck %s --check-prefix=SYMBOLS

// For each planned function, @<function>_etcopy_arena_descs is the array of
// etcopy_arena_desc {i32 device_kind, i32 ordinal, i64 size, i64 alignment}
// (cpu = 0, cuda = 1) and @<function>_etcopy_arenas the
// etcopy_function_arenas {i64 num_arenas, ptr arenas} pointing to it;
// external for a public function. The attribute says the same.
// CHECK-LABEL: llvm.mlir.global internal constant @method_etcopy_arena_descs() {addr_space = 0 : i32} : !llvm.array<2 x struct<(i32, i32, i64, i64)>> {
// CHECK-NEXT: %[[ZERO:.*]] = llvm.mlir.zero : !llvm.array<2 x struct<(i32, i32, i64, i64)>>
// CHECK-NEXT: %[[KIND0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[S1:.*]] = llvm.insertvalue %[[KIND0]], %[[ZERO]][0, 0]
// CHECK-NEXT: %[[ORD0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[S2:.*]] = llvm.insertvalue %[[ORD0]], %[[S1]][0, 1]
// CHECK-NEXT: %[[SIZE0:.*]] = llvm.mlir.constant(512 : i64) : i64
// CHECK-NEXT: %[[S3:.*]] = llvm.insertvalue %[[SIZE0]], %[[S2]][0, 2]
// CHECK-NEXT: %[[ALIGN0:.*]] = llvm.mlir.constant(256 : i64) : i64
// CHECK-NEXT: %[[S4:.*]] = llvm.insertvalue %[[ALIGN0]], %[[S3]][0, 3]
// CHECK-NEXT: %[[KIND1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[S5:.*]] = llvm.insertvalue %[[KIND1]], %[[S4]][1, 0]
// CHECK-NEXT: %[[ORD1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[S6:.*]] = llvm.insertvalue %[[ORD1]], %[[S5]][1, 1]
// CHECK-NEXT: %[[SIZE1:.*]] = llvm.mlir.constant(1024 : i64) : i64
// CHECK-NEXT: %[[S7:.*]] = llvm.insertvalue %[[SIZE1]], %[[S6]][1, 2]
// CHECK-NEXT: %[[ALIGN1:.*]] = llvm.mlir.constant(256 : i64) : i64
// CHECK-NEXT: %[[S8:.*]] = llvm.insertvalue %[[ALIGN1]], %[[S7]][1, 3]
// CHECK-NEXT: llvm.return %[[S8]] : !llvm.array<2 x struct<(i32, i32, i64, i64)>>
// CHECK-NEXT: }
// CHECK-NEXT: llvm.mlir.global external constant @method_etcopy_arenas() {addr_space = 0 : i32} : !llvm.struct<(i64, ptr)> {
// CHECK-NEXT: %[[ZERO:.*]] = llvm.mlir.zero : !llvm.struct<(i64, ptr)>
// CHECK-NEXT: %[[COUNT:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: %[[T1:.*]] = llvm.insertvalue %[[COUNT]], %[[ZERO]][0]
// CHECK-NEXT: %[[DESCS:.*]] = llvm.mlir.addressof @method_etcopy_arena_descs : !llvm.ptr
// CHECK-NEXT: %[[T2:.*]] = llvm.insertvalue %[[DESCS]], %[[T1]][1]
// CHECK-NEXT: llvm.return %[[T2]] : !llvm.struct<(i64, ptr)>
// CHECK-NEXT: }
// CHECK-NEXT: func.func @method
// CHECK-SAME: etcopy.arenas = [{alignment = 256 : i64, device = #etcopy.device<cpu>, size = 512 : i64}, {alignment = 256 : i64, device = #etcopy.device<cuda:1>, size = 1024 : i64}]
func.func @method(%x: memref<256xf32>) {
  %d = memref.alloc() : memref<256xf32, #etcopy.device<cuda:1>>
  etcopy.h2d %x, %d : memref<256xf32> -> memref<256xf32, #etcopy.device<cuda:1>>
  %h = memref.alloc() : memref<128xf32>
  etcopy.d2h %d, %x : memref<256xf32, #etcopy.device<cuda:1>> -> memref<256xf32>
  %head = memref.subview %x[0] [128] [1] : memref<256xf32> to memref<128xf32, strided<[1]>>
  memref.copy %head, %h : memref<128xf32, strided<[1]>> to memref<128xf32>
  memref.dealloc %d : memref<256xf32, #etcopy.device<cuda:1>>
  memref.dealloc %h : memref<128xf32>
  return
}

// A private function's metadata is internal.
// CHECK: llvm.mlir.global internal constant @helper_etcopy_arena_descs() {{.*}} : !llvm.array<1 x struct<(i32, i32, i64, i64)>>
// CHECK: llvm.mlir.global internal constant @helper_etcopy_arenas() {{.*}} : !llvm.struct<(i64, ptr)>
// CHECK: func.func private @helper
func.func private @helper() {
  %d = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %d : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// LOWERED: llvm.mlir.global internal constant @method_etcopy_arena_descs()
// LOWERED: llvm.mlir.global external constant @method_etcopy_arenas()
// LOWERED: llvm.func @method(

// LLVM: @method_etcopy_arena_descs = internal constant [2 x { i32, i32, i64, i64 }] [{ i32, i32, i64, i64 } { i32 0, i32 0, i64 512, i64 256 }, { i32, i32, i64, i64 } { i32 1, i32 1, i64 1024, i64 256 }]
// LLVM: @method_etcopy_arenas = constant { i64, ptr } { i64 2, ptr @method_etcopy_arena_descs }

// SYMBOLS-DAG: {{[DR]}} method_etcopy_arenas
// SYMBOLS-DAG: T method
