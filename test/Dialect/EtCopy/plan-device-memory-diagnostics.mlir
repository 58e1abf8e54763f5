// RUN: etcopy-opt %s -split-input-file -verify-diagnostics --mlir-print-op-on-diagnostic=false --etcopy-plan-device-memory=arena-ownership=caller --remarks-filter-missed=etcopy --remarks-filter-passed=etcopy

// An unknown arena-ownership is rejected while the options are parsed:
// pass-options.test.

// With remarks (passed and missed): a summary per planned function, where
// each planned buffer went, and why each buffer of planned memory is left
// alone.
!d = memref<4xf32, #etcopy.device<cuda:0>>
func.func private @use(!d)
// expected-remark @below {{planned cuda:0 arena: 2 buffer(s), 32 bytes requested, 256 bytes (peak live 256); cuda:1 arena: 1 buffer(s), 1024 bytes requested, 1024 bytes (peak live 1024)}}
func.func @reasons(%n: index, %p: i1, %sink: memref<1x!d>) -> (!d, memref<2xf32, strided<[1]>, #etcopy.device<cuda:0>>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=16}}
  %first = memref.alloc() : !d
  memref.dealloc %first : !d
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=16}}
  %second = memref.alloc() : !d
  memref.dealloc %second : !d
  // expected-remark @below {{Arena=cuda:1, Offset=0, Size=1024}}
  %other = memref.alloc() : memref<256xf32, #etcopy.device<cuda:1>>
  memref.dealloc %other : memref<256xf32, #etcopy.device<cuda:1>>
  // Host memory is not planned (plan-host=false): no remark.
  %host = memref.alloc() : memref<4xf32>
  memref.dealloc %host : memref<4xf32>
  // expected-remark @below {{Reason="its size is dynamic", Remark="not planned"}}
  %dynamic = memref.alloc(%n) : memref<?xf32, #etcopy.device<cuda:0>>
  memref.dealloc %dynamic : memref<?xf32, #etcopy.device<cuda:0>>
  // expected-remark @below {{Reason="it escapes through 'func.return'", Remark="not planned"}}
  %returned = memref.alloc() : !d
  // expected-remark @below {{Reason="it escapes through 'func.call'", Remark="not planned"}}
  %called = memref.alloc() : !d
  func.call @use(%called) : (!d) -> ()
  memref.dealloc %called : !d
  // expected-remark @below {{Reason="it escapes through 'memref.store'", Remark="not planned"}}
  %stored = memref.alloc() : !d
  memref.store %stored, %sink[%c0] : memref<1x!d>
  memref.dealloc %stored : !d
  // expected-remark @below {{Reason="it escapes through 'func.return'", Remark="not planned"}}
  %viewed = memref.alloc() : !d
  %sub = memref.subview %viewed[0] [2] [1] : !d to memref<2xf32, strided<[1]>, #etcopy.device<cuda:0>>
  memref.dealloc %viewed : !d
  // expected-remark @below {{Reason="it escapes through 'memref.extract_aligned_pointer_as_index'", Remark="not planned"}}
  %pointer = memref.alloc() : !d
  %address = memref.extract_aligned_pointer_as_index %pointer : !d -> index
  memref.dealloc %pointer : !d
  // expected-remark @below {{Reason="it is freed in another block", Remark="not planned"}}
  %branch = memref.alloc() : !d
  scf.if %p {
    memref.dealloc %branch : !d
  }
  // expected-remark @below {{Reason="it is freed more than once", Remark="not planned"}}
  %twice = memref.alloc() : !d
  memref.dealloc %twice : !d
  memref.dealloc %twice : !d
  // expected-remark @below {{Reason="a view of it is freed", Remark="not planned"}}
  %cast = memref.alloc() : !d
  %casted = memref.cast %cast : !d to memref<?xf32, #etcopy.device<cuda:0>>
  memref.dealloc %casted : memref<?xf32, #etcopy.device<cuda:0>>
  // expected-remark @below {{Reason="it is not freed in the function", Remark="not planned"}}
  %leaked = memref.alloc() : !d
  // expected-remark @below {{Reason="'memref.dim' uses it after its deallocation", Remark="not planned"}}
  %late = memref.alloc() : !d
  memref.dealloc %late : !d
  %dim = memref.dim %late, %c0 : !d
  // expected-remark @below {{Reason="it asks for alignment 512 > 256", Remark="not planned"}}
  %overaligned = memref.alloc() {alignment = 512 : i64} : !d
  memref.dealloc %overaligned : !d
  // expected-remark @below {{Reason="it has no elements", Remark="not planned"}}
  %empty = memref.alloc() : memref<0xf32, #etcopy.device<cuda:0>>
  memref.dealloc %empty : memref<0xf32, #etcopy.device<cuda:0>>
  // expected-remark @below {{Reason="its layout is not the identity", Remark="not planned"}}
  %strided = memref.alloc() : memref<4xf32, strided<[2]>, #etcopy.device<cuda:0>>
  memref.dealloc %strided : memref<4xf32, strided<[2]>, #etcopy.device<cuda:0>>
  // expected-remark @below {{Reason="the size of memref<f32> is unknown", Remark="not planned"}}
  %nested = memref.alloc() : memref<4xmemref<f32>, #etcopy.device<cuda:0>>
  memref.dealloc %nested : memref<4xmemref<f32>, #etcopy.device<cuda:0>>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    // expected-remark @below {{Reason="it is allocated in a region of 'scf.parallel' (only the entry block and single-block scf.for/while/if/index_switch/execute_region bodies are planned)", Remark="not planned"}}
    %parallel = memref.alloc() : !d
    memref.dealloc %parallel : !d
    scf.reduce
  }
  return %returned, %sub, %address : !d, memref<2xf32, strided<[1]>, #etcopy.device<cuda:0>>, index
}

