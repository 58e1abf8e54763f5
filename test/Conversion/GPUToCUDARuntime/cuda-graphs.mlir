// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime="cuda-graphs=true pinned-host-memory=true" \
// RUN:   | FileCheck %s --implicit-check-not=cudaMemcpyBatchAsync
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime="cuda-graphs=true pinned-host-memory=true" \
// RUN:   --remarks-filter=convert-gpu-to-cuda-runtime -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK --implicit-check-not="remark: [Passed] Graph" --implicit-check-not="remark: [Missed] Graph"
// Without the option nothing is captured, and copies are batched again.
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime=pinned-host-memory=true \
// RUN:   | FileCheck %s --check-prefix=OFF --implicit-check-not=__etcopy_graph
// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime=pinned-host-memory=true \
// RUN:   --remarks-filter=convert-gpu-to-cuda-runtime -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OFF-REMARK --implicit-check-not=Graph

// cuda-graphs: which functions have their stream work captured into a CUDA
// graph, and why the others do not (GraphNotCaptured is decided before
// planning, GraphCaptured after it: -DAG).

// OFF: llvm.call @__etcopy_memcpy_batch(
// OFF-REMARK: remark: [Passed] CopiesBatched

func.func private @scale(memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered}
func.func private @plain(memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// A function whose work is stream-ordered: the key (the stream, then the
// aligned pointers of the memrefs the work reads) is stored, the replay is
// tried, and the work, on the stream that __etcopy_graph_begin returns, is
// skipped when it replayed. The two independent uploads from the pinned
// transfer buffer are not batched (CUDA 13 cannot capture a batch). The
// transfer buffer's allocation, between device steps, is moved before the
// work (its address is an input); the host wait and the host's read of the
// result come after the work, on every call.
// CHECK-LABEL: llvm.func @captured
// CHECK:      %[[KEY:.*]] = llvm.alloca %{{.*}} x !llvm.array<4 x i64>
// CHECK:      %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
// CHECK:      %[[HOST:.*]] = llvm.call @__etcopy_malloc_host(
// CHECK:      llvm.ptrtoint %[[STREAM]] : !llvm.ptr to i64
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} : i64, !llvm.ptr
// CHECK:      %[[CELL:.*]] = llvm.mlir.addressof @__etcopy_graph.captured
// CHECK:      %[[STATE:.*]] = llvm.call @__etcopy_graph_replay(%[[CELL]], %[[KEY]], %{{.*}}, %[[STREAM]],
// CHECK:      %[[REPLAYED:.*]] = llvm.icmp "eq" %[[STATE]], %{{.*}} : i32
// CHECK:      llvm.cond_br %[[REPLAYED]], ^[[AFTER:.*]], ^[[CAPTURE:[^ ]*]]
// CHECK:      ^[[CAPTURE]]:
// CHECK:      %[[CAPTURING:.*]] = llvm.call @__etcopy_graph_begin(%[[CELL]], %[[STATE]], %[[STREAM]],
// CHECK:      llvm.call @__etcopy_malloc(%{{.*}}, %[[CAPTURING]],
// The two uploads are one call on the capturing stream (copy-sequences.mlir).
// CHECK:      llvm.call @__etcopy_memcpy_x2(%[[CAPTURING]], %{{[^,]+}}, %{{[^,]+}}, %[[HOST]],
// CHECK:      llvm.call @scale(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[CAPTURING]])
// CHECK:      llvm.call @__etcopy_memcpy(%[[HOST]], %{{.*}}, %{{.*}}, %{{.*}}, %[[CAPTURING]],
// CHECK:      llvm.call @__etcopy_free(%{{.*}}, %[[CAPTURING]],
// CHECK:      llvm.call @__etcopy_graph_end(%[[CELL]], %[[STATE]], %[[KEY]], %{{.*}}, %[[STREAM]],
// CHECK-NEXT: llvm.br ^[[AFTER]]
// CHECK:      ^[[AFTER]]:
// CHECK:      llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
// CHECK:      llvm.load %[[HOST]]
// CHECK:      llvm.call @__etcopy_free_host(%[[HOST]],
// CHECK:      llvm.return
// REMARK-DAG: cuda-graphs.mlir:[[# @LINE + 1]]:1: remark: [Passed] GraphCaptured | Category:convert-gpu-to-cuda-runtime | Function=captured | Delegates=1, KeyWords=4, Ops=6, Remark="stream work captured into a CUDA graph at the first call and replayed with one cudaGraphLaunch while its inputs stay the same"
func.func @captured(%d: memref<4xf32, #etcopy.device<cuda:0>>, %e: memref<4xf32, #etcopy.device<cuda:0>>) -> f32 {
  %t0 = gpu.wait async
  %tmp, %ta = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
  %h = memref.alloc() : memref<4xf32>
  %t1 = gpu.memcpy async [%ta] %tmp, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t2 = gpu.memcpy async [%ta] %e, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  %t3 = gpu.memcpy async [%t1, %t2] %h, %tmp : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %t4 = gpu.dealloc async [%t3] %tmp : memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t4]
  %c0 = arith.constant 0 : index
  %v = memref.load %h[%c0] : memref<4xf32>
  memref.dealloc %h : memref<4xf32>
  return %v : f32
}

