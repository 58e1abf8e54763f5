// RUN: etcopy-opt %s -split-input-file --convert-etcopy-to-gpu | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h --implicit-check-not='gpu.wait ['

// Where the host waits for the token chain. Every host wait (`gpu.wait [...]`)
// in the output is matched by a CHECK line, so each case also shows where no
// wait is placed.

// Several copies form one chain; ops without memory effects (arith,
// memref.dim, memref.subview, memref.cast) run while it is in flight and the
// host waits once, before the return.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<?xf32>, %[[DA:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[DB:.*]]: memref<?xf32, #etcopy.device<cuda:0>>, %[[OUT:.*]]: memref<4xf32>)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.memcpy async [%[[T0]]] %[[DA]], %[[A]]
// CHECK: %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[DB]], %[[B]]
// CHECK: arith.addi
// CHECK: memref.dim
// CHECK: memref.subview
// CHECK: memref.cast
// CHECK: %[[T3:.*]] = gpu.memcpy async [%[[T2]]] %[[OUT]], %[[DA]]
// CHECK: gpu.wait [%[[T3]]]
// CHECK-NEXT: return
func.func @chain(%a: memref<4xf32>, %b: memref<?xf32>, %da: memref<4xf32, #etcopy.device<cuda:0>>, %db: memref<?xf32, #etcopy.device<cuda:0>>, %out: memref<4xf32>) -> (index, memref<2xf32, strided<[1], offset: 1>>, memref<?xf32>) {
  etcopy.h2d %a, %da : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %b, %db : memref<?xf32> -> memref<?xf32, #etcopy.device<cuda:0>>
  %c0 = arith.constant 0 : index
  %i = arith.addi %c0, %c0 : index
  %n = memref.dim %b, %i : memref<?xf32>
  %v = memref.subview %a[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  %c = memref.cast %a : memref<4xf32> to memref<?xf32>
  etcopy.d2h %da, %out : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  return %n, %v, %c : index, memref<2xf32, strided<[1], offset: 1>>, memref<?xf32>
}

// -----

// The host reads the destination of a d2h in flight: wait first. The chain
// continues from the same token after the wait.
// CHECK-LABEL: func.func @read_d2h_destination
// CHECK-SAME: (%[[D:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[H:.*]]: memref<4xf32>, %[[H2:.*]]: memref<4xf32>, %[[D2:.*]]: memref<4xf32, #etcopy.device<cuda:0>>)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.memcpy async [%[[T0]]] %[[H]], %[[D]]
// CHECK: gpu.wait [%[[T1]]]
// CHECK-NEXT: %[[V:.*]] = memref.load %[[H]]
// CHECK-NEXT: memref.store %[[V]], %[[H2]]
// CHECK-NEXT: %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[D2]], %[[H2]]
// CHECK-NEXT: gpu.wait [%[[T2]]]
// CHECK-NEXT: return
func.func @read_d2h_destination(%d: memref<4xf32, #etcopy.device<cuda:0>>, %h: memref<4xf32>, %h2: memref<4xf32>, %d2: memref<4xf32, #etcopy.device<cuda:0>>) {
  %c0 = arith.constant 0 : index
  etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  %v = memref.load %h[%c0] : memref<4xf32>
  memref.store %v, %h2[%c0] : memref<4xf32>
  etcopy.h2d %h2, %d2 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// The host may read the source of an h2d in flight, but must wait before
// writing it.
// CHECK-LABEL: func.func @write_h2d_source
// CHECK-SAME: (%[[H:.*]]: memref<4xf32>, %[[D:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[F:.*]]: f32)
// CHECK: %[[T1:.*]] = gpu.memcpy async [%{{.*}}] %[[D]], %[[H]]
// CHECK-NEXT: %[[V:.*]] = memref.load %[[H]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[V]], %[[F]]
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: memref.store %[[S]], %[[H]]
// CHECK-NEXT: return
func.func @write_h2d_source(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %f: f32) {
  %c0 = arith.constant 0 : index
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  %v = memref.load %h[%c0] : memref<4xf32>
  %s = arith.addf %v, %f : f32
  memref.store %s, %h[%c0] : memref<4xf32>
  return
}

// -----

// Freeing the source of an h2d in flight is a write too.
// CHECK-LABEL: func.func @dealloc_h2d_source
// CHECK: %[[H:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[T1:.*]] = gpu.memcpy async [%{{.*}}] %{{.*}}, %[[H]]
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: memref.dealloc %[[H]]
// CHECK-NEXT: return
func.func @dealloc_h2d_source(%d: memref<4xf32, #etcopy.device<cuda:0>>) {
  %h = memref.alloc() : memref<4xf32>
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h : memref<4xf32>
  return
}

// -----

// A read through a view of a d2h destination waits.
// CHECK-LABEL: func.func @read_view_of_d2h_destination
// CHECK-SAME: (%[[D:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[H:.*]]: memref<4xf32>)
// CHECK: %[[T1:.*]] = gpu.memcpy async [%{{.*}}] %[[H]], %[[D]]
// CHECK-NEXT: %[[V:.*]] = memref.subview %[[H]]
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: memref.load %[[V]]
func.func @read_view_of_d2h_destination(%d: memref<4xf32, #etcopy.device<cuda:0>>, %h: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  %v = memref.subview %h[2] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 2>>
  %x = memref.load %v[%c0] : memref<2xf32, strided<[1], offset: 2>>
  return %x : f32
}

// -----

// Host work on a buffer no copy in flight can touch (a fresh allocation)
// overlaps with the copies. Another argument may alias the d2h destination
// (an argument too): writing it waits.
// CHECK-LABEL: func.func @unrelated_host_work
// CHECK-SAME: (%[[D:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[H:.*]]: memref<4xf32>, %[[OTHER:.*]]: memref<4xf32>, %[[F:.*]]: f32)
// CHECK: %[[T1:.*]] = gpu.memcpy async [%{{.*}}] %[[H]], %[[D]]
// CHECK-NEXT: %[[TMP:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.store %[[F]], %[[TMP]]
// CHECK-NEXT: memref.load %[[TMP]]
// CHECK-NEXT: memref.dealloc %[[TMP]]
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: memref.store %[[F]], %[[OTHER]]
// CHECK-NEXT: return
func.func @unrelated_host_work(%d: memref<4xf32, #etcopy.device<cuda:0>>, %h: memref<4xf32>, %other: memref<4xf32>, %f: f32) -> f32 {
  %c0 = arith.constant 0 : index
  etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  memref.store %f, %tmp[%c0] : memref<4xf32>
  %x = memref.load %tmp[%c0] : memref<4xf32>
  memref.dealloc %tmp : memref<4xf32>
  memref.store %f, %other[%c0] : memref<4xf32>
  return %x : f32
}

// -----

// A call has unknown effects: wait before it, even for a device allocation
// alone (the callee may use the buffer). A free is not observable, so no
// wait follows it: it completes with the stream.
// CHECK-LABEL: func.func @call
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: %[[A:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] ()
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: call @use(%[[A]])
// CHECK-NEXT: gpu.dealloc async [%[[T1]]] %[[A]]
// CHECK-NEXT: return
func.func private @use(memref<4xf32, #etcopy.device<cuda:0>>)
func.func @call() {
  %a = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  func.call @use(%a) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %a : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// A loop with memory effects is a region op: the host waits before it, and
// its body has its own chain that it finishes before yielding.
// CHECK-LABEL: func.func @loop
// CHECK-SAME: (%[[H:.*]]: memref<4xf32>, %[[D:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[N:.*]]: index)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: %[[T1:.*]] = gpu.memcpy async [%[[T0]]] %[[D]], %[[H]]
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: scf.for
// CHECK-NEXT:   %[[L0:.*]] = gpu.wait async
// CHECK-NEXT:   %[[L1:.*]] = gpu.memcpy async [%[[L0]]] %[[H]], %[[D]]
// CHECK-NEXT:   %[[L2:.*]] = gpu.memcpy async [%[[L1]]] %[[D]], %[[H]]
// CHECK-NEXT:   gpu.wait [%[[L2]]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @loop(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  scf.for %i = %c0 to %n step %c1 {
    etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
    etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  }
  return
}

// -----

// scf.if: each branch has its own chain; a branch without device work gets
// none. The value yielded from an allocation is complete when it leaves the
// branch.
// CHECK-LABEL: func.func @if
// CHECK-SAME: (%[[B:.*]]: i1, %[[H:.*]]: memref<4xf32>, %[[OTHER:.*]]: memref<4xf32, #etcopy.device<cuda:0>>)
// CHECK: scf.if %[[B]]
// CHECK-NEXT:   %[[T0:.*]] = gpu.wait async
// CHECK-NEXT:   %[[A:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] ()
// CHECK-NEXT:   %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[A]], %[[H]]
// CHECK-NEXT:   gpu.wait [%[[T2]]]
// CHECK-NEXT:   scf.yield %[[A]]
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %[[OTHER]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @if(%b: i1, %h: memref<4xf32>, %other: memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>> {
  %r = scf.if %b -> memref<4xf32, #etcopy.device<cuda:0>> {
    %a = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
    etcopy.h2d %h, %a : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
    scf.yield %a : memref<4xf32, #etcopy.device<cuda:0>>
  } else {
    scf.yield %other : memref<4xf32, #etcopy.device<cuda:0>>
  }
  return %r : memref<4xf32, #etcopy.device<cuda:0>>
}

// -----

// A region op without memory effects does not wait.
// CHECK-LABEL: func.func @pure_region
// CHECK: %[[T1:.*]] = gpu.memcpy async
// CHECK-NEXT: scf.if
// CHECK: arith.addi
// CHECK: gpu.wait [%[[T1]]]
// CHECK-NEXT: return
func.func @pure_region(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %b: i1, %x: index) -> index {
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  %r = scf.if %b -> index {
    %y = arith.addi %x, %x : index
    scf.yield %y : index
  } else {
    scf.yield %x : index
  }
  return %r : index
}

// -----

// Unstructured control flow: each block has its own chain and finishes it
// before its terminator.
// CHECK-LABEL: func.func @blocks
// CHECK: %[[T1:.*]] = gpu.memcpy async
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: cf.br ^[[BB:.*]]
// CHECK: ^[[BB]]:
// CHECK-NEXT: %[[U0:.*]] = gpu.wait async
// CHECK-NEXT: %[[U1:.*]] = gpu.memcpy async [%[[U0]]]
// CHECK-NEXT: gpu.wait [%[[U1]]]
// CHECK-NEXT: return
func.func @blocks(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  cf.br ^next
^next:
  etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  return
}

// -----

// A gpu op already in the input is not on the chain: it is ordered after it.
// CHECK-LABEL: func.func @existing_gpu_op
// CHECK-SAME: (%[[H:.*]]: memref<4xf32>, %[[D:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[F:.*]]: f32)
// CHECK: %[[T1:.*]] = gpu.memcpy async [%{{.*}}] %[[D]], %[[H]]
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: gpu.memset %[[D]], %[[F]]
// CHECK-NEXT: return
func.func @existing_gpu_op(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %f: f32) {
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  gpu.memset %d, %f : memref<4xf32, #etcopy.device<cuda:0>>, f32
  return
}

// -----

// A region op is judged by the effects of its nested ops: a linalg.generic
// and a loop of host work on buffers no copy in flight uses run while the
// copies are in flight; one that reads the destination of a d2h in flight
// waits first.
// CHECK-LABEL: func.func @host_region_ops
// CHECK-SAME: (%[[D:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[H:.*]]: memref<4xf32>, %[[N:.*]]: index)
// CHECK: %[[T1:.*]] = gpu.memcpy async [%{{.*}}] %[[H]], %[[D]]
// CHECK-NEXT: %[[A:.*]] = memref.alloc()
// CHECK-NEXT: %[[B:.*]] = memref.alloc()
// CHECK-NEXT: linalg.generic
// CHECK-SAME: ins(%[[A]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK: scf.for
// CHECK-NEXT: memref.load %[[A]]
// CHECK-NEXT: memref.store {{.*}}, %[[B]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: linalg.generic
// CHECK-SAME: ins(%[[H]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK: return
#id = affine_map<(i) -> (i)>
func.func @host_region_ops(%d: memref<4xf32, #etcopy.device<cuda:0>>, %h: memref<4xf32>, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  }
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%c0] : memref<4xf32>
    memref.store %v, %b[%c0] : memref<4xf32>
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%h : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  memref.dealloc %a : memref<4xf32>
  return %b : memref<4xf32>
}

// -----

// A loop whose host body writes the source of an h2d in flight waits
// before it; so does one holding device work (its own chain is not ordered
// after this one).
// CHECK-LABEL: func.func @loop_writes_h2d_source
// CHECK-SAME: (%[[H:.*]]: memref<4xf32>, %[[D:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[N:.*]]: index, %[[F:.*]]: f32)
// CHECK: %[[T1:.*]] = gpu.memcpy async [%{{.*}}] %[[D]], %[[H]]
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.store %[[F]], %[[H]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[D]], %[[H]]
// CHECK-NEXT: gpu.wait [%[[T2]]]
// CHECK-NEXT: scf.for
// CHECK: gpu.memcpy async
// CHECK: gpu.wait
// CHECK: return
func.func @loop_writes_h2d_source(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %n: index, %f: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %f, %h[%c0] : memref<4xf32>
  }
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  scf.for %i = %c0 to %n step %c1 {
    etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  }
  return
}