// -----

// A function whose symbol is used other than by func.call cannot change its
// signature: with arena-ownership=caller it keeps owning its arenas, and
// says so, since an embedder must not pass it arenas.
// expected-remark @below {{planned cuda:0 arena: 1 buffer(s), 16 bytes requested, 256 bytes (peak live 256)}}
// expected-warning @below {{@taken keeps owning its arenas (arena-ownership=function): its symbol is used by 'func.constant', not only by func.call}}
func.func @taken() {
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=16}}
  %a = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %a : memref<4xf32, #etcopy.device<cuda:0>>
  return
}
func.func @take() -> (() -> ()) {
  // expected-note @below {{used here}}
  %f = func.constant @taken : () -> ()
  return %f : () -> ()
}

// Without arenas there is nothing to pass: no warning.
func.func @taken_unplanned() {
  %h = memref.alloc() : memref<4xf32>
  memref.dealloc %h : memref<4xf32>
  return
}
func.func @take_unplanned() -> (() -> ()) {
  %f = func.constant @taken_unplanned : () -> ()
  return %f : () -> ()
}

// -----

// The metadata symbols must be free.
// expected-note @below {{defined here}}
llvm.mlir.global external constant @clash_etcopy_arenas(0 : i64) : i64
// expected-remark @below {{planned cuda:0 arena}}
// expected-error @below {{cannot emit the arena metadata of @clash: symbol @clash_etcopy_arenas already exists}}
func.func @clash() {
  // expected-remark @below {{Arena=cuda:0, Offset=0, Size=16}}
  %a = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %a : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// Buffers no device can hold are left alone, so that arena sizes cannot
// overflow (here each buffer is 2^64 bytes).
!huge = memref<4611686018427387904xf32, #etcopy.device<cuda:0>>
func.func @huge() {
  // expected-remark @below {{Reason="it is larger than 1099511627776 bytes", Remark="not planned"}}
  %a = memref.alloc() : !huge
  // expected-remark @below {{Reason="it is larger than 1099511627776 bytes", Remark="not planned"}}
  %b = memref.alloc() : !huge
  memref.copy %a, %b : !huge to !huge
  memref.dealloc %a : !huge
  memref.dealloc %b : !huge
  return
}
