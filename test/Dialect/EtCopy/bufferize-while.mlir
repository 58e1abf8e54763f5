// RUN: etcopy-opt %s -split-input-file --etcopy-bufferize \
// RUN:   | FileCheck %s --implicit-check-not=memref.dealloc \
// RUN:       --implicit-check-not=bufferization.dealloc \
// RUN:       --implicit-check-not=bufferization.clone \
// RUN:       --implicit-check-not=memref.extract_strided_metadata

// etcopy-bufferize frees each buffer right after its last use through
// scf.while too: its condition region owns its arguments and gives each
// buffer scf.condition forwards once (to the body's arguments or to the
// loop's results); the body owns its arguments and gives what it yields.
// Every free is CHECKed: no other memref.dealloc may appear, and none of
// upstream's run-time ownership checks.

func.func private @step(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @check(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<i1, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// A decode loop's shape: state on the device, termination computed by a
// delegate. The loop takes the first delegate result over (nothing uses it
// after the loop); the condition frees the flag it made and downloaded and
// forwards the state it was given; the body frees that state after the
// call that makes the next; the loop's result is freed after its download.
// CHECK-LABEL: func.func @device_state(
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}} : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK:         %[[FIRST:.*]] = call @step(%[[D]])
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    %[[LOOP:.*]] = scf.while (%[[S:.*]] = %[[FIRST]])
// CHECK-NEXT:      %[[F:.*]] = func.call @check(%[[S]])
// CHECK-NEXT:      %[[FH:.*]] = memref.alloc() {{.*}} : memref<i1>
// CHECK-NEXT:      etcopy.d2h %[[F]], %[[FH]]
// CHECK-NEXT:      memref.dealloc %[[F]]
// CHECK-NEXT:      %[[GO:.*]] = memref.load %[[FH]][]
// CHECK-NEXT:      memref.dealloc %[[FH]]
// CHECK-NEXT:      scf.condition(%[[GO]]) %[[S]]
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%[[T:.*]]: memref<4xf32, #etcopy.device<cuda:0>>):
// CHECK-NEXT:      %[[NEXT:.*]] = func.call @step(%[[T]])
// CHECK-NEXT:      memref.dealloc %[[T]]
// CHECK-NEXT:      scf.yield %[[NEXT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[H:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT:    etcopy.d2h %[[LOOP]], %[[H]]
// CHECK-NEXT:    memref.dealloc %[[LOOP]]
// CHECK-NEXT:    return %[[H]]
func.func @device_state(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %first = func.call @step(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %r = scf.while (%s = %first) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
    %f = func.call @check(%s) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<i1, #etcopy.device<cuda:0>>
    %fh = etcopy.d2h %f : tensor<i1, #etcopy.device<cuda:0>> -> tensor<i1>
    %c = tensor.extract %fh[] : tensor<i1>
    scf.condition(%c) %s : tensor<4xf32, #etcopy.device<cuda:0>>
  } do {
  ^bb0(%t: tensor<4xf32, #etcopy.device<cuda:0>>):
    %n = func.call @step(%t) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    scf.yield %n : tensor<4xf32, #etcopy.device<cuda:0>>
  }
  %h = etcopy.d2h %r : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

func.func private @step(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// A buffer made before the loop and last used in its body is freed after
// the loop (never in the body, which runs again); the body frees what it
// made, each iteration.
// CHECK-LABEL: func.func @used_in_body(
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}} : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK:         scf.while
// CHECK:         } do {
// CHECK:           %[[R:.*]] = func.call @step(%[[D]])
// CHECK-NEXT:      %[[H:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT:      etcopy.d2h %[[R]], %[[H]]
// CHECK-NEXT:      memref.dealloc %[[R]]
// CHECK-NEXT:      memref.load %[[H]]
// CHECK-NEXT:      memref.dealloc %[[H]]
// CHECK:           scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    return
func.func @used_in_body(%x: tensor<4xf32>, %v: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %r = scf.while (%s = %zero) : (f32) -> f32 {
    %go = arith.cmpf olt, %s, %v : f32
    scf.condition(%go) %s : f32
  } do {
  ^bb0(%t: f32):
    %n = func.call @step(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    %h = etcopy.d2h %n : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
    %e = tensor.extract %h[%c0] : tensor<4xf32>
    %a = arith.addf %t, %e : f32
    scf.yield %a : f32
  }
  return %r : f32
}

// -----

// The condition forwards a buffer it made (bufferization's copy of the
// function's argument) and frees the state it was given after reading it;
// the loop's initial buffer is a copy (of the argument), and the body
// yields the buffer it was given, in place. The loop's result is returned.
// CHECK-LABEL: func.func @forwards_new_buffer(
// CHECK-SAME:    %[[X:[^:]*]]: memref<4xf32>
// CHECK:         %[[INIT:.*]] = memref.alloc()
// CHECK-NEXT:    memref.copy %[[X]], %[[INIT]]
// CHECK-NEXT:    %[[LOOP:.*]] = scf.while (%[[S:.*]] = %[[INIT]])
// CHECK-NEXT:      memref.load %[[S]]
// CHECK-NEXT:      memref.dealloc %[[S]]
// CHECK:           %[[NEW:.*]] = memref.alloc()
// CHECK-NEXT:      memref.copy %[[X]], %[[NEW]]
// CHECK-NEXT:      scf.condition(%{{.*}}) %[[NEW]]
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%[[T:.*]]: memref<4xf32>):
// CHECK:           memref.store %{{.*}}, %[[T]]
// CHECK-NEXT:      scf.yield %[[T]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[LOOP]]
func.func @forwards_new_buffer(%x: tensor<4xf32>, %v: f32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %r = scf.while (%s = %x) : (tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.extract %s[%c0] : tensor<4xf32>
    %go = arith.cmpf olt, %e, %v : f32
    scf.condition(%go) %x : tensor<4xf32>
  } do {
  ^bb0(%t: tensor<4xf32>):
    %e = tensor.extract %t[%c0] : tensor<4xf32>
    %a = arith.addf %e, %e : f32
    %i = tensor.insert %a into %t[%c0] : tensor<4xf32>
    scf.yield %i : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// The condition forwards its state and a copy of it: two buffers, each
// given once. The body frees the copy after reading it and yields the
// state; both of the loop's results are returned.
// CHECK-LABEL: func.func @forwards_two(
// CHECK:         scf.while (%[[S:.*]] = %{{.*}})
// CHECK:           %[[COPY:.*]] = memref.alloc()
// CHECK-NEXT:      memref.copy %[[S]], %[[COPY]]
// CHECK-NEXT:      scf.condition(%{{.*}}) %[[S]], %[[COPY]]
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%[[T:.*]]: memref<4xf32>, %[[U:.*]]: memref<4xf32>):
// CHECK-NEXT:      memref.load %[[U]]
// CHECK-NEXT:      memref.dealloc %[[U]]
// CHECK:           scf.yield %[[T]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @forwards_two(%x: tensor<4xf32>, %v: f32) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %r:2 = scf.while (%s = %x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %e = tensor.extract %s[%c0] : tensor<4xf32>
    %go = arith.cmpf olt, %e, %v : f32
    scf.condition(%go) %s, %s : tensor<4xf32>, tensor<4xf32>
  } do {
  ^bb0(%t: tensor<4xf32>, %u: tensor<4xf32>):
    %e = tensor.extract %u[%c0] : tensor<4xf32>
    %a = arith.addf %e, %e : f32
    %i = tensor.insert %a into %t[%c0] : tensor<4xf32>
    scf.yield %i : tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
