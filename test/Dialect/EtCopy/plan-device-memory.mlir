// RUN: etcopy-opt %s -split-input-file --etcopy-plan-device-memory | FileCheck %s
// The pass is idempotent: a planned function is left alone.
// RUN: etcopy-opt %s -split-input-file --etcopy-plan-device-memory | etcopy-opt -split-input-file --etcopy-plan-device-memory | FileCheck %s

// A buffer lives from its allocation to its last use (see
// plan-device-memory-lifetimes.mlir); the cases below that are about
// packing read each buffer with memref.dim just before its deallocation, so
// that it lives until there.

// Offsets and reuse: %a and %c never live at the same time and share offset
// 0, and with it their view (one per offset and type, at entry); %b
// overlaps both. 3072 bytes requested, a 2048-byte arena allocated at entry
// and freed before the return; the buffers' deallocs are gone.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: memref<256xf32>, %[[Y:.*]]: memref<256xf32>)
// CHECK-SAME: attributes {etcopy.arenas = [{alignment = 256 : i64, device = #etcopy.device<cuda:0>, size = 2048 : i64}]}
// CHECK-NEXT: %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64} : memref<2048xi8, #etcopy.device<cuda:0>>
// CHECK-DAG: %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[OFF_B:.*]] = arith.constant 1024 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[ARENA]][%[[OFF_A]]][] : memref<2048xi8, #etcopy.device<cuda:0>> to memref<256xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: %[[B:.*]] = memref.view %[[ARENA]][%[[OFF_B]]][] : memref<2048xi8, #etcopy.device<cuda:0>> to memref<256xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: etcopy.h2d %[[X]], %[[A]]
// CHECK-NEXT: memref.copy %[[A]], %[[B]]
// CHECK-NEXT: memref.copy %[[B]], %[[A]]
// CHECK-NEXT: etcopy.d2h %[[A]], %[[Y]]
// CHECK-NEXT: memref.dealloc %[[ARENA]] : memref<2048xi8, #etcopy.device<cuda:0>>
// CHECK-NEXT: return
!d = memref<256xf32, #etcopy.device<cuda:0>>
func.func @chain(%x: memref<256xf32>, %y: memref<256xf32>) {
  %a = memref.alloc() : !d
  etcopy.h2d %x, %a : memref<256xf32> -> !d
  %b = memref.alloc() : !d
  memref.copy %a, %b : !d to !d
  memref.dealloc %a : !d
  %c = memref.alloc() : !d
  memref.copy %b, %c : !d to !d
  memref.dealloc %b : !d
  etcopy.d2h %c, %y : !d -> memref<256xf32>
  memref.dealloc %c : !d
  return
}

// -----

