// RUN: etcopy-opt %s -split-input-file --etcopy-bufferize \
// RUN:   | FileCheck %s --implicit-check-not=memref.dealloc \
// RUN:       --implicit-check-not=bufferization.dealloc \
// RUN:       --implicit-check-not=bufferization.clone \
// RUN:       --implicit-check-not=memref.extract_strided_metadata
// RUN: etcopy-opt %s -split-input-file --etcopy-bufferize \
// RUN:   --remarks-filter=etcopy-bufferize -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK

// etcopy-bufferize frees each buffer right after its last use through
// scf.for and scf.if too, in the block that owns it: a buffer of the
// function's body used in a loop after the loop, one made in a loop body in
// the body (each iteration), one made in a branch in that branch. Every
// free is CHECKed: no other memref.dealloc may appear (none at a block's
// end), and none of upstream's run-time ownership checks.

func.func private @reverse(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// A buffer made before a loop and last used in it is freed right after the
// loop; one made and last used in the body, in the body after its last use.
// CHECK-LABEL: func.func @used_in_loop(
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}} : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK:         etcopy.h2d %{{.*}}, %[[D]]
// CHECK:         scf.for
// CHECK:           %[[R:.*]] = func.call @reverse(%[[D]])
// CHECK:           %[[H:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT:      etcopy.d2h %[[R]], %[[H]]
// CHECK-NEXT:      memref.dealloc %[[R]]
// CHECK-NEXT:      memref.load %[[H]]
// CHECK-NEXT:      memref.dealloc %[[H]]
// CHECK:           scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    return
func.func @used_in_loop(%x: tensor<4xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> f32 {
    %r = func.call @reverse(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    %h = etcopy.d2h %r : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
    %e = tensor.extract %h[%c0] : tensor<4xf32>
    %t = arith.addf %s, %e : f32
    scf.yield %t : f32
  }
  return %sum : f32
}

// -----

func.func private @reverse(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// Loop-carried state on the device: the loop takes the first delegate
// result over (no copy: nothing uses it after the loop), each iteration
// frees the state it was given after its last use and yields the new one,
// and the loop's result is freed after its last use.
// CHECK-LABEL: func.func @device_state(
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}} : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK:         %[[FIRST:.*]] = call @reverse(%[[D]])
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    %[[LOOP:.*]] = scf.for {{.*}} iter_args(%[[S:.*]] = %[[FIRST]])
// CHECK-NEXT:      %[[NEXT:.*]] = func.call @reverse(%[[S]])
// CHECK-NEXT:      memref.dealloc %[[S]]
// CHECK-NEXT:      scf.yield %[[NEXT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[H:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT:    etcopy.d2h %[[LOOP]], %[[H]]
// CHECK-NEXT:    memref.dealloc %[[LOOP]]
// CHECK-NEXT:    return %[[H]]
func.func @device_state(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %first = func.call @reverse(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %first) -> tensor<4xf32, #etcopy.device<cuda:0>> {
    %next = func.call @reverse(%s) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    scf.yield %next : tensor<4xf32, #etcopy.device<cuda:0>>
  }
  %h = etcopy.d2h %r : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

