// cuda-graphs=true: @step's work (two stream-ordered delegates, a copy, the
// frees) is captured into a graph at its first call and replayed with one
// cudaGraphLaunch while its inputs (the addresses of %x and %out, the
// stream) stay the same; new data at the same address is read by the
// replay; another address captures again. The delegates run (and print)
// only at the captures. @first_element reads through a pinned transfer
// buffer: captured once, replayed at every later call. @show and @main copy
// pageable memory and are not captured. Without graphs the data is the
// same.
// RUN: %cc -shared -fPIC -I%cuda_sim_include %S/Inputs/graph-delegates.c -o %t.so %etcopy_cuda_sim
// RUN: etcopy-opt %s --etcopy-to-cuda="place-copies=false cuda-graphs=true" \
// RUN:   --remarks-filter=convert-gpu-to-cuda-runtime -o %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: env ETCOPY_CUDA_SIM_STATS=1 %run_sim,%t.so < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,GRAPHS,GRAPHS-STATS
// RUN: etcopy-opt %s --etcopy-to-cuda=place-copies=false | env ETCOPY_CUDA_SIM_STATS=1 %run_sim,%t.so 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,DIRECT,DIRECT-STATS
// RUN: %if cuda-gpu %{ %cc -shared -fPIC -I%cuda_sim_include \
// RUN:   %S/Inputs/graph-delegates.c -o %t.gpu.so %cudart && \
// RUN:   etcopy-opt %s --etcopy-to-cuda="place-copies=false cuda-graphs=true" \
// RUN:   | %run_gpu,%t.gpu.so | FileCheck %s --check-prefixes=CHECK,GRAPHS %}

// REMARK-DAG: remark: [Missed] GraphNotCaptured | {{.*}} | Function=show | Reason="it copies pageable host memory
// REMARK-DAG: remark: [Missed] GraphNotCaptured | {{.*}} | Function=main | Reason="it copies pageable host memory
// REMARK-DAG: remark: [Passed] GraphCaptured | {{.*}} | Function=step | Delegates=2, KeyWords=3, Ops=4,
// REMARK-DAG: remark: [Passed] GraphCaptured | {{.*}} | Function=first_element | Delegates=0, KeyWords=3, Ops=2,

// Call 1: captured.
// GRAPHS: rotate run 1, captured
// GRAPHS-NEXT: rotate run 2, captured
// DIRECT: rotate run 1
// DIRECT-NEXT: rotate run 2
// CHECK-NEXT: sizes = [4] strides = [1] data =
// CHECK-NEXT: [3, 4, 1, 2]
// CHECK-NEXT: 3
// Call 2: replayed.
// DIRECT-NEXT: rotate run 3
// DIRECT-NEXT: rotate run 4
// CHECK-NEXT: sizes = [4] strides = [1] data =
// CHECK-NEXT: [3, 4, 1, 2]
// CHECK-NEXT: 3
// Call 3: new data at the same address, replayed.
// DIRECT-NEXT: rotate run 5
// DIRECT-NEXT: rotate run 6
// CHECK-NEXT: sizes = [4] strides = [1] data =
// CHECK-NEXT: [30, 40, 10, 20]
// CHECK-NEXT: 30
// Call 4: another input buffer: captured again.
// GRAPHS-NEXT: rotate run 3, captured
// GRAPHS-NEXT: rotate run 4, captured
// DIRECT-NEXT: rotate run 7
// DIRECT-NEXT: rotate run 8
// CHECK-NEXT: sizes = [4] strides = [1] data =
// CHECK-NEXT: [-3, -4, -1, -2]
// CHECK-NEXT: -3
// Call 5: replayed.
// DIRECT-NEXT: rotate run 9
// DIRECT-NEXT: rotate run 10
// CHECK-NEXT: sizes = [4] strides = [1] data =
// CHECK-NEXT: [-3, -4, -1, -2]
// CHECK-NEXT: -3

// Ten launches (five of each captured function), three captures:
// cudaMemcpyAsync is called 9 times per capture of @step (4 per delegate,
// its copy), once for the capture of @first_element, once by @main (its
// other two uploads are one batch) and 5 times by @show; without graphs 9
// times per call of @step and once per call of @first_element. No graph
// memory is leaked at exit.
// GRAPHS-STATS: entry-points: {{.*}} cudaMemcpyAsync=25 cudaMemcpyBatchAsync=1 {{.*}} cudaStreamBeginCapture=3 cudaStreamEndCapture=3 cudaStreamIsCapturing=4 cudaGraphInstantiate=3 cudaGraphLaunch=10 cudaGraphExecDestroy=3 cudaGraphDestroy=3
// DIRECT-STATS: entry-points: {{.*}} cudaMemcpyAsync=56 cudaMemcpyBatchAsync=1 {{.*}} cudaStreamIsCapturing=10{{$}}
// CHECK-NOT: leak

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @printF32(f32)
func.func private @printNewline()

func.func private @rotate(memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered, llvm.emit_c_interface}

func.func @step(%x: memref<4xf32, #etcopy.device<cuda:0>>, %out: memref<4xf32, #etcopy.device<cuda:0>>) {
  %a = call @rotate(%x) : (memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>>
  %b = call @rotate(%a) : (memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %a : memref<4xf32, #etcopy.device<cuda:0>>
  memref.copy %b, %out : memref<4xf32, #etcopy.device<cuda:0>> to memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %b : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

memref.global "private" constant @first : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
memref.global "private" constant @second : memref<4xf32> = dense<[10.0, 20.0, 30.0, 40.0]>
memref.global "private" constant @third : memref<4xf32> = dense<[-1.0, -2.0, -3.0, -4.0]>

func.func @show(%d: memref<4xf32, #etcopy.device<cuda:0>>, %h: memref<4xf32>) {
  etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  %u = memref.cast %h : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  %f = call @first_element(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> f32
  call @printF32(%f) : (f32) -> ()
  call @printNewline() : () -> ()
  return
}

// The first element, through a pinned transfer buffer (the cache of pinned
// blocks gives it the same address at every call): captured at the first
// call, replayed at the others.
func.func @first_element(%d: memref<4xf32, #etcopy.device<cuda:0>>) -> f32 {
  %h = memref.alloc() : memref<4xf32>
  etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %h[%c0] : memref<4xf32>
  memref.dealloc %h : memref<4xf32>
  return %v : f32
}

func.func @main() {
  %v1 = memref.get_global @first : memref<4xf32>
  %v2 = memref.get_global @second : memref<4xf32>
  %v3 = memref.get_global @third : memref<4xf32>
  %da = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  %db = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  %out = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  %h = memref.alloc() : memref<4xf32>
  etcopy.h2d %v1, %da : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %v3, %db : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  call @step(%da, %out) : (memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  call @show(%out, %h) : (memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>) -> ()
  call @step(%da, %out) : (memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  call @show(%out, %h) : (memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>) -> ()
  etcopy.h2d %v2, %da : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  call @step(%da, %out) : (memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  call @show(%out, %h) : (memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>) -> ()
  call @step(%db, %out) : (memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  call @show(%out, %h) : (memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>) -> ()
  call @step(%db, %out) : (memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  call @show(%out, %h) : (memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>) -> ()
  memref.dealloc %da : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %db : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %out : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %h : memref<4xf32>
  return
}
