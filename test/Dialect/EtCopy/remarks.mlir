// RUN: etcopy-opt %s --etcopy-propagate-device --etcopy-optimize-transfers --remarks-filter=etcopy -o /dev/null 2> %t.remarks
// RUN: FileCheck %s --check-prefix=PROPAGATE --implicit-check-not=etcopy:etcopy-propagate-device < %t.remarks
// RUN: FileCheck %s --check-prefix=OPTIMIZE --implicit-check-not=etcopy:etcopy-optimize-transfers < %t.remarks

// Only the missed remarks (what was kept, and why).
// RUN: etcopy-opt %s --etcopy-propagate-device --etcopy-optimize-transfers --remarks-filter-missed=etcopy -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSED --implicit-check-not=remark:

// As YAML, into a file; nothing on the terminal. (From the test's folder,
// so that YAML does not wrap the long path.)
// RUN: cd %S && etcopy-opt remarks.mlir --etcopy-propagate-device --etcopy-optimize-transfers --remarks-filter=etcopy --remark-format=yaml --remarks-output-file=%t.yaml -o /dev/null 2>&1 | count 0
// RUN: FileCheck %s --check-prefix=YAML < %t.yaml

// No remarks without a filter that selects the etcopy category.
// RUN: etcopy-opt %s --etcopy-propagate-device --etcopy-optimize-transfers -o /dev/null 2>&1 | count 0
// RUN: etcopy-opt %s --etcopy-propagate-device --etcopy-optimize-transfers --remarks-filter=canonicalize -o /dev/null 2>&1 | count 0

// Every decision of etcopy-propagate-device and etcopy-optimize-transfers
// is a remark in the `etcopy` category, the pass's flag as subcategory:
// copies inserted, placements chosen, method arguments and results left on
// a device (or not, and why), round trips elided, duplicates merged, dead
// copies erased, copies hoisted, sunk or carried through loops, and every
// copy kept with the reason. A summary per pass carries the counts of its
// statistics.

!h = tensor<4xf32>
!d0 = tensor<4xf32, #etcopy.device<cuda:0>>
!d1 = tensor<4xf32, #etcopy.device<cuda:1>>
func.func private @encode(!h) -> !h attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @kernel(!d0) -> !d0 attributes {etcopy.device = #etcopy.device<cuda:0>}
func.func private @decode(!d1) -> !d1 attributes {etcopy.device = #etcopy.device<cuda:1>}
func.func private @host(!h) -> !h

// PROPAGATE-DAG: remarks.mlir:[[@LINE+6]]:1: remark: [Passed] ResultOnDevice | Category:etcopy:etcopy-propagate-device | Function=skip | Remark="result #0 of method @skip is returned on cuda:0 (skip-d2h-for-method-outputs): no etcopy.d2h"
// PROPAGATE-DAG: remarks.mlir:[[@LINE+5]]:17: remark: [Passed] ArgumentOnDevice | Category:etcopy:etcopy-propagate-device | Function=skip | Remark="argument #0 of method @skip is taken on cuda:0 (skip-h2d-for-method-inputs): no etcopy.h2d"
// PROPAGATE-DAG: remarks.mlir:[[@LINE+4]]:25: remark: [Missed] ArgumentKeptOnHost | Category:etcopy:etcopy-propagate-device | Function=skip | Reason="it is also used on the host (by 'func.call')", Remark="argument #1 of method @skip stays on the host despite skip-h2d-for-method-inputs"
// MISSED: remarks.mlir:[[@LINE+3]]:25: remark: [Missed] ArgumentKeptOnHost
// YAML:      --- !Missed
// YAML-NEXT: Pass: 'etcopy:etcopy-propagate-device'
func.func @skip(%x: !h, %y: !h) -> !h
    attributes {etcopy.propagate = {skip_h2d_for_method_inputs = true, skip_d2h_for_method_outputs = true}} {
// YAML-NEXT: Name: ArgumentKeptOnHost
// YAML-NEXT: DebugLoc: { File: remarks.mlir, Line: [[@LINE-3]], Column: 25 }
// YAML-NEXT: Function: skip
// YAML-NEXT: Args:
// YAML-NEXT:   - Remark: 'argument #1 of method @skip stays on the host despite skip-h2d-for-method-inputs'
// YAML-NEXT:   - Reason: 'it is also used on the host (by ''func.call'')'
// YAML-NEXT: ...
  %a = func.call @encode(%x) : (!h) -> !h
  // PROPAGATE-DAG: remarks.mlir:[[@LINE+3]]:8: remark: [Passed] CopyInserted | Category:etcopy:etcopy-propagate-device | Function=skip | Remark="etcopy.h2d from the host to cuda:0 for 1 use(s), the first by 'func.call'"
  // MISSED: remarks.mlir:[[@LINE+2]]:8: remark: [Missed] CopyKept
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+1]]:8: remark: [Missed] CopyKept | Category:etcopy:etcopy-optimize-transfers | Function=skip | Reason="its users need the value on cuda:0, where nothing else holds it", Remark="etcopy.h2d from the host to cuda:0"
  %b = func.call @encode(%y) : (!h) -> !h
  %c = func.call @host(%y) : (!h) -> !h
  return %a : !h
}