// Best fit: once %a is freed, %c (512 bytes) takes its slot and %d (256
// bytes) the smallest gap that fits, between %c and %b: 2816 bytes in 2048.
// CHECK-LABEL: func.func @fill_gap
// CHECK-SAME: size = 2048 : i64
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64} : memref<2048xi8, #etcopy.device<cuda:0>>
// CHECK-DAG: %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[OFF_B:.*]] = arith.constant 1024 : index
// CHECK-DAG: %[[OFF_D:.*]] = arith.constant 512 : index
// CHECK: memref.view %[[ARENA]][%[[OFF_A]]][] : {{.*}} to memref<256xf32, #etcopy.device<cuda:0>>
// CHECK: memref.view %[[ARENA]][%[[OFF_B]]][] : {{.*}} to memref<256xf32, #etcopy.device<cuda:0>>
// CHECK: memref.view %[[ARENA]][%[[OFF_A]]][] : {{.*}} to memref<128xf32, #etcopy.device<cuda:0>>
// CHECK: memref.view %[[ARENA]][%[[OFF_D]]][] : {{.*}} to memref<64xf32, #etcopy.device<cuda:0>>
func.func @fill_gap(%i: index) {
  %a = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
  %b = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
  %a_size = memref.dim %a, %i : memref<256xf32, #etcopy.device<cuda:0>>
  memref.dealloc %a : memref<256xf32, #etcopy.device<cuda:0>>
  %c = memref.alloc() : memref<128xf32, #etcopy.device<cuda:0>>
  %d = memref.alloc() : memref<64xf32, #etcopy.device<cuda:0>>
  %b_size = memref.dim %b, %i : memref<256xf32, #etcopy.device<cuda:0>>
  memref.dealloc %b : memref<256xf32, #etcopy.device<cuda:0>>
  %c_size = memref.dim %c, %i : memref<128xf32, #etcopy.device<cuda:0>>
  memref.dealloc %c : memref<128xf32, #etcopy.device<cuda:0>>
  %d_size = memref.dim %d, %i : memref<64xf32, #etcopy.device<cuda:0>>
  memref.dealloc %d : memref<64xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// Placing by decreasing size wins here: in program order the small %s would
// take offset 0 and push %l2 above %l1 (2304 bytes); large first gives the
// lower bound, 2048.
// CHECK-LABEL: func.func @size_order_wins
// CHECK-SAME: size = 2048 : i64
// CHECK: %[[ARENA:.*]] = memref.alloc()
// CHECK-DAG: %[[OFF_S:.*]] = arith.constant 1024 : index
// CHECK-DAG: %[[OFF_L1:.*]] = arith.constant 0 : index
// CHECK: memref.view %[[ARENA]][%[[OFF_S]]][] : {{.*}} to memref<64xf32, #etcopy.device<cuda:0>>
// CHECK: memref.view %[[ARENA]][%[[OFF_L1]]][] : {{.*}} to memref<256xf32, #etcopy.device<cuda:0>>
// CHECK: memref.view %[[ARENA]][%[[OFF_S]]][] : {{.*}} to memref<256xf32, #etcopy.device<cuda:0>>
func.func @size_order_wins(%i: index) {
  %s = memref.alloc() : memref<64xf32, #etcopy.device<cuda:0>>
  %l1 = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
  %s_size = memref.dim %s, %i : memref<64xf32, #etcopy.device<cuda:0>>
  memref.dealloc %s : memref<64xf32, #etcopy.device<cuda:0>>
  %l2 = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
  %l1_size = memref.dim %l1, %i : memref<256xf32, #etcopy.device<cuda:0>>
  memref.dealloc %l1 : memref<256xf32, #etcopy.device<cuda:0>>
  %l2_size = memref.dim %l2, %i : memref<256xf32, #etcopy.device<cuda:0>>
  memref.dealloc %l2 : memref<256xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// Program order wins here: by size, %a, %d and %c (1 KiB each) come first
// and %b (768 bytes) ends up on top (2816 bytes); in program order %b fills
// %a's slot and %c goes right above it: 2048 bytes.
// CHECK-LABEL: func.func @program_order_wins
// CHECK-SAME: size = 2048 : i64
// CHECK: %[[ARENA:.*]] = memref.alloc()
// CHECK-DAG: %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[OFF_D:.*]] = arith.constant 1024 : index
// CHECK-DAG: %[[OFF_C:.*]] = arith.constant 768 : index
// CHECK: memref.view %[[ARENA]][%[[OFF_A]]][] : {{.*}} to memref<256xf32, #etcopy.device<cuda:0>>
// CHECK: memref.view %[[ARENA]][%[[OFF_D]]][] : {{.*}} to memref<256xf32, #etcopy.device<cuda:0>>
// CHECK: memref.view %[[ARENA]][%[[OFF_A]]][] : {{.*}} to memref<192xf32, #etcopy.device<cuda:0>>
// CHECK: memref.view %[[ARENA]][%[[OFF_C]]][] : {{.*}} to memref<256xf32, #etcopy.device<cuda:0>>
func.func @program_order_wins(%i: index) {
  %a = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
  %d = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
  %a_size = memref.dim %a, %i : memref<256xf32, #etcopy.device<cuda:0>>
  memref.dealloc %a : memref<256xf32, #etcopy.device<cuda:0>>
  %b = memref.alloc() : memref<192xf32, #etcopy.device<cuda:0>>
  %d_size = memref.dim %d, %i : memref<256xf32, #etcopy.device<cuda:0>>
  memref.dealloc %d : memref<256xf32, #etcopy.device<cuda:0>>
  %c = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
  %b_size = memref.dim %b, %i : memref<192xf32, #etcopy.device<cuda:0>>
  memref.dealloc %b : memref<192xf32, #etcopy.device<cuda:0>>
  %c_size = memref.dim %c, %i : memref<256xf32, #etcopy.device<cuda:0>>
  memref.dealloc %c : memref<256xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// One arena per (kind, ordinal), in (kind, ordinal) order, never shared:
// buffers of cuda:0 and cuda:1 with disjoint lifetimes still get an arena
// each. Host buffers are not planned by default.
// CHECK-LABEL: func.func @devices
// CHECK-SAME: etcopy.arenas = [{alignment = 256 : i64, device = #etcopy.device<cuda:0>, size = 512 : i64}, {alignment = 256 : i64, device = #etcopy.device<cuda:1>, size = 256 : i64}]
// CHECK-NEXT: %[[ARENA0:.*]] = memref.alloc() {alignment = 256 : i64} : memref<512xi8, #etcopy.device<cuda:0>>
// CHECK-NEXT: %[[ARENA1:.*]] = memref.alloc() {alignment = 256 : i64} : memref<256xi8, #etcopy.device<cuda:1>>
// CHECK: %[[ZERO:.*]] = memref.view %[[ARENA0]][%{{.*}}][] : memref<512xi8, #etcopy.device<cuda:0>> to memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: %[[OTHER:.*]] = memref.view %[[ARENA0]][%{{.*}}][] : memref<512xi8, #etcopy.device<cuda:0>> to memref<8xi32, #etcopy.device<cuda:0>>
// CHECK-NEXT: %[[ONE:.*]] = memref.view %[[ARENA1]][%{{.*}}][] : memref<256xi8, #etcopy.device<cuda:1>> to memref<4xf32, #etcopy.device<cuda:1>>
// CHECK-NEXT: memref.dim %[[ONE]]
// CHECK-NEXT: %[[HOST:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.dim %[[ZERO]]
// CHECK-NEXT: memref.dim %[[OTHER]]
// CHECK-NEXT: memref.dealloc %[[HOST]] : memref<4xf32>
// CHECK: memref.dealloc %[[ARENA0]]
// CHECK-NEXT: memref.dealloc %[[ARENA1]]
// CHECK-NEXT: return
func.func @devices(%i: index) {
  %one = memref.alloc() : memref<4xf32, #etcopy.device<cuda:1>>
  %one_size = memref.dim %one, %i : memref<4xf32, #etcopy.device<cuda:1>>
  memref.dealloc %one : memref<4xf32, #etcopy.device<cuda:1>>
  %host = memref.alloc() : memref<4xf32>
  %zero = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  %other = memref.alloc() : memref<8xi32, #etcopy.device<cuda:0>>
  %zero_size = memref.dim %zero, %i : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %zero : memref<4xf32, #etcopy.device<cuda:0>>
  %other_size = memref.dim %other, %i : memref<8xi32, #etcopy.device<cuda:0>>
  memref.dealloc %other : memref<8xi32, #etcopy.device<cuda:0>>
  memref.dealloc %host : memref<4xf32>
  return
}

// -----

// Dynamically sized buffers stay individual allocations.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK-SAME: size = 256 : i64
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64} : memref<256xi8, #etcopy.device<cuda:0>>
// CHECK: %[[STATIC:.*]] = memref.view %[[ARENA]]
// CHECK: %[[DYN:.*]] = memref.alloc(%[[N]]) : memref<?xf32, #etcopy.device<cuda:0>>
// CHECK: memref.copy %[[STATIC]], %[[DYN]]
// CHECK: memref.dealloc %[[DYN]] : memref<?xf32, #etcopy.device<cuda:0>>
// CHECK: memref.dealloc %[[ARENA]]
func.func @dynamic(%n: index) {
  %dyn = memref.alloc(%n) : memref<?xf32, #etcopy.device<cuda:0>>
  %static = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  memref.copy %static, %dyn : memref<4xf32, #etcopy.device<cuda:0>> to memref<?xf32, #etcopy.device<cuda:0>>
  memref.dealloc %dyn : memref<?xf32, #etcopy.device<cuda:0>>
  memref.dealloc %static : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// A buffer allocated and freed in a loop body gets one slot that every
// iteration reuses (its view is made at entry, like the arena, once per
// call). %state lives across the loop, so it never shares bytes with the
// body's buffers; %tmp and %tmp2 follow each other in the body and share
// their slot, and their view.
// CHECK-LABEL: func.func @loop
// CHECK-SAME: size = 2048 : i64
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64} : memref<2048xi8, #etcopy.device<cuda:0>>
// CHECK-DAG: %[[OFF_S:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[OFF_T:.*]] = arith.constant 1024 : index
// CHECK-NEXT: %[[STATE:.*]] = memref.view %[[ARENA]][%[[OFF_S]]][]
// CHECK-NEXT: %[[TMP:.*]] = memref.view %[[ARENA]][%[[OFF_T]]][]
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.copy %[[STATE]], %[[TMP]]
// CHECK-NEXT: memref.copy %[[STATE]], %[[TMP]]
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[ARENA]]
// CHECK-NEXT: return
!d = memref<256xf32, #etcopy.device<cuda:0>>
func.func @loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %state = memref.alloc() : !d
  scf.for %i = %c0 to %n step %c1 {
    %tmp = memref.alloc() : !d
    memref.copy %state, %tmp : !d to !d
    memref.dealloc %tmp : !d
    %tmp2 = memref.alloc() : !d
    memref.copy %state, %tmp2 : !d to !d
    memref.dealloc %tmp2 : !d
  }
  memref.dealloc %state : !d
  return
}

