// RUN: etcopy-opt %s -split-input-file --convert-gpu-to-cuda-runtime | FileCheck %s

// A host wait for one copy (`gpu.wait [%copy] {etcopy.waits_for_one_op}`,
// which convert-etcopy-to-gpu emits where frees wait for that copy) becomes
// a record of the stream's event right after the copy and a wait for that
// record (cudaEventSynchronize), which does not wait for the work queued
// after the copy (the delegate, the next copy). The record's result says
// whether it recorded; the wait falls back to the stream otherwise. Every
// synchronisation of each function is CHECKed (CHECK-NOT between them).

func.func private @scale(memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered}

// CHECK-LABEL: llvm.func @work_after_copy
// CHECK:      %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
// CHECK-NOT:  @__etcopy_stream_
// CHECK:      llvm.call @__etcopy_memcpy(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[STREAM]],
// CHECK-NOT:  @__etcopy_stream_
// CHECK:      %[[RECORDED:.*]] = llvm.call @__etcopy_stream_record(%[[STREAM]], %[[CURRENT:[^,]*]],
// CHECK-NOT:  @__etcopy_stream_
// CHECK:      llvm.call @scale(
// CHECK:      llvm.call @__etcopy_memcpy(
// CHECK-NOT:  @__etcopy_stream_
// CHECK:      llvm.call @__etcopy_stream_wait_record(%[[STREAM]], %[[CURRENT]], %[[RECORDED]],
// CHECK-NOT:  @__etcopy_stream_
// CHECK:      llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
// CHECK-NOT:  @__etcopy_stream_
// CHECK:      llvm.return
func.func @work_after_copy(%h: memref<4xf32>, %g: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  %t2 = gpu.memcpy async [%t1] %d, %g : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.wait [%t1] {etcopy.waits_for_one_op}
  gpu.wait [%t2]
  return
}

// -----

// Nothing is queued after the copy: the stream's synchronisation waits for
// no more than the copy, and needs no event.
// CHECK-LABEL: llvm.func @nothing_after_copy
// CHECK:      %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
// CHECK:      llvm.call @__etcopy_memcpy(
// CHECK-NOT:  @__etcopy_stream_
// CHECK:      llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
// CHECK-NOT:  @__etcopy_stream_
// CHECK:      llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
// CHECK-NOT:  @__etcopy_stream_
// CHECK:      llvm.return
func.func @nothing_after_copy(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.wait [%t1] {etcopy.waits_for_one_op}
  gpu.wait [%t1]
  return
}

// -----

// Without the attribute, a gpu.wait waits for the whole stream of its
// dependency: convert-etcopy-to-gpu's full waits depend on the chain's last
// token, and the work of a stream-ordered delegate called after it has
// none.
func.func private @scale(memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered}

// CHECK-LABEL: llvm.func @full_wait
// CHECK:      %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
// CHECK:      llvm.call @__etcopy_memcpy(
// CHECK:      llvm.call @scale(
// CHECK-NOT:  @__etcopy_stream_
// CHECK:      llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
// CHECK-NOT:  @__etcopy_stream_
// CHECK:      llvm.return
func.func @full_wait(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  gpu.wait [%t1]
  return
}