// A loop's state is kept on the device that updates it.
func.func @state(%s0: !h, %n: index) -> !h {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // PROPAGATE-DAG: remarks.mlir:[[@LINE+4]]:50: remark: [Analysis] Placement | Category:etcopy:etcopy-propagate-device | Function=state | Reason="moving there needs the fewest copies (weighted by loop depth)", Remark="argument #1 of 'scf.for' placed on cuda:0", Values=2
  // PROPAGATE-DAG: remarks.mlir:[[@LINE+3]]:8: remark: [Passed] CopyInserted | Category:etcopy:etcopy-propagate-device | Function=state | Remark="etcopy.h2d from the host to cuda:0 for 1 use(s), the first by 'scf.for'"
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+2]]:8: remark: [Missed] CopyKept | Category:etcopy:etcopy-optimize-transfers | Function=state | Reason="its users need the value on cuda:0, where nothing else holds it", Remark="etcopy.h2d from the host to cuda:0"
  // MISSED: remarks.mlir:[[@LINE+1]]:8: remark: [Missed] CopyKept
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %s0) -> (!h) {
    %y = func.call @encode(%s) : (!h) -> !h
    scf.yield %y : !h
  }
  // PROPAGATE-DAG: remarks.mlir:[[@LINE+3]]:3: remark: [Passed] CopyInserted | Category:etcopy:etcopy-propagate-device | Function=state | Remark="etcopy.d2h from cuda:0 to the host for 1 use(s), the first by 'func.return'"
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+2]]:3: remark: [Missed] CopyKept | Category:etcopy:etcopy-optimize-transfers | Function=state | Reason="its users need the value on the host, where nothing else holds it", Remark="etcopy.d2h from cuda:0 to the host"
  // MISSED: remarks.mlir:[[@LINE+1]]:3: remark: [Missed] CopyKept
  return %r : !h
}

func.func @round_trip(%d: !d0) -> !d0 {
  %h = etcopy.d2h %d : !d0 -> !h
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+1]]:11: remark: [Passed] RoundTripElided | Category:etcopy:etcopy-optimize-transfers | Function=round_trip | CopiesErased=2, Remark="etcopy.h2d(etcopy.d2h(x)) -> x: x is already on cuda:0"
  %back = etcopy.h2d %h : !h -> !d0
  return %back : !d0
}

func.func @dead(%x: !h) -> !h {
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+1]]:8: remark: [Passed] DeadCopyErased | Category:etcopy:etcopy-optimize-transfers | Function=dead | Remark="etcopy.h2d from the host to cuda:0: nothing uses its result"
  %d = etcopy.h2d %x : !h -> !d0
  return %x : !h
}

