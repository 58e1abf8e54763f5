// RUN: etcopy-opt %s -split-input-file -verify-diagnostics

// One case per verifier constraint of etcopy.h2d / etcopy.d2h (C1-C5, named
// after it), every parse error of #etcopy.device, and the discardable
// attributes.

//===----------------------------------------------------------------------===//
// (C1) Form consistency.
//===----------------------------------------------------------------------===//

func.func @h2d_c1_tensor_with_destination(%t: tensor<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'etcopy.h2d' op with a tensor source (functional form) takes no destination operand, got 'memref<4xf32, #etcopy.device<cuda:0>>'}}
  "etcopy.h2d"(%t, %d) : (tensor<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// -----

func.func @h2d_c1_tensor_without_result(%t: tensor<4xf32>) {
  // expected-error @+1 {{'etcopy.h2d' op with a tensor source (functional form) requires a tensor result}}
  "etcopy.h2d"(%t) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @h2d_c1_memref_with_result(%m: memref<4xf32>) {
  // expected-error @+1 {{'etcopy.h2d' op with a memref source (out form) has no result, got 'tensor<4xf32, #etcopy.device<cuda:0>>'}}
  %0 = etcopy.h2d %m : memref<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

func.func @d2h_c1_memref_without_destination(%m: memref<4xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'etcopy.d2h' op with a memref source (out form) requires a memref destination}}
  "etcopy.d2h"(%m) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  return
}

// -----

// Unranked memrefs are not copied: the custom form parses an unranked target
// as the destination (it was read as a result type, and the op failed to
// parse with "got 1 operands and 0 types"), and the op's type constraint
// names what it takes.
func.func @h2d_unranked(%x: memref<*xf32>, %d: memref<*xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'etcopy.h2d' op operand #0 must be ranked tensor of any type values or memref of any type values, but got 'memref<*xf32>'}}
  etcopy.h2d %x, %d : memref<*xf32> -> memref<*xf32, #etcopy.device<cuda:0>>
  return
}

// -----

func.func @d2h_unranked_destination(%d: memref<4xf32, #etcopy.device<cuda:0>>, %x: memref<*xf32>) {
  // expected-error @+1 {{'etcopy.d2h' op operand #1 must be memref of any type values, but got 'memref<*xf32>'}}
  etcopy.d2h %d, %x : memref<4xf32, #etcopy.device<cuda:0>> -> memref<*xf32>
  return
}

// -----

func.func @d2h_c1_tensor_with_destination(%t: tensor<4xf32, #etcopy.device<cuda:0>>, %h: memref<4xf32>) {
  // expected-error @+1 {{'etcopy.d2h' op with a tensor source (functional form) takes no destination operand, got 'memref<4xf32>'}}
  etcopy.d2h %t, %h : tensor<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// (C2) Direction.
//===----------------------------------------------------------------------===//

// -----

func.func @h2d_c2_source_on_device(%t: tensor<4xf32, #etcopy.device<cuda:1>>) {
  // expected-error @+1 {{'etcopy.h2d' op source must be on the host, got 'tensor<4xf32, #etcopy.device<cuda:1>>' on cuda:1}}
  %0 = etcopy.h2d %t : tensor<4xf32, #etcopy.device<cuda:1>> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

func.func @h2d_c2_result_on_host(%t: tensor<4xf32>) {
  // expected-error @+1 {{'etcopy.h2d' op result must be on an #etcopy.device other than cpu, got 'tensor<4xf32>' on the host}}
  %0 = etcopy.h2d %t : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @h2d_c2_destination_on_cpu(%m: memref<4xf32>, %c: memref<4xf32, #etcopy.device<cpu>>) {
  // expected-error @+1 {{'etcopy.h2d' op destination must be on an #etcopy.device other than cpu, got 'memref<4xf32, #etcopy.device<cpu>>' on the host}}
  etcopy.h2d %m, %c : memref<4xf32> -> memref<4xf32, #etcopy.device<cpu>>
  return
}

// -----

func.func @h2d_c2_foreign_memory_space(%m: memref<4xf32>, %g: memref<4xf32, 1>) {
  // expected-error @+1 {{'etcopy.h2d' op destination must be on an #etcopy.device other than cpu, got 'memref<4xf32, 1>' in memory space 1}}
  etcopy.h2d %m, %g : memref<4xf32> -> memref<4xf32, 1>
  return
}

// -----

func.func @h2d_c2_foreign_source_space(%m: memref<4xf32, #gpu.address_space<global>>, %d: memref<4xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'etcopy.h2d' op source must be on the host, got 'memref<4xf32, #gpu.address_space<global>>' in memory space #gpu.address_space<global>}}
  etcopy.h2d %m, %d : memref<4xf32, #gpu.address_space<global>> -> memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

func.func @d2h_c2_source_on_host(%t: tensor<4xf32>) {
  // expected-error @+1 {{'etcopy.d2h' op source must be on an #etcopy.device other than cpu, got 'tensor<4xf32>' on the host}}
  %0 = etcopy.d2h %t : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @d2h_c2_destination_on_device(%s: memref<4xf32, #etcopy.device<cuda:0>>, %d: memref<4xf32, #etcopy.device<cuda:1>>) {
  // expected-error @+1 {{'etcopy.d2h' op destination must be on the host, got 'memref<4xf32, #etcopy.device<cuda:1>>' on cuda:1}}
  etcopy.d2h %s, %d : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, #etcopy.device<cuda:1>>
  return
}

// -----

func.func @d2h_c2_foreign_encoding(%t: tensor<4xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'etcopy.d2h' op result must be on the host, got 'tensor<4xf32, "host">' with encoding "host"}}
  %0 = etcopy.d2h %t : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32, "host">
  return
}

//===----------------------------------------------------------------------===//
// (C3) Element type.
//===----------------------------------------------------------------------===//

// -----

func.func @h2d_c3_element_type(%t: tensor<4xf32>) {
  // expected-error @+1 {{'etcopy.h2d' op element type mismatch: source 'tensor<4xf32>' has 'f32', result 'tensor<4xf16, #etcopy.device<cuda:0>>' has 'f16'}}
  %0 = etcopy.h2d %t : tensor<4xf32> -> tensor<4xf16, #etcopy.device<cuda:0>>
  return
}

// -----

func.func @d2h_c3_element_type(%s: memref<4xi32, #etcopy.device<cuda:0>>, %d: memref<4xi64>) {
  // expected-error @+1 {{'etcopy.d2h' op element type mismatch: source 'memref<4xi32, #etcopy.device<cuda:0>>' has 'i32', destination 'memref<4xi64>' has 'i64'}}
  etcopy.d2h %s, %d : memref<4xi32, #etcopy.device<cuda:0>> -> memref<4xi64>
  return
}

//===----------------------------------------------------------------------===//
// (C4) Rank.
//===----------------------------------------------------------------------===//

// -----

func.func @h2d_c4_rank(%m: memref<4xf32>, %d: memref<4x1xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'etcopy.h2d' op rank mismatch: source 'memref<4xf32>' has rank 1, destination 'memref<4x1xf32, #etcopy.device<cuda:0>>' has rank 2}}
  etcopy.h2d %m, %d : memref<4xf32> -> memref<4x1xf32, #etcopy.device<cuda:0>>
  return
}

// -----

func.func @d2h_c4_rank(%t: tensor<f32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'etcopy.d2h' op rank mismatch: source 'tensor<f32, #etcopy.device<cuda:0>>' has rank 0, result 'tensor<1xf32>' has rank 1}}
  %0 = etcopy.d2h %t : tensor<f32, #etcopy.device<cuda:0>> -> tensor<1xf32>
  return
}

