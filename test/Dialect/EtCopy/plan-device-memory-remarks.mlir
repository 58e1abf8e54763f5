// RUN: etcopy-opt %s --etcopy-plan-device-memory --remarks-filter=etcopy 2>&1 >/dev/null | FileCheck %s --implicit-check-not=remark:
// RUN: etcopy-opt %s --etcopy-plan-device-memory 2>&1 >/dev/null | count 0

// The remarks of etcopy-plan-device-memory, one of each kind: where each
// planned buffer went, why a buffer was left alone, the arenas of each
// planned function, and the counts of the statistics for the module.

!d = memref<256xf32, #etcopy.device<cuda:0>>
func.func private @use(!d) attributes {etcopy.device = #etcopy.device<cuda:0>}
// CHECK: plan-device-memory-remarks.mlir:[[@LINE+12]]:8: remark: [Missed] BufferNotPlanned | Category:etcopy:etcopy-plan-device-memory | Function=step | Reason="its size is dynamic", Remark="not planned"
// CHECK: plan-device-memory-remarks.mlir:[[@LINE+6]]:8: remark: [Passed] BufferPlanned | Category:etcopy:etcopy-plan-device-memory | Function=step | Arena=cuda:0, Offset=0, Size=1024
// CHECK: plan-device-memory-remarks.mlir:[[@LINE+7]]:8: remark: [Passed] BufferPlanned | Category:etcopy:etcopy-plan-device-memory | Function=step | Arena=cuda:0, Offset=1024, Size=1024
// CHECK: plan-device-memory-remarks.mlir:[[@LINE+3]]:1: remark: [Passed] ArenasPlanned | Category:etcopy:etcopy-plan-device-memory | Function=step | Remark="planned cuda:0 arena: 2 buffer(s), 2048 bytes requested, 2048 bytes (peak live 2048)"
// CHECK: plan-device-memory-remarks.mlir:[[@LINE+2]]:1: remark: [Analysis] Summary | Category:etcopy:etcopy-plan-device-memory | arena-bytes=2048, arenas=1, buffers-left-dynamic=1, buffers-not-planned=0, buffers-planned=2, bytes-requested=2048, call-sites-updated=0, peak-live-bytes=2048
// Both buffers are live across the second call: they cannot share bytes.
func.func @step(%n: index) {
  %a = memref.alloc() : !d
  func.call @use(%a) : (!d) -> ()
  %b = memref.alloc() : !d
  func.call @use(%b) : (!d) -> ()
  func.call @use(%a) : (!d) -> ()
  %c = memref.alloc(%n) : memref<?xf32, #etcopy.device<cuda:0>>
  memref.dealloc %c : memref<?xf32, #etcopy.device<cuda:0>>
  memref.dealloc %b : !d
  memref.dealloc %a : !d
  return
}
