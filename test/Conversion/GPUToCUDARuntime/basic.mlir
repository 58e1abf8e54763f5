// RUN: etcopy-opt %s --convert-gpu-to-cuda-runtime --split-input-file \
// RUN:   | FileCheck %s --implicit-check-not=gpu. --implicit-check-not=#etcopy \
// RUN:       --implicit-check-not=passthrough --implicit-check-not=noundef \
// RUN:       --implicit-check-not=no_unwind

// The runtime support reaches the module without what clang and the
// importer attach to its functions and to the calls in their bodies (CPU
// and argument hints): the bodies are read lazily, and each is stripped as
// it is read.

// Async forms, as convert-etcopy-to-gpu emits them: one stream for the
// function, got at entry from the stream provider (it outlives the call);
// tokens are the stream, so no per-op synchronisation. Every op is one call of a checked
// wrapper of the runtime support, whose last arguments are the op's file,
// line and column. The whole function is shown: the shared constants come
// first, each used, and nothing else is emitted.

// CHECK-LABEL: llvm.func @async_round_trip
// CHECK-SAME: (%{{[^:]+}}: !llvm.ptr, %[[H:[^:]+]]: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr, %[[OUT:[^:]+]]: !llvm.ptr,
// CHECK-NEXT: %[[FILE:.*]] = llvm.mlir.addressof @[[FILE_SYMBOL:__etcopy_file[_0-9]*]] : !llvm.ptr
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[COL9:.*]] = llvm.mlir.constant(9 : i32) : i32
// CHECK-NEXT: %[[COL13:.*]] = llvm.mlir.constant(13 : i32) : i32
// CHECK-NEXT: %[[COL3:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: %[[BYTES:.*]] = llvm.mlir.constant(24 : i64) : i64
// CHECK-NEXT: %[[TWO:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[L_FUNC:.*]] = llvm.mlir.constant([[# @LINE + 50]] : i32) : i32
// The caller's device is saved, cuda:0 selected and its stream got.
// CHECK-NEXT: %[[PREVIOUS:.*]] = llvm.call @__etcopy_get_device(%[[FILE]], %[[L_FUNC]], %[[ONE]]) : (!llvm.ptr, i32, i32) -> i32
// CHECK-NEXT: %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(%[[ZERO]], %[[FILE]], %[[L_FUNC]], %[[ONE]]) : (i32, !llvm.ptr, i32, i32) -> !llvm.ptr
// CHECK-NEXT: %[[L_ALLOC:.*]] = llvm.mlir.constant([[# @LINE + 48]] : i32) : i32
// CHECK-NEXT: %[[D:.*]] = llvm.call @__etcopy_malloc(%[[BYTES]], %[[STREAM]], %[[FILE]], %[[L_ALLOC]], %[[COL13]]) : (i64, !llvm.ptr, !llvm.ptr, i32, i32) -> !llvm.ptr
// The two copies of the stream are one call (copy-sequences.mlir): the stream
// and the file, then for each copy its first elements, a static byte count,
// the kind (1 is cudaMemcpyHostToDevice, 2 cudaMemcpyDeviceToHost), the
// line and the column.
// CHECK-NEXT: %[[L_H2D:.*]] = llvm.mlir.constant([[# @LINE + 43]] : i32) : i32
// CHECK-NEXT: %[[L_D2H:.*]] = llvm.mlir.constant([[# @LINE + 43]] : i32) : i32
// CHECK-NEXT: llvm.call @__etcopy_memcpy_x2(%[[STREAM]], %[[FILE]], %[[D]], %[[H]], %[[BYTES]], %[[ONE]], %[[L_H2D]], %[[COL9]], %[[OUT]], %[[D]], %[[BYTES]], %[[TWO]], %[[L_D2H]], %[[COL9]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32, i32, !llvm.ptr, !llvm.ptr, i64, i32, i32, i32) -> ()
// CHECK-NEXT: %[[L_FREE:.*]] = llvm.mlir.constant([[# @LINE + 42]] : i32) : i32
// CHECK-NEXT: llvm.call @__etcopy_free(%[[D]], %[[STREAM]], %[[FILE]], %[[L_FREE]], %[[COL9]])
// The explicit gpu.wait synchronises; the return does not do it again,
// and leaves the stream to later calls.
// CHECK-NEXT: %[[L_WAIT:.*]] = llvm.mlir.constant([[# @LINE + 39]] : i32) : i32
// CHECK-NEXT: llvm.call @__etcopy_stream_synchronize(%[[STREAM]], %[[FILE]], %[[L_WAIT]], %[[COL3]])
// CHECK-NEXT: %[[L_RETURN:.*]] = llvm.mlir.constant([[# @LINE + 38]] : i32) : i32
// CHECK-NEXT: llvm.call @__etcopy_restore_device(%[[PREVIOUS]], %[[FILE]], %[[L_RETURN]], %[[COL3]])
// CHECK-NEXT: llvm.return

