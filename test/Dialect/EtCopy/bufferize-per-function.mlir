// RUN: etcopy-opt %s --etcopy-bufferize | FileCheck %s
// RUN: etcopy-opt %s --etcopy-bufferize --remarks-filter=etcopy-bufferize \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: etcopy-opt %s --etcopy-bufferize --mlir-disable-threading \
// RUN:   --mlir-print-ir-module-scope \
// RUN:   --mlir-print-ir-after=ownership-based-buffer-deallocation \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=OWNERSHIP

// etcopy-bufferize decides per function who frees its buffers: itself,
// right after their last use, where every buffer has a static owner
// (@method, @step); upstream's ownership-based deallocation, at the end of
// each block, in the others (@choose, whose arith.select picks one of two
// buffers at run time). The two kinds call each other both ways: both
// follow the function boundary ABI (a callee frees none of its arguments
// and returns buffers its caller owns), so a caller of either kind frees
// what the callee returns and keeps its own arguments alive
// (Execution/mixed-deallocation.mlir runs such a module on the simulator).

func.func private @scale(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// Each buffer freed right after its last use, none of upstream's ownership
// ops or their lowering; @choose's result is @method's to return, its
// argument @method's to free after the call.
// CHECK-LABEL: func.func @method(
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}} : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT:    etcopy.h2d %{{.*}}, %[[D]]
// CHECK-NEXT:    %[[A:.*]] = call @scale(%[[D]])
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    %[[B:.*]] = call @scale(%[[A]])
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    %[[H:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT:    etcopy.d2h %[[B]], %[[H]]
// CHECK-NEXT:    memref.dealloc %[[B]]
// CHECK-NEXT:    %[[R:.*]] = call @choose(%[[H]], %{{.*}})
// CHECK-NEXT:    memref.dealloc %[[H]]
// CHECK-NEXT:    return %[[R]]
// CHECK-NOT:     bufferization.
// CHECK-NOT:     memref.extract_strided_metadata
// CHECK-NOT:     memref.extract_aligned_pointer_as_index
// CHECK-NOT:     @dealloc_helper
// CHECK-NOT:     scf.if
// REMARK-NOT: BuffersFreedByUpstream | Category:etcopy-bufferize | Function=method
// OWNERSHIP-NOT: IR Dump After OwnershipBasedBufferDeallocationPass {{.*}} @method
// OWNERSHIP-NOT: IR Dump After OwnershipBasedBufferDeallocationPass {{.*}} @step
// OWNERSHIP: IR Dump After OwnershipBasedBufferDeallocationPass (ownership-based-buffer-deallocation) ('func.func' operation: @choose)
// OWNERSHIP-LABEL: func.func @method(
// OWNERSHIP-NOT: bufferization.dealloc
// OWNERSHIP: memref.dealloc
// OWNERSHIP-NOT: bufferization.dealloc
// OWNERSHIP-LABEL: func.func @choose(
// OWNERSHIP: bufferization.dealloc
// OWNERSHIP-LABEL: func.func @step(
// OWNERSHIP-NOT: bufferization.dealloc
// OWNERSHIP-NOT: IR Dump After OwnershipBasedBufferDeallocationPass
func.func @method(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %a = func.call @scale(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %b = func.call @scale(%a) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %b : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %r = func.call @choose(%h, %c) : (tensor<4xf32>, i1) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Upstream's deallocation: which of %a and %b the function returns is known
// only at run time, so both are freed at the end behind upstream's run-time
// alias checks (the lowered bufferization.dealloc: the base buffers, their
// pointers, the helper's verdicts). The results of the calls of @step are
// @choose's own by the ABI; its argument is not freed.
// REMARK: remark: [Missed] BuffersFreedByUpstream | Category:etcopy-bufferize | Function=choose | Op=arith.select, Reason="which buffer the op returns is known only at run time (it is no allocation, call result or view)", Remark="the function's buffers are freed by upstream's ownership-based deallocation, at the end of each block"
// REMARK-NOT: BuffersFreedByUpstream
// CHECK-LABEL: func.func @choose(
// CHECK-SAME:    %[[X:[^:]*]]: memref<4xf32>
// CHECK:         %[[A:.*]] = call @step(%[[X]])
// CHECK-NEXT:    %[[B:.*]] = call @step(%[[A]])
// CHECK-NEXT:    %[[R:.*]] = arith.select %{{.*}}, %[[A]], %[[B]]
// CHECK-NOT:     memref.dealloc
// CHECK:         %[[BASE_A:[a-z_0-9]+]], {{.*}} = memref.extract_strided_metadata %[[A]]
// CHECK:         %[[BASE_B:[a-z_0-9]+]], {{.*}} = memref.extract_strided_metadata %[[B]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[BASE_A]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[BASE_B]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[R]]
// CHECK:         call @dealloc_helper(
// CHECK:         scf.if
// CHECK-NEXT:      memref.dealloc %[[BASE_A]]
// CHECK:         scf.if
// CHECK-NEXT:      memref.dealloc %[[BASE_B]]
// CHECK-NOT:     memref.dealloc %[[X]]
// CHECK:         return %[[R]]
func.func @choose(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %a = func.call @step(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @step(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %r = arith.select %c, %a, %b : tensor<4xf32>
  return %r : tensor<4xf32>
}

// Called by @choose, freed like @method: its argument is @choose's, the
// buffer it returns is @choose's to free.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[X:[^:]*]]: memref<4xf32>
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}} : memref<4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT:    etcopy.h2d %[[X]], %[[D]]
// CHECK-NEXT:    %[[S:.*]] = call @scale(%[[D]])
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    %[[H:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT:    etcopy.d2h %[[S]], %[[H]]
// CHECK-NEXT:    memref.dealloc %[[S]]
// CHECK-NEXT:    return %[[H]]
// CHECK-NOT:     bufferization.
// CHECK-NOT:     memref.extract_strided_metadata
// CHECK-NOT:     memref.extract_aligned_pointer_as_index
// CHECK-NOT:     scf.if
// CHECK-LABEL: func.func private @dealloc_helper(
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %s = func.call @scale(%d) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h = etcopy.d2h %s : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}
