// RUN: etcopy-opt %s --etcopy-propagate-device --remarks-filter=etcopy-propagate-device -o /dev/null 2>&1 | FileCheck %s

// How remarks name values (getRemarkValueName, shared by every pass): by
// position, after the name of a NameLoc where the value has one; the
// arguments of a function's other blocks name their block.

!h = tensor<4xf32>
func.func private @encode(!h) -> !h attributes {etcopy.device = #etcopy.device<cuda:0>}

func.func @named(%x: !h loc("weights")) -> !h {
  // CHECK-DAG: remarks-value-names.mlir:[[@LINE+1]]:8: remark: [Passed] CopyInserted | {{.*}} | Function=named | {{.*}}, Value="'weights', argument #0 of @named"
  %a = func.call @encode(%x) : (!h) -> !h
  // CHECK-DAG: remarks-value-names.mlir:[[@LINE+1]]:3: remark: [Passed] CopyInserted | {{.*}} | Function=named | {{.*}}, Value="result #0 of 'func.call'"
  return %a : !h
}

func.func @blocks(%x: !h, %c: i1) -> !h {
  %a = func.call @encode(%x) : (!h) -> !h
  cf.cond_br %c, ^bb1(%a : !h), ^bb1(%x : !h)
// CHECK-DAG: remarks-value-names.mlir:[[@LINE+1]]:6: remark: [Analysis] Placement | {{.*}} | Function=blocks | {{.*}}, Remark="argument #0 of block #1 of @blocks placed on cuda:0"
^bb1(%v: !h):
  %b = func.call @encode(%v) : (!h) -> !h
  return %b : !h
}
