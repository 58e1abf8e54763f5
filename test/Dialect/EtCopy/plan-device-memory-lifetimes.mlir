// RUN: etcopy-opt %s -split-input-file --etcopy-plan-device-memory | FileCheck %s
// RUN: etcopy-opt %s -split-input-file -verify-diagnostics --mlir-print-op-on-diagnostic=false --etcopy-plan-device-memory --remarks-filter-missed=etcopy --remarks-filter-passed=etcopy > /dev/null

// A buffer lives from its allocation to its last use, not to its
// deallocation; a call to a delegate is an access of the buffers it is
// passed, not an escape.

// Ownership-based deallocation frees every buffer at the end of the block.
// Lifetimes still end at the last uses: %a (last read by the first copy)
// and %c (allocated after it) share offset 0, %b overlaps both. 2048
// bytes instead of 3072.
// CHECK-LABEL: func.func @deallocs_at_block_end
// CHECK-SAME: size = 2048 : i64
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64} : memref<2048xi8, #etcopy.device<cuda:0>>
// CHECK-DAG: %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[OFF_B:.*]] = arith.constant 1024 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[ARENA]][%[[OFF_A]]][]
// CHECK-NEXT: %[[B:.*]] = memref.view %[[ARENA]][%[[OFF_B]]][]
// CHECK-NEXT: etcopy.h2d %{{.*}}, %[[A]]
// CHECK-NEXT: memref.copy %[[A]], %[[B]]
// CHECK-NEXT: memref.copy %[[B]], %[[A]]
// CHECK-NEXT: etcopy.d2h %[[A]], %{{.*}}
// CHECK-NEXT: memref.dealloc %[[ARENA]]
// CHECK-NEXT: return
!d = memref<256xf32, #etcopy.device<cuda:0>>
// expected-remark @below {{planned cuda:0 arena: 3 buffer(s), 3072 bytes requested, 2048 bytes (peak live 2048)}}
func.func @deallocs_at_block_end(%x: memref<256xf32>, %y: memref<256xf32>) {
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=1024}}
  %a = memref.alloc() : !d
  etcopy.h2d %x, %a : memref<256xf32> -> !d
  // expected-remark @below {{Arena=cuda:0, Offset=1024, Size=1024}}
  %b = memref.alloc() : !d
  memref.copy %a, %b : !d to !d
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=1024}}
  %c = memref.alloc() : !d
  memref.copy %b, %c : !d to !d
  etcopy.d2h %c, %y : !d -> memref<256xf32>
  memref.dealloc %a : !d
  memref.dealloc %b : !d
  memref.dealloc %c : !d
  return
}

// -----

// A use nested in a loop keeps the buffer alive until the loop ends: %t,
// allocated in the body after the last read of %a there, would overwrite
// %a before the next iteration reads it. They get different offsets.
// CHECK-LABEL: func.func @use_in_loop
// CHECK-SAME: size = 2048 : i64
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64} : memref<2048xi8, #etcopy.device<cuda:0>>
// CHECK-DAG: %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[OFF_T:.*]] = arith.constant 1024 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[ARENA]][%[[OFF_A]]][]
// CHECK-NEXT: %[[T:.*]] = memref.view %[[ARENA]][%[[OFF_T]]][]
// CHECK: scf.for
// CHECK-NEXT: etcopy.d2h %[[A]], %{{.*}}
// CHECK-NEXT: etcopy.h2d %{{.*}}, %[[T]]
!d = memref<256xf32, #etcopy.device<cuda:0>>
// expected-remark @below {{planned cuda:0 arena: 2 buffer(s), 2048 bytes requested, 2048 bytes (peak live 2048)}}
func.func @use_in_loop(%x: memref<256xf32>, %y: memref<256xf32>, %lb: index, %ub: index, %step: index) {
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=1024}}
  %a = memref.alloc() : !d
  etcopy.h2d %x, %a : memref<256xf32> -> !d
  scf.for %i = %lb to %ub step %step {
    etcopy.d2h %a, %y : !d -> memref<256xf32>
    // expected-remark @below {{Arena=cuda:0, Offset=1024, Size=1024}}
    %t = memref.alloc() : !d
    etcopy.h2d %x, %t : memref<256xf32> -> !d
    etcopy.d2h %t, %y : !d -> memref<256xf32>
    memref.dealloc %t : !d
  }
  memref.dealloc %a : !d
  return
}

// -----