func.func @duplicates(%x: !h) -> (!d0, !d0) {
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+3]]:8: remark: [Passed] DuplicatesMerged | Category:etcopy:etcopy-optimize-transfers | Function=duplicates | Remark="2 copies etcopy.h2d from the host to cuda:0 of one value merged into one"
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+2]]:8: remark: [Missed] CopyKept | Category:etcopy:etcopy-optimize-transfers | Function=duplicates
  // MISSED: remarks.mlir:[[@LINE+1]]:8: remark: [Missed] CopyKept
  %a = etcopy.h2d %x : !h -> !d0
  %b = etcopy.h2d %x : !h -> !d0
  %ea = func.call @kernel(%a) : (!d0) -> !d0
  %eb = func.call @kernel(%b) : (!d0) -> !d0
  return %ea, %eb : !d0, !d0
}

func.func @hoist(%x: !h, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // OPTIMIZE-DAG: remarks.mlir:[[@LINE+3]]:10: remark: [Passed] CopyHoisted | Category:etcopy:etcopy-optimize-transfers | Function=hoist | Remark="etcopy.h2d from the host to cuda:0 moved out of 1 loop(s): its source is invariant in them"
    // OPTIMIZE-DAG: remarks.mlir:[[@LINE+2]]:10: remark: [Missed] CopyKept | Category:etcopy:etcopy-optimize-transfers | Function=hoist
    // MISSED: remarks.mlir:[[@LINE+1]]:10: remark: [Missed] CopyKept
    %w = etcopy.h2d %x : !h -> !d0
    %e = func.call @kernel(%w) : (!d0) -> !d0
  }
  return
}

func.func @sink(%d: !d0, %x: !h) -> !h {
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+3]]:8: remark: [Passed] CopySunk | Category:etcopy:etcopy-optimize-transfers | Function=sink | Remark="etcopy.d2h from cuda:0 to the host moved to just before 'func.call', the first point serving all its users"
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+2]]:8: remark: [Missed] CopyKept | Category:etcopy:etcopy-optimize-transfers | Function=sink
  // MISSED: remarks.mlir:[[@LINE+1]]:8: remark: [Missed] CopyKept
  %h = etcopy.d2h %d : !d0 -> !h
  %a = func.call @host(%x) : (!h) -> !h
  %b = func.call @host(%h) : (!h) -> !h
  return %b : !h
}

// cuda:0 -> host -> cuda:1 is a transfer: both copies stay.
func.func @transfer(%d: !d0) -> !d1 {
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+2]]:8: remark: [Missed] CopyKept | Category:etcopy:etcopy-optimize-transfers | Function=transfer | Reason="it takes a value from cuda:0 through the host to another device: a transfer between devices is never elided", Remark="etcopy.d2h from cuda:0 to the host"
  // MISSED: remarks.mlir:[[@LINE+1]]:8: remark: [Missed] CopyKept
  %h = etcopy.d2h %d : !d0 -> !h
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+2]]:8: remark: [Missed] CopyKept | Category:etcopy:etcopy-optimize-transfers | Function=transfer | Reason="it moves a value from cuda:0 on through the host: a transfer between devices is never elided", Remark="etcopy.h2d from the host to cuda:1"
  // MISSED: remarks.mlir:[[@LINE+1]]:8: remark: [Missed] CopyKept
  %e = etcopy.h2d %h : !h -> !d1
  %r = func.call @decode(%e) : (!d1) -> !d1
  return %r : !d1
}

