// RUN: etcopy-opt %s -split-input-file -etcopy-propagate-device | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h
// The pass is idempotent, and leaves nothing for etcopy-optimize-transfers.
// RUN: etcopy-opt %s -split-input-file -etcopy-propagate-device | etcopy-opt -split-input-file -etcopy-propagate-device | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h
// RUN: etcopy-opt %s -split-input-file -etcopy-propagate-device | etcopy-opt -split-input-file -etcopy-optimize-transfers | FileCheck %s --implicit-check-not=etcopy.h2d --implicit-check-not=etcopy.d2h

// Copies at delegate boundaries in straight-line code: one h2d per host
// value and device, one d2h per device value the host uses, none between
// delegates of one device, declarations and definitions alike.

// The delegate's signature and the call become device-typed; an h2d per
// host operand, a d2h for the result the host uses.
// CHECK-LABEL: func.func private @add
// CHECK-SAME: (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK-SAME: attributes {etcopy.device = #etcopy.device<cuda:0>}
// CHECK-LABEL: func.func @boundary
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[DX:.*]] = etcopy.h2d %[[X]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[DY:.*]] = etcopy.h2d %[[Y]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[R:.*]] = call @add(%[[DX]], %[[DY]]) : (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[H:.*]] = etcopy.d2h %[[R]] : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
// CHECK: return %[[H]] : tensor<4xf32>
func.func private @add(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @boundary(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @add(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A chain of delegates on one device: the intermediate values never leave
// it (ExecuTorch inserts a d2h and an h2d between each pair, then elides
// them).
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<8xf16>)
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK: %[[A:.*]] = call @stage(%[[D]])
// CHECK: %[[B:.*]] = call @stage(%[[A]])
// CHECK: %[[C:.*]] = call @stage(%[[B]])
// CHECK: %[[H:.*]] = etcopy.d2h %[[C]]
// CHECK: return %[[H]]
func.func private @stage(tensor<8xf16>) -> tensor<8xf16>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @chain(%x: tensor<8xf16>) -> tensor<8xf16> {
  %a = func.call @stage(%x) : (tensor<8xf16>) -> tensor<8xf16>
  %b = func.call @stage(%a) : (tensor<8xf16>) -> tensor<8xf16>
  %c = func.call @stage(%b) : (tensor<8xf16>) -> tensor<8xf16>
  return %c : tensor<8xf16>
}

// -----

// Fan-out: a host value consumed by three delegates of one device is
// copied once (ExecuTorch copies it three times); the same value passed
// twice to one call is copied once too.
// CHECK-LABEL: func.func @fan_out
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[A:.*]] = call @unary(%[[D]])
// CHECK: %[[B:.*]] = call @unary(%[[D]])
// CHECK: %[[C:.*]] = call @binary(%[[D]], %[[D]])
// CHECK: %[[HA:.*]] = etcopy.d2h %[[A]]
// CHECK: %[[HB:.*]] = etcopy.d2h %[[B]]
// CHECK: %[[HC:.*]] = etcopy.d2h %[[C]]
// CHECK: return %[[HA]], %[[HB]], %[[HC]]
func.func private @unary(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @binary(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @fan_out(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = func.call @unary(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @unary(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = func.call @binary(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A host value feeding delegates on two devices gets one copy per device.
// CHECK-LABEL: func.func @fan_out_two_devices
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = etcopy.h2d %[[X]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: call @on0(%[[D0]])
// CHECK: %[[D1:.*]] = etcopy.h2d %[[X]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK: call @on1(%[[D1]])
// CHECK: call @on0(%[[D0]])
func.func private @on0(tensor<4xf32>) attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @on1(tensor<4xf32>) attributes {etcopy.device = #etcopy.device<cuda:1>}
func.func @fan_out_two_devices(%x: tensor<4xf32>) {
  func.call @on0(%x) : (tensor<4xf32>) -> ()
  func.call @on1(%x) : (tensor<4xf32>) -> ()
  func.call @on0(%x) : (tensor<4xf32>) -> ()
  return
}

// -----

// Cross-device: produced on cuda:0, consumed on cuda:1 and on the host. The
// move goes through the host (d2h then h2d), and the host copy is shared
// with the host user. Never folded.
// CHECK-LABEL: func.func @cross_device
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xi32>)
// CHECK: %[[D0:.*]] = etcopy.h2d %[[X]] : tensor<2x3xi32> -> tensor<2x3xi32, #etcopy.device<cuda:0>>
// CHECK: %[[A:.*]] = call @producer(%[[D0]]) : (tensor<2x3xi32, #etcopy.device<cuda:0>>) -> tensor<2x3xi32, #etcopy.device<cuda:0>>
// CHECK: %[[H:.*]] = etcopy.d2h %[[A]] : tensor<2x3xi32, #etcopy.device<cuda:0>> -> tensor<2x3xi32>
// CHECK: %[[D1:.*]] = etcopy.h2d %[[H]] : tensor<2x3xi32> -> tensor<2x3xi32, #etcopy.device<cuda:1>>
// CHECK: %[[B:.*]] = call @consumer(%[[D1]]) : (tensor<2x3xi32, #etcopy.device<cuda:1>>) -> tensor<2x3xi32, #etcopy.device<cuda:1>>
// CHECK: call @log(%[[H]])
// CHECK: %[[HB:.*]] = etcopy.d2h %[[B]] : tensor<2x3xi32, #etcopy.device<cuda:1>> -> tensor<2x3xi32>
// CHECK: return %[[HB]]
func.func private @producer(tensor<2x3xi32>) -> tensor<2x3xi32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @consumer(tensor<2x3xi32>) -> tensor<2x3xi32>
    attributes {etcopy.device = #etcopy.device<cuda:1>}
func.func private @log(tensor<2x3xi32>)
func.func @cross_device(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %a = func.call @producer(%x) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %b = func.call @consumer(%a) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  func.call @log(%a) : (tensor<2x3xi32>) -> ()
  return %b : tensor<2x3xi32>
}

// -----

// An unused result gets no d2h; host-side delegates (no attribute, or
// #etcopy.device<cpu>) and non-tensor operands are left alone.
// CHECK-LABEL: func.func private @host_fn(tensor<4xf32>) -> tensor<4xf32>{{$}}
// CHECK-LABEL: func.func private @cpu_fn(tensor<4xf32>) -> tensor<4xf32> attributes {etcopy.device = #etcopy.device<cpu>}
// CHECK-LABEL: func.func @unused_and_host
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: i32)
// CHECK: %[[A:.*]] = call @host_fn(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[B:.*]] = call @cpu_fn(%[[A]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[D:.*]] = etcopy.h2d %[[B]]
// CHECK: %{{.*}}:2 = call @pair(%[[D]], %[[N]]) : (tensor<4xf32, #etcopy.device<cuda:2>>, i32) -> (tensor<4xf32, #etcopy.device<cuda:2>>, i32)
// CHECK: return
func.func private @host_fn(tensor<4xf32>) -> tensor<4xf32>
func.func private @cpu_fn(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cpu>}
func.func private @pair(tensor<4xf32>, i32) -> (tensor<4xf32>, i32)
    attributes {etcopy.device = #etcopy.device<cuda:2>}
func.func @unused_and_host(%x: tensor<4xf32>, %n: i32) -> i32 {
  %a = func.call @host_fn(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @cpu_fn(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c:2 = func.call @pair(%b, %n) : (tensor<4xf32>, i32) -> (tensor<4xf32>, i32)
  return %c#1 : i32
}

// -----

// A delegate definition: the device propagates into its body (block
// arguments, results, tensor constants) and into the functions it calls,
// which become device code of the same device.
// CHECK-LABEL: func.func private @scaled
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32, #etcopy.device<cuda:1>>, %[[S:.*]]: f32) -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK: %[[CST:.*]] = arith.constant dense<2.000000e+00> : tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK: %[[M:.*]] = arith.mulf %[[A]], %[[CST]] : tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK: %[[K:.*]] = call @kernel(%[[M]]) : (tensor<4xf32, #etcopy.device<cuda:1>>) -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK: return %[[K]] : tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK-LABEL: func.func private @kernel(tensor<4xf32, #etcopy.device<cuda:1>>) -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK-LABEL: func.func @call_definition
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[F:.*]]: f32)
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK: %[[R:.*]] = call @scaled(%[[D]], %[[F]])
// CHECK: %[[H:.*]] = etcopy.d2h %[[R]] : tensor<4xf32, #etcopy.device<cuda:1>> -> tensor<4xf32>
// CHECK: return %[[H]]
func.func private @scaled(%a: tensor<4xf32>, %s: f32) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:1>} {
  %c = arith.constant dense<2.0> : tensor<4xf32>
  %m = arith.mulf %a, %c : tensor<4xf32>
  %k = func.call @kernel(%m) : (tensor<4xf32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}
func.func private @kernel(tensor<4xf32>) -> tensor<4xf32>
func.func @call_definition(%x: tensor<4xf32>, %f: f32) -> tensor<4xf32> {
  %r = func.call @scaled(%x, %f) : (tensor<4xf32>, f32) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A delegate declared with device types already (a second run, or
// hand-written) is consistent; a value already on its device is not copied.
// CHECK-LABEL: func.func @already_placed
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32>
// CHECK: %[[R:.*]] = call @placed(%[[X]])
// CHECK: %[[H:.*]] = etcopy.d2h %[[R]]
// CHECK: return %[[H]] : tensor<4xf32>
func.func private @placed(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @already_placed(%x: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32> {
  %r = func.call @placed(%x) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A d2h goes just before the first host use, after unrelated host work,
// so the host does not wait for the device before it must.
// CHECK-LABEL: func.func @late_d2h
// CHECK: etcopy.h2d
// CHECK: %[[R:.*]] = call @work(
// CHECK: call @host_work()
// CHECK: %[[H:.*]] = etcopy.d2h %[[R]]
// CHECK: call @consume(%[[H]])
func.func private @work(tensor<16xf32>) -> tensor<16xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @host_work()
func.func private @consume(tensor<16xf32>)
func.func @late_d2h(%x: tensor<16xf32>) {
  %r = func.call @work(%x) : (tensor<16xf32>) -> tensor<16xf32>
  func.call @host_work() : () -> ()
  func.call @consume(%r) : (tensor<16xf32>) -> ()
  return
}

// -----

// Reading only the shape of a device tensor (tensor.dim) needs no copy.
// CHECK-LABEL: func.func @shape_only
// CHECK: %[[DX:.*]] = etcopy.h2d
// CHECK: %[[R:.*]] = call @dynamic(%[[DX]])
// CHECK: %[[D:.*]] = tensor.dim %[[R]], %{{.*}} : tensor<?xf32, #etcopy.device<cuda:0>>
// CHECK: return %[[D]]
func.func private @dynamic(tensor<?xf32>) -> tensor<?xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func @shape_only(%x: tensor<?xf32>) -> index {
  %c0 = arith.constant 0 : index
  %r = func.call @dynamic(%x) : (tensor<?xf32>) -> tensor<?xf32>
  %d = tensor.dim %r, %c0 : tensor<?xf32>
  return %d : index
}