// Uses through views count: %a is read through %half after %b is
// allocated, so they overlap; %c, allocated after that read, takes %a's
// offset.
// CHECK-LABEL: func.func @use_through_view
// CHECK-SAME: size = 2048 : i64
// CHECK-DAG: %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[OFF_B:.*]] = arith.constant 1024 : index
// CHECK: %[[A:.*]] = memref.view %{{.*}}[%[[OFF_A]]][]
// CHECK-NEXT: %[[B:.*]] = memref.view %{{.*}}[%[[OFF_B]]][]
// CHECK-NEXT: %[[HALF:.*]] = memref.subview %[[A]]
// CHECK-NEXT: etcopy.h2d %{{.*}}, %[[A]]
// CHECK-NEXT: etcopy.h2d %{{.*}}, %[[B]]
// CHECK-NEXT: etcopy.d2h %[[HALF]]
// CHECK-NEXT: memref.copy %[[B]], %[[A]]
!d = memref<256xf32, #etcopy.device<cuda:0>>
!h = memref<128xf32, strided<[1]>, #etcopy.device<cuda:0>>
// expected-remark @below {{planned cuda:0 arena: 3 buffer(s), 3072 bytes requested, 2048 bytes (peak live 2048)}}
func.func @use_through_view(%x: memref<256xf32>, %y: memref<128xf32>) {
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=1024}}
  %a = memref.alloc() : !d
  %half = memref.subview %a[0] [128] [1] : !d to !h
  etcopy.h2d %x, %a : memref<256xf32> -> !d
  // expected-remark @below {{Arena=cuda:0, Offset=1024, Size=1024}}
  %b = memref.alloc() : !d
  etcopy.h2d %x, %b : memref<256xf32> -> !d
  etcopy.d2h %half, %y : !h -> memref<128xf32>
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=1024}}
  %c = memref.alloc() : !d
  memref.copy %b, %c : !d to !d
  memref.dealloc %c : !d
  memref.dealloc %b : !d
  memref.dealloc %a : !d
  return
}

// -----

// A delegate reads (and, for arguments marked etcopy.writes, writes) the
// buffers it is passed while it runs and keeps none: %in and %out,
// directly and through a view, are accesses for the duration of the call,
// and planned. %in is dead after the first call, so %next reuses it.
// CHECK-LABEL: func.func @delegate_calls
// CHECK-SAME: size = 2048 : i64
// CHECK-DAG: %[[OFF_IN:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[OFF_OUT:.*]] = arith.constant 1024 : index
// CHECK: %[[IN:.*]] = memref.view %{{.*}}[%[[OFF_IN]]][]
// CHECK: %[[OUT:.*]] = memref.view %{{.*}}[%[[OFF_OUT]]][]
// CHECK: %[[FRESH:.*]] = call @kernel(%[[IN]], %[[OUT]])
// CHECK: etcopy.h2d %{{.*}}, %[[IN]]
// CHECK-NEXT: %[[PART:.*]] = memref.subview %[[IN]]
// CHECK: call @kernel_part(%[[PART]], %[[OUT]])
// The delegate's result is its own fresh buffer: not this function's to plan.
// CHECK: memref.dealloc %[[FRESH]]
!d = memref<256xf32, #etcopy.device<cuda:0>>
!p = memref<128xf32, strided<[1]>, #etcopy.device<cuda:0>>
func.func private @kernel(!d, !d {etcopy.writes}) -> !d
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @kernel_part(!p, !d {etcopy.writes})
    attributes {etcopy.device = #etcopy.device<cuda:0>}
// expected-remark @below {{planned cuda:0 arena: 3 buffer(s), 3072 bytes requested, 2048 bytes (peak live 2048)}}
func.func @delegate_calls(%x: memref<256xf32>, %y: memref<256xf32>) {
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=1024}}
  %in = memref.alloc() : !d
  etcopy.h2d %x, %in : memref<256xf32> -> !d
  // expected-remark @below {{Arena=cuda:0, Offset=1024, Size=1024}}
  %out = memref.alloc() : !d
  %fresh = func.call @kernel(%in, %out) : (!d, !d) -> !d
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=1024}}
  %next = memref.alloc() : !d
  etcopy.h2d %x, %next : memref<256xf32> -> !d
  %part = memref.subview %next[0] [128] [1] : !d to !p
  func.call @kernel_part(%part, %out) : (!p, !d) -> ()
  etcopy.d2h %out, %y : !d -> memref<256xf32>
  memref.dealloc %fresh : !d
  memref.dealloc %next : !d
  memref.dealloc %out : !d
  memref.dealloc %in : !d
  return
}

// -----

// Other calls may keep what they are passed: the buffer escapes and keeps
// its allocation, also for a function placed on cpu (host code, not a
// delegate).
// CHECK-LABEL: func.func @other_calls
// CHECK-NOT: memref.view
// CHECK: %[[A:.*]] = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
// CHECK: call @host(%[[A]])
// CHECK: %[[B:.*]] = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
// CHECK: call @on_cpu(%[[B]])
!d = memref<256xf32, #etcopy.device<cuda:0>>
func.func private @host(!d)
func.func private @on_cpu(!d) attributes {etcopy.device = #etcopy.device<cpu>}
func.func @other_calls() {
  // expected-remark @below {{Reason="it escapes through 'func.call'", Remark="not planned"}}
  %a = memref.alloc() : !d
  func.call @host(%a) : (!d) -> ()
  memref.dealloc %a : !d
  // expected-remark @below {{Reason="it escapes through 'func.call'", Remark="not planned"}}
  %b = memref.alloc() : !d
  func.call @on_cpu(%b) : (!d) -> ()
  memref.dealloc %b : !d
  return
}
