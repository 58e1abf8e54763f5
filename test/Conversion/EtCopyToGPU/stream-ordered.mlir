// RUN: etcopy-opt %s --convert-etcopy-to-gpu | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h --implicit-check-not='gpu.wait ['
// RUN: etcopy-opt %s --convert-etcopy-to-gpu=async=false | FileCheck %s --check-prefix=SYNC

// A call to a stream-ordered delegate is ordered on the stream: the host
// waits neither before it nor after it, only where it reads what the device
// produced (the d2h's destination, at the return). A plain delegate call
// still makes the host wait before it. Every host wait (`gpu.wait [...]`) in
// the output is matched by a CHECK line.

func.func private @scale(memref<4xf32, #etcopy.device<cuda:0>> {etcopy.writes})
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered}
func.func private @plain(memref<4xf32, #etcopy.device<cuda:0>> {etcopy.writes})
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// CHECK-LABEL: func.func @stream_ordered
// CHECK-SAME: (%[[H:.*]]: memref<4xf32>, %[[D:.*]]: memref<4xf32, #etcopy.device<cuda:0>>, %[[OUT:.*]]: memref<4xf32>)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: %[[T1:.*]] = gpu.memcpy async [%[[T0]]] %[[D]], %[[H]]
// CHECK-NEXT: call @scale(%[[D]])
// CHECK-NEXT: call @scale(%[[D]])
// CHECK-NEXT: %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[OUT]], %[[D]]
// CHECK-NEXT: gpu.wait [%[[T2]]]
// CHECK-NEXT: return
// SYNC-LABEL: func.func @stream_ordered
// SYNC: gpu.memcpy %{{.*}}, %{{.*}} :
// SYNC-NEXT: call @scale(
// SYNC-NEXT: gpu.wait{{ *$}}
// SYNC-NEXT: call @scale(
// SYNC-NEXT: gpu.wait{{ *$}}
// SYNC-NEXT: gpu.memcpy
// SYNC-NEXT: return
func.func @stream_ordered(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %out: memref<4xf32>) {
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  etcopy.d2h %d, %out : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  return
}

// The plain delegate makes the host wait for the chain before it.
// CHECK-LABEL: func.func @plain_waits
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: %[[T1:.*]] = gpu.memcpy async [%[[T0]]]
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: call @plain(
// CHECK-NEXT: %[[T2:.*]] = gpu.memcpy async [%[[T1]]]
// CHECK-NEXT: gpu.wait [%[[T2]]]
// CHECK-NEXT: return
func.func @plain_waits(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>, %out: memref<4xf32>) {
  etcopy.h2d %h, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  call @plain(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  etcopy.d2h %d, %out : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  return
}

// A stream-ordered call that starts the block starts the chain, so that the
// host has a token to wait for at the return.
// CHECK-LABEL: func.func @first_in_block
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: call @scale(
// CHECK-NEXT: gpu.wait [%[[T0]]]
// CHECK-NEXT: return
func.func @first_in_block(%d: memref<4xf32, #etcopy.device<cuda:0>>) {
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

