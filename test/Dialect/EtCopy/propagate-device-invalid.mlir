// RUN: etcopy-opt %s -split-input-file -etcopy-propagate-device -verify-diagnostics

// Inconsistent placements are diagnosed, never guessed. One case per
// diagnostic of etcopy-propagate-device.

// A delegate takes ranked tensors, not memrefs (bufferize after placement).
// expected-error @+1 {{'func.func' op delegate @takes_memref on cuda:0: argument #0 has type 'memref<4xf32>', but delegates take and return ranked tensors}}
func.func private @takes_memref(memref<4xf32>)
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// -----

// expected-error @+1 {{'func.func' op delegate @returns_unranked on cuda:0: result #0 has type 'tensor<*xf32>', but delegates take and return ranked tensors}}
func.func private @returns_unranked(tensor<4xf32>) -> tensor<*xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// -----

// A delegate signature naming another device.
// expected-error @+1 {{'func.func' op delegate @other_device on cuda:0: result #0 has type 'tensor<4xf32, #etcopy.device<cuda:1>>', placed on cuda:1}}
func.func private @other_device(tensor<4xf32>) -> tensor<4xf32, #etcopy.device<cuda:1>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// -----

// Both host and device: a delegate signature placing a tensor on cpu.
// expected-error @+1 {{'func.func' op delegate @explicit_cpu on cuda:2: argument #1 has type 'tensor<4xi8, #etcopy.device<cpu>>', explicitly placed on cpu}}
func.func private @explicit_cpu(tensor<4xi8>, tensor<4xi8, #etcopy.device<cpu>>)
    attributes {etcopy.device = #etcopy.device<cuda:2>}

// -----

// expected-error @+1 {{'func.func' op delegate @foreign on cuda:0: argument #0 has type 'tensor<4xf32, "sparse">', whose encoding is not an #etcopy.device}}
func.func private @foreign(tensor<4xf32, "sparse">)
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// -----

// A delegate called with an inconsistent placement.
// expected-note @+1 {{@on0 declared here}}
func.func private @on0(tensor<4xf32>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @call_other_device(%x: tensor<4xf32>) {
  // expected-error @+1 {{'func.call' op is placed on cuda:1 but calls delegate @on0 on cuda:0}}
  func.call @on0(%x) {etcopy.device = #etcopy.device<cuda:1>} : (tensor<4xf32>) -> ()
  return
}

// -----

// expected-note @+1 {{@on0 declared here}}
func.func private @on0(tensor<4xf32>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @call_on_host(%x: tensor<4xf32>) {
  // expected-error @+1 {{'func.call' op is placed on cpu but calls delegate @on0 on cuda:0}}
  func.call @on0(%x) {etcopy.device = #etcopy.device<cpu>} : (tensor<4xf32>) -> ()
  return
}

// -----

// expected-note @+1 {{@log declared here}}
func.func private @log(tensor<4xf32>)
func.func @host_call_on_device(%x: tensor<4xf32>) {
  // expected-error @+1 {{'func.call' op is placed on cuda:0 but calls @log, a host function}}
  func.call @log(%x) {etcopy.device = #etcopy.device<cuda:0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// A function both host and device code: called from a delegate's body and
// from a method.
// expected-error @+1 {{'func.func' op @shared is both host and device code: it is called from host code and from device code on cuda:0}}
func.func private @shared(tensor<4xf32>) -> tensor<4xf32>
func.func private @delegate(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>} {
  // expected-note @+1 {{called from device code here}}
  %y = func.call @shared(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{called from host code here}}
  %y = func.call @shared(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A method (public) called from device code.
// expected-error @+1 {{'func.func' op @entry is both host and device code: it is a method (public) and is called from device code on cuda:0}}
func.func @entry(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @delegate(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>} {
  // expected-note @+1 {{called from device code here}}
  %y = func.call @entry(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A function placed on cpu called from device code.
// expected-error @+1 {{'func.func' op @pinned is both host and device code: it is placed on cpu and is called from device code on cuda:0}}
func.func private @pinned(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cpu>}
func.func private @delegate(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>} {
  // expected-note @+1 {{called from device code here}}
  %y = func.call @pinned(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Device code reached from two devices.
// expected-error @+1 {{'func.func' op @kernel is called from device code on both cuda:0 and cuda:1}}
func.func private @kernel(tensor<4xf32>) -> tensor<4xf32>
func.func private @d0(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>} {
  // expected-note @+1 {{called from device code on cuda:0 here}}
  %y = func.call @kernel(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @d1(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:1>} {
  // expected-note @+1 {{called from device code on cuda:1 here}}
  %y = func.call @kernel(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A delegate calling a delegate of another device from device code.
// expected-note @+1 {{@on1 declared here}}
func.func private @on1(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:1>}
func.func private @on0(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>} {
  // expected-error @+1 {{'func.call' op in device code on cuda:0 calls delegate @on1 on cuda:1; copies between devices are only placed in host code}}
  %y = func.call @on1(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A delegate used other than by func.call: its uses cannot be retyped.
// expected-note @+1 {{delegate declared here}}
func.func private @indirect(tensor<4xf32>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @method() {
  // expected-error @+1 {{'func.constant' op references delegate @indirect on cuda:0; only direct func.call uses of a delegate can be placed}}
  %f = func.constant @indirect : (tensor<4xf32>) -> ()
  return
}

// -----

// Only functions are delegates; an op of host code cannot claim a device.
func.func @placed_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op is placed on cuda:0 in host code, but only calls to delegates (functions with 'etcopy.device') run on a device}}
  %y = arith.addf %x, %x {etcopy.device = #etcopy.device<cuda:0>} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The per-method configuration on something that is not a method is
// ignored, with a warning.
// expected-warning @+1 {{'etcopy.propagate' has no effect on @not_a_method: it configures methods (public host functions)}}
func.func private @not_a_method(tensor<4xf32>)
    attributes {etcopy.device = #etcopy.device<cuda:0>,
                etcopy.propagate = {skip_h2d_for_method_inputs = true}}
