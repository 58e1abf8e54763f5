// RUN: etcopy-opt %s -split-input-file -etcopy-optimize-transfers | FileCheck %s
// RUN: etcopy-opt %s -split-input-file -etcopy-optimize-transfers --remarks-filter=etcopy -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Memref level: a move from one device to another through a host temporary
// (`etcopy.d2h` into a `memref.alloc` that nothing else uses but one
// `etcopy.h2d` to another device and its deallocation) becomes one
// `etcopy.d2d` at the h2d, as the canonicalizer does for the functional
// form, when nothing may write the source in between and the sizes the
// copies check carry over.

!s0 = memref<4xf32, #etcopy.device<cuda:0>>
!s1 = memref<4xf32, #etcopy.device<cuda:1>>

// CHECK-LABEL: func.func @move
// CHECK-SAME: (%[[S:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[D:.*]]: memref<4xf32, #etcopy.device<cuda:1>>)
// CHECK-NEXT: etcopy.d2d %[[S]], %[[D]] : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, #etcopy.device<cuda:1>>
// CHECK-NEXT: return
// REMARK: remark: [Passed] MovedBetweenDevices | Category:etcopy:etcopy-optimize-transfers | Function=move | Remark="etcopy.d2h from cuda:0 and etcopy.h2d to cuda:1 through a host temporary: one etcopy.d2d"
func.func @move(%s: !s0, %d: !s1) {
  %t = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t : !s0 -> memref<4xf32>
  etcopy.h2d %t, %d : memref<4xf32> -> !s1
  memref.dealloc %t : memref<4xf32>
  return
}

// -----

// Work between the two copies that cannot touch the source: host memory,
// a read of the source, a buffer of its device that is another allocation,
// the destination's device. The d2d reads the source at the h2d.
!s0 = memref<4xf32, #etcopy.device<cuda:0>>
!s1 = memref<4xf32, #etcopy.device<cuda:1>>

// CHECK-LABEL: func.func @unrelated_work_between
// CHECK-SAME: (%[[H:.*]]: memref<4xf32>, %[[D:.*]]: memref<4xf32, #etcopy.device<cuda:1>>, %[[E:.*]]: memref<4xf32, #etcopy.device<cuda:1>>, %[[F:.*]]: f32)
// CHECK: %[[S:.*]] = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: etcopy.h2d %[[H]], %[[S]]
// CHECK-NEXT: %[[O:.*]] = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: memref.store
// CHECK-NEXT: etcopy.d2h %[[S]], %[[H]]
// CHECK-NEXT: etcopy.h2d %[[H]], %[[O]]
// CHECK-NEXT: etcopy.h2d %[[H]], %[[E]]
// CHECK-NEXT: etcopy.d2d %[[S]], %[[D]] : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, #etcopy.device<cuda:1>>
// CHECK-NEXT: memref.dealloc %[[O]]
// REMARK: remark: [Passed] MovedBetweenDevices | {{.*}} | Function=unrelated_work_between |
// CHECK-NEXT: memref.dealloc %[[S]]
// CHECK-NEXT: return
func.func @unrelated_work_between(%h: memref<4xf32>, %d: !s1, %e: !s1, %f: f32) {
  %c0 = arith.constant 0 : index
  %s = memref.alloc() : !s0
  etcopy.h2d %h, %s : memref<4xf32> -> !s0
  %t = memref.alloc() : memref<4xf32>
  %o = memref.alloc() : !s0
  etcopy.d2h %s, %t : !s0 -> memref<4xf32>
  memref.store %f, %h[%c0] : memref<4xf32>
  etcopy.d2h %s, %h : !s0 -> memref<4xf32>
  etcopy.h2d %h, %o : memref<4xf32> -> !s0
  etcopy.h2d %h, %e : memref<4xf32> -> !s1
  etcopy.h2d %t, %d : memref<4xf32> -> !s1
  memref.dealloc %t : memref<4xf32>
  memref.dealloc %o : !s0
  memref.dealloc %s : !s0
  return
}

// -----