// -----

// Nested scf regions are planned: the buffers of the two branches of an
// scf.if and of an scf.while body never live together, and share their slot
// (above %t, which lives throughout). A buffer allocated in a loop body and
// freed after the loop is not freed in its block: not planned.
// CHECK-LABEL: func.func @nested
// CHECK-SAME: size = 512 : i64
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64}
// CHECK-DAG: %[[OFF_T:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[OFF_A:.*]] = arith.constant 256 : index
// CHECK-NEXT: %[[T:.*]] = memref.view %[[ARENA]][%[[OFF_T]]][]
// CHECK-NEXT: %[[A:.*]] = memref.view %[[ARENA]][%[[OFF_A]]][]
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.if
// CHECK-NEXT: memref.copy %[[T]], %[[A]]
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.copy %[[T]], %[[A]]
// CHECK: scf.while
// CHECK-NEXT: memref.copy %[[T]], %[[A]]
// CHECK: scf.for
// CHECK-NEXT: %[[ESCAPED:.*]] = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: scf.yield %[[ESCAPED]]
// CHECK: memref.dealloc %{{.*}} : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: memref.dealloc %[[ARENA]]
!d = memref<4xf32, #etcopy.device<cuda:0>>
func.func @nested(%n: index, %p: i1, %x: !d) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.alloc() : !d
  scf.for %i = %c0 to %n step %c1 {
    scf.if %p {
      %a = memref.alloc() : !d
      memref.copy %t, %a : !d to !d
      memref.dealloc %a : !d
    } else {
      %b = memref.alloc() : !d
      memref.copy %t, %b : !d to !d
      memref.dealloc %b : !d
    }
  }
  scf.while : () -> () {
    %c = memref.alloc() : !d
    memref.copy %t, %c : !d to !d
    memref.dealloc %c : !d
    scf.condition(%p)
  } do {
    scf.yield
  }
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%prev = %x) -> (!d) {
    %e = memref.alloc() : !d
    memref.copy %prev, %e : !d to !d
    scf.yield %e : !d
  }
  memref.dealloc %last : !d
  memref.dealloc %t : !d
  return
}

