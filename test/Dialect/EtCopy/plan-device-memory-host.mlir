// RUN: etcopy-opt %s --etcopy-plan-device-memory=plan-host | FileCheck %s
// RUN: etcopy-opt %s --etcopy-plan-device-memory | FileCheck %s --check-prefix=DEFAULT

// With plan-host, host buffers get a cpu arena of their own (first: cpu
// sorts before cuda), which has no memory space; a buffer spelled
// #etcopy.device<cpu> is a memory_space_cast of its view. Host and device
// buffers never share an arena, even with disjoint lifetimes.
// CHECK-LABEL: func.func @host
// CHECK-SAME: (%[[X:.*]]: memref<64xf32>)
// CHECK-SAME: etcopy.arenas = [{alignment = 256 : i64, device = #etcopy.device<cpu>, size = 512 : i64}, {alignment = 256 : i64, device = #etcopy.device<cuda:0>, size = 256 : i64}]
// CHECK-NEXT: %[[HOST:.*]] = memref.alloc() {alignment = 256 : i64} : memref<512xi8>
// CHECK-NEXT: %[[DEVICE:.*]] = memref.alloc() {alignment = 256 : i64} : memref<256xi8, #etcopy.device<cuda:0>>
// CHECK-DAG: %[[OFF_D:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[OFF_CPU:.*]] = arith.constant 256 : index
// CHECK-NEXT: %[[H:.*]] = memref.view %[[HOST]][%[[OFF_D]]][] : memref<512xi8> to memref<64xf32>
// CHECK-NEXT: %[[CPU_VIEW:.*]] = memref.view %[[HOST]][%[[OFF_CPU]]][] : memref<512xi8> to memref<64xf32>
// CHECK-NEXT: %[[CPU:.*]] = memref.memory_space_cast %[[CPU_VIEW]] : memref<64xf32> to memref<64xf32, #etcopy.device<cpu>>
// CHECK-NEXT: %[[D:.*]] = memref.view %[[DEVICE]][%[[OFF_D]]][] : memref<256xi8, #etcopy.device<cuda:0>> to memref<64xf32, #etcopy.device<cuda:0>>
// CHECK-NEXT: etcopy.h2d %[[X]], %[[D]]
// CHECK-NEXT: etcopy.d2h %[[D]], %[[H]]
// CHECK-NEXT: memref.copy %[[H]], %[[CPU]]
// CHECK-NEXT: memref.dealloc %[[HOST]] : memref<512xi8>
// CHECK-NEXT: memref.dealloc %[[DEVICE]] : memref<256xi8, #etcopy.device<cuda:0>>
// CHECK-NEXT: return

// Without plan-host only the device buffer is planned.
// DEFAULT-LABEL: func.func @host
// DEFAULT-SAME: etcopy.arenas = [{alignment = 256 : i64, device = #etcopy.device<cuda:0>, size = 256 : i64}]
// DEFAULT: memref.alloc() : memref<64xf32>
// DEFAULT: memref.alloc() : memref<64xf32, #etcopy.device<cpu>>
func.func @host(%x: memref<64xf32>) {
  %d = memref.alloc() : memref<64xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %x, %d : memref<64xf32> -> memref<64xf32, #etcopy.device<cuda:0>>
  %h = memref.alloc() : memref<64xf32>
  etcopy.d2h %d, %h : memref<64xf32, #etcopy.device<cuda:0>> -> memref<64xf32>
  memref.dealloc %d : memref<64xf32, #etcopy.device<cuda:0>>
  %cpu = memref.alloc() : memref<64xf32, #etcopy.device<cpu>>
  memref.copy %h, %cpu : memref<64xf32> to memref<64xf32, #etcopy.device<cpu>>
  memref.dealloc %h : memref<64xf32>
  memref.dealloc %cpu : memref<64xf32, #etcopy.device<cpu>>
  return
}
