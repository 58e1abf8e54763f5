// RUN: etcopy-opt %s -split-input-file -verify-diagnostics --mlir-print-op-on-diagnostic=false --etcopy-plan-device-memory --remarks-filter-missed=etcopy --remarks-filter-passed=etcopy | FileCheck %s
// RUN: etcopy-opt %s -split-input-file --etcopy-plan-device-memory=arena-ownership=caller | FileCheck %s --check-prefix=CALLER
// The output verifies and parses again.
// RUN: etcopy-opt %s -split-input-file --etcopy-plan-device-memory | etcopy-opt -split-input-file > /dev/null

// Code in blocks unreachable from the entry never runs: a buffer's uses
// there neither extend its lifetime nor make it escape, a deallocation of
// it there goes with the buffer, and a buffer allocated there is not
// planned.

// %a is returned and freed a second time in a dead block, and passed to an
// unknown function there: none of it runs, so it is planned like %b, which
// it shares its bytes (and its view) with. The dead block frees the arena
// before its return too.
// CHECK-LABEL: func.func @dead_uses
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64} : memref<1024xi8, #etcopy.device<cuda:0>>
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%[[C0:.*]]][]
// CHECK-NOT: memref.view
// CHECK: etcopy.h2d %{{.*}}, %[[A]]
// CHECK-NEXT: etcopy.h2d %{{.*}}, %[[A]]
// CHECK: memref.dealloc %[[ARENA]]
// CHECK-NEXT: return
// CHECK: ^{{.*}}:  // no predecessors
// CHECK-NEXT: call @sink(%[[A]])
// CHECK-NEXT: memref.dealloc %[[ARENA]]
// CHECK-NEXT: return %[[A]]
!d = memref<256xf32, #etcopy.device<cuda:0>>
func.func private @sink(!d)
// expected-remark @below {{planned cuda:0 arena: 2 buffer(s), 2048 bytes requested, 1024 bytes (peak live 1024)}}
func.func @dead_uses(%x: memref<256xf32>) -> !d {
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=1024}}
  %a = memref.alloc() : !d
  etcopy.h2d %x, %a : memref<256xf32> -> !d
  memref.dealloc %a : !d
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=1024}}
  %b = memref.alloc() : !d
  etcopy.h2d %x, %b : memref<256xf32> -> !d
  memref.dealloc %b : !d
  // expected-remark @below {{Reason="it escapes through 'func.return'", Remark="not planned"}}
  %r = memref.alloc() : !d
  return %r : !d
^dead:
  func.call @sink(%a) : (!d) -> ()
  memref.dealloc %a : !d
  return %a : !d
}

// -----

// Buffers allocated in a dead block are not planned (the arena belongs to
// the code that runs); a buffer freed only in a dead block is never freed.
// CHECK-LABEL: func.func @dead_allocations
// CHECK: memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
// CHECK: memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
func.func @dead_allocations() {
  // expected-remark @below {{Reason="it is not freed in the function", Remark="not planned"}}
  %leaked = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
  return
^dead:
  // expected-remark @below {{Reason="it is allocated in a block unreachable from the entry", Remark="not planned"}}
  %dead = memref.alloc() : memref<256xf32, #etcopy.device<cuda:0>>
  memref.dealloc %dead : memref<256xf32, #etcopy.device<cuda:0>>
  memref.dealloc %leaked : memref<256xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// A use in a dead block of an scf.execute_region does not make the buffer
// escape.
// CHECK-LABEL: func.func @dead_block_in_region
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64} : memref<1024xi8, #etcopy.device<cuda:0>>
// CHECK: %[[A:.*]] = memref.view %[[ARENA]]
// CHECK: scf.execute_region
// CHECK: ^{{.*}}:  // no predecessors
// CHECK-NEXT: func.call @sink(%[[A]])
!d = memref<256xf32, #etcopy.device<cuda:0>>
func.func private @sink(!d)
// expected-remark @below {{planned cuda:0 arena: 1 buffer(s), 1024 bytes requested, 1024 bytes (peak live 1024)}}
func.func @dead_block_in_region(%x: memref<256xf32>) {
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=1024}}
  %a = memref.alloc() : !d
  etcopy.h2d %x, %a : memref<256xf32> -> !d
  scf.execute_region {
    etcopy.d2h %a, %x : !d -> memref<256xf32>
    scf.yield
  ^dead:
    func.call @sink(%a) : (!d) -> ()
    scf.yield
  }
  memref.dealloc %a : !d
  return
}

// -----

// With arena-ownership=caller, a call in a dead block passes arenas
// allocated around it, which are not planned; the reachable call's arenas
// are slots of the caller's arena.
// CALLER-LABEL: func.func @caller
// CALLER-SAME: (%[[ARENA:.*]]: memref<1024xi8, #etcopy.device<cuda:0>>, %[[X:.*]]: memref<256xf32>)
// CALLER: %[[SLOT:.*]] = memref.view %[[ARENA]]
// CALLER-NEXT: call @callee(%[[SLOT]], %[[X]])
// CALLER-NEXT: return
// CALLER: ^{{.*}}:  // no predecessors
// CALLER-NEXT: %[[OWN:.*]] = memref.alloc() {alignment = 256 : i64} : memref<1024xi8, #etcopy.device<cuda:0>>
// CALLER-NEXT: call @callee(%[[OWN]], %[[X]])
// CALLER-NEXT: memref.dealloc %[[OWN]]
// CALLER-NEXT: return
!d = memref<256xf32, #etcopy.device<cuda:0>>
// expected-remark @below {{planned cuda:0 arena: 1 buffer(s), 1024 bytes requested, 1024 bytes (peak live 1024)}}
func.func private @callee(%x: memref<256xf32>) {
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=1024}}
  %t = memref.alloc() : !d
  etcopy.h2d %x, %t : memref<256xf32> -> !d
  etcopy.d2h %t, %x : !d -> memref<256xf32>
  memref.dealloc %t : !d
  return
}
func.func @caller(%x: memref<256xf32>) {
  func.call @callee(%x) : (memref<256xf32>) -> ()
  return
^dead:
  func.call @callee(%x) : (memref<256xf32>) -> ()
  return
}