// -----

// Escaping buffers are not planned: returned, passed to a call, stored as a
// value, captured by a view that escapes, turned into a pointer, freed in
// another block or not at all, used after their deallocation. Only %ok is
// planned.
// CHECK-LABEL: func.func @escapes
// CHECK-SAME: size = 256 : i64
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64} : memref<256xi8, #etcopy.device<cuda:0>>
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: memref.view %[[ARENA]]
// CHECK-NOT: memref.view
// CHECK-COUNT-8: memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-NOT: memref.view
// CHECK: return
!d = memref<4xf32, #etcopy.device<cuda:0>>
func.func private @use(!d)
func.func @escapes(%sink: memref<1x!d>, %p: i1) -> (!d, memref<2xf32, strided<[1]>, #etcopy.device<cuda:0>>, index) {
  %c0 = arith.constant 0 : index
  %returned = memref.alloc() : !d
  %called = memref.alloc() : !d
  func.call @use(%called) : (!d) -> ()
  memref.dealloc %called : !d
  %stored = memref.alloc() : !d
  memref.store %stored, %sink[%c0] : memref<1x!d>
  memref.dealloc %stored : !d
  %viewed = memref.alloc() : !d
  %sub = memref.subview %viewed[0] [2] [1] : !d to memref<2xf32, strided<[1]>, #etcopy.device<cuda:0>>
  memref.dealloc %viewed : !d
  %pointer = memref.alloc() : !d
  %address = memref.extract_aligned_pointer_as_index %pointer : !d -> index
  memref.dealloc %pointer : !d
  %branch = memref.alloc() : !d
  scf.if %p {
    memref.dealloc %branch : !d
  }
  %leaked = memref.alloc() : !d
  %late = memref.alloc() : !d
  memref.dealloc %late : !d
  %dim = memref.dim %late, %c0 : !d
  %ok = memref.alloc() : !d
  %sub_ok = memref.subview %ok[0] [2] [1] : !d to memref<2xf32, strided<[1]>, #etcopy.device<cuda:0>>
  %v = memref.load %sub_ok[%c0] : memref<2xf32, strided<[1]>, #etcopy.device<cuda:0>>
  memref.store %v, %ok[%c0] : !d
  memref.dealloc %ok : !d
  return %returned, %sub, %address : !d, memref<2xf32, strided<[1]>, #etcopy.device<cuda:0>>, index
}

