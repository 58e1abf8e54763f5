// RUN: etcopy-opt %s -split-input-file -verify-diagnostics --convert-etcopy-to-gpu

// Everything convert-etcopy-to-gpu rejects, one case each.

func.func @functional_h2d(%x: tensor<4xf32>) -> tensor<4xf32, #etcopy.device<cuda:0>> {
  // expected-error @+1 {{'etcopy.h2d' op is a functional (tensor) copy, which has no gpu-dialect form; bufferize first (one-shot-bufferize with use-encoding-for-memory-space)}}
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  return %d : tensor<4xf32, #etcopy.device<cuda:0>>
}

// -----

func.func @functional_d2h(%d: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32> {
  // expected-error @+1 {{'etcopy.d2h' op is a functional (tensor) copy, which has no gpu-dialect form; bufferize first (one-shot-bufferize with use-encoding-for-memory-space)}}
  %h = etcopy.d2h %d : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

func.func @host_load_of_device_memory(%d: memref<4xf32, #etcopy.device<cuda:0>>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' op reads device memory 'memref<4xf32, #etcopy.device<cuda:0>>' on the host; copy it with etcopy.d2h first}}
  %v = memref.load %d[%c0] : memref<4xf32, #etcopy.device<cuda:0>>
  return %v : f32
}

// -----

func.func @host_store_to_device_memory(%d: memref<4xf32, #etcopy.device<cuda:1>>, %v: f32) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.store' op writes device memory 'memref<4xf32, #etcopy.device<cuda:1>>' on the host; write host memory and copy it with etcopy.h2d}}
  memref.store %v, %d[%c0] : memref<4xf32, #etcopy.device<cuda:1>>
  return
}

// -----

func.func @linalg_on_device_memory(%d: memref<4xf32, #etcopy.device<cuda:0>>, %v: f32) {
  // expected-error @+1 {{'linalg.fill' op writes device memory 'memref<4xf32, #etcopy.device<cuda:0>>' on the host; write host memory and copy it with etcopy.h2d}}
  linalg.fill ins(%v : f32) outs(%d : memref<4xf32, #etcopy.device<cuda:0>>)
  return
}

// -----

// Device memory accessed in a nested region is found too.
func.func @nested_host_load_of_device_memory(%d: memref<4xf32, #etcopy.device<cuda:0>>, %b: i1) {
  scf.if %b {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'memref.load' op reads device memory 'memref<4xf32, #etcopy.device<cuda:0>>' on the host; copy it with etcopy.d2h first}}
    %v = memref.load %d[%c0] : memref<4xf32, #etcopy.device<cuda:0>>
  }
  return
}

// -----

func.func @device_clone(%d: memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:0>> {
  // expected-error @+1 {{'bufferization.clone' op reads device memory 'memref<4xf32, #etcopy.device<cuda:0>>' on the host; copy it with etcopy.d2h first}}
  %c = bufferization.clone %d : memref<4xf32, #etcopy.device<cuda:0>> to memref<4xf32, #etcopy.device<cuda:0>>
  return %c : memref<4xf32, #etcopy.device<cuda:0>>
}

// -----

func.func @device_alloca() {
  // expected-error @+1 {{device memory cannot be allocated on the host stack (memref.alloca of 'memref<4xf32, #etcopy.device<cuda:0>>')}}
  %a = memref.alloca() : memref<4xf32, #etcopy.device<cuda:0>>
  return
}

// -----

func.func @device_alloc_strided_layout() {
  // expected-error @+1 {{'memref.alloc' op cannot allocate device memory 'memref<4xf32, strided<[2]>, #etcopy.device<cuda:0>>' with gpu.alloc: only the identity layout is supported}}
  %a = memref.alloc() : memref<4xf32, strided<[2]>, #etcopy.device<cuda:0>>
  return
}

// -----

func.func @device_alloc_symbol_operands(%s: index) {
  // expected-error @+1 {{'memref.alloc' op cannot allocate device memory 'memref<4xf32, affine_map<(d0)[s0] -> (d0 + s0)>, #etcopy.device<cuda:0>>' with gpu.alloc: only the identity layout is supported}}
  %a = memref.alloc()[%s] : memref<4xf32, affine_map<(d0)[s0] -> (d0 + s0)>, #etcopy.device<cuda:0>>
  return
}

// -----

func.func @unranked_device_copy(%h: memref<*xf32>, %d: memref<*xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'memref.copy' op cannot copy the unranked memref 'memref<*xf32, #etcopy.device<cuda:0>>' with gpu.memcpy; cast it to a ranked memref first}}
  memref.copy %h, %d : memref<*xf32> to memref<*xf32, #etcopy.device<cuda:0>>
  return
}

// -----

func.func @unranked_device_dealloc(%d: memref<*xf32, #etcopy.device<cuda:0>>) {
  // expected-error @+1 {{'memref.dealloc' op cannot free the unranked device memref 'memref<*xf32, #etcopy.device<cuda:0>>' with gpu.dealloc; cast it to a ranked memref first}}
  memref.dealloc %d : memref<*xf32, #etcopy.device<cuda:0>>
  return
}