// Dynamic sizes: the temporary's size is read from the source, so the d2d
// compares the same sizes. A temporary nobody frees goes too.
// CHECK-LABEL: func.func @dynamic_sizes
// CHECK-SAME: (%[[S:.*]]: memref<?x4xf32, #etcopy.device<cuda:1>>, %[[D:.*]]: memref<2x?xf32, #etcopy.device<cuda:0>>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: etcopy.{{h2d|d2h}}
// REMARK: remark: [Passed] MovedBetweenDevices | {{.*}} | Function=dynamic_sizes |
// CHECK: etcopy.d2d %[[S]], %[[D]] : memref<?x4xf32, #etcopy.device<cuda:1>> -> memref<2x?xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: return
func.func @dynamic_sizes(%s: memref<?x4xf32, #etcopy.device<cuda:1>>, %d: memref<2x?xf32, #etcopy.device<cuda:0>>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %s, %c0 : memref<?x4xf32, #etcopy.device<cuda:1>>
  %t = memref.alloc(%n) : memref<?x4xf32>
  etcopy.d2h %s, %t : memref<?x4xf32, #etcopy.device<cuda:1>> -> memref<?x4xf32>
  etcopy.h2d %t, %d : memref<?x4xf32> -> memref<2x?xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// Moves in progress at once in one block: each becomes a d2d at its h2d,
// except the third, whose source the first one's h2d overwrites before the
// third's h2d: it stays staged through the host.
!s0 = memref<4xf32, #etcopy.device<cuda:0>>
!s1 = memref<4xf32, #etcopy.device<cuda:1>>
!s2 = memref<4xf32, #etcopy.device<cuda:2>>

// CHECK-LABEL: func.func @interleaved
// CHECK-SAME: (%[[S:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[R:.*]]: memref<4xf32, #etcopy.device<cuda:2>>, %[[D:.*]]: memref<4xf32, #etcopy.device<cuda:1>>, %[[E:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[F:.*]]: memref<4xf32, #etcopy.device<cuda:0>>)
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: etcopy.d2h %[[D]], %[[T]]
// CHECK-NEXT: etcopy.d2d %[[S]], %[[D]]
// CHECK-NEXT: etcopy.d2d %[[R]], %[[E]]
// CHECK-NEXT: etcopy.h2d %[[T]], %[[F]]
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK-NEXT: return
// REMARK: remark: [Passed] MovedBetweenDevices | {{.*}} | Function=interleaved | Remark="etcopy.d2h from cuda:0 and etcopy.h2d to cuda:1
// REMARK: remark: [Passed] MovedBetweenDevices | {{.*}} | Function=interleaved | Remark="etcopy.d2h from cuda:2 and etcopy.h2d to cuda:0
func.func @interleaved(%s: !s0, %r: !s2, %d: !s1, %e: !s0, %f: !s0) {
  %t0 = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t0 : !s0 -> memref<4xf32>
  %t1 = memref.alloc() : memref<4xf32>
  etcopy.d2h %r, %t1 : !s2 -> memref<4xf32>
  %t2 = memref.alloc() : memref<4xf32>
  etcopy.d2h %d, %t2 : !s1 -> memref<4xf32>
  etcopy.h2d %t0, %d : memref<4xf32> -> !s1
  etcopy.h2d %t1, %e : memref<4xf32> -> !s0
  etcopy.h2d %t2, %f : memref<4xf32> -> !s0
  memref.dealloc %t0 : memref<4xf32>
  memref.dealloc %t1 : memref<4xf32>
  memref.dealloc %t2 : memref<4xf32>
  return
}

// -----

// Negative: the host reads the temporary between the copies (or after
// them): the host copy is needed.
!s0 = memref<4xf32, #etcopy.device<cuda:0>>
!s1 = memref<4xf32, #etcopy.device<cuda:1>>

// CHECK-LABEL: func.func @host_reads_temporary
// CHECK: etcopy.d2h
// CHECK: memref.load
// CHECK: etcopy.h2d
// CHECK-NOT: etcopy.d2d
func.func @host_reads_temporary(%s: !s0, %d: !s1) -> f32 {
  %c0 = arith.constant 0 : index
  %t = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t : !s0 -> memref<4xf32>
  %v = memref.load %t[%c0] : memref<4xf32>
  etcopy.h2d %t, %d : memref<4xf32> -> !s1
  memref.dealloc %t : memref<4xf32>
  return %v : f32
}

// -----

// Negative: the temporary is uploaded to two devices (one d2h serves both),
// or is a view, or is not the function's own allocation.
!s0 = memref<4xf32, #etcopy.device<cuda:0>>
!s1 = memref<4xf32, #etcopy.device<cuda:1>>
!s2 = memref<4xf32, #etcopy.device<cuda:2>>

// CHECK-LABEL: func.func @temporary_not_only_relayed
// CHECK-NOT: etcopy.d2d
// CHECK: return
func.func @temporary_not_only_relayed(%s: !s0, %d: !s1, %e: !s2, %h: memref<4xf32>, %b: memref<8xf32>) {
  %t = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t : !s0 -> memref<4xf32>
  etcopy.h2d %t, %d : memref<4xf32> -> !s1
  etcopy.h2d %t, %e : memref<4xf32> -> !s2
  memref.dealloc %t : memref<4xf32>
  // Through a view of a larger buffer, which aliases the rest of it.
  %v = memref.subview %b[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  etcopy.d2h %s, %v : !s0 -> memref<4xf32, strided<[1], offset: 2>>
  etcopy.h2d %v, %d : memref<4xf32, strided<[1], offset: 2>> -> !s1
  // The caller's buffer, which it may read afterwards.
  etcopy.d2h %s, %h : !s0 -> memref<4xf32>
  etcopy.h2d %h, %d : memref<4xf32> -> !s1
  return
}

// -----

// Negative: back to the source's device, a round trip (no d2d within one
// device).
!s0 = memref<4xf32, #etcopy.device<cuda:0>>

// CHECK-LABEL: func.func @same_device
// CHECK: etcopy.d2h
// CHECK: etcopy.h2d
// CHECK-NOT: etcopy.d2d
func.func @same_device(%s: !s0, %d: !s0) {
  %t = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t : !s0 -> memref<4xf32>
  etcopy.h2d %t, %d : memref<4xf32> -> !s0
  memref.dealloc %t : memref<4xf32>
  return
}

// -----

// Negative: the source may be written between the copies, directly,
// through a view, through an argument that may alias it, or by a call
// (unknown effects): the d2d at the h2d would read the new contents.
!s0 = memref<4xf32, #etcopy.device<cuda:0>>
!s1 = memref<4xf32, #etcopy.device<cuda:1>>

func.func private @opaque(!s0)

// CHECK-LABEL: func.func @source_written_between
// CHECK-NOT: etcopy.d2d
// CHECK: return
func.func @source_written_between(%s: !s0, %a: !s0, %d: !s1, %h: memref<4xf32>, %h2: memref<2xf32>) {
  %t0 = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t0 : !s0 -> memref<4xf32>
  etcopy.h2d %h, %s : memref<4xf32> -> !s0
  etcopy.h2d %t0, %d : memref<4xf32> -> !s1
  memref.dealloc %t0 : memref<4xf32>

  %t1 = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t1 : !s0 -> memref<4xf32>
  %v = memref.subview %s[1] [2] [1] : !s0 to memref<2xf32, strided<[1], offset: 1>, #etcopy.device<cuda:0>>
  etcopy.h2d %h2, %v : memref<2xf32> -> memref<2xf32, strided<[1], offset: 1>, #etcopy.device<cuda:0>>
  etcopy.h2d %t1, %d : memref<4xf32> -> !s1
  memref.dealloc %t1 : memref<4xf32>

  %t2 = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t2 : !s0 -> memref<4xf32>
  etcopy.h2d %h, %a : memref<4xf32> -> !s0
  etcopy.h2d %t2, %d : memref<4xf32> -> !s1
  memref.dealloc %t2 : memref<4xf32>

  %t3 = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t3 : !s0 -> memref<4xf32>
  func.call @opaque(%a) : (!s0) -> ()
  etcopy.h2d %t3, %d : memref<4xf32> -> !s1
  memref.dealloc %t3 : memref<4xf32>
  return
}

// -----

// Negative: a write in a nested region between the copies, the h2d in
// another block than the d2h, the temporary freed before it is uploaded.
!s0 = memref<4xf32, #etcopy.device<cuda:0>>
!s1 = memref<4xf32, #etcopy.device<cuda:1>>

// CHECK-LABEL: func.func @order_and_blocks
// CHECK-NOT: etcopy.d2d
// CHECK: return
func.func @order_and_blocks(%s: !s0, %d: !s1, %h: memref<4xf32>, %p: i1) {
  %t0 = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t0 : !s0 -> memref<4xf32>
  scf.if %p {
    etcopy.h2d %h, %s : memref<4xf32> -> !s0
  }
  etcopy.h2d %t0, %d : memref<4xf32> -> !s1
  memref.dealloc %t0 : memref<4xf32>

  %t1 = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t1 : !s0 -> memref<4xf32>
  scf.if %p {
    etcopy.h2d %t1, %d : memref<4xf32> -> !s1
  }
  memref.dealloc %t1 : memref<4xf32>

  %t2 = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t2 : !s0 -> memref<4xf32>
  memref.dealloc %t2 : memref<4xf32>
  etcopy.h2d %t2, %d : memref<4xf32> -> !s1
  return
}

// -----

// Negative: sizes the two copies check that one d2d would not: a static
// temporary between dynamic sides (both copies check 4), a dynamic
// temporary of a size read from neither side.
// CHECK-LABEL: func.func @sizes_not_carried_over
// CHECK-NOT: etcopy.d2d
// CHECK: return
func.func @sizes_not_carried_over(%s: memref<?xf32, #etcopy.device<cuda:0>>, %d: memref<?xf32, #etcopy.device<cuda:1>>, %n: index) {
  %t0 = memref.alloc() : memref<4xf32>
  etcopy.d2h %s, %t0 : memref<?xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  etcopy.h2d %t0, %d : memref<4xf32> -> memref<?xf32, #etcopy.device<cuda:1>>
  memref.dealloc %t0 : memref<4xf32>
  %t1 = memref.alloc(%n) : memref<?xf32>
  etcopy.d2h %s, %t1 : memref<?xf32, #etcopy.device<cuda:0>> -> memref<?xf32>
  etcopy.h2d %t1, %d : memref<?xf32> -> memref<?xf32, #etcopy.device<cuda:1>>
  memref.dealloc %t1 : memref<?xf32>
  return
}

// No other move was made one d2d.
// REMARK-NOT: MovedBetweenDevices