func.func private @reverse(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// The loop's initial state is used after the loop: the block cannot give it
// to the loop, which frees what it is given, so the loop gets a copy (here
// One-Shot Bufferize's own, a device-to-device memref.copy) and the
// original is freed after its last use.
// CHECK-LABEL: func.func @initial_state_used_after(
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK:         %[[FIRST:.*]] = call @reverse(%[[D]])
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    %[[COPY:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT:    memref.copy %[[FIRST]], %[[COPY]]
// CHECK-NEXT:    %[[LOOP:.*]] = scf.for {{.*}} iter_args(%[[S:.*]] = %[[COPY]])
// CHECK-NEXT:      %[[NEXT:.*]] = func.call @reverse(%[[S]])
// CHECK-NEXT:      memref.dealloc %[[S]]
// CHECK-NEXT:      scf.yield %[[NEXT]]
// CHECK-NEXT:    }
// CHECK:         etcopy.d2h %[[LOOP]],
// CHECK-NEXT:    memref.dealloc %[[LOOP]]
// CHECK:         etcopy.d2h %[[FIRST]],
// CHECK-NEXT:    memref.dealloc %[[FIRST]]
// CHECK:         return
func.func @initial_state_used_after(%x: tensor<4xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %first = func.call @reverse(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %first) -> tensor<4xf32, #etcopy.device<cuda:0>> {
    %next = func.call @reverse(%s) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    scf.yield %next : tensor<4xf32, #etcopy.device<cuda:0>>
  }
  %h = etcopy.d2h %r : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %g = etcopy.d2h %first : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func private @reverse(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// scf.if: each branch frees what it makes after its last use and gives the
// scf.if what it yields. %a, made before the scf.if and yielded by the
// else branch, is taken over by the scf.if: the then branch frees it after
// its last use there, the else branch yields it. The result is freed after
// its last use.
// CHECK-LABEL: func.func @branches(
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}}: memref<4xf32, #etcopy.device<cuda:0>>
// CHECK:         %[[A:.*]] = call @reverse(%[[D]])
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    %[[IF:.*]] = scf.if
// CHECK-NEXT:      %[[B:.*]] = func.call @reverse(%[[A]])
// CHECK-NEXT:      memref.dealloc %[[A]]
// CHECK-NEXT:      %[[C:.*]] = func.call @reverse(%[[B]])
// CHECK-NEXT:      memref.dealloc %[[B]]
// CHECK-NEXT:      scf.yield %[[C]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[A]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[H:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT:    etcopy.d2h %[[IF]], %[[H]]
// CHECK-NEXT:    memref.dealloc %[[IF]]
// CHECK-NEXT:    return %[[H]]
func.func @branches(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %a = func.call @reverse(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %r = scf.if %c -> tensor<4xf32, #etcopy.device<cuda:0>> {
    %b = func.call @reverse(%a) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    %e = func.call @reverse(%b) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    scf.yield %e : tensor<4xf32, #etcopy.device<cuda:0>>
  } else {
    scf.yield %a : tensor<4xf32, #etcopy.device<cuda:0>>
  }
  %h = etcopy.d2h %r : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

func.func private @reverse(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// A branch that yields nothing frees what it makes; a buffer of the body
// that the scf.if only reads is freed after the scf.if.
// CHECK-LABEL: func.func @branch_without_results(
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}} : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK:         scf.if
// CHECK-NEXT:      %[[R:.*]] = func.call @reverse(%[[D]])
// CHECK-NEXT:      memref.dealloc %[[R]]
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    return
func.func @branch_without_results(%x: tensor<4xf32>, %c: i1) {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  scf.if %c {
    %r = func.call @reverse(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  }
  return
}

// -----

func.func private @reverse(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// Nested: an scf.if in a loop body, yielding the body's buffers; a loop in
// a branch. The inner loop's initial state %a belongs to the outer body,
// not to the branch, and is used after the inner loop (by the scf.if, in
// the other branch): the inner loop gets a copy (no alignment: made by
// this pass, not by One-Shot Bufferize), and %a is freed after the scf.if.
// REMARK: [Passed] BufferFreed | Category:etcopy-bufferize | Function=device_state | Buffer="argument #1 of 'scf.for'", LastUse=func.call
// REMARK: [Passed] LoopStateCopied | Category:etcopy-bufferize | Function=nested | Buffer="result #0 of 'func.call'", Remark="the loop's initial buffer is copied into one the loop owns and frees"
// CHECK-LABEL: func.func @nested(
// CHECK:         %[[OUTER:.*]] = scf.for {{.*}} iter_args(%[[S:.*]] = %{{.*}})
// CHECK-NEXT:      %[[A:.*]] = func.call @reverse(%[[S]])
// CHECK-NEXT:      memref.dealloc %[[S]]
// CHECK-NEXT:      %[[IF:.*]] = scf.if
// CHECK-NEXT:        %[[COPY:.*]] = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT:        memref.copy %[[A]], %[[COPY]]
// CHECK-NEXT:        %[[INNER:.*]] = scf.for {{.*}} iter_args(%[[T:.*]] = %[[COPY]])
// CHECK-NEXT:          %[[B:.*]] = func.call @reverse(%[[T]])
// CHECK-NEXT:          memref.dealloc %[[T]]
// CHECK-NEXT:          scf.yield %[[B]]
// CHECK-NEXT:        }
// CHECK-NEXT:        scf.yield %[[INNER]]
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[C:.*]] = func.call @reverse(%[[A]])
// CHECK-NEXT:        scf.yield %[[C]]
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.dealloc %[[A]]
// CHECK-NEXT:      scf.yield %[[IF]]
// CHECK-NEXT:    }
// CHECK:         etcopy.d2h %[[OUTER]],
// CHECK-NEXT:    memref.dealloc %[[OUTER]]
func.func @nested(%x: tensor<4xf32>, %n: index, %c: i1) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %d) -> tensor<4xf32, #etcopy.device<cuda:0>> {
    %a = func.call @reverse(%s) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    %y = scf.if %c -> tensor<4xf32, #etcopy.device<cuda:0>> {
      %inner = scf.for %j = %c0 to %n step %c1 iter_args(%t = %a) -> tensor<4xf32, #etcopy.device<cuda:0>> {
        %b = func.call @reverse(%t) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
        scf.yield %b : tensor<4xf32, #etcopy.device<cuda:0>>
      }
      scf.yield %inner : tensor<4xf32, #etcopy.device<cuda:0>>
    } else {
      %e = func.call @reverse(%a) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
      scf.yield %e : tensor<4xf32, #etcopy.device<cuda:0>>
    }
    scf.yield %y : tensor<4xf32, #etcopy.device<cuda:0>>
  }
  %h = etcopy.d2h %r : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

// Host state that starts as the method's argument: One-Shot Bufferize
// already copies it (arguments of a method are not written in place), and
// the loop takes the copy over.
// CHECK-LABEL: func.func @host_state(
// CHECK-SAME:    %[[X:[^:]*]]: memref<4xf32>
// CHECK:         %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT:    memref.copy %[[X]], %[[COPY]]
// CHECK-NEXT:    %[[LOOP:.*]] = scf.for {{.*}} iter_args(%[[S:.*]] = %[[COPY]])
// CHECK-NEXT:      linalg.add ins(%[[S]], {{.*}} outs(%[[S]] :
// CHECK-NEXT:      scf.yield %[[S]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[LOOP]]
func.func @host_state(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %x) -> tensor<4xf32> {
    %t = linalg.add ins(%s, %one : tensor<4xf32>, tensor<4xf32>) outs(%s : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