// -----

// Sizes follow the data layout (i1 takes a byte, index 8, vector<3xf32> 16,
// complex<f64> 16); each buffer takes whole 256-byte slots, which also meet
// any alignment up to 256. Not planned: an alignment above 256, no
// elements, a non-identity layout, an element type of unknown size, buffers
// in a region that may run its body in parallel.
// CHECK-LABEL: func.func @sizes
// CHECK-SAME: size = 1792 : i64
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64} : memref<1792xi8, #etcopy.device<cuda:0>>
// CHECK-DAG: memref.view %[[ARENA]][%{{.*}}][] : {{.*}} to memref<300xi1, #etcopy.device<cuda:0>>
// CHECK-DAG: memref.view %[[ARENA]][%{{.*}}][] : {{.*}} to memref<33xindex, #etcopy.device<cuda:0>>
// CHECK-DAG: memref.view %[[ARENA]][%{{.*}}][] : {{.*}} to memref<16xvector<3xf32>, #etcopy.device<cuda:0>>
// CHECK-DAG: memref.view %[[ARENA]][%{{.*}}][] : {{.*}} to memref<2x2xcomplex<f64>, #etcopy.device<cuda:0>>
// CHECK-DAG: memref.view %[[ARENA]][%{{.*}}][] : {{.*}} to memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-DAG: memref.alloc() {alignment = 512 : i64} : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-DAG: memref.alloc() : memref<0xf32, #etcopy.device<cuda:0>>
// CHECK-DAG: memref.alloc() : memref<4xf32, strided<[2]>, #etcopy.device<cuda:0>>
// CHECK-DAG: memref.alloc() : memref<4xmemref<f32>, #etcopy.device<cuda:0>>
// CHECK-DAG: memref.alloc() : memref<8xf32, #etcopy.device<cuda:0>>
func.func @sizes(%n: index, %d: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bits = memref.alloc() : memref<300xi1, #etcopy.device<cuda:0>>
  %indices = memref.alloc() : memref<33xindex, #etcopy.device<cuda:0>>
  %vectors = memref.alloc() : memref<16xvector<3xf32>, #etcopy.device<cuda:0>>
  %complex = memref.alloc() : memref<2x2xcomplex<f64>, #etcopy.device<cuda:0>>
  %aligned = memref.alloc() {alignment = 64 : i64} : memref<4xf32, #etcopy.device<cuda:0>>
  %overaligned = memref.alloc() {alignment = 512 : i64} : memref<4xf32, #etcopy.device<cuda:0>>
  %empty = memref.alloc() : memref<0xf32, #etcopy.device<cuda:0>>
  %strided = memref.alloc() : memref<4xf32, strided<[2]>, #etcopy.device<cuda:0>>
  %nested = memref.alloc() : memref<4xmemref<f32>, #etcopy.device<cuda:0>>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %parallel = memref.alloc() : memref<8xf32, #etcopy.device<cuda:0>>
    memref.dealloc %parallel : memref<8xf32, #etcopy.device<cuda:0>>
    scf.reduce
  }
  %bits_size = memref.dim %bits, %d : memref<300xi1, #etcopy.device<cuda:0>>
  memref.dealloc %bits : memref<300xi1, #etcopy.device<cuda:0>>
  %indices_size = memref.dim %indices, %d : memref<33xindex, #etcopy.device<cuda:0>>
  memref.dealloc %indices : memref<33xindex, #etcopy.device<cuda:0>>
  %vectors_size = memref.dim %vectors, %d : memref<16xvector<3xf32>, #etcopy.device<cuda:0>>
  memref.dealloc %vectors : memref<16xvector<3xf32>, #etcopy.device<cuda:0>>
  %complex_size = memref.dim %complex, %d : memref<2x2xcomplex<f64>, #etcopy.device<cuda:0>>
  memref.dealloc %complex : memref<2x2xcomplex<f64>, #etcopy.device<cuda:0>>
  %aligned_size = memref.dim %aligned, %d : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %aligned : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %overaligned : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %empty : memref<0xf32, #etcopy.device<cuda:0>>
  memref.dealloc %strided : memref<4xf32, strided<[2]>, #etcopy.device<cuda:0>>
  memref.dealloc %nested : memref<4xmemref<f32>, #etcopy.device<cuda:0>>
  return
}

