// RUN: etcopy-opt %s -etcopy-propagate-device -verify-diagnostics --remarks-filter-missed=etcopy | FileCheck %s --check-prefixes=CHECK,DEFAULT
// RUN: etcopy-opt %s -etcopy-propagate-device=skip-h2d-for-method-inputs -verify-diagnostics --remarks-filter-missed=etcopy | FileCheck %s --check-prefixes=CHECK,SKIPH2D
// RUN: etcopy-opt %s -etcopy-propagate-device=skip-d2h-for-method-outputs -verify-diagnostics --remarks-filter-missed=etcopy | FileCheck %s --check-prefixes=CHECK,SKIPD2H
// RUN: etcopy-opt %s -etcopy-propagate-device="skip-h2d-for-method-inputs skip-d2h-for-method-outputs" -verify-diagnostics --remarks-filter-missed=etcopy | FileCheck %s --check-prefixes=CHECK,BOTH

// ExecuTorch's flags, as pass options and per method. With
// skip-h2d-for-method-inputs, a method argument whose users all need it on
// one device becomes device-typed, however many users it has (ExecuTorch
// raises an error when there are several); otherwise a remark says why it
// stays on the host. With skip-d2h-for-method-outputs, a result produced
// on a device stays there; host users inside the method still get a d2h.

func.func private @f(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @g(tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.device = #etcopy.device<cuda:1>}
func.func private @host(tensor<4xf32>) -> tensor<4xf32>

// An argument with two users on cuda:0; a result also used on the host.
// CHECK-LABEL: func.func @two_users
// DEFAULT-SAME: (%[[X:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// SKIPH2D-SAME: (%[[X:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>) -> (tensor<4xf32>, tensor<4xf32>)
// SKIPD2H-SAME: (%[[X:.*]]: tensor<4xf32>) -> (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32>)
// BOTH-SAME: (%[[X:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>) -> (tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32>)
// DEFAULT: %[[D:.*]] = etcopy.h2d %[[X]]
// DEFAULT: %[[A:.*]] = call @f(%[[D]])
// DEFAULT: call @f(%[[D]])
// SKIPH2D-NOT: etcopy.h2d
// SKIPH2D: %[[A:.*]] = call @f(%[[X]])
// SKIPH2D: call @f(%[[X]])
// SKIPD2H: %[[D:.*]] = etcopy.h2d %[[X]]
// SKIPD2H: %[[A:.*]] = call @f(%[[D]])
// SKIPD2H: call @f(%[[D]])
// BOTH-NOT: etcopy.h2d
// BOTH: %[[A:.*]] = call @f(%[[X]])
// BOTH: call @f(%[[X]])
// CHECK: %[[HA:.*]] = etcopy.d2h %[[A]]
// CHECK: %[[B:.*]] = call @host(%[[HA]])
// DEFAULT: return %[[HA]], %[[B]] : tensor<4xf32>, tensor<4xf32>
// SKIPH2D: return %[[HA]], %[[B]] : tensor<4xf32>, tensor<4xf32>
// SKIPD2H: return %[[A]], %[[B]] : tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32>
// BOTH: return %[[A]], %[[B]] : tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32>
func.func @two_users(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %unused = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @host(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// An argument also used on the host keeps its copy, with a missed remark
// (--remarks-filter-missed=etcopy); never an error. (These methods turn skip-h2d on themselves, so that the remarks
// come in every run.)
// CHECK-LABEL: func.func @also_on_host
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK: call @f(%[[D]])
// CHECK: call @host(%[[X]])
// expected-remark @+1 {{[Missed] ArgumentKeptOnHost | Category:etcopy:etcopy-propagate-device | Function=also_on_host | Reason="it is also used on the host (by 'func.call')", Remark="argument #0 of method @also_on_host stays on the host despite skip-h2d-for-method-inputs"}}
func.func @also_on_host(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.propagate = {skip_h2d_for_method_inputs = true}} {
  %a = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @host(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// An argument used on two devices keeps its copies, with a remark; the
// other argument, used on cuda:1 only, is device-typed.
// CHECK-LABEL: func.func @two_devices
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32, #etcopy.device<cuda:1>>)
// CHECK: %[[D0:.*]] = etcopy.h2d %[[X]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: call @f(%[[D0]])
// CHECK: %[[D1:.*]] = etcopy.h2d %[[X]] : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
// CHECK: call @g(%[[D1]])
// CHECK: call @g(%[[Y]])
// expected-remark @+1 {{[Missed] ArgumentKeptOnHost | Category:etcopy:etcopy-propagate-device | Function=two_devices | Reason="it is used on cuda:0 and on cuda:1", Remark="argument #0 of method @two_devices stays on the host despite skip-h2d-for-method-inputs"}}
func.func @two_devices(%x: tensor<4xf32>, %y: tensor<4xf32>)
    attributes {etcopy.propagate = {skip_h2d_for_method_inputs = true}} {
  %a = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = func.call @g(%y) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// A result produced on the host stays a host result under skip-d2h.
// CHECK-LABEL: func.func @host_result
// CHECK-SAME: -> tensor<4xf32> {
// CHECK-NEXT: call @host
func.func @host_result(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = func.call @host(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// The per-method attribute overrides the options, both ways.
// CHECK-LABEL: func.func @forced_on
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: %[[A:.*]] = call @f(%[[X]])
// CHECK-NEXT: return %[[A]]
func.func @forced_on(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.propagate = {skip_h2d_for_method_inputs = true,
                                    skip_d2h_for_method_outputs = true}} {
  %a = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// CHECK-LABEL: func.func @forced_off
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK: %[[A:.*]] = call @f(%[[D]])
// CHECK: %[[H:.*]] = etcopy.d2h %[[A]]
// CHECK: return %[[H]]
func.func @forced_off(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.propagate = {skip_h2d_for_method_inputs = false,
                                    skip_d2h_for_method_outputs = false}} {
  %a = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// One key set, the other from the options.
// CHECK-LABEL: func.func @only_inputs
// DEFAULT-SAME: (%{{.*}}: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32> attributes
// SKIPH2D-SAME: (%{{.*}}: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32> attributes
// SKIPD2H-SAME: (%{{.*}}: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> attributes
// BOTH-SAME: (%{{.*}}: tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>> attributes
func.func @only_inputs(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {etcopy.propagate = {skip_h2d_for_method_inputs = true}} {
  %a = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// A method called from another method: its caller adapts to its
// signature. Under skip-h2d the caller copies to the callee's device;
// under skip-d2h the caller copies the device result back for the host.
// CHECK-LABEL: func.func @calls_method
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// DEFAULT: %[[R:.*]] = call @forced_off(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// DEFAULT: call @host(%[[R]])
// SKIPH2D: %[[R:.*]] = call @forced_off(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// SKIPH2D: call @host(%[[R]])
// SKIPD2H: %[[R:.*]] = call @forced_off(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// SKIPD2H: call @host(%[[R]])
// BOTH: %[[R:.*]] = call @forced_off(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// BOTH: call @host(%[[R]])
// CHECK: %[[D:.*]] = etcopy.h2d %[[X]]
// CHECK: %[[F:.*]] = call @forced_on(%[[D]]) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
// CHECK: %[[H:.*]] = etcopy.d2h %[[F]]
// CHECK: call @host(%[[H]])
func.func @calls_method(%x: tensor<4xf32>)
    attributes {etcopy.propagate = {skip_h2d_for_method_inputs = false}} {
  %r = func.call @forced_off(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %u = func.call @host(%r) : (tensor<4xf32>) -> tensor<4xf32>
  %f = func.call @forced_on(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %v = func.call @host(%f) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
