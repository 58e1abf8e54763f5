// RUN: etcopy-opt %s --convert-etcopy-to-gpu --remarks-filter=convert-etcopy-to-gpu -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=remark:
// RUN: etcopy-opt %s --convert-etcopy-to-gpu --remarks-filter=convert-gpu-to-cuda-runtime -o /dev/null 2>&1 | count 0
// RUN: cd %S && etcopy-opt remarks.mlir --convert-etcopy-to-gpu --remarks-filter=convert-etcopy-to-gpu --remark-format=yaml --remarks-output-file=%t.yaml -o /dev/null
// RUN: FileCheck %s --check-prefix=YAML < %t.yaml

// Each host wait of convert-etcopy-to-gpu is a HostWait remark at the op it
// precedes, with what made the host wait; host work that touches no memory
// of a copy in flight (the store into a fresh buffer) makes none.

// CHECK: remarks.mlir:[[# @LINE + 17]]:8: remark: [Passed] HostWait | Category:convert-etcopy-to-gpu | Function=waits | Reason="'memref.load' reads memref<4xf32>, which may be the host side of a copy in flight", Remark="the host waits for the device work in flight"
// CHECK: remarks.mlir:[[# @LINE + 18]]:3: remark: [Passed] HostWait | Category:convert-etcopy-to-gpu | Function=waits | Reason="'func.call' has unknown memory effects", Remark="the host waits for the device work in flight"
// CHECK: remarks.mlir:[[# @LINE + 19]]:3: remark: [Passed] HostWait | Category:convert-etcopy-to-gpu | Function=waits | Reason="data leaves the block at 'func.return'", Remark="the host waits for the device work in flight"
// YAML:      --- !Passed
// YAML-NEXT: Pass: convert-etcopy-to-gpu
// YAML-NEXT: Name: HostWait
// YAML-NEXT: DebugLoc: { File: remarks.mlir, Line: [[# @LINE + 11]], Column: 8 }
// YAML-NEXT: Function: waits
// YAML-NEXT: Args:
// YAML-NEXT:   - Remark: the host waits for the device work in flight
// YAML-NEXT:   - Reason: '''memref.load'' reads memref<4xf32>, which may be the host side of a copy in flight'
func.func private @use(memref<4xf32, #etcopy.device<cuda:0>>)
func.func @waits(%d: memref<4xf32, #etcopy.device<cuda:0>>, %h: memref<4xf32>, %f: f32) -> f32 {
  %c0 = arith.constant 0 : index
  etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  memref.store %f, %tmp[%c0] : memref<4xf32>
  %v = memref.load %h[%c0] : memref<4xf32>
  etcopy.h2d %tmp, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  func.call @use(%d) : (memref<4xf32, #etcopy.device<cuda:0>>) -> ()
  etcopy.h2d %tmp, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  return %v : f32
}
