// etcopy.d2d moves data from cuda:0 to cuda:1 without the host: the upload
// to cuda:0, one device-to-device copy, the download from cuda:1 (three
// copies, no host staging), with the same data as the host build.
// RUN: etcopy-opt %s --etcopy-to-cuda -o %t.mlir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=2 ETCOPY_CUDA_SIM_TRACE=1 %run_sim < %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,TRACE
// RUN: etcopy-opt %s --etcopy-to-host | %run_host | FileCheck %s
// RUN: %if cuda-gpu %{ etcopy-opt %s --etcopy-to-cuda | %run_gpu | FileCheck %s %}

// TRACE: cudaMemcpyAsync({{.*}}, 16 bytes, HostToDevice,
// TRACE: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToDevice,
// TRACE-NOT: HostToDevice
// TRACE: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// CHECK: sizes = [4] strides = [1] data =
// CHECK-NEXT: [1.5, -2, 3, 40]

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

memref.global "private" constant @values : memref<4xf32> = dense<[1.5, -2.0, 3.0, 40.0]>

func.func @main() {
  %v = memref.get_global @values : memref<4xf32>
  %d0 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  %d1 = memref.alloc() : memref<4xf32, #etcopy.device<cuda:1>>
  %out = memref.alloc() : memref<4xf32>
  etcopy.h2d %v, %d0 : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.d2d %d0, %d1 : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32, #etcopy.device<cuda:1>>
  etcopy.d2h %d1, %out : memref<4xf32, #etcopy.device<cuda:1>> -> memref<4xf32>
  %u = memref.cast %out : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %d0 : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %d1 : memref<4xf32, #etcopy.device<cuda:1>>
  memref.dealloc %out : memref<4xf32>
  return
}