//===----------------------------------------------------------------------===//
// (C5) Static sizes.
//===----------------------------------------------------------------------===//

// -----

func.func @h2d_c5_static_size(%t: tensor<2x3xf32>) {
  // expected-error @+1 {{'etcopy.h2d' op size mismatch in dimension 1: source 'tensor<2x3xf32>' has 3, result 'tensor<2x4xf32, #etcopy.device<cuda:0>>' has 4}}
  %0 = etcopy.h2d %t : tensor<2x3xf32> -> tensor<2x4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

func.func @d2h_c5_static_size(%s: memref<0xf32, #etcopy.device<cuda:0>>, %d: memref<1xf32>) {
  // expected-error @+1 {{'etcopy.d2h' op size mismatch in dimension 0: source 'memref<0xf32, #etcopy.device<cuda:0>>' has 0, destination 'memref<1xf32>' has 1}}
  etcopy.d2h %s, %d : memref<0xf32, #etcopy.device<cuda:0>> -> memref<1xf32>
  return
}

//===----------------------------------------------------------------------===//
// Operand kinds rejected by the ODS constraints.
//===----------------------------------------------------------------------===//

// -----

func.func @h2d_unranked_source(%t: tensor<*xf32>) {
  // expected-error @+1 {{'etcopy.h2d' op operand #0 must be ranked tensor of any type values or memref of any type values, but got 'tensor<*xf32>'}}
  %0 = "etcopy.h2d"(%t) : (tensor<*xf32>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  return
}

//===----------------------------------------------------------------------===//
// #etcopy.device parse errors.
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{unknown device kind 'tpu'; valid kinds are: cpu, cuda}}
func.func private @unknown_kind(memref<4xf32, #etcopy.device<tpu:0>>)

// -----

// expected-error @+1 {{expected a device kind, one of: cpu, cuda}}
func.func private @missing_kind(memref<4xf32, #etcopy.device<0>>)

// -----

// expected-error @+1 {{expected a device ordinal after 'cuda:'; a device is kind[:ordinal], kind one of: cpu, cuda}}
func.func private @missing_ordinal(memref<4xf32, #etcopy.device<cuda:>>)

// -----

// expected-error @+1 {{expected a device ordinal after 'cuda:'; a device is kind[:ordinal], kind one of: cpu, cuda}}
func.func private @non_integer_ordinal(memref<4xf32, #etcopy.device<cuda:x>>)

// -----

// expected-error @+1 {{device ordinal must be in [0, 2147483647], got -1; a device is kind[:ordinal], kind one of: cpu, cuda}}
func.func private @negative_ordinal(memref<4xf32, #etcopy.device<cuda:-1>>)

// -----

// expected-error @+1 {{device ordinal must be in [0, 2147483647], got 4294967296; a device is kind[:ordinal], kind one of: cpu, cuda}}
func.func private @huge_ordinal(memref<4xf32, #etcopy.device<cuda:4294967296>>)

// -----

// expected-error @+1 {{the host device 'cpu' has only ordinal 0, got 1}}
func.func private @cpu_ordinal(memref<4xf32, #etcopy.device<cpu:1>>)

// -----

// expected-error @+1 {{expected '>'}}
func.func private @trailing(memref<4xf32, #etcopy.device<cuda:0:1>>)

// -----

// expected-error @+1 {{expected '<'}}
func.func private @no_body(memref<4xf32, #etcopy.device>)

//===----------------------------------------------------------------------===//
// Discardable attributes.
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'etcopy.device' must be an #etcopy.device attribute, got "cuda:0"}}
func.func private @device_not_device() attributes {etcopy.device = "cuda:0"}

// -----

// expected-error @+1 {{'etcopy.propagate' must be a dictionary, got true}}
func.func private @propagate_not_dict() attributes {etcopy.propagate = true}

// -----

// expected-error @+1 {{unknown key 'skip_all' in 'etcopy.propagate'; valid keys are: skip_h2d_for_method_inputs, skip_d2h_for_method_outputs}}
func.func private @propagate_unknown_key() attributes {etcopy.propagate = {skip_all = true}}

// -----

// expected-error @+1 {{'etcopy.propagate' key 'skip_h2d_for_method_inputs' must be a boolean, got 1 : i64}}
func.func private @propagate_not_bool() attributes {etcopy.propagate = {skip_h2d_for_method_inputs = 1}}

// -----

// expected-error @+1 {{unknown etcopy attribute 'etcopy.placement'; known: etcopy.device, etcopy.propagate, etcopy.arenas, etcopy.signature, etcopy.stream_ordered, etcopy.host_kernel, etcopy.host_kernel_unsupported, etcopy.waits_for_one_op}}
func.func private @unknown_attribute() attributes {etcopy.placement = #etcopy.device<cuda:0>}

// -----

// expected-error @+1 {{'etcopy.waits_for_one_op' is a unit attribute of a host gpu.wait with one dependency}}
func.func private @waits_for_one_op_on_a_function() attributes {etcopy.waits_for_one_op}

// -----

// The host version of a kernel (etcopy-outline-host-kernels makes them):
// 12 ids of one integer type first, the kernel's arguments after, no result;
// convert-gpu-to-cuda-runtime's kernel table loads them so. Valid: index ids
// before the lowering, i64 or i32 ids (the index width) after it.
func.func private @host_kernel(index, index, index, index, index, index, index, index, index, index, index, index, memref<4xf32>) attributes {etcopy.host_kernel = ["kernels", "scale"]}
llvm.func @host_kernel_lowered(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr) attributes {etcopy.host_kernel = ["kernels", "scale"]}
llvm.func @host_kernel_lowered_i32(i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) attributes {etcopy.host_kernel = ["kernels", "sync"], etcopy.host_kernel_unsupported = "it uses gpu.barrier"}

// -----

// expected-error @+1 {{'etcopy.host_kernel' must be ["<gpu.module>", "<kernel>"], got ["kernels"]}}
func.func private @host_kernel_one_name(index, index, index, index, index, index, index, index, index, index, index, index) attributes {etcopy.host_kernel = ["kernels"]}

// -----

// expected-error @+1 {{'etcopy.host_kernel' marks a function}}
gpu.wait {etcopy.host_kernel = ["kernels", "scale"]}

// -----

// Fewer than 12 ids: the kernel table would read a memref descriptor's
// pointer as an id (found by the pipeline fuzzer: an llvm.trunc to !llvm.ptr
// that did not verify).
// expected-error @+1 {{'etcopy.host_kernel' marks the host version of a kernel, which takes 12 ids of one index or signless integer type (block id, thread id, block size, grid size: x, y, z each) before the kernel's arguments and returns nothing; got '(index, index, index, index, index, index, index, index, index, index, index, memref<4xf32>) -> ()'}}
func.func private @host_kernel_too_few_ids(index, index, index, index, index, index, index, index, index, index, index, memref<4xf32>) attributes {etcopy.host_kernel = ["kernels", "scale"]}

// -----

// expected-error @+1 {{'etcopy.host_kernel' marks the host version of a kernel}}
func.func private @host_kernel_mixed_ids(index, index, index, index, index, index, index, index, index, index, index, i32) attributes {etcopy.host_kernel = ["kernels", "scale"]}

// -----

// expected-error @+1 {{'etcopy.host_kernel' marks the host version of a kernel}}
llvm.func @host_kernel_pointer_ids(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) attributes {etcopy.host_kernel = ["kernels", "scale"]}

// -----

// expected-error @+1 {{'etcopy.host_kernel' marks the host version of a kernel}}
func.func private @host_kernel_result(index, index, index, index, index, index, index, index, index, index, index, index) -> f32 attributes {etcopy.host_kernel = ["kernels", "scale"]}

// -----

// expected-error @+1 {{'etcopy.host_kernel_unsupported' is a string on a function marked etcopy.host_kernel}}
func.func private @host_kernel_unsupported_alone() attributes {etcopy.host_kernel_unsupported = "it uses gpu.barrier"}

// -----

func.func @waits_for_one_op_without_dependency() {
  // expected-error @+1 {{'etcopy.waits_for_one_op' is a unit attribute of a host gpu.wait with one dependency}}
  gpu.wait {etcopy.waits_for_one_op}
  return
}

// -----

// expected-error @+1 {{'etcopy.arenas' must be an array, got {size = 4 : i64}}}
func.func private @arenas_not_array() attributes {etcopy.arenas = {size = 4 : i64}}

// -----

// expected-error @+1 {{'etcopy.arenas' entry #1 must be {device = #etcopy.device<...>, size = N : i64, alignment = N : i64}, got {device = #etcopy.device<cuda:0>, size = 8 : i64}}}
func.func private @arenas_missing_key() attributes {etcopy.arenas = [
    {device = #etcopy.device<cuda:0>, size = 8 : i64, alignment = 256 : i64},
    {device = #etcopy.device<cuda:0>, size = 8 : i64}]}

// -----

// expected-error @+1 {{'etcopy.arenas' entry #0 has a negative size -8}}
func.func private @arenas_negative_size() attributes {etcopy.arenas = [
    {device = #etcopy.device<cuda:0>, size = -8 : i64, alignment = 256 : i64}]}

// -----

// expected-error @+1 {{'etcopy.arenas' entry #0 has alignment 96, which is not a power of two}}
func.func private @arenas_bad_alignment() attributes {etcopy.arenas = [
    {device = #etcopy.device<cuda:1>, size = 8 : i64, alignment = 96 : i64}]}

// -----

// expected-error @+1 {{'etcopy.arenas' entry #0 must be {device = #etcopy.device<...>, size = N : i64, alignment = N : i64}, got {alignment = 256 : i64, device = #etcopy.device<cuda:0>, size = true}}}
func.func private @arenas_size_not_i64() attributes {etcopy.arenas = [
    {device = #etcopy.device<cuda:0>, size = true, alignment = 256 : i64}]}

// -----

// expected-error @+1 {{'etcopy.arenas' entry #0 has alignment -9223372036854775808, which is not a power of two}}
func.func private @arenas_min_alignment() attributes {etcopy.arenas = [
    {device = #etcopy.device<cuda:0>, size = 8 : i64, alignment = -9223372036854775808 : i64}]}

// -----

func.func @signature_on_an_op() {
  // expected-error @+1 {{'etcopy.signature' may only be attached to a function}}
  %c0 = arith.constant {etcopy.signature = {arguments = [], results = []}} 0 : index
  return
}

// -----

// expected-error @+1 {{'etcopy.signature' must be {arguments = [...], results = [...]}, got {arguments = []}}}
func.func private @signature_missing_results() attributes {etcopy.signature = {arguments = []}}

// -----

// expected-error @+1 {{'etcopy.signature' describes 0 argument(s), but the function has 1}}
func.func private @signature_argument_count(index) attributes {etcopy.signature = {arguments = [], results = []}}

// -----

// expected-error @+1 {{'etcopy.signature' describes 1 result(s), but the function has 0}}
func.func private @signature_result_count() attributes {etcopy.signature = {arguments = [], results = [
    {kind = "scalar", device = #etcopy.device<cpu>, rank = 0 : i64, element_bytes = 8 : i64}]}}

// -----

// expected-error @+1 {{'etcopy.signature' argument #0 must be {kind = "memref" | "unranked_memref" | "scalar", device = #etcopy.device<...>, rank = N : i64, element_bytes = N : i64}, got {device = #etcopy.device<cpu>, kind = "scalar", rank = 0 : i64}}}
func.func private @signature_missing_key(index) attributes {etcopy.signature = {arguments = [
    {kind = "scalar", device = #etcopy.device<cpu>, rank = 0 : i64}], results = []}}

// -----

// expected-error @+1 {{'etcopy.signature' argument #0 has unknown kind 'tensor'; valid kinds are: memref, unranked_memref, scalar}}
func.func private @signature_unknown_kind(memref<4xf32>) attributes {etcopy.signature = {arguments = [
    {kind = "tensor", device = #etcopy.device<cpu>, rank = 1 : i64, element_bytes = 4 : i64}], results = []}}

// -----

// expected-error @+1 {{'etcopy.signature' result #0 has rank 2; a memref's rank is >= 0, other kinds have 0}}
func.func private @signature_scalar_rank() -> f32 attributes {etcopy.signature = {arguments = [], results = [
    {kind = "scalar", device = #etcopy.device<cpu>, rank = 2 : i64, element_bytes = 4 : i64}]}}

// -----

// expected-error @+1 {{'etcopy.signature' argument #0 has element_bytes 0, which is not positive}}
func.func private @signature_zero_bytes(memref<4xi1>) attributes {etcopy.signature = {arguments = [
    {kind = "memref", device = #etcopy.device<cpu>, rank = 1 : i64, element_bytes = 0 : i64}], results = []}}

// -----

// The delegate contract's argument attribute.

// expected-error @+1 {{'etcopy.writes' is a unit attribute, got true}}
func.func private @writes_not_unit(tensor<4xf32> {etcopy.writes = true})
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// -----

// expected-error @+1 {{'etcopy.writes' marks an argument of a delegate (a function whose etcopy.device names a device) that it writes}}
func.func private @writes_on_host_function(tensor<4xf32> {etcopy.writes})

// -----

// expected-error @+1 {{'etcopy.writes' marks an argument of a delegate (a function whose etcopy.device names a device) that it writes}}
func.func private @writes_on_cpu_placed_function(tensor<4xf32> {etcopy.writes})
    attributes {etcopy.device = #etcopy.device<cpu>}

// -----

// expected-error @+1 {{'etcopy.writes' on argument #1 of type 'index': only ranked tensors and memrefs are written}}
func.func private @writes_on_scalar(tensor<4xf32>, index {etcopy.writes})
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// -----

// expected-error @+1 {{unknown etcopy argument attribute 'etcopy.write'; known: etcopy.writes}}
func.func private @writes_misspelled(tensor<4xf32> {etcopy.write})
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// -----

// etcopy.d2d (C2): both sides on devices, two different ones.

func.func @d2d_c2_same_device(%x: tensor<4xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'etcopy.d2d' op copies within cuda:0 (source 'tensor<4xf32, #etcopy.device<cuda:0>>', result 'tensor<4xf32, #etcopy.device<cuda:0>>'): a d2d copy moves data between two different devices}}
  %y = etcopy.d2d %x : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

func.func @d2d_c2_host_source(%x: memref<4xf32>, %d: memref<4xf32, #etcopy.device<cuda:1>>) {
  // expected-error @+1 {{'etcopy.d2d' op source must be on an #etcopy.device other than cpu, got 'memref<4xf32>' on the host}}
  etcopy.d2d %x, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:1>>
  return
}

// -----

func.func @d2d_c2_host_result(%x: tensor<4xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'etcopy.d2d' op result must be on an #etcopy.device other than cpu, got 'tensor<4xf32, #etcopy.device<cpu>>' on the host}}
  %y = etcopy.d2d %x : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32, #etcopy.device<cpu>>
  return
}

// -----

func.func @d2d_c1_out_form_result(%x: memref<4xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'etcopy.d2d' op with a memref source (out form) has no result, got 'tensor<4xf32>'}}
  %y = "etcopy.d2d"(%x) : (memref<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32>
  return
}

// -----

func.func @d2d_c5_size(%x: tensor<4xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'etcopy.d2d' op size mismatch in dimension 0: source 'tensor<4xf32, #etcopy.device<cuda:0>>' has 4, result 'tensor<5xf32, #etcopy.device<cuda:1>>' has 5}}
  %y = etcopy.d2d %x : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<5xf32, #etcopy.device<cuda:1>>
  return
}

// -----

// expected-error @+1 {{'etcopy.stream_ordered' marks a delegate (a function whose etcopy.device names a device) that orders its work on the stream it is given}}
func.func private @stream_ordered_host(tensor<4xf32>) attributes {etcopy.stream_ordered}

// -----

// expected-error @+1 {{'etcopy.stream_ordered' is a unit attribute, got 1 : i64}}
func.func private @stream_ordered_not_unit(tensor<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered = 1}