// A copy of a function argument on the host: pageable memory.
// REMARK-DAG: cuda-graphs.mlir:[[# @LINE + 1]]:1: remark: [Missed] GraphNotCaptured | Category:convert-gpu-to-cuda-runtime | Function=pageable | Reason="it copies pageable host memory (argument #0 of @pageable): a graph cannot replay the staging of pageable memory that CUDA does at each call", Remark="stream work called directly, not captured into a CUDA graph"
func.func @pageable(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d, %h : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  gpu.wait [%t1]
  return
}

// A synchronous copy between two device steps.
// REMARK-DAG: cuda-graphs.mlir:[[# @LINE + 1]]:1: remark: [Missed] GraphNotCaptured | Category:convert-gpu-to-cuda-runtime | Function=host_wait | Reason="the host waits for the device between device steps ('gpu.memcpy' is synchronous)"
func.func @host_wait(%d: memref<4xf32, #etcopy.device<cuda:0>>, %e: memref<4xf32, #etcopy.device<cuda:0>>) {
  gpu.memcpy %e, %d : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32, #etcopy.device<cuda:0>>
  call @scale(%e) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// A plain delegate synchronises.
// REMARK-DAG: cuda-graphs.mlir:[[# @LINE + 1]]:1: remark: [Missed] GraphNotCaptured | Category:convert-gpu-to-cuda-runtime | Function=plain_delegate | Reason="it calls the plain delegate @plain, which synchronises its stream"
func.func @plain_delegate(%d: memref<4xf32, #etcopy.device<cuda:0>>) {
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  call @plain(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// The host decides between device steps.
// REMARK-DAG: cuda-graphs.mlir:[[# @LINE + 1]]:1: remark: [Missed] GraphNotCaptured | Category:convert-gpu-to-cuda-runtime | Function=control_flow | Reason="it has control flow (more than one block): the host decides between device steps"
func.func @control_flow(%d: memref<4xf32, #etcopy.device<cuda:0>>, %c: i1) {
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  cf.cond_br %c, ^again, ^done
^again:
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  cf.br ^done
^done:
  return
}

// The host writes memory between device steps.
// REMARK-DAG: cuda-graphs.mlir:[[# @LINE + 1]]:1: remark: [Missed] GraphNotCaptured | Category:convert-gpu-to-cuda-runtime | Function=host_work | Reason="host work between device steps: 'memref.store' reads or writes memory, or has regions"
func.func @host_work(%d: memref<4xf32, #etcopy.device<cuda:0>>, %h: memref<4xf32>, %v: f32) {
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  %c0 = arith.constant 0 : index
  memref.store %v, %h[%c0] : memref<4xf32>
  call @scale(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// A buffer the work allocates is returned: a replay could not return it.
// REMARK-DAG: cuda-graphs.mlir:[[# @LINE + 1]]:1: remark: [Missed] GraphNotCaptured | Category:convert-gpu-to-cuda-runtime | Function=escapes | Reason="the device work produces result #0 of 'gpu.alloc', which the host uses after it"
func.func @escapes(%d: memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>> {
  %t0 = gpu.wait async
  %e, %ta = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
  %t1 = gpu.memcpy async [%ta] %e, %d : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t1]
  return %e : memref<4xf32, #etcopy.device<cuda:0>>
}

// Work on two devices.
// REMARK-DAG: cuda-graphs.mlir:[[# @LINE + 1]]:1: remark: [Missed] GraphNotCaptured | Category:convert-gpu-to-cuda-runtime | Function=two_devices | Reason="it uses more than one device"
func.func @two_devices(%d: memref<4xf32, #etcopy.device<cuda:0>>, %e: memref<4xf32, #etcopy.device<cuda:1>>, %c: f32) {
  %t0 = gpu.wait async
  %t1 = gpu.memset async [%t0] %d, %c : memref<4xf32, #etcopy.device<cuda:0>>, f32
  %t2 = gpu.memset async [%t0] %e, %c : memref<4xf32, #etcopy.device<cuda:1>>, f32
  gpu.wait [%t1, %t2]
  return
}

// Managed memory is neither allocated nor freed in stream order.
// REMARK-DAG: cuda-graphs.mlir:[[# @LINE + 1]]:1: remark: [Missed] GraphNotCaptured | Category:convert-gpu-to-cuda-runtime | Function=managed | Reason="it allocates managed memory (gpu.alloc host_shared), which is neither allocated nor freed in stream order"
func.func @managed(%d: memref<4xf32, #etcopy.device<cuda:0>>) {
  %t0 = gpu.wait async
  %m, %ta = gpu.alloc async [%t0] host_shared () : memref<4xf32, #etcopy.device<cuda:0>>
  %t1 = gpu.memcpy async [%ta] %m, %d : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32, #etcopy.device<cuda:0>>
  %t2 = gpu.dealloc async [%t1] %m : memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t2]
  return
}