// -----

// The arena is freed before every return of an unstructured function; only
// the entry block's buffers are planned.
// CHECK-LABEL: func.func @returns
// CHECK-SAME: size = 256 : i64
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64}
// CHECK: memref.view %[[ARENA]]
// CHECK: cf.cond_br
// CHECK: ^bb1:
// CHECK-NEXT: memref.dealloc %[[ARENA]]
// CHECK-NEXT: return
// CHECK: ^bb2:
// CHECK-NEXT: %[[OTHER:.*]] = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: memref.dealloc %[[OTHER]]
// CHECK-NEXT: memref.dealloc %[[ARENA]]
// CHECK-NEXT: return
func.func @returns(%p: i1) {
  %a = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %a : memref<4xf32, #etcopy.device<cuda:0>>
  cf.cond_br %p, ^bb1, ^bb2
^bb1:
  return
^bb2:
  %b = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %b : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// Nothing to plan: no metadata, no attribute, no arena.
// CHECK: // -----
// CHECK-NOT: llvm.mlir.global
// CHECK-LABEL: func.func @nothing() {
// CHECK-NEXT: memref.alloc() : memref<4xf32>
func.func @nothing() {
  %h = memref.alloc() : memref<4xf32>
  memref.dealloc %h : memref<4xf32>
  return
}
