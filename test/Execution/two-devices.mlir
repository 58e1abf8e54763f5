// Data moves cuda:0 -> host -> cuda:1 -> host, each device on its own
// stream, with two simulated devices (and on two GPUs where they answer);
// and on one device the second ordinal is reported as invalid at run time.
// RUN: etcopy-opt %s --etcopy-to-cuda -o %t.mlir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 %run_sim < %t.mlir | FileCheck %s
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: not %run_sim < %t.mlir 2>&1 | FileCheck %s --check-prefix=ONE-DEVICE
// RUN: %if cuda-gpus-2 %{ %run_gpu < %t.mlir | FileCheck %s %}

// ONE-DEVICE: two-devices.mlir:{{[0-9]+}}:{{[0-9]+}}: error: cudaSetDevice failed (select the device): cudaErrorInvalidDevice

func.func private @printMemrefI64(memref<*xi64>) attributes {llvm.emit_c_interface}

memref.global "private" constant @values : memref<3xi64> = dense<[5, -6, 7]>

func.func @main() {
  // CHECK: sizes = [3] strides = [1] data =
  // CHECK-NEXT: [5, -6, 7]
  %v = memref.get_global @values : memref<3xi64>
  %d0 = memref.alloc() : memref<3xi64, #etcopy.device<cuda:0>>
  %d1 = memref.alloc() : memref<3xi64, #etcopy.device<cuda:1>>
  %h = memref.alloc() : memref<3xi64>
  etcopy.h2d %v, %d0 : memref<3xi64> -> memref<3xi64, #etcopy.device<cuda:0>>
  etcopy.d2h %d0, %h : memref<3xi64, #etcopy.device<cuda:0>> -> memref<3xi64>
  etcopy.h2d %h, %d1 : memref<3xi64> -> memref<3xi64, #etcopy.device<cuda:1>>
  %back = memref.alloc() : memref<3xi64>
  etcopy.d2h %d1, %back : memref<3xi64, #etcopy.device<cuda:1>> -> memref<3xi64>
  %u = memref.cast %back : memref<3xi64> to memref<*xi64>
  call @printMemrefI64(%u) : (memref<*xi64>) -> ()
  memref.dealloc %d0 : memref<3xi64, #etcopy.device<cuda:0>>
  memref.dealloc %d1 : memref<3xi64, #etcopy.device<cuda:1>>
  memref.dealloc %h : memref<3xi64>
  memref.dealloc %back : memref<3xi64>
  return
}