// The file name is one global, shared by every location in the file.
// CHECK: llvm.mlir.global private constant @[[FILE_SYMBOL]]("{{.*}}basic.mlir\00")
// Each wrapper calls its entry point and hands a failure to the error
// policy with the location.
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_malloc(
// CHECK: llvm.call @cudaMallocAsync(
// The run of two copies makes them in order, each with its location.
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_memcpy_x2(
// CHECK-SAME: %[[S:[^:]+]]: !llvm.ptr, %[[F:[^:]+]]: !llvm.ptr, %[[D0:[^:]+]]: !llvm.ptr, %[[S0:[^:]+]]: !llvm.ptr, %[[B0:[^:]+]]: i64, %[[K0:[^:]+]]: i32, %[[L0:[^:]+]]: i32, %[[C0:[^:]+]]: i32, %[[D1:[^:]+]]: !llvm.ptr, %[[S1:[^:]+]]: !llvm.ptr, %[[B1:[^:]+]]: i64, %[[K1:[^:]+]]: i32, %[[L1:[^:]+]]: i32, %[[C1:[^:]+]]: i32)
// CHECK-NEXT: llvm.call @__etcopy_memcpy(%[[D0]], %[[S0]], %[[B0]], %[[K0]], %[[S]], %[[F]], %[[L0]], %[[C0]])
// CHECK-NEXT: llvm.call @__etcopy_memcpy(%[[D1]], %[[S1]], %[[B1]], %[[K1]], %[[S]], %[[F]], %[[L1]], %[[C1]])
// CHECK-NEXT: llvm.return
// The stream provider and the error policy are weak: a program replaces
// them by defining them. The default provider's table of streams is shared
// by the modules of a program, and a destructor releases the streams.
// CHECK: llvm.func weak @etcopy_get_stream(
// CHECK: llvm.call @cudaStreamCreateWithFlags(
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_memcpy(
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %[[BYTES_ARG:[^:]+]]: i64, %{{[^:]+}}: i32, %{{[^:]+}}: !llvm.ptr, %[[FILE_ARG:[^:]+]]: !llvm.ptr, %[[LINE_ARG:[^:]+]]: i32, %[[COL_ARG:[^:]+]]: i32)
// CHECK: %[[ERR:.*]] = llvm.call @cudaMemcpyAsync(
// CHECK: llvm.icmp "eq" %[[ERR]]
// CHECK: llvm.call fastcc @{{.*}}report(%[[ERR]], %[[FILE_ARG]], %[[LINE_ARG]], %[[COL_ARG]], %{{.*}}, %{{.*}}, %[[BYTES_ARG]])
// CHECK: llvm.func weak @etcopy_cuda_error(
// CHECK: llvm.mlir.global linkonce_odr @__etcopy_streams()
// CHECK: llvm.func internal @[[RELEASE:__etcopy.release_streams]]()
// CHECK: llvm.call @cudaStreamDestroy(
// CHECK: llvm.mlir.global_dtors dtors = [@[[RELEASE]]]
func.func @async_round_trip(%h: memref<2x3xf32>, %out: memref<2x3xf32>) {
  %t0 = gpu.wait async
  %d, %t1 = gpu.alloc async [%t0] () : memref<2x3xf32, #etcopy.device<cuda:0>>
  %t2 = gpu.memcpy async [%t1] %d, %h : memref<2x3xf32, #etcopy.device<cuda:0>>, memref<2x3xf32>
  %t3 = gpu.memcpy async [%t2] %out, %d : memref<2x3xf32>, memref<2x3xf32, #etcopy.device<cuda:0>>
  %t4 = gpu.dealloc async [%t3] %d : memref<2x3xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t4]
  return
}

// -----

// Sync forms, as upstream passes produce them: each op completes before it
// returns, so each is followed by a stream synchronisation; the last one
// makes the return's unnecessary. Without an
// #etcopy.device the current device is used: no device is saved, selected
// (-1) or restored.

// CHECK-LABEL: llvm.func @sync_forms
// CHECK-DAG:  %[[CURRENT:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-DAG:  %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG:  %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG:  %[[DEFAULT:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-DAG:  %[[FOUR:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NOT:  __etcopy_get_device
// CHECK:      %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(%[[CURRENT]],
// CHECK:      %[[D:.*]] = llvm.call @__etcopy_malloc(%{{.*}}, %[[STREAM]],
// CHECK:      llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
// An ambiguous copy (no memory space on either side) is cudaMemcpyDefault.
// CHECK:      llvm.call @__etcopy_memcpy(%{{.*}}, %{{.*}}, %{{.*}}, %[[DEFAULT]], %[[STREAM]],
// CHECK-NEXT: llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
// A zero memset of i32 is a byte memset of 4 bytes per element.
// CHECK:      %[[BYTES:.*]] = llvm.mul %{{.*}}, %[[FOUR]] : i64
// CHECK-NEXT: llvm.call @__etcopy_memset(%[[D]], %[[ZERO]], %[[BYTES]], %[[ONE]], %[[STREAM]],
// CHECK-NEXT: llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
// CHECK:      llvm.call @__etcopy_free(%[[D]], %[[STREAM]],
// CHECK-NEXT: llvm.call @__etcopy_stream_synchronize(%[[STREAM]],
// CHECK-NOT:  __etcopy_stream_synchronize
// CHECK-NOT:  __etcopy_restore_device
// CHECK:      llvm.return
func.func @sync_forms(%h: memref<16xi32>, %n: index) {
  %d = gpu.alloc (%n) : memref<?xi32>
  %sub = memref.subview %d[0] [16] [1] : memref<?xi32> to memref<16xi32, strided<[1]>>
  gpu.memcpy %sub, %h : memref<16xi32, strided<[1]>>, memref<16xi32>
  %zero = arith.constant 0 : i32
  gpu.memset %d, %zero : memref<?xi32>, i32
  gpu.dealloc %d : memref<?xi32>
  return
}

// -----

// host_shared allocations are managed memory; their free waits for the
// stream and is synchronous, so neither it nor the return synchronises
// again.
// CHECK-LABEL: llvm.func @host_shared
// CHECK-DAG:  %[[BYTES:.*]] = llvm.mlir.constant(32 : i64) : i64
// CHECK-DAG:  %[[ONES:.*]] = llvm.mlir.constant(255 : i32) : i32
// CHECK:      %[[STREAM:.*]] = llvm.call @__etcopy_get_stream(
// CHECK:      %[[M:.*]] = llvm.call @__etcopy_malloc_managed(%[[BYTES]],
// CHECK-NOT:  __etcopy_stream_synchronize
// CHECK:      llvm.call @__etcopy_memset(%[[M]], %[[ONES]], %[[BYTES]],
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.call @__etcopy_free_managed(%[[M]], %[[STREAM]],
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func linkonce_odr @__etcopy_free_managed(
// CHECK:      llvm.call @cudaStreamSynchronize(
// CHECK:      llvm.call @cudaFree(
func.func @host_shared() {
  %m = gpu.alloc host_shared () : memref<8xi32, #gpu.address_space<global>>
  %t = gpu.wait async
  %ones = arith.constant -1 : i32
  %t1 = gpu.memset async [%t] %m, %ones : memref<8xi32, #gpu.address_space<global>>, i32
  gpu.dealloc %m : memref<8xi32, #gpu.address_space<global>>
  return
}

// -----

// A rank-0 copy is one copy of 8 bytes; a zero-sized one makes no call
// (CUDA rejects a batch holding a copy of 0 bytes: see empty.mlir).
// CHECK-LABEL: llvm.func @rank0_and_empty
// CHECK-DAG:     %[[EIGHT:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK:         llvm.call @__etcopy_memcpy(%{{.*}}, %{{.*}}, %[[EIGHT]],
// CHECK-NOT:     llvm.call @__etcopy_memcpy
// CHECK:         llvm.return
func.func @rank0_and_empty(%a: memref<f64>, %da: memref<f64, #etcopy.device<cuda:0>>,
                           %e: memref<0x5xi8>, %de: memref<0x5xi8, #etcopy.device<cuda:0>>) {
  gpu.memcpy %da, %a : memref<f64, #etcopy.device<cuda:0>>, memref<f64>
  gpu.memcpy %de, %e : memref<0x5xi8, #etcopy.device<cuda:0>>, memref<0x5xi8>
  return
}

// -----

// A dynamic allocation computes its bytes and strides from the sizes, as
// MemRefToLLVM does (strides 4n, n, 1; 4 * n * m floats), and its
// descriptor reaches the return through the conversion's casts.
// CHECK-LABEL: llvm.func @dynamic_alloc
// CHECK-SAME:    (%[[M:.*]]: i64, %[[N:.*]]: i64)
// CHECK-DAG:     %[[C4:.*]] = llvm.mlir.constant(4 : index) : i64
// CHECK-DAG:     %[[C1:.*]] = llvm.mlir.constant(1 : index) : i64
// CHECK:         %[[S0:.*]] = llvm.mul %[[N]], %[[C4]] : i64
// CHECK-NEXT:    %[[COUNT:.*]] = llvm.mul %[[S0]], %[[M]] : i64
// CHECK-NEXT:    %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:    %[[END:.*]] = llvm.getelementptr %[[NULL]][%[[COUNT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[BYTES:.*]] = llvm.ptrtoint %[[END]] : !llvm.ptr to i64
// CHECK-NEXT:    %[[P:.*]] = llvm.call @__etcopy_malloc(%[[BYTES]],
// CHECK:         llvm.insertvalue %[[P]], %{{.*}}[0]
// CHECK-NEXT:    llvm.insertvalue %[[P]], %{{.*}}[1]
// CHECK:         llvm.insertvalue %[[M]], %{{.*}}[3, 0]
// CHECK-NEXT:    llvm.insertvalue %[[C4]], %{{.*}}[3, 1]
// CHECK-NEXT:    llvm.insertvalue %[[N]], %{{.*}}[3, 2]
// CHECK-NEXT:    llvm.insertvalue %[[S0]], %{{.*}}[4, 0]
// CHECK-NEXT:    llvm.insertvalue %[[N]], %{{.*}}[4, 1]
// CHECK-NEXT:    %[[DESC:.*]] = llvm.insertvalue %[[C1]], %{{.*}}[4, 2]
// CHECK:         llvm.return %[[DESC]]
func.func @dynamic_alloc(%m: index, %n: index) -> memref<?x4x?xf32> {
  %d = gpu.alloc (%m, %n) : memref<?x4x?xf32>
  return %d : memref<?x4x?xf32>
}

// -----

// A copy between casts of static buffers is one cudaMemcpyAsync of the
// static size, as between the buffers themselves: the casts fold into the
// copy before it is planned.
// CHECK-LABEL: llvm.func @casted_copy
// CHECK:         %[[BYTES:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK:         llvm.call @__etcopy_memcpy(%{{.*}}, %{{.*}}, %[[BYTES]],
// CHECK-NOT:     __etcopy_memcpy_strided
func.func @casted_copy(%h: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  %hc = memref.cast %h : memref<4xf32> to memref<?xf32>
  %dc = memref.cast %d : memref<4xf32, #etcopy.device<cuda:0>> to memref<?xf32, #etcopy.device<cuda:0>>
  gpu.memcpy %dc, %hc : memref<?xf32, #etcopy.device<cuda:0>>, memref<?xf32>
  return
}

// -----

// The runtime ops are lowered in block order, which need not be dominance
// order: the copy and the free come before the allocation they use.
// CHECK-LABEL: llvm.func @blocks_out_of_order
// CHECK:         llvm.br ^[[ALLOC:.*]]
// CHECK:       ^{{.*}}:
// CHECK-NEXT:    llvm.call @__etcopy_memcpy(%arg1, %[[DEVICE:[0-9]+]],
// CHECK-NEXT:    llvm.call @__etcopy_free(%[[DEVICE]],
// CHECK:       ^[[ALLOC]]:
// CHECK-NEXT:    %[[DEVICE]] = llvm.call @__etcopy_malloc(
// CHECK-NEXT:    llvm.br
func.func @blocks_out_of_order(%host: memref<4xf32>) {
  %t0 = gpu.wait async
  cf.br ^allocate
^use:
  %t2 = gpu.memcpy async [%t1] %host, %device : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  %t3 = gpu.dealloc async [%t2] %device : memref<4xf32, #etcopy.device<cuda:0>>
  gpu.wait [%t3]
  return
^allocate:
  %device, %t1 = gpu.alloc async [%t0] () : memref<4xf32, #etcopy.device<cuda:0>>
  cf.br ^use
}

// -----

// A function without gpu ops gets no stream, and a module without them no
// runtime support.
// CHECK-LABEL: llvm.func @no_device_work
// CHECK-NEXT:  llvm.return
// CHECK-NOT:   llvm.func
func.func @no_device_work(%a: memref<4xf32>) {
  return
}
