// RUN: etcopy-opt %s -split-input-file --etcopy-bufferize | FileCheck %s --implicit-check-not=bufferization.dealloc --implicit-check-not=bufferization.clone
// RUN: etcopy-opt %s -split-input-file --etcopy-bufferize --etcopy-bufferize | FileCheck %s --implicit-check-not=bufferization.dealloc --implicit-check-not=bufferization.clone

// etcopy-bufferize: the delegate calling contract stated to One-Shot
// Bufferize (no defensive copies of delegate operands, copies only where a
// delegate writes an argument the program reads again), and deallocation
// with the contract's aliasing facts (delegate results and allocations freed
// without run-time alias checks). The second RUN line shows that running the
// pass on its own output changes nothing.

// A read-only operand is passed as is, however many delegates read it.
// CHECK-LABEL: func.func private @read
// CHECK-SAME: (memref<4xf32, #etcopy.device<cuda:0>> {bufferization.access = "read"})
// CHECK-LABEL: func.func @shared_operand
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>)
// CHECK: %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: etcopy.h2d %[[X]], %[[D]]
// CHECK: %[[A:.*]] = call @read(%[[D]])
// CHECK: %[[B:.*]] = call @read(%[[D]])
// CHECK-NOT: memref.copy
// CHECK: %[[H:.*]] = memref.alloc() {{.*}}: memref<4xf32>
// CHECK: etcopy.d2h %[[B]], %[[H]]
// CHECK-NOT: scf.if
// CHECK: return %[[H]]
func.func private @read(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @shared_operand(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %a = func.call @read(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %b = func.call @read(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %b : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

// An argument marked etcopy.writes is written in place: the program reads
// %d again afterwards, so the delegate gets a copy of it. The read-only
// operand of the same call is not copied.
// CHECK-LABEL: func.func private @update
// CHECK-SAME: (memref<4xf32, #etcopy.device<cuda:0>> {bufferization.access = "read"}, memref<4xf32, #etcopy.device<cuda:0>> {bufferization.access = "read-write", etcopy.writes})
// CHECK-LABEL: func.func @written_then_read
// CHECK: %[[D:.*]] = memref.alloc()
// CHECK: etcopy.h2d %{{.*}}, %[[D]]
// CHECK: %[[COPY:.*]] = memref.alloc()
// CHECK: memref.copy %[[D]], %[[COPY]]
// CHECK: call @update(%[[D]], %[[COPY]])
// CHECK: call @read(%[[D]])
// CHECK-NOT: scf.if
// CHECK: return
func.func private @update(tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>> {etcopy.writes}) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @read(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @written_then_read(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %a = func.call @update(%d, %d) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %b = func.call @read(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %b : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

// A written argument that nothing reads afterwards needs no copy.
// CHECK-LABEL: func.func @written_last
// CHECK: %[[D:.*]] = memref.alloc()
// CHECK: etcopy.h2d %{{.*}}, %[[D]]
// CHECK-NOT: memref.copy
// CHECK: call @update(%[[D]])
func.func private @update(tensor<4xf32, #etcopy.device<cuda:0>> {etcopy.writes}) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @written_last(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %a = func.call @update(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %a : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

// A delegate definition may not write an argument without etcopy.writes: its
// body copies before writing, and its callers pass their buffers as is.
// CHECK-LABEL: func.func private @zero_first
// CHECK-SAME: (%[[T:.*]]: memref<4xf32, #etcopy.device<cuda:0>>)
// CHECK: %[[OWN:.*]] = memref.alloc()
// CHECK: memref.copy %[[T]], %[[OWN]]
// CHECK: memref.store %{{.*}}, %[[OWN]]
// CHECK-LABEL: func.func @definition
// CHECK: %[[D:.*]] = memref.alloc()
// CHECK: etcopy.h2d %{{.*}}, %[[D]]
// CHECK: call @zero_first(%[[D]])
// CHECK: call @zero_first(%[[D]])
func.func private @zero_first(%t: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>} {
  %c0 = arith.constant 0 : index
  %f = arith.constant 0.0 : f32
  %r = tensor.insert %f into %t[%c0] : tensor<4xf32, #etcopy.device<cuda:0>>
  return %r : tensor<4xf32, #etcopy.device<cuda:0>>
}
func.func @definition(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %a = func.call @zero_first(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %b = func.call @zero_first(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %b : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

// An explicit bufferization.access wins over the contract: this delegate
// says it writes its argument, so the caller, reading %d again, copies it.
// CHECK-LABEL: func.func private @explicit
// CHECK-SAME: {bufferization.access = "read-write"}
// CHECK-LABEL: func.func @explicit_access
// CHECK: memref.copy
// CHECK: call @explicit
func.func private @explicit(tensor<4xf32, #etcopy.device<cuda:0>> {bufferization.access = "read-write"}) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @explicit_access(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %a = func.call @explicit(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %b = func.call @explicit(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %b : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

// A host function's result is fresh too, by upstream's function boundary
// ABI (a function returns buffers it owns, never one of its arguments, and
// owns none of its caller's): freed without a run-time check.
// CHECK-LABEL: func.func @host_call
// CHECK: %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[H:.*]] = memref.alloc() {{.*}}: memref<4xf32>
// CHECK-NEXT: etcopy.d2h %[[D]], %[[H]]
// CHECK-NEXT: memref.dealloc %[[D]]
// CHECK-NEXT: %[[R:.*]] = call @host_identity(%[[H]])
// CHECK-NEXT: memref.dealloc %[[H]]
// CHECK-NEXT: return %[[R]]
func.func private @host_identity(tensor<4xf32>) -> tensor<4xf32>
func.func @host_call(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %d : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %r = func.call @host_identity(%h) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Negative case: the ABI does not keep one call's results apart (here both
// are the same buffer), so they are freed behind a run-time check, once.
// CHECK-LABEL: func.func @same_buffer_twice
// CHECK: %[[R:.*]]:2 = call @two
// CHECK: %[[B0:[^,]*]], {{.*}} = memref.extract_strided_metadata %[[R]]#0
// CHECK: %[[B1:[^,]*]], {{.*}} = memref.extract_strided_metadata %[[R]]#1
// CHECK: call @dealloc_helper
// CHECK: scf.if
// CHECK: scf.if
func.func private @two(%s: f32) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%s : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %f, %f : tensor<4xf32>, tensor<4xf32>
}
func.func @same_buffer_twice(%s: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %a, %b = call @two(%s) : (f32) -> (tensor<4xf32>, tensor<4xf32>)
  %v = tensor.extract %a[%c0] : tensor<4xf32>
  %w = tensor.extract %b[%c0] : tensor<4xf32>
  %r = arith.addf %v, %w : f32
  return %r : f32
}

// -----

// Negative case: a value of unknown origin (here, which of two buffers an
// arith.select chooses) may alias the others, so they are freed behind
// upstream's run-time pointer comparisons. (Which of two buffers an scf.if
// yields has a static owner: bufferize-structured.mlir.)
// CHECK-LABEL: func.func @choose
// CHECK: %[[A:.*]] = call @produce()
// CHECK: %[[B:.*]] = call @produce()
// CHECK: arith.select
// CHECK: %[[BA:[^,]*]], {{.*}} = memref.extract_strided_metadata %[[A]]
// CHECK: memref.extract_aligned_pointer_as_index %[[BA]]
// CHECK: call @dealloc_helper
// CHECK: scf.if
func.func private @produce() -> tensor<4xf32>
func.func @choose(%c: i1) -> tensor<4xf32> {
  %a = func.call @produce() : () -> tensor<4xf32>
  %b = func.call @produce() : () -> tensor<4xf32>
  %r = arith.select %c, %a, %b : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Memref-level input that frees its own buffers is bufferized (nothing to
// do) and keeps its deallocations as they are.
// CHECK-LABEL: func.func @memref_level
// CHECK: %[[D:.*]] = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK: etcopy.h2d %{{.*}}, %[[D]]
// CHECK: return
func.func @memref_level(%x: memref<4xf32>) {
  %d = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %x, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %d : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// A delegate's result aliases none of its operands (upstream must assume it
// may alias every one of them): %s, read by both calls, is not copied even
// though the first call's result is then written by the second.
// The declaration stays a declaration (its temporary body is gone).
// CHECK: func.func private @normalize({{.*}}) -> memref<64xf32, #etcopy.device<cuda:0>> attributes {etcopy.device = #etcopy.device<cuda:0>}{{$}}
// CHECK-LABEL: func.func @result_written_later
// CHECK: %[[D:.*]] = memref.alloc()
// CHECK: %[[S:.*]] = memref.alloc()
// CHECK-NOT: memref.copy
// CHECK: %[[N:.*]] = call @normalize(%[[D]], %[[S]])
// CHECK: call @normalize(%[[N]], %[[S]])
// CHECK-NOT: memref.copy
// CHECK: return
func.func private @normalize(tensor<64xf32, #etcopy.device<cuda:0>> {etcopy.writes},
                             tensor<64xf32, #etcopy.device<cuda:0>>)
    -> tensor<64xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @result_written_later(%x: tensor<64xf32>, %scale: tensor<64xf32>) -> tensor<64xf32> {
  %d = etcopy.h2d %x : tensor<64xf32> -> tensor<64xf32, #etcopy.device<cuda:0>>
  %s = etcopy.h2d %scale : tensor<64xf32> -> tensor<64xf32, #etcopy.device<cuda:0>>
  %n = func.call @normalize(%d, %s) : (tensor<64xf32, #etcopy.device<cuda:0>>, tensor<64xf32, #etcopy.device<cuda:0>>) -> tensor<64xf32, #etcopy.device<cuda:0>>
  %m = func.call @normalize(%n, %s) : (tensor<64xf32, #etcopy.device<cuda:0>>, tensor<64xf32, #etcopy.device<cuda:0>>) -> tensor<64xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %m : tensor<64xf32, #etcopy.device<cuda:0>> -> tensor<64xf32>
  return %h : tensor<64xf32>
}

// -----

// Dynamically shaped results and scalar results: the declaration still
// returns fresh values.
// CHECK: func.func private @split({{.*}}) -> (memref<?xf32, #etcopy.device<cuda:0>>, index) attributes {etcopy.device = #etcopy.device<cuda:0>}{{$}}
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[D:.*]] = memref.alloc(%{{.*}}) {{.*}}: memref<?xf32, #etcopy.device<cuda:0>>
// CHECK-NOT: memref.copy
// CHECK: %[[R:.*]]:2 = call @split(%[[D]])
// CHECK: call @split(%[[R]]#0)
func.func private @split(tensor<?xf32, #etcopy.device<cuda:0>> {etcopy.writes}) -> (tensor<?xf32, #etcopy.device<cuda:0>>, index)
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @dynamic(%x: tensor<?xf32>) -> index {
  %d = etcopy.h2d %x : tensor<?xf32> -> tensor<?xf32, #etcopy.device<cuda:0>>
  %r:2 = func.call @split(%d) : (tensor<?xf32, #etcopy.device<cuda:0>>) -> (tensor<?xf32, #etcopy.device<cuda:0>>, index)
  %q:2 = func.call @split(%r#0) : (tensor<?xf32, #etcopy.device<cuda:0>>) -> (tensor<?xf32, #etcopy.device<cuda:0>>, index)
  %sum = arith.addi %r#1, %q#1 : index
  return %sum : index
}

// -----

// A method's tensor arguments are its caller's values: writing one makes a
// copy first (upstream would write the caller's buffer in place), unless the
// argument says it is writable (then the write is in place; deallocation
// returns a copy, since the method does not own its argument). Private functions with bodies are left to
// upstream's analysis of their call sites.
// CHECK-LABEL: func.func @method_writes_argument
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[V:.*]]: f32, %[[I:.*]]: index)
// CHECK: %[[C:.*]] = memref.alloc() {{.*}}: memref<4xf32>
// CHECK: memref.copy %[[X]], %[[C]]
// CHECK: memref.store %[[V]], %[[C]][%[[I]]]
// CHECK: return %[[C]]
func.func @method_writes_argument(%x: tensor<4xf32>, %v: f32, %i: index) -> tensor<4xf32> {
  %r = tensor.insert %v into %x[%i] : tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @method_with_writable_argument
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[V:.*]]: f32, %[[I:.*]]: index)
// CHECK-NOT: memref.copy
// CHECK: memref.store %[[V]], %[[X]][%[[I]]]
func.func @method_with_writable_argument(%x: tensor<4xf32> {bufferization.writable = true}, %v: f32, %i: index) -> tensor<4xf32> {
  %r = tensor.insert %v into %x[%i] : tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[V:.*]]: f32, %[[I:.*]]: index)
// CHECK-NOT: memref.copy
// CHECK: memref.store %[[V]], %[[X]][%[[I]]]
func.func private @helper(%x: tensor<4xf32>, %v: f32, %i: index) -> tensor<4xf32> {
  %r = tensor.insert %v into %x[%i] : tensor<4xf32>
  return %r : tensor<4xf32>
}