// Copies of a loop's state that every iteration makes: the state is
// carried on the device instead (placement kept it on the host, as its
// type says: the copies were already there).
func.func @carry(%s0: !h, %n: index) -> !h {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // PROPAGATE-DAG: remarks.mlir:[[@LINE+4]]:50: remark: [Analysis] Placement | Category:etcopy:etcopy-propagate-device | Function=carry | Reason="staying where its type says needs the fewest copies (weighted by loop depth)", Remark="argument #1 of 'scf.for' placed on the host", Values=2
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+3]]:8: remark: [Passed] LoopStateCarried | Category:etcopy:etcopy-optimize-transfers | Function=carry | Remark="iteration argument #0 of 'scf.for' carried on cuda:0: 2 copies per iteration become one before the loop and one after it"
  // OPTIMIZE-DAG: remarks.mlir:[[@LINE+2]]:8: remark: [Missed] CopyKept | Category:etcopy:etcopy-optimize-transfers | Function=carry | Reason="its users need the value on the host, where nothing else holds it", Remark="etcopy.d2h from cuda:0 to the host"
  // MISSED-DAG: remarks.mlir:[[@LINE+1]]:8: remark: [Missed] CopyKept
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %s0) -> (!h) {
    // OPTIMIZE-DAG: remarks.mlir:[[@LINE+2]]:11: remark: [Missed] CopyKept | Category:etcopy:etcopy-optimize-transfers | Function=carry | Reason="its users need the value on cuda:0, where nothing else holds it", Remark="etcopy.h2d from the host to cuda:0"
    // MISSED-DAG: remarks.mlir:[[@LINE+1]]:11: remark: [Missed] CopyKept
    %ds = etcopy.h2d %s : !h -> !d0
    %y = func.call @kernel(%ds) : (!d0) -> !d0
    %h = etcopy.d2h %y : !d0 -> !h
    scf.yield %h : !h
  }
  return %r : !h
}

// The summaries come last, at the location of the module's first function
// with a body (the module's own is line 0), naming no function.
// PROPAGATE: remarks.mlir:[[# @LINE - 118]]:1: remark: [Analysis] Summary | Category:etcopy:etcopy-propagate-device | arguments-on-device=1, copies-avoided={{[0-9]+}}, d2h-inserted=1, h2d-inserted=2, results-on-device=1
// OPTIMIZE: remarks.mlir:[[# @LINE - 119]]:1: remark: [Analysis] Summary | Category:etcopy:etcopy-optimize-transfers | copies-hoisted=3, copies-sunk=1, dead-copies-elided=1, duplicate-copies-elided=1, moves-between-devices-direct=0, round-trip-copies-elided=2
// YAML:      Name: Summary
// YAML-NEXT: DebugLoc: { File: remarks.mlir, Line: [[# @LINE - 121]], Column: 1 }
// YAML-NEXT: Function: '<unknown function>'
// YAML-NEXT: Args:
// YAML-NEXT:   - h2d-inserted: '2'
// YAML-NEXT:   - d2h-inserted: '1'
// YAML-NEXT:   - copies-avoided: '{{[0-9]+}}'
// YAML-NEXT:   - arguments-on-device: '1'
// YAML-NEXT:   - results-on-device: '1'
// YAML-NEXT: ...
// YAML:      --- !Analysis
// YAML-NEXT: Pass: 'etcopy:etcopy-optimize-transfers'
// YAML-NEXT: Name: Summary
// YAML-NEXT: DebugLoc: { File: remarks.mlir, Line: [[# @LINE - 133]], Column: 1 }
// YAML-NEXT: Function: '<unknown function>'
// YAML-NEXT: Args:
// YAML-NEXT:   - round-trip-copies-elided: '2'
// YAML-NEXT:   - duplicate-copies-elided: '1'
// YAML-NEXT:   - dead-copies-elided: '1'
// YAML-NEXT:   - copies-hoisted: '3'
// YAML-NEXT:   - copies-sunk: '1'
// YAML-NEXT:   - uploads-grouped: '0'
// YAML-NEXT:   - moves-between-devices-direct: '0'
// YAML-NEXT: ...
