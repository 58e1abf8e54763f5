// RUN: etcopy-opt %s -split-input-file --convert-etcopy-to-gpu \
// RUN:   | FileCheck %s --implicit-check-not='gpu.wait ['
// RUN: etcopy-opt %s -split-input-file --convert-etcopy-to-gpu \
// RUN:   --remarks-filter=convert-etcopy-to-gpu -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK

// The free of a host buffer whose upload is in flight waits for the next
// host wait (FreeDeferred). A host that runs ahead of the device (uploads
// of host temporaries between stream-ordered delegate calls, nothing read
// back) would hold one buffer per upload until then: past 8 deferred frees,
// the next host allocation first waits for the last of their copies alone
// (gpu.wait on that copy's token, marked etcopy.waits_for_one_op: the
// delegate queued after it runs on) and the frees follow it (FreeAfterCopy).
// Every host wait is CHECKed.

// Ten uploads: the 10th allocation finds 9 frees deferred and waits for the
// 9th upload (the delegate call after it keeps running); the 10th free
// waits for the return's wait.
// CHECK-LABEL: func.func @runs_ahead(
// CHECK-COUNT-9: memref.alloc() : memref<4xf32>
// CHECK:         %[[T8:.*]] = gpu.memcpy async [%{{.*}}] %[[D8:.*]], %[[H8:.*]] : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
// CHECK-NEXT:    call @consume_on0(%[[D8]])
// CHECK-NEXT:    gpu.dealloc async
// CHECK-NEXT:    gpu.wait [%[[T8]]] {etcopy.waits_for_one_op}
// CHECK-COUNT-9: memref.dealloc %{{.*}} : memref<4xf32>
// CHECK-NEXT:    %[[H9:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         gpu.memcpy async [%{{.*}}] %{{.*}}, %[[H9]]
// CHECK:         gpu.wait [%{{.*}}]
// CHECK-NEXT:    memref.dealloc %[[H9]]
// CHECK-NEXT:    return
// REMARK-COUNT-9: remark: [Passed] FreeAfterCopy | Category:convert-etcopy-to-gpu | Function=runs_ahead | Reason="host memory is allocated while frees wait for a copy in flight"
// REMARK: remark: [Passed] FreeAfterCopy | Category:convert-etcopy-to-gpu | Function=last_copy_not_waited_for
func.func private @consume_on0(memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered}
func.func @runs_ahead(%v: f32) {
  %c0 = arith.constant 0 : index
  %h0 = memref.alloc() : memref<4xf32>
  memref.store %v, %h0[%c0] : memref<4xf32>
  %d0 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h0, %d0 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h0 : memref<4xf32>
  func.call @consume_on0(%d0) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d0 : memref<4xf32, #etcopy.device<cuda:0>>
  %h1 = memref.alloc() : memref<4xf32>
  memref.store %v, %h1[%c0] : memref<4xf32>
  %d1 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h1, %d1 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h1 : memref<4xf32>
  func.call @consume_on0(%d1) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d1 : memref<4xf32, #etcopy.device<cuda:0>>
  %h2 = memref.alloc() : memref<4xf32>
  memref.store %v, %h2[%c0] : memref<4xf32>
  %d2 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h2, %d2 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h2 : memref<4xf32>
  func.call @consume_on0(%d2) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d2 : memref<4xf32, #etcopy.device<cuda:0>>
  %h3 = memref.alloc() : memref<4xf32>
  memref.store %v, %h3[%c0] : memref<4xf32>
  %d3 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h3, %d3 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h3 : memref<4xf32>
  func.call @consume_on0(%d3) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d3 : memref<4xf32, #etcopy.device<cuda:0>>
  %h4 = memref.alloc() : memref<4xf32>
  memref.store %v, %h4[%c0] : memref<4xf32>
  %d4 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h4, %d4 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h4 : memref<4xf32>
  func.call @consume_on0(%d4) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d4 : memref<4xf32, #etcopy.device<cuda:0>>
  %h5 = memref.alloc() : memref<4xf32>
  memref.store %v, %h5[%c0] : memref<4xf32>
  %d5 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h5, %d5 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h5 : memref<4xf32>
  func.call @consume_on0(%d5) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d5 : memref<4xf32, #etcopy.device<cuda:0>>
  %h6 = memref.alloc() : memref<4xf32>
  memref.store %v, %h6[%c0] : memref<4xf32>
  %d6 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h6, %d6 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h6 : memref<4xf32>
  func.call @consume_on0(%d6) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d6 : memref<4xf32, #etcopy.device<cuda:0>>
  %h7 = memref.alloc() : memref<4xf32>
  memref.store %v, %h7[%c0] : memref<4xf32>
  %d7 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h7, %d7 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h7 : memref<4xf32>
  func.call @consume_on0(%d7) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d7 : memref<4xf32, #etcopy.device<cuda:0>>
  %h8 = memref.alloc() : memref<4xf32>
  memref.store %v, %h8[%c0] : memref<4xf32>
  %d8 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h8, %d8 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h8 : memref<4xf32>
  func.call @consume_on0(%d8) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d8 : memref<4xf32, #etcopy.device<cuda:0>>
  %h9 = memref.alloc() : memref<4xf32>
  memref.store %v, %h9[%c0] : memref<4xf32>
  %d9 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h9, %d9 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h9 : memref<4xf32>
  func.call @consume_on0(%d9) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d9 : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// Negative: 8 uploads, 8 frees deferred: they wait for the return's wait,
// with no other.
// CHECK-LABEL: func.func @eight_uploads(
// CHECK:         gpu.wait [%{{.*}}]
// CHECK-COUNT-8: memref.dealloc %{{.*}} : memref<4xf32>
// CHECK-NEXT:    return
func.func private @consume_on0(memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered}
func.func @eight_uploads(%v: f32) {
  %c0 = arith.constant 0 : index
  %h0 = memref.alloc() : memref<4xf32>
  memref.store %v, %h0[%c0] : memref<4xf32>
  %d0 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h0, %d0 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h0 : memref<4xf32>
  func.call @consume_on0(%d0) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d0 : memref<4xf32, #etcopy.device<cuda:0>>
  %h1 = memref.alloc() : memref<4xf32>
  memref.store %v, %h1[%c0] : memref<4xf32>
  %d1 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h1, %d1 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h1 : memref<4xf32>
  func.call @consume_on0(%d1) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d1 : memref<4xf32, #etcopy.device<cuda:0>>
  %h2 = memref.alloc() : memref<4xf32>
  memref.store %v, %h2[%c0] : memref<4xf32>
  %d2 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h2, %d2 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h2 : memref<4xf32>
  func.call @consume_on0(%d2) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d2 : memref<4xf32, #etcopy.device<cuda:0>>
  %h3 = memref.alloc() : memref<4xf32>
  memref.store %v, %h3[%c0] : memref<4xf32>
  %d3 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h3, %d3 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h3 : memref<4xf32>
  func.call @consume_on0(%d3) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d3 : memref<4xf32, #etcopy.device<cuda:0>>
  %h4 = memref.alloc() : memref<4xf32>
  memref.store %v, %h4[%c0] : memref<4xf32>
  %d4 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h4, %d4 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h4 : memref<4xf32>
  func.call @consume_on0(%d4) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d4 : memref<4xf32, #etcopy.device<cuda:0>>
  %h5 = memref.alloc() : memref<4xf32>
  memref.store %v, %h5[%c0] : memref<4xf32>
  %d5 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h5, %d5 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h5 : memref<4xf32>
  func.call @consume_on0(%d5) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d5 : memref<4xf32, #etcopy.device<cuda:0>>
  %h6 = memref.alloc() : memref<4xf32>
  memref.store %v, %h6[%c0] : memref<4xf32>
  %d6 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h6, %d6 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h6 : memref<4xf32>
  func.call @consume_on0(%d6) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d6 : memref<4xf32, #etcopy.device<cuda:0>>
  %h7 = memref.alloc() : memref<4xf32>
  memref.store %v, %h7[%c0] : memref<4xf32>
  %d7 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %h7, %d7 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h7 : memref<4xf32>
  func.call @consume_on0(%d7) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  memref.dealloc %d7 : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

// Nothing is queued after the 9th upload when the 10th allocation comes (no
// delegate call): a wait for it would be a full wait. The host waits for the
// 8th alone (the 9th is queued after it), and the 9th free stays deferred to
// the return's wait.
// CHECK-LABEL: func.func @last_copy_not_waited_for(
// CHECK-SAME:    %{{.*}}: f32, %[[D:.*]]: memref<4xf32, #etcopy.device<cuda:0>>)
// CHECK-COUNT-8: gpu.memcpy async
// CHECK:         %[[H8:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[T8:.*]] = gpu.memcpy async [%[[T7:.*]]] %[[D]], %[[H8]]
// CHECK-NEXT:    gpu.wait [%[[T7]]] {etcopy.waits_for_one_op}
// CHECK-COUNT-8: memref.dealloc %{{.*}} : memref<4xf32>
// CHECK-NEXT:    %[[H9:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         gpu.memcpy async [%[[T8]]] %[[D]], %[[H9]]
// CHECK-NEXT:    gpu.wait [%{{.*}}]
// CHECK-NEXT:    memref.dealloc %[[H8]]
// CHECK-NEXT:    memref.dealloc %[[H9]]
// CHECK-NEXT:    return
func.func @last_copy_not_waited_for(%v: f32, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  %c0 = arith.constant 0 : index
  %h0 = memref.alloc() : memref<4xf32>
  memref.store %v, %h0[%c0] : memref<4xf32>
  etcopy.h2d %h0, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h0 : memref<4xf32>
  %h1 = memref.alloc() : memref<4xf32>
  memref.store %v, %h1[%c0] : memref<4xf32>
  etcopy.h2d %h1, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h1 : memref<4xf32>
  %h2 = memref.alloc() : memref<4xf32>
  memref.store %v, %h2[%c0] : memref<4xf32>
  etcopy.h2d %h2, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h2 : memref<4xf32>
  %h3 = memref.alloc() : memref<4xf32>
  memref.store %v, %h3[%c0] : memref<4xf32>
  etcopy.h2d %h3, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h3 : memref<4xf32>
  %h4 = memref.alloc() : memref<4xf32>
  memref.store %v, %h4[%c0] : memref<4xf32>
  etcopy.h2d %h4, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h4 : memref<4xf32>
  %h5 = memref.alloc() : memref<4xf32>
  memref.store %v, %h5[%c0] : memref<4xf32>
  etcopy.h2d %h5, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h5 : memref<4xf32>
  %h6 = memref.alloc() : memref<4xf32>
  memref.store %v, %h6[%c0] : memref<4xf32>
  etcopy.h2d %h6, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h6 : memref<4xf32>
  %h7 = memref.alloc() : memref<4xf32>
  memref.store %v, %h7[%c0] : memref<4xf32>
  etcopy.h2d %h7, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h7 : memref<4xf32>
  %h8 = memref.alloc() : memref<4xf32>
  memref.store %v, %h8[%c0] : memref<4xf32>
  etcopy.h2d %h8, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h8 : memref<4xf32>
  %h9 = memref.alloc() : memref<4xf32>
  memref.store %v, %h9[%c0] : memref<4xf32>
  etcopy.h2d %h9, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h9 : memref<4xf32>
  return
}
